/**
 * Whether a decision may be taken at all, table-driven, in the contract's order: the named
 * interrupt's window closed (410), a run in flight, nothing open, another interrupt open (409).
 */
import { describe, expect, it } from "vitest";
import { type GateState, refuseUnlessOpen, refuseWithoutOpen, whyNotOpen } from "../../../src/gate/index.js";

const NOW = 10_000;
const waiting = { status: "waiting_human", expires_at: NOW + 1 };
const base: GateState = { thread: { status: "waiting_human" }, named: waiting, open: { interrupt_id: "i1", status: "waiting_human" }, interruptId: "i1", now: NOW };

describe("refuseUnlessOpen", () => {
  const cases: Array<[string, Partial<GateState>, string | undefined]> = [
    ["the open interrupt, before its deadline", {}, undefined],
    ["past its deadline, not yet closed by the server", { named: { status: "waiting_human", expires_at: NOW } }, "approval_expired"],
    ["closed by its deadline", { named: { status: "expired", expires_at: NOW - 5 }, open: undefined, thread: { status: "idle" } }, "approval_expired"],
    ["expired wins over a run in flight", { named: { status: "expired", expires_at: NOW - 5 }, thread: { status: "running" } }, "approval_expired"],
    ["a run in flight", { thread: { status: "running" } }, "thread_busy"],
    ["nothing open", { open: undefined, thread: { status: "idle" } }, "not_waiting"],
    ["the open one decided meanwhile", { open: { interrupt_id: "i1", status: "resumed" } }, "not_waiting"],
    ["another interrupt open", { interruptId: "i0", named: { status: "resumed", expires_at: NOW + 1 } }, "stale_interrupt"],
    ["an id that is no interrupt of this thread", { interruptId: "nope", named: undefined }, "stale_interrupt"],
  ];
  for (const [name, over, code] of cases) {
    it(`${name} → ${code ?? "open"}`, () => {
      const s = { ...base, ...over };
      if (code === undefined) expect(() => refuseUnlessOpen(s)).not.toThrow();
      else expect(() => refuseUnlessOpen(s)).toThrow(expect.objectContaining({ code }));
    });
  }

  it("names the deadline it missed", () => {
    expect(() => refuseUnlessOpen({ ...base, named: { status: "waiting_human", expires_at: Date.UTC(2030, 0, 1) }, now: Date.UTC(2030, 0, 2) })).toThrow("Approval window closed at 2030-01-01T00:00:00.000Z");
  });
});

describe("whyNotOpen and refuseWithoutOpen", () => {
  const lost: Array<[string, { status: string; expires_at: number } | undefined, string | undefined]> = [
    ["still open: no reason", waiting, undefined],
    ["closed by its deadline", { status: "expired", expires_at: NOW - 1 }, "approval_expired"],
    ["past its deadline", { status: "waiting_human", expires_at: NOW }, "approval_expired"],
    ["decided by another", { status: "resumed", expires_at: NOW + 1 }, "not_waiting"],
    ["gone", undefined, "not_waiting"],
  ];
  for (const [name, again, code] of lost) {
    it(`a lost compare-and-set, ${name}`, () => expect(whyNotOpen(again, NOW)).toEqual(code ? expect.objectContaining({ code }) : undefined));
  }

  const threads: Array<[{ status: string; last_outcome: string | null }, string]> = [
    [{ status: "idle", last_outcome: "expired" }, "approval_expired"],
    [{ status: "running", last_outcome: null }, "thread_busy"],
    [{ status: "idle", last_outcome: "completed" }, "not_waiting"],
  ];
  for (const [thread, code] of threads) {
    it(`a face naming no interrupt, on a thread ${thread.status}/${thread.last_outcome} → ${code}`, () => expect(() => refuseWithoutOpen(thread)).toThrow(expect.objectContaining({ code })));
  }
});
