import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSecretScrubber } from "../../../src/ops/secret-scrubber.js";
import { TraceMasker } from "../../../src/ops/tracing-masker.js";
import { defineTool, ToolRegistry } from "../../../src/tools/index.js";

// The shapes LangChain hands LangSmith, built with LangChain's own classes: each run is masked
// before the client serializes it. The end-to-end test (test/e2e/tracing.test.ts) holds the real
// uploads to the same; these cover the shapes the demo model does not produce.
const email = defineTool(
  tool(async () => "", { name: "send_email", description: "d", schema: z.object({ to: z.string(), subject: z.string(), body: z.string() }) }),
  { kind: "irreversible", sensitive: ["to", "body"], sensitiveOutput: ["to"] },
);
const lookup = defineTool(tool(async () => "", { name: "lookup_order", description: "d", schema: z.object({ order_id: z.string() }) }), {
  kind: "read",
  sensitiveOutput: ["customer_email"],
});
const KEY = "sk-test-MASKERKEY123456";
const masker = new TraceMasker(new ToolRegistry([email, lookup]), createSecretScrubber([KEY]));

const ARGS = { to: "ada@example.com", subject: "Hi", body: "secret words" };
const MASKED = { to: "***", subject: "Hi", body: "***" };
const text = (v: unknown) => JSON.stringify(v);

describe("TraceMasker", () => {
  it("a model's output: tool_calls, their OpenAI form, streamed chunks and invalid calls", () => {
    const message = new AIMessageChunk({
      content: "",
      tool_calls: [{ id: "c1", name: "send_email", args: ARGS, type: "tool_call" }],
      additional_kwargs: { tool_calls: [{ id: "c1", type: "function", function: { name: "send_email", arguments: JSON.stringify(ARGS) } }] },
    });
    const chunk = { name: "send_email", args: '{"to": "ada@exa', id: "c2", index: 0 };
    const invalid = { name: "send_email", args: "{not json, ada@example.com", id: "c3", error: "bad" };
    const out = masker.run({ run_type: "llm", name: "ChatOpenAI", outputs: { generations: [[{ text: "", message }]], chunk, invalid } });
    expect(text(out)).not.toContain("ada@example.com");
    expect(text(out)).not.toContain("secret words");
    expect(text(out)).toContain('"subject":"Hi"'); // what is not sensitive stays
    const kwargs = (out.outputs as any).generations[0][0].message.kwargs;
    expect(kwargs.tool_calls[0].args).toEqual(MASKED);
    expect(JSON.parse(kwargs.additional_kwargs.tool_calls[0].function.arguments)).toEqual(MASKED);
  });

  it("a history: the model's calls and the tool messages that answer them, named or only by call id", () => {
    const history = [
      new HumanMessage("email the customer of A-1004"),
      new AIMessage({ content: "", tool_calls: [{ id: "l1", name: "lookup_order", args: { order_id: "A-1004" } }, { id: "e1", name: "send_email", args: ARGS }] }),
      new ToolMessage({ tool_call_id: "l1", content: JSON.stringify({ order_id: "A-1004", customer_email: "ada@example.com" }) }),
      new ToolMessage({ tool_call_id: "e1", name: "send_email", content: `Approved with edits: to\n${JSON.stringify({ message_id: 1, to: "ada@example.com" })}` }),
      // A call this payload does not show: every tool's output paths apply.
      new ToolMessage({ tool_call_id: "elsewhere", content: JSON.stringify({ customer_email: "ada@example.com", total: 12 }) }),
    ];
    const out = masker.run({ run_type: "llm", name: "ChatOpenAI", inputs: { messages: [history] } });
    expect(text(out)).not.toContain("ada@example.com");
    expect(text(out)).not.toContain("secret words");
    expect(text(out)).toContain("A-1004");
    expect(text(out)).toContain("Approved with edits: to\\n");
    expect(text(out)).toContain('\\"total\\":12');
  });

  it("a tool run: its inputs are the arguments, its output the result", () => {
    const out = masker.run({
      run_type: "tool",
      name: "send_email",
      inputs: ARGS,
      outputs: { output: new ToolMessage({ tool_call_id: "e1", name: "send_email", content: JSON.stringify({ message_id: 1, to: "ada@example.com" }) }) },
    });
    expect(out.inputs).toEqual(MASKED);
    expect(text(out)).not.toContain("ada@example.com");
    const plain = masker.run({ run_type: "tool", name: "lookup_order", inputs: { order_id: "A-1" }, outputs: { output: '{"customer_email":"ada@example.com"}' } });
    expect(plain).toMatchObject({ inputs: { order_id: "A-1" }, outputs: { output: '{"customer_email":"***"}' } });
  });

  it("an approval's edit, by call id, and a pending call's arguments", () => {
    const out = masker.run({
      run_type: "chain",
      name: "LangGraph",
      inputs: { resume: { decisions: [{ call_id: "e9", approved: true, edited_args: { to: "new@example.com", subject: "New" } }] } },
      outputs: { __interrupt__: [{ value: { calls: [{ call_id: "e9", name: "send_email", args: ARGS }] } }] },
    });
    expect(text(out)).not.toContain("new@example.com");
    expect(text(out)).not.toContain("ada@example.com");
    expect(text(out)).toContain('"subject":"New"');
  });

  it("secrets are scrubbed from every field; what cannot be serialized is dropped, not sent raw", () => {
    const cyclic: Record<string, unknown> = { to: "ada@example.com" };
    cyclic.self = cyclic;
    const out = masker.run({ run_type: "llm", name: "ChatOpenAI", error: `401 Incorrect API key provided: ${KEY}`, inputs: cyclic, extra: { metadata: { note: KEY } } });
    expect(text(out)).not.toContain(KEY);
    expect(text(out)).not.toContain("ada@example.com");
    expect(out.error).toContain("Incorrect API key provided: ***");
  });
});
