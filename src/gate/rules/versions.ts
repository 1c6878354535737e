import { type Decision, refusals } from "../../protocol/index.js";
import type { GateCall } from "./gate-call.js";

/**
 * An approval is of what its approver was shown. An approval or edit of a call edited since its
 * interrupt opened (version above 1) must name the version it saw; naming none, or another one,
 * is `409 call_changed` with the call as it now stands (`show`), and nothing is applied. Version 1
 * needs no name: no one was shown anything else. A reject needs none: refusing is always safe.
 */
export function checkVersions(decisions: readonly Decision[], calls: ReadonlyMap<string, GateCall>, show: (call: GateCall) => unknown): void {
  for (const d of decisions) {
    const call = calls.get(d.call_id);
    if (!call || !d.approved) continue;
    if (d.version === undefined ? call.version > 1 : d.version !== call.version) {
      throw refusals.callChanged({ callId: d.call_id, version: call.version, named: d.version, shown: show(call) });
    }
  }
}
