import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { afterChecks, formatFailures, fuzzModelScript, runFuzz, type FuzzReport } from "../../scripts/fuzz.js";
import { expectNoStackTraces, startStack, type Stack } from "./support.js";

// Hostile requests over every endpoint (scripts/fuzz.ts; `npm run fuzz` is the long version): no
// 5xx but 503 with Retry-After, every error exactly {error:{code,message}} with a short message
// that echoes no long run of the input, nothing hangs, the contract's fixed answers (foreign Host
// or Origin, non-JSON bodies, oversize metadata, bad JSON, refused edits, unknown calls), and
// afterwards the server is healthy, still runs, and nothing irreversible ran.
const REQUESTS = Number(process.env.FUZZ_TEST_REQUESTS ?? 5_000);
const AUTH_REQUESTS = Math.ceil(REQUESTS / 4);
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_611);

const TOKENS = {
  "tok-fuzz": { sub: "fuzzer", roles: ["user", "approver"] },
  "tok-admin": { sub: "root", roles: ["admin"] },
};

function summary(r: FuzzReport): string {
  return (
    `${r.requests} requests (+${r.maintenanceRequests} maintenance) in ${r.durationMs} ms, ${r.requestsPerSecond}/s, by status ${JSON.stringify(r.byStatus)}, ` +
    `${r.expectations.met}/${r.expectations.checked} fixed answers met, ${r.failureCount} failed checks (seed ${r.seed})`
  );
}

describe.each([
  { name: "auth off", requests: REQUESTS, env: {} as Record<string, string>, fuzzHeaders: {} as Record<string, string>, checkHeaders: {} as Record<string, string> },
  {
    name: "auth on (rate limit 60/min)",
    requests: AUTH_REQUESTS,
    env: { AUTH_TOKENS: JSON.stringify(TOKENS), RATE_LIMIT_RUNS_PER_MINUTE: "60" },
    fuzzHeaders: { authorization: "Bearer tok-fuzz" },
    // Another principal, so the fuzzer's spent rate limit does not refuse the checks.
    checkHeaders: { authorization: "Bearer tok-admin" },
  },
])("fuzz, $name", ({ requests, env, fuzzHeaders, checkHeaders }) => {
  let s: Stack;
  let report: FuzzReport | undefined;
  beforeAll(async () => {
    s = await startStack(env, { script: fuzzModelScript });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it(`${requests} hostile requests break no rule of the contract`, async () => {
    report = await runFuzz({ baseUrl: s.server.url, requests, seed: SEED, headers: fuzzHeaders, concurrency: 16 });
    console.log(`fuzz: ${summary(report)}`);
    expect(report.requests).toBe(requests);
    expect(report.failureCount, formatFailures(report)).toBe(0);
  }, 120_000);

  it("afterwards: healthy, a normal run still ends done, every attacked thread still usable", async () => {
    expect(report, "the fuzz run did not finish").toBeDefined();
    const after = await afterChecks(s.server.url, report!.targets, checkHeaders);
    expect(after.healthz).toBe(200);
    expect(after.freshRun).toBe("done");
    expect(after.targetRuns).toHaveLength(report!.targets.length);
    expect(after.targetRuns.every((t) => t === "done"), JSON.stringify(after.targetRuns)).toBe(true);
  }, 60_000);

  it("the fuzzer never approved anything, and the server logged no stack trace", () => {
    expect(s.db.countRows("refunds")).toBe(0);
    expect(s.db.countRows("outbox")).toBe(0);
    expectNoStackTraces(s.server);
  });
});
