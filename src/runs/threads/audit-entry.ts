import type { AuditEntry } from "../../protocol/index.js";
import type { AuditTrailEntry } from "../../store/index.js";

const iso = (ms: number) => new Date(ms).toISOString();

/** The entry `GET /threads/:id/audit` shows for a row of the trail: times as ISO 8601 UTC. */
export function auditEntry(e: AuditTrailEntry): AuditEntry {
  const entry: AuditEntry = {
    at: iso(e.at),
    interrupt_id: e.interrupt_id,
    call_id: e.call_id,
    tool: e.tool,
    args_hash: e.args_hash,
    decision: e.decision,
    by: e.by,
    reason: e.reason,
  };
  if (e.edited_args_hash) entry.edited_args_hash = e.edited_args_hash;
  if (e.version !== undefined) entry.version = e.version;
  if (e.preview_hash) entry.preview_hash = e.preview_hash;
  if (e.via) entry.via = e.via;
  if (e.channel_user) entry.channel_user = e.channel_user;
  if (e.executed) entry.executed = { status: e.executed.status, at: iso(e.executed.at) };
  return entry;
}
