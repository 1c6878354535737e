import { describe, expect, it } from "vitest";
import { jsonLogger, type LogLevel } from "../../../src/logger.js";
import { createSecretScrubber, SCRUBBED, scrubbingLogger } from "../../../src/ops/index.js";

const KEY = "sk-test-ABCDEFGH12345678";
const TOKEN = "tok_alice_7f3a9c";

/** A JSON logger writing into an array, behind the scrubbing logger as tollgate wires it. */
function capture(level: LogLevel = "info") {
  const raw: string[] = [];
  const log = scrubbingLogger(jsonLogger({ level, destination: { write: (line: string) => raw.push(line) } }), createSecretScrubber([KEY, TOKEN]));
  return { log, raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, any>) };
}

describe("JSON logger", () => {
  it("writes one JSON object per line with level, ISO time, msg and the fields", () => {
    const c = capture();
    c.log.info("run finished", { thread_id: "t1", run_id: "r1", principal: "alice", outcome: "completed" });
    expect(c.raw).toHaveLength(1);
    expect(c.raw[0]!.endsWith("\n")).toBe(true);
    expect(c.raw[0]!.trimEnd()).not.toContain("\n");
    const [line] = c.lines();
    expect(line).toMatchObject({ level: "info", msg: "run finished", thread_id: "t1", run_id: "r1", principal: "alice", outcome: "completed" });
    expect(new Date(line!.time).toISOString()).toBe(line!.time);
  });

  it("drops lines below LOG_LEVEL", () => {
    const c = capture("warn");
    c.log.debug("d");
    c.log.info("i");
    c.log.warn("w");
    c.log.error("e");
    expect(c.lines().map((l) => [l.level, l.msg])).toEqual([["warn", "w"], ["error", "e"]]);
    const d = capture("debug");
    d.log.debug("d");
    expect(d.lines().map((l) => l.level)).toEqual(["debug"]);
  });

  it("an err field carries type, message and stack, scrubbed", () => {
    const c = capture();
    class UpstreamError extends Error {
      override name = "UpstreamError";
    }
    c.log.error("run failed", { run_id: "r1", err: new UpstreamError(`refused key ${KEY}`) });
    const [line] = c.lines();
    expect(line!.err.type).toBe("UpstreamError");
    expect(line!.err.message).toBe(`refused key ${SCRUBBED}`);
    expect(line!.err.stack).toMatch(/UpstreamError: refused key \*\*\*\n\s+at /);
    expect(c.raw.join("")).not.toContain(KEY);
  });

  it("a child's bindings are on each of its lines, scrubbed like fields", () => {
    const c = capture();
    const child = c.log.child({ run_id: "r9", note: `Bearer ${TOKEN}` });
    child.warn("slow", { thread_id: "t9" });
    const [line] = c.lines();
    expect(line).toMatchObject({ level: "warn", msg: "slow", run_id: "r9", thread_id: "t9", note: `Bearer ${SCRUBBED}` });
    expect(c.raw.join("")).not.toContain(TOKEN);
  });
});
