import { createHmac } from "node:crypto";
import type { AuditDecision, ToolStatus } from "../protocol/index.js";
import { canonicalJson } from "../gate/index.js";
import type { AuditRecord, AuditTrailEntry, InterruptCall, InterruptRecord } from "./types.js";

/** An audit row joined with the ledger row of the execution it approved, as both databases read it. */
export interface AuditRow {
  interrupt_id: string;
  call_id: string;
  tool: string;
  args_hash: string;
  edited_args_hash: string | null;
  preview_hash: string | null;
  version: number | string | null;
  decision: AuditDecision;
  by_sub: string | null;
  reason: string | null;
  via?: string | null;
  channel_user?: string | null;
  at: number;
  ledger_status: "executing" | "settled" | null;
  ledger_outcome: string | null;
  started_at: number | null;
  settled_at: number | null;
}

/** The meta key under which each database keeps its audit hash key. */
export const AUDIT_KEY_NAME = "audit_key";

/** HMAC-SHA256 of canonical (sorted-key) JSON under `key`. */
export function keyedHash(key: Buffer, args: unknown): string {
  return createHmac("sha256", key).update(canonicalJson(args)).digest("hex");
}

/** What every row about one pending call says: which call, with its keyed argument hash, by whom, when. */
export function callRow(record: Pick<InterruptRecord, "thread_id" | "interrupt_id">, call: InterruptCall, stamp: { by: string | null; at: number }) {
  const { by, at } = stamp;
  const seen = call.preview_hash ? { preview_hash: call.preview_hash } : {};
  return { thread_id: record.thread_id, interrupt_id: record.interrupt_id, call_id: call.call_id, tool: call.name, args_hash: call.audit_hash, ...seen, version: call.version, by, at };
}

/** One row per pending call of `record`, all decided the same way (expiry, cancel, a voided decision). */
export function rowsForEachCall(record: InterruptRecord, how: Pick<AuditRecord, "decision" | "by" | "reason">, at: number): AuditRecord[] {
  return record.calls.map((call) => ({ ...callRow(record, call, { by: how.by, at }), decision: how.decision, reason: how.reason }));
}

/** The trail entry of a row: the execution it approved, as far as the ledger knows it. */
export function trailEntry(r: AuditRow): AuditTrailEntry {
  const entry: AuditTrailEntry = {
    at: r.at,
    interrupt_id: r.interrupt_id,
    call_id: r.call_id,
    tool: r.tool,
    args_hash: r.args_hash,
    decision: r.decision,
    by: r.by_sub,
    reason: r.reason,
  };
  if (r.edited_args_hash) entry.edited_args_hash = r.edited_args_hash;
  if (r.preview_hash) entry.preview_hash = r.preview_hash;
  if (r.version != null) entry.version = Number(r.version);
  if (r.via) entry.via = r.via as AuditTrailEntry["via"];
  if (r.channel_user) entry.channel_user = r.channel_user;
  if (r.ledger_status === "settled" && r.ledger_outcome) {
    const outcome = JSON.parse(r.ledger_outcome) as { status: ToolStatus };
    entry.executed = { status: outcome.status, at: r.settled_at ?? r.started_at! };
  } else if (r.ledger_status === "executing") {
    // Claimed and not settled: still running, or the process died while it ran.
    entry.executed = { status: "unknown", at: r.started_at! };
  }
  return entry;
}
