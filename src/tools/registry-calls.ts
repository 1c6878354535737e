import { checkArgs } from "./check-args.js";
import { closingOutcomes, toolNotFoundText } from "../protocol/index.js";
import { runInner } from "./run-tool-call.js";
import type { ToolCallRequest, ToolOutcome } from "./tool-outcome.js";
import type { ToolRegistry } from "./tool-registry.js";

export interface RunToolOptions {
  signal?: AbortSignal;
  threadId?: string;
}

/**
 * Validates and runs one call of a read tool. Unknown tools, bad arguments and thrown errors become
 * outcomes the model is told about; only an abort propagates, because the whole run is being stopped.
 */
export async function runToolCall(
  registry: ToolRegistry,
  call: ToolCallRequest,
  opts: RunToolOptions,
): Promise<ToolOutcome> {
  const entry = registry.get(call.name);
  if (!entry) return closingOutcomes.toolNotFound(call.name);
  const validationError = await validateArgs(registry, call);
  if (validationError) return { status: "invalid_args", error: validationError };
  // An irreversible tool's code runs only through its own gate (`TollgateTool`), never from here.
  if (entry.kind === "irreversible") return closingOutcomes.noApproval();
  // Through the tool itself (its run is the call's traced run), with tollgate's context.
  return runInner(entry, call, { config: {}, signal: opts.signal, threadId: opts.threadId });
}

/** The schema's validation message (zod or JSON Schema), or null when the arguments fit. */
export async function validateArgs(registry: ToolRegistry, call: ToolCallRequest): Promise<string | null> {
  const entry = registry.get(call.name);
  if (!entry) return toolNotFoundText(call.name);
  return checkArgs(entry.schema, call.args);
}
