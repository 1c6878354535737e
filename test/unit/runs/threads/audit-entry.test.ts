import { expect, it } from "vitest";
import { auditEntry } from "../../../../src/runs/threads/audit-entry.js";

// The wire form of a trail row, byte for byte: ISO 8601 UTC times, the contract's key order,
// optional fields only when the store has them.

it("shows an edited, executed call with its times in ISO 8601 and the contract's key order", () => {
  const entry = auditEntry({
    at: 1_700_000_000_000,
    interrupt_id: "i1",
    call_id: "c1",
    tool: "refund_order",
    args_hash: "h1",
    decision: "edited",
    by: "ops",
    reason: null,
    edited_args_hash: "e1",
    executed: { status: "ok", at: 1_700_000_001_500 },
  });
  expect(JSON.stringify(entry)).toBe(
    '{"at":"2023-11-14T22:13:20.000Z","interrupt_id":"i1","call_id":"c1","tool":"refund_order","args_hash":"h1","decision":"edited",' +
      '"by":"ops","reason":null,"edited_args_hash":"e1","executed":{"status":"ok","at":"2023-11-14T22:13:21.500Z"}}',
  );
});

it("leaves out what the store does not have: no edit, no execution", () => {
  const entry = auditEntry({ at: 0, interrupt_id: "i1", call_id: "c1", tool: "t", args_hash: "h", decision: "expired", by: null, reason: null });
  expect(entry).toEqual({ at: "1970-01-01T00:00:00.000Z", interrupt_id: "i1", call_id: "c1", tool: "t", args_hash: "h", decision: "expired", by: null, reason: null });
});
