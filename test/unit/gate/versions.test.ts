/**
 * An approval is of what its approver was shown: the version rule, table-driven.
 */
import { describe, expect, it } from "vitest";
import { checkVersions, type GateCall } from "../../../src/gate/index.js";
import type { Decision } from "../../../src/protocol/index.js";
import { approverCall, quorum } from "./gate-fixture.js";

const calls = new Map<string, GateCall>([
  ["v1", approverCall("v1", 1)],
  ["v3", quorum("v3", 3)],
]);
const shown = (c: GateCall) => ({ call_id: c.call_id, version: c.version, shown: true });

describe("checkVersions", () => {
  const cases: Array<[string, Decision, { callId: string; message: RegExp } | undefined]> = [
    ["approving version 1 naming none: no one was shown anything else", { call_id: "v1", approved: true }, undefined],
    ["approving version 1 naming it", { call_id: "v1", approved: true, version: 1 }, undefined],
    ["approving version 1 naming another", { call_id: "v1", approved: true, version: 2 }, { callId: "v1", message: /at version 1, not 2/ }],
    ["approving an edited call naming none", { call_id: "v3", approved: true }, { callId: "v3", message: /edited since it was asked \(now version 3\)/ }],
    ["approving an edited call at an older version", { call_id: "v3", approved: true, version: 2 }, { callId: "v3", message: /at version 3, not 2/ }],
    ["approving an edited call at its version", { call_id: "v3", approved: true, version: 3 }, undefined],
    ["an edit binds as an approval does", { call_id: "v3", approved: true, edited_args: { cents: 1 } }, { callId: "v3", message: /name the version/ }],
    ["rejecting needs no version: refusing is always safe", { call_id: "v3", approved: false }, undefined],
    ["rejecting at an old version", { call_id: "v3", approved: false, version: 1 }, undefined],
    ["a call not pending is the caller's other check", { call_id: "nope", approved: true, version: 9 }, undefined],
  ];
  for (const [name, d, refused] of cases) {
    it(name, () => {
      if (!refused) return expect(() => checkVersions([d], calls, shown)).not.toThrow();
      expect(() => checkVersions([d], calls, shown)).toThrow(
        expect.objectContaining({ code: "call_changed", message: expect.stringMatching(refused.message), call: { call_id: refused.callId, version: calls.get(refused.callId)!.version, shown: true } }),
      );
    });
  }

  it("one stale decision refuses them all", () => {
    expect(() => checkVersions([{ call_id: "v1", approved: true }, { call_id: "v3", approved: true, version: 1 }], calls, shown)).toThrow(expect.objectContaining({ code: "call_changed" }));
  });
});
