import { type DecisionTokenGrant, hashDecisionToken, mintDecisionToken } from "./decision-token.js";

/** Why a token no longer decides anything: the words of the 410 page. */
export const DEAD_TOKEN_REASONS = ["used", "expired", "closed", "stale"] as const;
export type DeadTokenReason = (typeof DEAD_TOKEN_REASONS)[number];

/** A stored token: its grant and what happened to it, keyed by the token's hash. */
export interface DecisionTokenRecord extends DecisionTokenGrant {
  tokenHash: string;
  createdAt: number;
  /** When the one POST took it; null while unused. */
  usedAt: number | null;
  /** When its interrupt closed (decided, expired, cancelled); null while open. */
  closedAt: number | null;
}

/** What consuming a token came to: the grant to decide with, or why not. */
export type ConsumeResult = { ok: true; record: DecisionTokenRecord } | { ok: false; reason: "unknown" } | { ok: false; reason: DeadTokenReason; record: DecisionTokenRecord };

/**
 * Decision tokens for emailed links. Tokens are passed in raw and hashed here, so a raw token is
 * never written anywhere. `consume` is one atomic compare-and-set: of two concurrent POSTs with
 * the same token, exactly one gets `ok: true`.
 */
export interface DecisionTokenStore {
  /** Creates the store's table if it is missing (no-op in memory). */
  init(): Promise<void>;
  /** Mints a token for `grant`, stores its hash, returns the raw token (for the mail only). */
  issue(grant: DecisionTokenGrant, now: number): Promise<string>;
  /** The record behind a token, whatever its state; undefined when unknown. */
  find(token: string): Promise<DecisionTokenRecord | undefined>;
  /** Marks the token used if it is unused, open and not past its deadline, in one statement. */
  consume(token: string, now: number): Promise<ConsumeResult>;
  /**
   * Gives a consumed token back, when the decision could not be tried (storage down, thread busy):
   * only if it is still marked used at `usedAt`, so it never revives someone else's use.
   */
  release(token: string, usedAt: number): Promise<void>;
  /** Kills every token of an interrupt: it closed. Returns how many were still live. */
  closeInterrupt(interruptId: string, now: number): Promise<number>;
  /** Forgets a token whose mail never left (a failed send). */
  discard(token: string): Promise<void>;
  /** Deletes tokens dead before `before` (used, closed or expired): housekeeping. */
  prune(before: number): Promise<number>;
}

/**
 * Why a found record is dead at `now`, or undefined while it still decides: used; closed (by a
 * decision, a cancel or a withdrawal before its deadline); expired (its deadline passed, whether or
 * not the sweep has closed its interrupt since, as the API says `approval_expired` either way).
 */
export function deadReason(r: DecisionTokenRecord, now: number): DeadTokenReason | undefined {
  if (r.usedAt !== null) return "used";
  if (r.closedAt !== null) return r.closedAt >= r.expiresAt ? "expired" : "closed";
  if (r.expiresAt <= now) return "expired";
  return undefined;
}

/** The result for a token that the compare-and-set did not take: unknown, or dead and why. */
export function refusedConsume(r: DecisionTokenRecord | undefined, now: number): ConsumeResult {
  if (!r) return { ok: false, reason: "unknown" };
  // The CAS failed, so the row is dead; "used" if nothing else says why (a race with a release).
  return { ok: false, reason: deadReason(r, now) ?? "used", record: r };
}

/** Tokens in a Map: for tests and for a server without a database of its own. */
export class MemoryDecisionTokenStore implements DecisionTokenStore {
  private readonly rows = new Map<string, DecisionTokenRecord>();

  async init(): Promise<void> {}

  async issue(grant: DecisionTokenGrant, now: number): Promise<string> {
    const token = mintDecisionToken();
    const tokenHash = hashDecisionToken(token);
    this.rows.set(tokenHash, { ...grant, versions: { ...grant.versions }, tokenHash, createdAt: now, usedAt: null, closedAt: null });
    return token;
  }

  async find(token: string): Promise<DecisionTokenRecord | undefined> {
    const r = this.rows.get(hashDecisionToken(token));
    return r ? { ...r } : undefined;
  }

  async consume(token: string, now: number): Promise<ConsumeResult> {
    // No await between the check and the write: atomic on one event loop.
    const r = this.rows.get(hashDecisionToken(token));
    if (!r || deadReason(r, now)) return refusedConsume(r && { ...r }, now);
    r.usedAt = now;
    return { ok: true, record: { ...r } };
  }

  async release(token: string, usedAt: number): Promise<void> {
    const r = this.rows.get(hashDecisionToken(token));
    if (r && r.usedAt === usedAt) r.usedAt = null;
  }

  async closeInterrupt(interruptId: string, now: number): Promise<number> {
    let n = 0;
    for (const r of this.rows.values()) {
      if (r.interruptId === interruptId && r.closedAt === null && r.usedAt === null) {
        r.closedAt = now;
        n++;
      }
    }
    return n;
  }

  async discard(token: string): Promise<void> {
    this.rows.delete(hashDecisionToken(token));
  }

  async prune(before: number): Promise<number> {
    let n = 0;
    for (const [k, r] of this.rows) {
      if ((r.usedAt ?? r.closedAt ?? r.expiresAt) < before) {
        this.rows.delete(k);
        n++;
      }
    }
    return n;
  }
}
