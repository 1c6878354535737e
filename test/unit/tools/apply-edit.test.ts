import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { applyEdit, defineTool, ToolRegistry } from "../../../src/tools/index.js";

// A schema that names `constructor`: reserved names are refused even where a schema names them.
const refund = defineTool(
  tool(async () => "ok", {
    name: "refund",
    description: "refund",
    schema: z.object({ amount_cents: z.number(), note: z.string().optional(), constructor: z.string().optional() }),
  }),
  { kind: "irreversible", editable: true },
);
const registry = new ToolRegistry([refund]);
const call = { name: "refund", args: { amount_cents: 500 } };

describe("applyEdit", () => {
  it("merges known keys and names the ones that changed", () => {
    expect(applyEdit(registry, call, { amount_cents: 400, note: "half" })).toEqual({ args: { amount_cents: 400, note: "half" }, changed: ["amount_cents", "note"] });
  });

  it.each([
    ['{"__proto__": {"amount_cents": 1}}', "__proto__"],
    ['{"amount_cents": 1, "constructor": "x"}', "constructor"],
    ['{"prototype": {}}', "prototype"],
  ])("refuses the reserved name in %s, read as an own key", (json, key) => {
    const edit = applyEdit(registry, call, JSON.parse(json));
    expect(edit).toEqual({ error: `edited_args: '${key}' can never be an argument name` });
  });

  it("refuses a key the schema does not name, and reads no inherited ones", () => {
    expect(applyEdit(registry, call, { currency: "EUR" })).toMatchObject({ error: expect.stringContaining("'currency' is not an argument") });
    // An inherited key is no key of the edit: nothing to merge, a plain approval.
    expect(applyEdit(registry, call, Object.create({ amount_cents: 1 }))).toEqual({ args: call.args, changed: [] });
  });
});
