/**
 * Which calls a face's one choice decides now: the gate's rule that makes Slack's and email's
 * Approve and Reject the same decisions the API would take, auth on or off.
 */
import { describe, expect, it } from "vitest";
import type { Access } from "../../../src/auth/index.js";
import { callsDecidableNow, decisionsOnShown, type ShownChoice } from "../../../src/gate/index.js";
import { alice, anonymous, approverCall, AUTH_OFF, AUTH_ON, fin1, fin2, ops, ownerCall, progressOf, quorum } from "./gate-fixture.js";

const APPROVE: ShownChoice = { approve: true };
const REJECT: ShownChoice = { approve: false, reason: "not this one" };
const both = [quorum("q"), approverCall("a")];
const shownAll = { q: 1, a: 1 };

interface Case {
  name: string;
  deciders: Access;
  p: { sub: string; roles: string[] };
  calls?: ReturnType<typeof quorum>[];
  partial?: boolean;
  progress?: ReturnType<typeof progressOf>;
  choice?: ShownChoice;
  shown?: Record<string, number>;
  want: string[];
}

const cases: Case[] = [
  { name: "decided as a whole: every call shown, whatever the progress says", deciders: AUTH_ON, p: ops, calls: [approverCall("a"), ownerCall("o")], partial: false, shown: { a: 1, o: 1 }, want: ["a", "o"] },
  { name: "decided as a whole, a call left out of what was shown: not decided here", deciders: AUTH_ON, p: ops, calls: [approverCall("a"), ownerCall("o")], partial: false, shown: { a: 1 }, want: ["a"] },
  { name: "call by call: the open calls this principal may decide", deciders: AUTH_ON, p: fin1, want: ["q", "a"] },
  { name: "call by call: a call of a role the principal lacks is left to others", deciders: AUTH_ON, p: ops, want: ["a"] },
  { name: "call by call: a call closed already is left out", deciders: AUTH_ON, p: fin2, progress: progressOf({ closed: { a: "approved" } }), want: ["q"] },
  { name: "an approval this principal gave already is not given twice", deciders: AUTH_ON, p: fin1, progress: progressOf({ approvedBy: { q: ["fin1"] } }), want: ["a"] },
  { name: "another's approval leaves the quorum open for this one", deciders: AUTH_ON, p: fin2, progress: progressOf({ approvedBy: { q: ["fin1"] } }), want: ["q", "a"] },
  { name: "a reject still reaches a call this principal approved", deciders: AUTH_ON, p: fin1, progress: progressOf({ approvedBy: { q: ["fin1"] } }), choice: REJECT, want: ["q", "a"] },
  { name: "auth off: one approval closed the quorum call, so only the other is decided", deciders: AUTH_OFF, p: fin2, progress: progressOf({ approvedBy: { q: ["anonymous"] }, closed: { q: "approved" } }), want: ["a"] },
  { name: "auth off: everyone may decide everything open", deciders: AUTH_OFF, p: anonymous, want: ["q", "a"] },
  { name: "nothing left for this principal: every call shown, for the gate's own refusal", deciders: AUTH_ON, p: alice, want: ["q", "a"] },
  { name: "every call shown closed: every call shown, for the gate's already_decided", deciders: AUTH_ON, p: fin2, progress: progressOf({ closed: { q: "approved", a: "rejected" } }), want: ["q", "a"] },
  { name: "a call shown that the interrupt does not hold is never decided alongside others", deciders: AUTH_ON, p: fin1, shown: { q: 1, gone: 1 }, want: ["q"] },
];

describe("callsDecidableNow", () => {
  for (const c of cases) {
    it(c.name, () => {
      const calls = c.calls ?? both;
      const got = callsDecidableNow({
        calls,
        progress: c.progress ?? {},
        partial: c.partial ?? true,
        owner: "alice",
        requester: "alice",
        p: c.p,
        deciders: c.deciders,
        shown: { choice: c.choice ?? APPROVE, versions: c.shown ?? shownAll },
      });
      expect(got).toEqual(c.want);
    });
  }

  it("a choice that shows no call is refused (400), so an empty list never rejects a whole interrupt", () => {
    const input = { calls: both, progress: {}, partial: false, owner: "alice", requester: "alice", p: ops, deciders: AUTH_ON, shown: { choice: APPROVE, versions: {} } };
    expect(() => callsDecidableNow(input)).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });
});

describe("decisionsOnShown", () => {
  it("an approval and a reject carry the version each call was shown at; a reject its reason", () => {
    const base = { calls: [quorum("q", 2), approverCall("a")], progress: {}, partial: true, owner: "alice", requester: "alice", p: fin1, deciders: AUTH_ON };
    expect(decisionsOnShown({ ...base, shown: { choice: APPROVE, versions: { q: 2, a: 1 } } })).toEqual([
      { call_id: "q", approved: true, version: 2 },
      { call_id: "a", approved: true, version: 1 },
    ]);
    expect(decisionsOnShown({ ...base, shown: { choice: REJECT, versions: { q: 1 } } })).toEqual([{ call_id: "q", approved: false, reason: "not this one", version: 1 }]);
  });
});
