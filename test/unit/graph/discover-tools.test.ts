/**
 * Discovery finds a tollgate tool by its brand, not by `instanceof`: a team's package may load its
 * own copy of tollgate (or load it both as CommonJS and as ESM), and a tool made by that copy is a
 * different class from this one. Missed, its irreversible calls would fail closed and its sensitive
 * arguments would have no masks.
 */
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { discoverTools } from "../../../src/graph/index.js";
import { defineTool, isTollgateTool, TollgateTool } from "../../../src/tools/index.js";

const wireMoney = () =>
  tool(async () => "sent", { name: "wire_money", description: "Send money", schema: z.object({ iban: z.string() }) });

/** tollgate-tool.ts loaded a second time, as another copy of the package would be: its own class. */
async function secondCopy(): Promise<typeof import("../../../src/tools/tollgate-tool.js")> {
  // A query makes it another module to the loader: evaluated again, with a class of its own.
  return import(/* @vite-ignore */ `../../../src/tools/tollgate-tool.ts?copy=${Date.now()}`);
}

const graphWith = (tools: unknown[]) =>
  new StateGraph(MessagesAnnotation)
    .addNode("tools", new ToolNode(tools as never))
    .addEdge("__start__", "tools")
    .compile();

describe("discoverTools across copies of the package", () => {
  it("the second copy's class really is another class", async () => {
    const copy = await secondCopy();
    expect(copy.TollgateTool).not.toBe(TollgateTool);
    expect(copy.defineTool(wireMoney(), { kind: "irreversible" })).not.toBeInstanceOf(TollgateTool);
  });

  it("finds a tool the other copy made, with its metadata", async () => {
    const copy = await secondCopy();
    const foreign = copy.defineTool(wireMoney(), { kind: "irreversible", sensitive: ["iban"] });
    const found = discoverTools(graphWith([foreign]));
    expect(found.map((t) => [t.name, t.kind, t.sensitive])).toEqual([["wire_money", "irreversible", ["iban"]]]);
    expect(found[0]).toBe(foreign);
  });

  it("does not wrap the other copy's tool again when metadata is given for its name", async () => {
    const copy = await secondCopy();
    const foreign = copy.defineTool(wireMoney(), { kind: "irreversible" });
    const graph = graphWith([foreign]);
    const found = discoverTools(graph, { toolMeta: { wire_money: { kind: "read" } } });
    expect(found).toHaveLength(1);
    expect(found[0]).toBe(foreign);
  });

  it("isTollgateTool knows either copy's tools, and nothing else", async () => {
    const copy = await secondCopy();
    expect(isTollgateTool(copy.defineTool(wireMoney(), { kind: "read" }))).toBe(true);
    expect(isTollgateTool(defineTool(wireMoney(), { kind: "read" }))).toBe(true);
    expect(copy.isTollgateTool(defineTool(wireMoney(), { kind: "read" }))).toBe(true);
    expect(isTollgateTool(wireMoney())).toBe(false);
    expect(isTollgateTool({ name: "wire_money", kind: "irreversible" })).toBe(false);
    expect(isTollgateTool(null)).toBe(false);
  });

  it("defineTool unwraps the other copy's tool to the team's own", async () => {
    const copy = await secondCopy();
    const inner = wireMoney();
    expect(defineTool(copy.defineTool(inner, { kind: "read" }), { kind: "irreversible" }).inner).toBe(inner);
  });
});
