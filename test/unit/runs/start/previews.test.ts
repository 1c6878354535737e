/**
 * A preview that fails shows `preview_error` with the exact values of the call's sensitive
 * arguments masked: the interrupt event, `/approvals`, webhooks and the audit all show that text.
 */
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSecretScrubber } from "../../../../src/ops/index.js";
import { previewOf } from "../../../../src/runs/start/previews.js";
import type { RunContext } from "../../../../src/runs/run-context.js";
import { defineTool, MASK, ToolRegistry } from "../../../../src/tools/index.js";

const IBAN = "GB33BUKB20201555555555";

function contextWith(preview: (args: Record<string, unknown>) => unknown, sensitive: string[] = ["iban"]): RunContext {
  const transfer = tool(async () => "sent", { name: "wire_transfer", description: "d", schema: z.object({ iban: z.string(), memo: z.string() }) });
  const registry = new ToolRegistry([defineTool(transfer, { kind: "irreversible", sensitive, preview })]);
  // previewOf reads only these: the tools, the scrubber, and the audit's hash for a preview shown.
  return { registry, redactor: { scrubber: createSecretScrubber() }, store: { audit: { hash: () => "h" } } } as unknown as RunContext;
}

const on = { signal: new AbortController().signal, threadId: "t1" };
const call = { id: "c1", name: "wire_transfer", args: { iban: IBAN, memo: "rent" } };

describe("a failing preview's preview_error", () => {
  it("has the call's sensitive values masked, the rest of the message kept", async () => {
    const ctx = contextWith((args) => {
      throw new Error(`no account ${String(args.iban)} (memo ${String(args.memo)})`);
    });
    expect(await previewOf(ctx, on, call)).toEqual({ preview_error: `no account ${MASK} (memo rent)` });
  });

  it("is masked before it is cut to 200 characters, so a value at the cut cannot show in part", async () => {
    const ctx = contextWith((args) => {
      throw new Error(`${"x".repeat(190)} ${String(args.iban)}`);
    });
    const shown = await previewOf(ctx, on, call);
    expect(shown?.preview_error).toBe(`${"x".repeat(190)} ${MASK}`);
    expect(shown?.preview_error).not.toContain(IBAN.slice(0, 5));
  });

  it("is left as it was for a tool without sensitive arguments", async () => {
    const ctx = contextWith((args) => {
      throw new Error(`no account ${String(args.iban)}`);
    }, []);
    expect(await previewOf(ctx, on, call)).toEqual({ preview_error: `no account ${IBAN}` });
  });
});
