import { describe, expect, it } from "vitest";
import { clean, runChaos } from "../../scripts/chaos.js";

// A small chaos run (docs/concepts/testing.md's figure comes from `npm run chaos`, 200 runs): whatever the model
// server and the clients do, no thread is left stuck and no invalid history reaches the model.
describe("chaos", () => {
  it("60 runs against a misbehaving model with random cancels, disconnects and decisions leave nothing stuck", async () => {
    const report = await runChaos({ runs: 60, threads: 6, seed: 11 });
    expect(report.runs).toBe(60);
    expect({
      stuckRunning: report.stuckRunning,
      invalidHistories: report.invalidHistories,
      unusable: report.unusable,
      hung: report.hung,
      invalidRequests: report.invalidRequests,
      stackTraces: report.stackTraces,
    }).toEqual({ stuckRunning: [], invalidHistories: [], unusable: [], hung: 0, invalidRequests: 0, stackTraces: 0 });
    expect(clean(report)).toBe(true);
  }, 120_000);
});
