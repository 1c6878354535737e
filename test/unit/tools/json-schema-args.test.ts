/**
 * Arguments are checked against the tool's own schema, whatever it is: JSON Schema (an MCP tool's,
 * or one a team wrote) with a JSON Schema validator, zod 3 and zod 4 as LangChain parses them.
 * Edits go through the same check. `args_schema` is the tool's JSON Schema as given.
 */
import { DynamicStructuredTool, tool } from "@langchain/core/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z as z3 } from "zod/v3";
import { z as z4 } from "zod/v4";
import { applyEdit, defineTool, ToolRegistry, validateArgs } from "../../../src/tools/index.js";
import { inMemoryDesk, type InMemoryDesk } from "../../fixtures/mcp/in-memory-tools.js";

const REFUND_SCHEMA = {
  type: "object" as const,
  properties: {
    order_id: { type: "string" },
    amount_cents: { type: "integer", minimum: 1 },
    note: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  required: ["order_id", "amount_cents"],
  additionalProperties: false,
} as const;

const jsonTool = () =>
  new DynamicStructuredTool({ name: "refund", description: "Refund", schema: REFUND_SCHEMA, func: async () => "ok" });

const check = (registry: ToolRegistry, name: string, args: Record<string, unknown>) => validateArgs(registry, { id: "c1", name, args });

describe("JSON Schema arguments", () => {
  const registry = new ToolRegistry([defineTool(jsonTool(), { kind: "irreversible", editable: true })]);

  it("accepts arguments that fit", async () => {
    expect(await check(registry, "refund", { order_id: "A-1", amount_cents: 5 })).toBeNull();
  });

  it("names what is wrong, by path: a wrong type, a missing field, a nested one, one too many", async () => {
    expect(await check(registry, "refund", { order_id: 7, amount_cents: 5 })).toMatch(/^order_id: .*string/);
    expect(await check(registry, "refund", { order_id: "A-1" })).toMatch(/amount_cents/);
    expect(await check(registry, "refund", { order_id: "A-1", amount_cents: 0 })).toMatch(/^amount_cents: /);
    expect(await check(registry, "refund", { order_id: "A-1", amount_cents: 5, note: { text: 3 } })).toMatch(/^note\.text: /);
    expect(await check(registry, "refund", { order_id: "A-1", amount_cents: 5, extra: true })).toMatch(/extra/);
  });

  it("args_schema is the tool's JSON Schema", () => {
    expect(registry.pendingCall({ id: "c1", name: "refund", args: { order_id: "A-1", amount_cents: 5 } }).args_schema).toEqual(REFUND_SCHEMA);
  });

  it("an edit may name only the schema's properties, and the edited arguments are checked against it", async () => {
    const call = { name: "refund", args: { order_id: "A-1", amount_cents: 500 } };
    expect(applyEdit(registry, call, { nope: 1 })).toEqual({ error: "edited_args: 'nope' is not an argument of refund" });
    const edited = applyEdit(registry, call, { amount_cents: "lots" });
    if ("error" in edited) throw new Error(edited.error);
    expect(await check(registry, "refund", edited.args)).toMatch(/^amount_cents: /);
    const fine = applyEdit(registry, call, { amount_cents: 250 });
    if ("error" in fine) throw new Error(fine.error);
    expect([await check(registry, "refund", fine.args), fine.changed]).toEqual([null, ["amount_cents"]]);
  });
});

describe("zod schemas still", () => {
  it.each([
    ["zod 3", z3.object({ order_id: z3.string() })],
    ["zod 4", z4.object({ order_id: z4.string() })],
  ])("%s: fits, or says what does not", async (_, schema) => {
    const t = tool(async () => "ok", { name: "lookup", description: "Look", schema: schema as never });
    const registry = new ToolRegistry([defineTool(t, { kind: "read" })]);
    expect(await check(registry, "lookup", { order_id: "A-1" })).toBeNull();
    expect(await check(registry, "lookup", { order_id: 1 })).toMatch(/^order_id: /);
    expect(registry.argsSchema("lookup")).toMatchObject({ type: "object", properties: { order_id: { type: "string" } } });
  });
});

describe("tools loaded from an MCP server", () => {
  let desk: InMemoryDesk;
  beforeEach(async () => {
    desk = await inMemoryDesk();
  });
  afterEach(async () => desk.close());

  it("take tollgate's metadata, are checked against their JSON Schema, and a read one runs", async () => {
    const lookup = defineTool(desk.tools.lookup_order!, { kind: "read" });
    const registry = new ToolRegistry([lookup, defineTool(desk.tools.refund_order!, { kind: "irreversible" })]);
    expect(await check(registry, "lookup_order", { order_id: 5 })).toMatch(/^order_id: /);
    expect(await check(registry, "refund_order", { order_id: "A-1", amount_cents: -1 })).toMatch(/^amount_cents: /);
    expect(registry.argsSchema("refund_order")).toMatchObject({ type: "object", properties: { order_id: { type: "string" }, amount_cents: { type: "integer" } } });
    const answered = await lookup.invoke({ id: "c1", name: "lookup_order", args: { order_id: "A-2" }, type: "tool_call" });
    expect(JSON.parse((answered as { content: string }).content)).toMatchObject({ order_id: "A-2", status: "paid" });
  });
});
