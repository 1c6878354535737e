import { describe, expect, it } from "vitest";
import { newDeprecations } from "../../helpers/deprecation-watch.js";
import { startServer } from "../../helpers/server-process.js";

// The check itself (test/support/no-deprecations-setup.ts) fails the test on what these find; read
// here first, they are reported to the assertions instead, and the check finds nothing left.
describe("deprecation watch", () => {
  it("reports a server's warning printed as it stops, once, naming the server", async () => {
    const s = await startServer({ FIXTURE_MODE: "deprecated" }, { entry: "test/unit/helpers/fixtures/fake-main.ts", killGraceMs: 5_000 });
    expect(await newDeprecations()).toEqual([]);
    expect(await s.kill("SIGTERM")).toBe(0);
    expect(await newDeprecations()).toEqual([
      `server ${s.url} (pid ${s.child.pid}): (node:${s.child.pid}) DeprecationWarning: the fixture called something deprecated`,
    ]);
    expect(await newDeprecations()).toEqual([]);
  });

  it("reports one this test process emits", async () => {
    process.emitWarning("emitted on purpose by deprecation-watch.test.ts", "DeprecationWarning");
    expect(await newDeprecations()).toEqual(["the test process: DeprecationWarning: emitted on purpose by deprecation-watch.test.ts"]);
  });
});
