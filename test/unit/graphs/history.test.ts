import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { answerFromLedger } from "../../../src/graph/index.js";
import { MemoryLedger } from "../../../src/ledger/index.js";
import { repairHistory, repairWithLedger } from "../../../graphs/history.js";
import { finalMessage } from "../../../graphs/nodes/agent-node.js";
import { closingOutcomes, outcomeOf } from "../../../src/graph/index.js";
import { defineTool, MALFORMED_CALL_NAME, ToolRegistry } from "../../../src/tools/index.js";
import { historyProblem } from "../../helpers/fake-openai.js";

const call = (id: string, name = "pay"): ToolCall => ({ id, name, args: {}, type: "tool_call" });
const ai = (id: string, ...calls: ToolCall[]) => new AIMessage({ id, content: "", tool_calls: calls });
const answer = (id: string, text = "ok") => new ToolMessage({ id: `t-${id}`, tool_call_id: id, content: text, name: "pay" });
const human = (text: string) => new HumanMessage({ id: `h-${text}`, content: text });
const superseded = () => closingOutcomes.superseded();

/** The history as the wire sees it: role, call ids or the call answered, and the tool message text. */
function shape(messages: BaseMessage[]): string[] {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return `tool ${m.tool_call_id}: ${m.text}`;
    if (AIMessage.isInstance(m)) return `ai ${(m.tool_calls ?? []).map((c) => `${c.id}/${c.name}`).join(",")}`.trim();
    return `human ${m.text}`;
  });
}

/** What ChatOpenAI would send, in the Chat Completions shape the strict fake model checks. */
function wire(messages: BaseMessage[]): unknown[] {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return { role: "tool", tool_call_id: m.tool_call_id, content: m.text };
    if (AIMessage.isInstance(m)) {
      const tool_calls = (m.tool_calls ?? []).map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: "{}" } }));
      return { role: "assistant", content: m.text, ...(tool_calls.length ? { tool_calls } : {}) };
    }
    return { role: "user", content: m.text };
  });
}

describe("repairHistory", () => {
  it("leaves a valid history alone (the same array back means nothing to store)", () => {
    const valid = [human("a"), ai("a1", call("c1")), answer("c1"), new AIMessage({ id: "a2", content: "done" }), human("b")];
    expect(repairHistory(valid, superseded)).toBeUndefined();
    expect(historyProblem(wire(valid))).toBeNull();
  });

  it("answers calls a new message left behind, right after their siblings' answers", () => {
    const broken = [human("a"), ai("a1", call("c1"), call("c2")), answer("c1"), human("b")];
    expect(historyProblem(wire(broken))).not.toBeNull();
    const fixed = repairHistory(broken, superseded)!;
    expect(shape(fixed)).toEqual([
      "human a",
      "ai c1/pay,c2/pay",
      "tool c1: ok",
      "tool c2: Rejected: superseded by a new message",
      "human b",
    ]);
    expect(outcomeOf(fixed[3] as ToolMessage).status).toBe("rejected");
    expect(historyProblem(wire(fixed))).toBeNull();
  });

  it("takes the answer of a call the ledger saw run from the ledger, not the fallback", async () => {
    const ledger = new MemoryLedger();
    await ledger.claim("t:ran", { threadId: "t", callId: "ran", name: "pay", argsHash: "h" });
    await ledger.settle("t:ran", { status: "ok", output: "paid 5" });
    await ledger.claim("t:mid", { threadId: "t", callId: "mid", name: "pay", argsHash: "h" });
    const broken = [human("a"), ai("a1", call("ran"), call("mid"), call("never")), human("b")];
    const fixed = (await repairWithLedger(broken, answerFromLedger(ledger, "t", superseded())))!;
    expect(shape(fixed).slice(2, 5)).toEqual([
      "tool ran: paid 5",
      "tool mid: Error: outcome unknown",
      "tool never: Rejected: superseded by a new message",
    ]);
  });

  it("drops tool messages that answer nothing open, and second answers", () => {
    const broken = [human("a"), answer("ghost"), ai("a1", call("c1")), answer("c1"), answer("c1", "again"), human("b")];
    expect(shape(repairHistory(broken, superseded)!)).toEqual(["human a", "ai c1/pay", "tool c1: ok", "human b"]);
  });

  it("renames calls without a valid name and answers them 'malformed tool call'; drops a repeated id", () => {
    const broken = [human("a"), ai("a1", call("c1", ""), call("c2", "bad name!"), call("c3"), call("c3")), answer("c3")];
    const fixed = repairHistory(broken, superseded)!;
    expect(shape(fixed)).toEqual([
      "human a",
      `ai c1/${MALFORMED_CALL_NAME},c2/${MALFORMED_CALL_NAME},c3/pay`,
      "tool c3: ok",
      "tool c1: Error: malformed tool call",
      "tool c2: Error: malformed tool call",
    ]);
    expect(fixed[1]!.id).toBe("a1"); // replaced in place, not added
    expect(historyProblem(wire(fixed))).toBeNull();
  });

  it("closes the last message's open calls too: it runs right before a model call", () => {
    const fixed = repairHistory([human("a"), ai("a1", call("c1"))], superseded)!;
    expect(shape(fixed)).toEqual(["human a", "ai c1/pay", "tool c1: Rejected: superseded by a new message"]);
  });
});

describe("finalMessage", () => {
  it("gives the answer an id of tollgate's own, whatever the server called its completion", () => {
    const chunk = new AIMessageChunk({ id: "chatcmpl-constant", content: "hi" });
    const a = finalMessage(chunk);
    const b = finalMessage(chunk);
    expect(a.id).not.toBe("chatcmpl-constant");
    expect(a.id).not.toBe(b.id);
  });

  it("stores a call without a valid name as invalid_tool_call with no arguments", () => {
    const chunk = new AIMessageChunk({
      content: "",
      tool_call_chunks: [
        { index: 0, id: "c1", name: "", args: '{"a":1}', type: "tool_call_chunk" },
        { index: 1, id: "c2", name: "lookup_order", args: '{"order_id":"A-1"}', type: "tool_call_chunk" },
      ],
    });
    const m = finalMessage(chunk);
    expect(m.tool_calls!.map((c) => [c.id, c.name, c.args])).toEqual([
      ["c1", MALFORMED_CALL_NAME, {}],
      ["c2", "lookup_order", { order_id: "A-1" }],
    ]);
  });
});

describe("the reserved name", () => {
  it("cannot be a tool's: calls stored under it never run", () => {
    const t = defineTool(tool(async () => "x", { name: MALFORMED_CALL_NAME, description: "d", schema: z.object({}) }), { kind: "read" });
    expect(() => new ToolRegistry([t])).toThrow(/reserved/);
  });
});
