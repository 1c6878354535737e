import type { LedgerClaim } from "../ledger/index.js";
import type { ToolOutcome } from "../tools/index.js";
import type { Clock } from "../clock.js";
import { isStorageFault } from "./storage-fault.js";
import { NO_SCRUB, type SecretFilter, scrubJsonText } from "./stored-secrets.js";

const RETRY_MS = 250;

/** A ledger row as both databases keep it. */
export interface LedgerRow {
  status: "executing" | "settled";
  outcome: string | null;
  args_hash: string;
}

/** What either database's ledger is built with, besides its connection. */
export interface LedgerOptions {
  /** This process's replica: a fenced claim holds only while its run holds the thread here. */
  replicaId: string;
  /** Where claim and settle times come from; the system clock when not given. */
  clock?: Clock;
  /** Scrubs secrets from the outcomes it stores. */
  scrub?: SecretFilter;
}

/** What a stored row says of a call: its recorded outcome, or in doubt (claimed, never settled). */
export function claimOfRow(row: LedgerRow | undefined): Exclude<LedgerClaim, { kind: "claimed" }> | undefined {
  if (!row) return undefined;
  if (row.status === "settled" && row.outcome) return { kind: "settled", outcome: JSON.parse(row.outcome) as ToolOutcome };
  return { kind: "in_doubt" };
}

/**
 * How a ledger records what a call did, on either database. The tool has already had its effect,
 * so a refused write must not lose it: the outcome is kept in memory (and answered from there)
 * and written once the database takes writes again. Only a crash before then leaves the call
 * "outcome unknown".
 */
export class OutcomeWriter {
  private readonly kept = new Map<string, ToolOutcome>();
  private retry: NodeJS.Timeout | undefined;

  /**
   * `write`: the database's compare-and-set from executing to settled, given the outcome as the
   * row stores it (JSON, scrubbed of secrets: a tool's error may echo an upstream key).
   */
  constructor(
    private readonly write: (key: string, stored: string) => Promise<unknown>,
    private readonly filter: SecretFilter = NO_SCRUB,
  ) {}

  /** The outcome of a call whose write is on its way or was refused; the database's answer else. */
  known(key: string): ToolOutcome | undefined {
    return this.kept.get(key);
  }

  async settle(key: string, outcome: ToolOutcome): Promise<void> {
    // Answered from memory at once, so a peek while the write is on its way sees it.
    this.kept.set(key, outcome);
    try {
      await this.write(key, scrubJsonText(JSON.stringify(outcome), this.filter));
    } catch (err) {
      if (!isStorageFault(err)) throw err;
      this.retry ??= setTimeout(() => this.retryAll(), RETRY_MS);
      this.retry.unref();
      return;
    }
    this.kept.delete(key);
  }

  private retryAll(): void {
    this.retry = undefined;
    for (const [key, outcome] of [...this.kept]) this.settle(key, outcome).catch(() => undefined); // kept: tried again later
  }
}
