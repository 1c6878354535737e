/**
 * A tool's error text is masked at its source: the exact values of the call's sensitive arguments
 * never reach the ToolMessage (what the checkpoint, the thread view, `tool_result` and the event
 * log all come from), whichever caller ran the tool — the kit's `runToolCall`, LangGraph's
 * prebuilt ToolNode, a node calling `.invoke`, the gate of an irreversible tool.
 */
import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunGate } from "../../../src/graph/index.js";
import { MemoryLedger } from "../../../src/ledger/index.js";
import {
  defineTool,
  hashArgs,
  MASK,
  maskAll,
  maskValues,
  outcomeOf,
  runToolCall,
  sensitiveValues,
  TOOL_GATE_KEY,
  ToolRegistry,
} from "../../../src/tools/index.js";

const IBAN = "DE89370400440532013000";
const schema = z.object({ iban: z.string(), owner: z.object({ name: z.string(), pin: z.number() }), note: z.string() });
const ARGS = { iban: IBAN, owner: { name: "Ada Quill", pin: 4711 }, note: "rent" };

/** A tool that fails quoting every argument it was given, as an upstream error often does. */
function quoting(name: string) {
  return tool(
    async ({ iban, owner, note }) => {
      throw new Error(`bank refused ${iban} for ${owner.name} (pin ${owner.pin}), note ${note}`);
    },
    { name, description: "Always refused (test).", schema },
  );
}

describe("sensitiveValues and maskValues", () => {
  it("collects the strings and numbers at each path, whole objects' leaves included, and masks each one in text", () => {
    const values = sensitiveValues(ARGS, ["iban", "owner"]);
    expect(values.sort()).toEqual([IBAN, "4711", "Ada Quill"].sort());
    expect(maskValues(`to ${IBAN} for Ada Quill (4711), rent`, values)).toBe(`to ${MASK} for ${MASK} (${MASK}), rent`);
  });

  it("follows arrays as maskArgs does, and finds a string's JSON-escaped form too", () => {
    const args = { to: [{ email: "a@x.io" }, { email: 'say "hi"' }] };
    const values = sensitiveValues(args, ["to.email"]);
    expect(maskValues(`failed: ${JSON.stringify(args)}`, values)).toBe(`failed: {"to":[{"email":"***"},{"email":"***"}]}`);
  });

  it("masks the longest value first, so a shorter one inside it leaves nothing of it behind", () => {
    expect(maskValues("card 4242424242424242 and 4242", ["4242", "4242424242424242"])).toBe(`card ${MASK} and ${MASK}`);
  });

  it("leaves out blank strings, booleans, null and missing paths: text stays as it was", () => {
    expect(sensitiveValues({ a: "", b: "  ", c: true, d: null }, ["a", "b", "c", "d", "e.f"])).toEqual([]);
    expect(maskValues("nothing to hide", [])).toBe("nothing to hide");
  });

  it("masks a value under four characters only where no letter or digit touches it", () => {
    expect(maskValues("pin 42 refused (HTTP 429, code X42)", ["42"])).toBe(`pin ${MASK} refused (HTTP 429, code X42)`);
    expect(maskValues("pin=42.", ["42"])).toBe(`pin=${MASK}.`);
  });

  it("reads regular-expression characters as themselves", () => {
    expect(maskValues("pattern a.b* and acb", ["a.b*"])).toBe(`pattern ${MASK} and acb`);
  });
});

describe("a read tool's error", () => {
  const checkIban = defineTool(quoting("check_iban"), { kind: "read", sensitive: ["iban", "owner.name", "owner.pin"] });
  const registry = new ToolRegistry([checkIban]);
  const shown = `bank refused ${MASK} for ${MASK} (pin ${MASK}), note rent`;

  it("is masked in the outcome the kit's tools node makes of it", async () => {
    const outcome = await runToolCall(registry, { id: "c1", name: "check_iban", args: ARGS }, {});
    expect(outcome).toEqual({ status: "error", error: shown });
  });

  it("is masked when LangGraph's prebuilt ToolNode reports it", async () => {
    const node = new ToolNode([checkIban]);
    const ai = new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "check_iban", args: ARGS, type: "tool_call" }] });
    const { messages } = (await node.invoke({ messages: [ai] })) as { messages: ToolMessage[] };
    expect(String(messages[0]!.content)).toContain(shown);
    expect(JSON.stringify(messages)).not.toContain(IBAN);
  });

  it("is masked, message and stack, when a node calls the tool itself and catches what it throws", async () => {
    const err = (await checkIban.invoke(ARGS).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe(shown);
    expect(err.stack).not.toContain(IBAN);
    expect(err.stack).not.toContain("Ada Quill");
  });

  it("of a tool without sensitive arguments is left as it was", async () => {
    const plain = defineTool(quoting("plain"), { kind: "read" });
    const outcome = await runToolCall(new ToolRegistry([plain]), { id: "c3", name: "plain", args: ARGS }, {});
    expect(outcome.error).toBe(`bank refused ${IBAN} for Ada Quill (pin 4711), note rent`);
  });
});

describe("an irreversible tool's error, after its approval", () => {
  const wireTransfer = defineTool(quoting("wire_transfer"), { kind: "irreversible", sensitive: ["iban"] });

  it("is masked in the ToolMessage (content and artifact), and in what the ledger answers again", async () => {
    const ledger = new MemoryLedger();
    const decision = { call_id: "c4", approved: true, name: "wire_transfer", args_hash: hashArgs(ARGS), run_args_hash: hashArgs(ARGS) };
    const config = () => ({ configurable: { thread_id: "t1", [TOOL_GATE_KEY]: new RunGate({ threadId: "t1", ledger, decisions: [decision] }) } });
    const call = { id: "c4", name: "wire_transfer", args: ARGS, type: "tool_call" as const };
    const first = (await wireTransfer.invoke(call, config())) as ToolMessage;
    expect(outcomeOf(first)).toEqual({ status: "error", error: `bank refused ${MASK} for Ada Quill (pin 4711), note rent` });
    expect(JSON.stringify(first)).not.toContain(IBAN);
    // The same approved call again (a resume replayed): the ledger's answer, masked as well.
    const again = (await wireTransfer.invoke(call, config())) as ToolMessage;
    expect(JSON.stringify(again)).not.toContain(IBAN);
  });
});

describe("a tool the registry does not know", () => {
  const registry = new ToolRegistry([defineTool(quoting("known"), { kind: "read" })]);

  it("has every argument masked, names kept: there are no masks to go by", () => {
    expect(registry.mask("unknown_tool", ARGS)).toEqual({ iban: MASK, owner: MASK, note: MASK });
    expect(maskAll({})).toEqual({});
  });

  it("has every argument's value masked in an error about it", () => {
    expect(registry.maskError("unknown_tool", ARGS, `no ${IBAN} for Ada Quill, 4711`)).toBe(`no ${MASK} for ${MASK}, ${MASK}`);
  });

  it("leaves a known tool's arguments to its own masks", () => {
    expect(registry.mask("known", ARGS)).toEqual(ARGS);
  });
});
