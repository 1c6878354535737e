import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSecretScrubber, Redactor } from "../../../src/ops/index.js";
import type { EventBody, ThreadMessage } from "../../../src/protocol/index.js";
import { EventPersister } from "../../../src/runs/stream/event-persister.js";
import { RunLog } from "../../../src/runs/stream/run-log.js";
import { openSqliteStore, type Store } from "../../../src/store/index.js";
import { defineTool, ToolRegistry } from "../../../src/tools/index.js";

const KEY = "sk-test-ABCDEFGH12345678";
const EMAIL = "ada@example.com";
const BODY = "Your code is 7781-ZX";

const t = (name: string) => tool(async () => "ok", { name, description: "d", schema: z.object({}).passthrough() });
const registry = new ToolRegistry([
  defineTool(t("send_email"), { kind: "irreversible", sensitive: ["to", "body"], sensitiveOutput: ["to"] }),
  defineTool(t("lookup_order"), { kind: "read", sensitiveOutput: ["customer_email"] }),
]);
const redactor = new Redactor(registry, createSecretScrubber([KEY]));

const emailArgs = { to: EMAIL, subject: "About A-1001", body: BODY };
const pendingCall = { call_id: "c2", name: "send_email", args: emailArgs, policy: "owner" as const, editable: true, args_schema: {} };

describe("Redactor.event", () => {
  it("passes token events through untouched (the same object: no work on the hot path)", () => {
    const token: EventBody = { type: "token", text: `${EMAIL} ${KEY}` };
    expect(redactor.event(token)).toBe(token);
  });

  it("masks a tool_call's sensitive args, leaving the event it was given as it was", () => {
    const e: EventBody = { type: "tool_call", call_id: "c2", name: "send_email", args: emailArgs, needs_approval: true };
    expect(redactor.event(e)).toEqual({ ...e, args: { to: "***", subject: "About A-1001", body: "***" } });
    expect(emailArgs.to).toBe(EMAIL);
  });

  it("masks a tool_result's sensitive output paths and scrubs its error", () => {
    const ok: EventBody = { type: "tool_result", call_id: "c1", name: "lookup_order", status: "ok", output: JSON.stringify({ order_id: "A-1001", customer_email: EMAIL }) };
    expect(JSON.parse((redactor.event(ok) as { output: string }).output)).toEqual({ order_id: "A-1001", customer_email: "***" });
    const text: EventBody = { type: "tool_result", call_id: "c1", name: "lookup_order", status: "ok", output: `plain text ${EMAIL}` };
    expect(redactor.event(text)).toEqual(text); // not JSON: free text is not scanned
    const failed: EventBody = { type: "tool_result", call_id: "c3", name: "other", status: "error", error: `upstream said Bearer abc.def.ghi and ${KEY}` };
    expect(redactor.event(failed)).toEqual({ ...failed, error: "upstream said Bearer *** and ***" });
  });

  it("masks an interrupt's calls (again) and scrubs error and done messages", () => {
    const question = { question_id: "q", value: { question: `Use the key ${KEY}?` } };
    const intr: EventBody = { type: "interrupt", thread_id: "t", interrupt_id: "i", calls: [pendingCall], questions: [question], expires_at: "x", resume_url: "/r" };
    expect(JSON.stringify(redactor.event(intr))).not.toMatch(new RegExp(`${EMAIL}|${BODY}|${KEY}`));
    expect(redactor.event(intr)).toMatchObject({ questions: [{ question_id: "q", value: { question: "Use the key ***?" } }] });
    const err: EventBody = { type: "error", code: "model_error", message: `Model call failed: 401 Incorrect API key provided: ${KEY}` };
    expect(redactor.event(err)).toEqual({ ...err, message: "Model call failed: 401 Incorrect API key provided: ***" });
    const done: EventBody = { type: "done", outcome: "completed", message: `key ${KEY}` };
    expect(redactor.event(done)).toEqual({ ...done, message: "key ***" });
  });
});

describe("Redactor.message", () => {
  it("masks assistant tool_calls and sensitive tool outputs, edited ones too, and nothing else", () => {
    const msgs: ThreadMessage[] = [
      { role: "user", content: `email ${EMAIL}` },
      { role: "assistant", content: "ok", tool_calls: [{ id: "c2", name: "send_email", args: emailArgs }] },
      { role: "tool", content: JSON.stringify({ message_id: 1, to: EMAIL, subject: "s" }), tool_call_id: "c2", name: "send_email", status: "ok" },
      { role: "tool", content: `Approved with edits: to\n${JSON.stringify({ message_id: 2, to: EMAIL })}`, tool_call_id: "c3", name: "send_email", status: "ok", edited: true },
      { role: "tool", content: `Error: failed with ${KEY}`, tool_call_id: "c4", name: "send_email", status: "error" },
    ];
    const shown = msgs.map((m) => redactor.message(m));
    expect(shown[0]).toEqual(msgs[0]); // the user's free text is not scanned
    expect(shown[1]!.tool_calls![0]!.args).toEqual({ to: "***", subject: "About A-1001", body: "***" });
    expect(JSON.parse(shown[2]!.content)).toEqual({ message_id: 1, to: "***", subject: "s" });
    expect(shown[3]!.content).toBe(`Approved with edits: to\n${JSON.stringify({ message_id: 2, to: "***" })}`);
    expect(shown[4]!.content).toBe("Error: failed with ***");
    expect(msgs[2]!.content).toContain(EMAIL);
  });
});

describe("RunLog redacts at its one exit", () => {
  let store: Store | undefined;
  afterEach(async () => store?.close());

  it("tokens lose the configured secrets even split across them; what is held goes out before the next event", async () => {
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-redact-")));
    await store.runs.start("r2", "t2", { kind: "message" });
    const log = new RunLog("r2", { persister: new EventPersister(store.runs, () => undefined), redactor: redactor });
    const half = Math.floor(KEY.length / 2);
    for (const text of ["Your key: ", KEY.slice(0, half), `${KEY.slice(half)}. Then a task`]) log.append({ type: "token", text });
    log.append({ type: "tool_call", call_id: "c1", name: "lookup_order", args: { order_id: "A-1001" }, needs_approval: false });
    await log.end({ type: "done", outcome: "completed", message: "ok" }, (events) => store!.runs.append("r2", events));
    const events = (await store.runs.read("r2", -1)).map((e) => ({ type: e.type, ...JSON.parse(e.data) }));
    const texts = events.filter((e) => e.type === "token").map((e) => e.text);
    expect(texts.join("")).toBe("Your key: ***. Then a task");
    // Half the key is 12 characters, a run of it: masked at once, and the other half extends that
    // one mask. The held end "sk" (it could begin the key) comes out before the tool call.
    expect(texts).toEqual(["Your key: ", "***", ". Then a ta", "sk"]);
    expect(events.map((e) => e.type)).toEqual(["token", "token", "token", "token", "tool_call", "done"]);
  });

  it("stores and publishes masked, scrubbed events; tokens as they came", async () => {
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-redact-")));
    await store.runs.start("r1", "t1", { kind: "message" });
    const log = new RunLog("r1", { persister: new EventPersister(store.runs, () => undefined), redactor: redactor });
    log.append({ type: "token", text: "Sending." });
    log.append({ type: "tool_call", call_id: "c1", name: "lookup_order", args: { order_id: "A-1001" }, needs_approval: false });
    log.append({ type: "tool_result", call_id: "c1", name: "lookup_order", status: "ok", output: JSON.stringify({ customer_email: EMAIL }) });
    log.append({ type: "tool_call", call_id: "c2", name: "send_email", args: emailArgs, needs_approval: true });
    await log.end({ type: "error", code: "model_error", message: `bad key ${KEY}` }, (events) => store!.runs.append("r1", events));

    const published: string[] = [];
    for await (const batch of log.follow(-1)) published.push(...batch.map((e) => e.data));
    const stored = (await store.runs.read("r1", -1)).map((e) => e.data);
    expect(stored).toEqual(published);
    expect(stored).toHaveLength(5);
    const all = stored.join("\n");
    for (const secret of [EMAIL, BODY, KEY]) expect(all).not.toContain(secret);
    expect(JSON.parse(stored[0]!)).toEqual({ run_id: "r1", text: "Sending." });
    expect(JSON.parse(stored[3]!).args).toEqual({ to: "***", subject: "About A-1001", body: "***" });
    expect(JSON.parse(stored[4]!).message).toBe("bad key ***");
  });
});
