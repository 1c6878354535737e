import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { within } from "../../helpers/within.js";
import { z } from "zod";
import { ScriptedChatModel, type ScriptedTurn } from "../../../src/testing/index.js";

// The scripted model of `tollgate/testing`, on its own: what it streams, what it calls, how it
// stops, and what it says when the script has no answer.

const refundRule = {
  when: /refund (\S+)/,
  reply: ({ match }: ScriptedTurn) => ({ text: "Refunding it now.", toolCalls: [{ name: "refund", args: { order_id: match[1] } }] }),
  then: ({ toolResults }: ScriptedTurn) => `Refund said: ${toolResults.map((m) => m.text).join(", ")}`,
};

const refundTool = tool(async () => "ok", { name: "refund", description: "Refund an order.", schema: z.object({ order_id: z.string() }) });

/** Every chunk the model streams for `messages`. */
async function chunks(model: { stream: ScriptedChatModel["stream"] }, messages: BaseMessage[]): Promise<AIMessageChunk[]> {
  const out: AIMessageChunk[] = [];
  for await (const c of await model.stream(messages)) out.push(c);
  return out;
}

/** The chunks merged into one message, as a graph node would. */
const merged = (cs: AIMessageChunk[]) => cs.reduce((a, b) => a.concat(b));


describe("ScriptedChatModel", () => {
  it("streams its text word by word, then the tool calls with ids, as a provider's model does", async () => {
    const model = new ScriptedChatModel({ rules: [refundRule] });
    const cs = await chunks(model, [new HumanMessage("please refund A-1")]);
    expect(cs.map((c) => c.content)).toEqual(["Refunding", " it", " now.", ""]);
    const whole = merged(cs);
    expect(whole.content).toBe("Refunding it now.");
    expect(whole.tool_calls).toEqual([{ id: expect.stringMatching(/^call_\w{16}$/), name: "refund", args: { order_id: "A-1" }, type: "tool_call" }]);
  });

  it("streams every character of its text, the whitespace around it included", async () => {
    const model = new ScriptedChatModel({ rules: [{ when: /.*/, reply: "  Sent.\n\nBye \n" }] });
    const cs = await chunks(model, [new HumanMessage("x")]);
    expect(cs.map((c) => c.content).join("")).toBe("  Sent.\n\nBye \n");
  });

  it("keeps the ids a rule gives and makes a different one for each call otherwise", async () => {
    const model = new ScriptedChatModel({
      rules: [{ when: /two/, reply: { toolCalls: [{ name: "a", args: {}, id: "mine" }, { name: "b", args: {} }, { name: "c", args: {} }] } }],
    });
    const ids = merged(await chunks(model, [new HumanMessage("two")])).tool_calls!.map((c) => c.id);
    expect(ids[0]).toBe("mine");
    expect(new Set(ids).size).toBe(3);
  });

  it("answers the tool results with `then`, seeing them and the whole conversation", async () => {
    const seen: ScriptedTurn[] = [];
    const model = new ScriptedChatModel({ rules: [{ ...refundRule, then: (turn) => (seen.push(turn), refundRule.then(turn)) }] });
    const messages = [
      new SystemMessage("You refund orders."),
      new HumanMessage("refund A-7"),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "refund", args: { order_id: "A-7" }, type: "tool_call" }] }),
      new ToolMessage({ content: '{"refunded":true}', tool_call_id: "c1", name: "refund" }),
    ];
    const whole = merged(await chunks(model, messages));
    expect(whole.content).toBe('Refund said: {"refunded":true}');
    expect(whole.tool_calls).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.match[1]).toBe("A-7");
    expect(seen[0]!.request).toBe("refund A-7");
    expect(seen[0]!.messages[0]!.text).toBe("You refund orders.");
  });

  it("a new user message starts a new turn: `reply` answers it, not `then`", async () => {
    const model = new ScriptedChatModel({ rules: [refundRule] });
    const messages = [
      new HumanMessage("refund A-1"),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "refund", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "Rejected: User denied", tool_call_id: "c1", name: "refund" }),
      new AIMessage("Refund said: Rejected: User denied"),
      new HumanMessage("refund A-2 then"),
    ];
    expect(merged(await chunks(model, messages)).tool_calls).toMatchObject([{ name: "refund", args: { order_id: "A-2" } }]);
  });

  it("tries the rules in order; a function `when` gets the whole request as match[0]; a /g rule matches every time", async () => {
    const model = new ScriptedChatModel({
      rules: [
        { when: (request) => request.startsWith("!"), reply: ({ match }) => `command ${match[0]}` },
        { when: /hello/g, reply: "hi" },
        { when: /hello/, reply: "never" },
      ],
    });
    const say = async (text: string) => merged(await chunks(model, [new HumanMessage(text)])).content;
    expect(await say("!stop")).toBe("command !stop");
    expect(await say("hello there")).toBe("hi");
    expect(await say("hello again")).toBe("hi");
  });

  it("invoke() gives the whole answer at once", async () => {
    const model = new ScriptedChatModel({ rules: [refundRule] });
    const answer = await model.invoke([new HumanMessage("refund A-3")]);
    expect(answer.content).toBe("Refunding it now.");
    expect(answer.tool_calls).toMatchObject([{ name: "refund", args: { order_id: "A-3" } }]);
  });

  describe("when the script has no answer", () => {
    it("a message no rule matches fails the call, naming the message", async () => {
      const model = new ScriptedChatModel({ rules: [refundRule] });
      await expect(chunks(model, [new HumanMessage("what is the weather")])).rejects.toThrow(
        'ScriptedChatModel: no rule matches the message "what is the weather", and there is no fallback',
      );
    });

    it("the fallback answers what no rule matches", async () => {
      const model = new ScriptedChatModel({ rules: [refundRule], fallback: { reply: ({ request }) => `I cannot help with ${request}.` } });
      expect(merged(await chunks(model, [new HumanMessage("the weather")])).content).toBe("I cannot help with the weather.");
    });

    it("tool results for a rule without `then` fail the call, naming the rule", async () => {
      const model = new ScriptedChatModel({ rules: [{ when: /pay/, reply: { toolCalls: [{ name: "pay", args: {} }] } }] });
      const messages = [
        new HumanMessage("pay bob"),
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "pay", args: {}, type: "tool_call" }] }),
        new ToolMessage({ content: "paid", tool_call_id: "c1", name: "pay" }),
      ];
      await expect(chunks(model, messages)).rejects.toThrow('ScriptedChatModel: rule 1 (/pay/) has no `then` to answer the tool results of "pay bob"');
    });
  });

  describe("bindTools", () => {
    it("binds like a provider's model: calls to bound tools stream as before", async () => {
      const bound = new ScriptedChatModel({ rules: [refundRule] }).bindTools([refundTool]);
      expect(merged(await chunks(bound, [new HumanMessage("refund A-4")])).tool_calls).toMatchObject([{ name: "refund" }]);
    });

    it("a call to a tool that was not bound fails, naming it and the bound ones", async () => {
      const model = new ScriptedChatModel({ rules: [{ when: /x/, reply: { toolCalls: [{ name: "refnud", args: {} }] } }] });
      await expect(chunks(model.bindTools([refundTool]), [new HumanMessage("x")])).rejects.toThrow(
        'ScriptedChatModel: rule 1 (/x/) calls "refnud", which is not a bound tool (refund)',
      );
    });
  });

  describe("abort", () => {
    it("a cancel in the middle of the answer stops it at once, with the signal's reason", async () => {
      // A minute between words: only the signal can end the wait in time.
      const model = new ScriptedChatModel({ rules: [{ when: /talk/, reply: "one two three" }], tokenDelayMs: 60_000 });
      const controller = new AbortController();
      const stream = await model.stream([new HumanMessage("talk")], { signal: controller.signal });
      const it = stream[Symbol.asyncIterator]();
      expect((await it.next()).value?.content).toBe("one");
      const next = it.next();
      controller.abort(new Error("cancelled by the test"));
      await expect(within(next, { ms: 5_000, failure: "the second word neither came nor failed", since: "the abort" })).rejects.toThrow("cancelled by the test");
    });

    it("the model's own stream ends at the abort, not only LangChain's wrapper around it (no timer left running)", async () => {
      // LangChain's stream() rejects at an abort by itself; under it, the model must give up its
      // wait too, or it would sleep on (and hold the process) after every cancel.
      const model = new ScriptedChatModel({ rules: [{ when: /talk/, reply: "one two three" }], tokenDelayMs: 60_000 });
      const controller = new AbortController();
      const options = { signal: controller.signal } as ScriptedChatModel["ParsedCallOptions"];
      const own = model._streamResponseChunks([new HumanMessage("talk")], options);
      expect((await own.next()).value?.text).toBe("one");
      const next = own.next();
      controller.abort(new Error("cancelled by the test"));
      await expect(within(next, { ms: 5_000, failure: "the model's own stream neither ended nor failed", since: "the abort" })).rejects.toThrow("cancelled by the test");
    });

    it("an already aborted call streams nothing", async () => {
      const model = new ScriptedChatModel({ rules: [{ when: /talk/, reply: "one two" }] });
      const seen: string[] = [];
      const run = async () => {
        for await (const c of await model.stream([new HumanMessage("talk")], { signal: AbortSignal.abort(new Error("gone")) })) seen.push(String(c.content));
      };
      await expect(run()).rejects.toThrow("gone");
      expect(seen).toEqual([]);
    });
  });
});
