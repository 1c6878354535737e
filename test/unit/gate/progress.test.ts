/**
 * The partial-decision reducer, table-driven: (progress, decisions, principal) → progress, or one
 * refusal and nothing applied. Quorum counts honour auth being off (one decision suffices).
 */
import { describe, expect, it } from "vitest";
import type { Access } from "../../../src/auth/index.js";
import { applyDecisions, type CheckedEdit, type GateCall, type InterruptProgress } from "../../../src/gate/index.js";
import type { Decision } from "../../../src/protocol/index.js";
import { alice, approverCall, AUTH_OFF, AUTH_ON, fin1, fin2, ops, progressOf, quorum } from "./gate-fixture.js";

const NOW = 1_000;

function step(o: { deciders?: Access; p: { sub: string; roles: string[] }; decisions: Decision[]; progress?: InterruptProgress; calls?: GateCall[]; edits?: Map<string, CheckedEdit> }) {
  return applyDecisions({
    calls: o.calls ?? [quorum("q"), approverCall("a")],
    progress: o.progress ?? {},
    owner: "alice",
    requester: "alice",
    p: o.p,
    decisions: o.decisions,
    edits: o.edits ?? new Map(),
    now: NOW,
    deciders: o.deciders ?? AUTH_ON,
    // An edit above 50,000 cents needs two of finance, as the demo's refund does.
    policyOf: (_tool, args) => ((args.cents as number) > 50_000 ? { policy: "quorum", requires: { role: "finance", approvers: 2 } } : { policy: "approver" }),
    shownArgs: (_tool, args) => args,
    keptEdit: (_tool, editedArgs) => ({ edited_args: editedArgs }),
    auditHash: (v) => `audit:${JSON.stringify(v)}`,
  });
}

const approve = (call_id: string): Decision => ({ call_id, approved: true });
const reject = (call_id: string, reason?: string): Decision => ({ call_id, approved: false, ...(reason ? { reason } : {}) });

describe("applyDecisions", () => {
  const taken: Array<{ name: string; run: () => ReturnType<typeof step>; closed: Record<string, string | undefined>; approvals: Record<string, string[]>; waitingOn: string[] }> = [
    {
      name: "the first of two finance approvals counts and closes nothing",
      run: () => step({ p: fin1, decisions: [approve("q")] }),
      closed: { q: undefined },
      approvals: { q: ["fin1"] },
      waitingOn: ["q", "a"],
    },
    {
      name: "the second, by another principal, closes the quorum call",
      run: () => step({ p: fin2, decisions: [approve("q")], progress: progressOf({ approvedBy: { q: ["fin1"] } }) }),
      closed: { q: "approved" },
      approvals: { q: ["fin1", "fin2"] },
      waitingOn: ["a"],
    },
    {
      name: "auth off: one approval closes the quorum call",
      run: () => step({ deciders: AUTH_OFF, p: fin1, decisions: [approve("q")] }),
      closed: { q: "approved" },
      approvals: { q: ["fin1"] },
      waitingOn: ["a"],
    },
    {
      name: "an approver's call closes at its one approval",
      run: () => step({ p: ops, decisions: [approve("a")] }),
      closed: { a: "approved" },
      approvals: { a: ["ops"] },
      waitingOn: ["q"],
    },
    {
      name: "one reject closes its call at once, quorum or not",
      run: () => step({ p: fin1, decisions: [reject("q", "duplicate"), reject("a")] }),
      closed: { q: "rejected", a: "rejected" },
      approvals: { q: [], a: [] },
      waitingOn: [],
    },
  ];
  for (const t of taken) {
    it(t.name, () => {
      const s = t.run();
      for (const [id, closed] of Object.entries(t.closed)) expect(s.progress[id]?.closed?.decision, id).toBe(closed);
      for (const [id, by] of Object.entries(t.approvals)) expect(s.progress[id]!.approvals.map((a) => a.by), id).toEqual(by);
      expect(s.waitingOn).toEqual(t.waitingOn);
    });
  }

  it("a reject keeps the person's reason, or the default one", () => {
    const s = step({ p: fin1, decisions: [reject("q", "duplicate"), reject("a")] });
    expect([s.progress.q!.closed!.reason, s.progress.a!.closed!.reason]).toEqual(["duplicate", "User denied"]);
    expect(s.taken.map((t) => [t.call.call_id, t.decision, t.reason, t.version])).toEqual([
      ["q", "rejected", "duplicate", 1],
      ["a", "rejected", "User denied", 1],
    ]);
  });

  const refused: Array<{ name: string; run: () => unknown; code: string; message?: RegExp }> = [
    { name: "no call named", run: () => step({ p: fin1, decisions: [] }), code: "invalid_request" },
    { name: "a call of a role the principal lacks", run: () => step({ p: ops, decisions: [approve("a"), approve("q")] }), code: "forbidden", message: /call q: it needs 2 of role 'finance'/ },
    { name: "four eyes: the owner on a quorum call", run: () => step({ p: { ...alice, roles: ["user", "finance"] }, decisions: [approve("q")] }), code: "forbidden" },
    { name: "the same principal twice on a quorum", run: () => step({ p: fin1, decisions: [approve("q")], progress: progressOf({ approvedBy: { q: ["fin1"] } }) }), code: "already_decided", message: /You already approved call q/ },
    { name: "a call closed already", run: () => step({ p: fin2, decisions: [approve("a")], progress: progressOf({ closed: { a: "rejected" } }) }), code: "already_decided", message: /was already rejected/ },
    { name: "an edit whose check was made for another progress", run: () => step({ p: fin1, decisions: [{ call_id: "q", approved: true, edited_args: { cents: 1 } }] }), code: "thread_busy" },
    {
      name: "an edit that would need a role the editor lacks",
      run: () => step({ p: ops, decisions: [{ call_id: "a", approved: true, edited_args: { cents: 60_000 } }], edits: new Map([["a", { args: { cents: 60_000 }, changed: ["cents"], edited_args: { cents: 60_000 } }]]) }),
      code: "forbidden",
      message: /With these edits call a would need 2 of role 'finance'/,
    },
  ];
  for (const r of refused) {
    it(`refuses, applying nothing: ${r.name}`, () => {
      let err: unknown;
      try {
        r.run();
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: r.code, ...(r.message ? { message: expect.stringMatching(r.message) } : {}) });
    });
  }

  it("an edit is a new version: policy resolved again, earlier approvals gone, the editor's approval bound to the card edited", () => {
    const calls = [{ ...quorum("q"), preview: { total: 60_000 } }];
    const s = step({
      calls,
      p: fin2,
      decisions: [{ call_id: "q", approved: true, edited_args: { cents: 40_000 } }],
      progress: progressOf({ approvedBy: { q: ["fin1"] } }),
      edits: new Map([["q", { args: { cents: 40_000 }, changed: ["cents"], edited_args: { cents: 40_000 }, preview: { preview: { total: 40_000 } } }]]),
    });
    expect(s.progress.q).toMatchObject({ version: 2, approvals: [{ by: "fin2" }], closed: { decision: "approved", by: "fin2" }, edit: { policy: "approver", changed: ["cents"], preview: { total: 40_000 }, bound_preview: { total: 60_000 } } });
    expect(s.taken).toMatchObject([{ decision: "edited", version: 1 }]);
  });

  it("leaves the progress it was given as it was", () => {
    const before = progressOf({ approvedBy: { q: ["fin1"] } });
    const copy = structuredClone(before);
    step({ p: fin2, decisions: [approve("q")], progress: before });
    expect(before).toEqual(copy);
  });
});
