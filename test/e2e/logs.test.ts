import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { type Stack, startStack, terminal, threadId } from "./support.js";

// The server's log stream: JSON lines on stdout, with the ids an operator joins on.
const BOB = "tok-bob-logs-0001";
const AUTH_TOKENS = JSON.stringify({ "tok-alice-logs-01": { sub: "alice", roles: ["user"] }, [BOB]: { sub: "bob", roles: ["approver"] } });

type Line = Record<string, any>;

/** Every line the server wrote to stdout, parsed: the listening line is the only one that is not JSON. */
function logLines(stack: Stack): Line[] {
  const lines = stack.server.stdout().split("\n").filter((l) => l.trim() !== "");
  const json = lines.filter((l) => !l.startsWith("tollgate listening on "));
  expect(lines.length - json.length).toBe(1);
  return json.map((l) => {
    const parsed = JSON.parse(l) as Line;
    expect(typeof parsed.level, l).toBe("string");
    expect(typeof parsed.msg, l).toBe("string");
    expect(new Date(parsed.time).toISOString(), l).toBe(parsed.time);
    return parsed;
  });
}

const email = (id: string) => ({ toolCalls: [{ id, name: "send_email", args: { to: "c@example.com", subject: "Hi", body: "Your order" } }] });

describe("JSON logs (LOG_LEVEL=info)", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ AUTH_TOKENS, LOG_LEVEL: "info" });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it("one line per finished run with thread_id, run_id, principal and outcome; one per decision with its principal", async () => {
    const id = threadId("logs");
    s.model.push(email("lg1"));
    const intr = terminal(await s.client.run(id, "email them").collect(), "interrupt");
    s.model.push({ text: "Sent." });
    const done = terminal(await s.client.resume(id, intr.interrupt_id, { decisions: [{ call_id: "lg1", approved: true }] }).collect(), "done");

    const finished = () => logLines(s).filter((l) => l.msg === "run finished" && l.thread_id === id);
    await expect.poll(() => finished().length).toBe(2);
    expect(finished()).toEqual([
      expect.objectContaining({ level: "info", thread_id: id, run_id: intr.run_id, principal: "alice", outcome: "interrupted" }),
      expect.objectContaining({ level: "info", thread_id: id, run_id: done.run_id, principal: "alice", outcome: "completed" }),
    ]);
    const decided = logLines(s).filter((l) => l.msg === "approval decided" && l.thread_id === id);
    expect(decided).toEqual([
      expect.objectContaining({
        level: "info",
        interrupt_id: intr.interrupt_id,
        principal: "alice",
        calls: [{ call_id: "lg1", tool: "send_email", decision: "approved" }],
      }),
    ]);
    // The masked argument never reaches the log.
    expect(s.server.stdout()).not.toContain("c@example.com");
  });

  it("a run resumed by an approver is logged as theirs, and so is the decision", async () => {
    const id = threadId("logs-4eyes");
    s.model.push({ toolCalls: [{ id: "lr1", name: "refund_order", args: { order_id: "A-1002", amount_cents: 500, reason: "late" } }] });
    const intr = terminal(await s.client.run(id, "refund A-1002 $5").collect(), "interrupt");
    s.model.push({ text: "Refunded." });
    const bob = new TollgateClient({ baseUrl: s.server.url, token: BOB });
    const done = terminal(await bob.resume(id, intr.interrupt_id, { decisions: [{ call_id: "lr1", approved: true }] }).collect(), "done");
    await expect.poll(() => logLines(s).some((l) => l.msg === "run finished" && l.run_id === done.run_id)).toBe(true);
    const mine = logLines(s).filter((l) => l.thread_id === id && (l.msg === "run finished" || l.msg === "approval decided"));
    expect(mine.map((l) => [l.msg, l.principal, l.outcome])).toEqual([
      ["run finished", "alice", "interrupted"],
      ["approval decided", "bob", undefined],
      ["run finished", "bob", "completed"],
    ]);
  });

  it("a failed model call: a warn line and the run's error outcome, with the ids", async () => {
    const id = threadId("logs-500");
    s.model.push({ status: 500 });
    const err = terminal(await s.client.run(id, "hi").collect(), "error");
    await expect.poll(() => logLines(s).some((l) => l.msg === "run finished" && l.thread_id === id)).toBe(true);
    const mine = logLines(s).filter((l) => l.thread_id === id);
    expect(mine).toEqual([
      expect.objectContaining({ level: "warn", msg: "model call failed", run_id: err.run_id, code: "model_error" }),
      expect.objectContaining({ level: "info", msg: "run finished", run_id: err.run_id, principal: "alice", outcome: "error" }),
    ]);
  });
});

describe("LOG_LEVEL=warn", () => {
  it("drops info lines and keeps warnings", async () => {
    const s = await startStack({ AUTH_TOKENS, LOG_LEVEL: "warn" });
    try {
      const ok = threadId("quiet");
      s.model.push({ text: "Fine." });
      terminal(await s.client.run(ok, "hi").collect(), "done");
      const failed = threadId("quiet-500");
      s.model.push({ status: 500 });
      terminal(await s.client.run(failed, "hi").collect(), "error");
      await expect.poll(() => logLines(s).some((l) => l.msg === "model call failed" && l.thread_id === failed)).toBe(true);
      const lines = logLines(s);
      expect(lines.filter((l) => l.level === "info" || l.level === "debug")).toEqual([]);
      expect(lines.every((l) => l.level === "warn" || l.level === "error")).toBe(true);
    } finally {
      await s.stop();
    }
  });
});
