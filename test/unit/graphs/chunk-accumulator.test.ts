import { AIMessageChunk } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ChunkAccumulator } from "../../../graphs/nodes/chunk-accumulator.js";

const text = (t: string) => new AIMessageChunk({ id: "m1", content: t });

function naive(chunks: AIMessageChunk[]) {
  return chunks.reduce((a, c) => a.concat(c));
}

describe("ChunkAccumulator", () => {
  it("gives the same message as concatenating every chunk", () => {
    const chunks = [
      new AIMessageChunk({ id: "m1", content: "", response_metadata: { model_provider: "openai" } }),
      text("Let "),
      text("me "),
      text("check."),
      new AIMessageChunk({ id: "m1", content: "", tool_call_chunks: [{ index: 0, id: "c1", name: "lookup_order", args: "" }] }),
      new AIMessageChunk({ id: "m1", content: "", tool_call_chunks: [{ index: 0, args: '{"order_id":' }] }),
      text(" more"),
      new AIMessageChunk({ id: "m1", content: "", tool_call_chunks: [{ index: 0, args: '"A-1"}' }] }),
      new AIMessageChunk({ id: "m1", content: "", response_metadata: { finish_reason: "tool_calls" } }),
      new AIMessageChunk({ id: "m1", content: "", usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } }),
    ];
    const acc = new ChunkAccumulator();
    const texts = chunks.map((c) => acc.add(c));
    const got = acc.result()!;
    const want = naive(chunks);
    expect(texts.join("")).toBe("Let me check. more");
    expect(got.content).toBe(want.content);
    expect(got.tool_calls).toEqual(want.tool_calls);
    expect(got.tool_calls).toEqual([{ id: "c1", name: "lookup_order", args: { order_id: "A-1" }, type: "tool_call" }]);
    expect(got.response_metadata.finish_reason).toBe("tool_calls");
    expect(got.usage_metadata).toEqual(want.usage_metadata);
    expect(got.id).toBe("m1");
  });

  it("keeps content blocks in order with the text around them", () => {
    const chunks = [
      text("a"),
      text("b"),
      new AIMessageChunk({ id: "m1", content: [{ type: "text", text: "c", index: 0 }] }),
      text("d"),
    ];
    const acc = new ChunkAccumulator();
    expect(chunks.map((c) => acc.add(c)).join("")).toBe("abcd");
    expect(acc.result()!.text).toBe(naive(chunks).text);
  });

  it("has no result before any chunk", () => {
    expect(new ChunkAccumulator().result()).toBeUndefined();
  });

  it("merges tool-call fragments sent without index into the call they continue", () => {
    // As a server that omits `index` streams two calls: each starts with its id and name, the
    // argument pieces that follow carry neither.
    const piece = (t: { id?: string; name?: string; args: string }) =>
      new AIMessageChunk({ id: "m1", content: "", tool_call_chunks: [{ ...t, type: "tool_call_chunk" }] });
    const chunks = [
      piece({ id: "c1", name: "lookup_order", args: "" }),
      piece({ args: '{"order' }),
      piece({ args: '_id":' }),
      piece({ args: '"A-1"}' }),
      piece({ id: "c2", name: "refund_order", args: '{"order_id":"A-1",' }),
      piece({ args: '"amount_cents":5}' }),
    ];
    const acc = new ChunkAccumulator();
    for (const c of chunks) acc.add(c);
    const got = acc.result()!;
    expect(got.tool_calls).toEqual([
      { id: "c1", name: "lookup_order", args: { order_id: "A-1" }, type: "tool_call" },
      { id: "c2", name: "refund_order", args: { order_id: "A-1", amount_cents: 5 }, type: "tool_call" },
    ]);
    expect(got.invalid_tool_calls ?? []).toEqual([]);
    // LangChain alone makes a call of every fragment, most without a name.
    expect(naive(chunks).tool_call_chunks!.length).toBe(6);
  });

  it("without index or id, each named fragment starts a call of its own", () => {
    // Whole calls, one per delta (some older servers): a second name cannot continue the first call.
    const whole = (name: string, args: string) =>
      new AIMessageChunk({ id: "m1", content: "", tool_call_chunks: [{ name, args, type: "tool_call_chunk" }] });
    const acc = new ChunkAccumulator();
    for (const c of [whole("lookup_order", '{"order_id":"A-1"}'), whole("refund_order", '{"order_id":"A-1","amount_cents":5}')]) acc.add(c);
    expect(acc.result()!.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ["lookup_order", { order_id: "A-1" }],
      ["refund_order", { order_id: "A-1", amount_cents: 5 }],
    ]);
  });
});
