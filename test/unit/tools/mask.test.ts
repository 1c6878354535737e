import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, MASK, maskArgs, maskOutput, ToolRegistry } from "../../../src/tools/index.js";

describe("maskArgs", () => {
  it("masks top-level and nested dotted paths in a copy, leaving the input untouched", () => {
    const args = { to: "ada@example.com", card: { number: "4242", exp: "12/30" }, cents: 5 };
    const masked = maskArgs(args, ["to", "card.number"]);
    expect(masked).toEqual({ to: MASK, card: { number: MASK, exp: "12/30" }, cents: 5 });
    expect(args).toEqual({ to: "ada@example.com", card: { number: "4242", exp: "12/30" }, cents: 5 });
  });

  it("replaces the value at a path whole, object or not", () => {
    expect(maskArgs({ card: { number: "4242" }, n: 1 }, ["card"])).toEqual({ card: MASK, n: 1 });
  });

  it("ignores paths that are missing or go through a non-object", () => {
    const args = { to: "x", card: "4242" };
    expect(maskArgs(args, ["cc", "card.number", "a.b.c", ""])).toEqual(args);
  });

  it("does not mask inherited keys such as constructor", () => {
    expect(maskArgs({ a: 1 }, ["constructor", "toString"])).toEqual({ a: 1 });
  });

  it("applies the rest of a path to every element of an array on the way, or to one by index", () => {
    const args = { to: [{ email: "a@x", name: "A" }, { email: "b@x", name: "B" }, "plain"] };
    expect(maskArgs(args, ["to.email"])).toEqual({ to: [{ email: MASK, name: "A" }, { email: MASK, name: "B" }, "plain"] });
    expect(maskArgs(args, ["to.1.email"])).toEqual({ to: [{ email: "a@x", name: "A" }, { email: MASK, name: "B" }, "plain"] });
    expect(maskArgs({ cc: ["a@x", "b@x"] }, ["cc.0"])).toEqual({ cc: [MASK, "b@x"] });
    expect(maskArgs({ cc: ["a@x"] }, ["cc.5"])).toEqual({ cc: ["a@x"] });
  });

  it("returns the arguments themselves when the tool has no sensitive paths", () => {
    const args = { a: 1 };
    expect(maskArgs(args, [])).toBe(args);
  });
});

describe("maskOutput", () => {
  it("masks paths in a JSON object output and re-serializes it", () => {
    const out = JSON.stringify({ order_id: "A-1001", customer_email: "ada@example.com", total_cents: 4999 });
    expect(JSON.parse(maskOutput(out, ["customer_email"]))).toEqual({ order_id: "A-1001", customer_email: MASK, total_cents: 4999 });
  });

  it("masks nested paths and paths through arrays, including a top-level array", () => {
    const out = JSON.stringify({ customer: { email: "ada@example.com", name: "Ada" }, lines: [{ sku: "x", note: "n1" }, { sku: "y", note: "n2" }] });
    expect(JSON.parse(maskOutput(out, ["customer.email", "lines.note"]))).toEqual({
      customer: { email: MASK, name: "Ada" },
      lines: [{ sku: "x", note: MASK }, { sku: "y", note: MASK }],
    });
    const list = JSON.stringify([{ customer_email: "a@x" }, { customer_email: "b@x" }]);
    expect(JSON.parse(maskOutput(list, ["customer_email"]))).toEqual([{ customer_email: MASK }, { customer_email: MASK }]);
  });

  it("leaves output that is not JSON, or JSON that is not an object or array, exactly as it was", () => {
    for (const out of ["Order sent to ada@example.com", "", "{not json", '"ada@example.com"', "42", "null", "true"]) {
      expect(maskOutput(out, ["customer_email"])).toBe(out);
    }
  });

  it("leaves JSON without any of the paths byte for byte (no re-formatting)", () => {
    const out = '{ "order_id" : "A-1001",\n  "status": "shipped" }';
    expect(maskOutput(out, ["customer_email", "a.b"])).toBe(out);
  });

  it("returns the output itself when the tool has no sensitive output paths", () => {
    const out = JSON.stringify({ customer_email: "ada@example.com" });
    expect(maskOutput(out, [])).toBe(out);
  });
});

describe("ToolRegistry masks by tool", () => {
  const t = (name: string) => tool(async () => "ok", { name, description: "d", schema: z.object({ to: z.string() }) });
  const registry = new ToolRegistry([
    defineTool(t("mail"), { kind: "irreversible", sensitive: ["to"], sensitiveOutput: ["to"] }),
    defineTool(t("plain"), { kind: "read" }),
  ]);

  it("masks the named tool's argument and output paths, and nothing for other or unknown tools", () => {
    expect(registry.mask("mail", { to: "a@x" })).toEqual({ to: MASK });
    expect(registry.maskOutput("mail", '{"to":"a@x","id":1}')).toBe('{"to":"***","id":1}');
    expect(registry.mask("plain", { to: "a@x" })).toEqual({ to: "a@x" });
    expect(registry.maskOutput("plain", '{"to":"a@x"}')).toBe('{"to":"a@x"}');
    expect(registry.maskOutput("nope", '{"to":"a@x"}')).toBe('{"to":"a@x"}');
  });

  it("pending calls are masked at creation", () => {
    expect(registry.pendingCall({ id: "c1", name: "mail", args: { to: "a@x" } }).args).toEqual({ to: MASK });
  });
});
