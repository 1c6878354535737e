import { describe, expect, it } from "vitest";
import { runTorture } from "../../scripts/torture.js";

// A short torture run (docs/concepts/testing.md's figure comes from `npm run torture`, 200 kills): kill -9 at
// exact writes and at random moments around approvals and mid-run, with the invariants checked
// after every restart.
describe("crash torture", () => {
  it("10 kills around approvals and mid-run break no invariant", async () => {
    const report = await runTorture({ kills: 10, seed: 5 });
    expect(report.kills).toBe(10);
    expect(report.violations).toEqual([]);
  }, 180_000);
});
