import type { ToolRunnableConfig } from "@langchain/core/tools";
import type { ToolGate } from "../gate/index.js";
import { studioGate } from "./studio-gate.js";

/** `configurable` key of the run's gate. */
export const TOOL_GATE_KEY = "tollgate_gate";

const isGate = (v: unknown): v is ToolGate =>
  !!v && typeof v === "object" && typeof (v as ToolGate).permit === "function" && typeof (v as ToolGate).covers === "function";

/**
 * The gate of the tollgate run a tool or node is called in, if any: the server's, or the one the
 * kit's `call_tool` hands its tools.
 */
export function runGateOf(config: Pick<ToolRunnableConfig, "configurable"> | undefined): ToolGate | undefined {
  const g = (config?.configurable as Record<string, unknown> | undefined)?.[TOOL_GATE_KEY];
  return isGate(g) ? g : undefined;
}

/**
 * The gate an irreversible tool asks. Where tollgate runs the call (its server, the kit's
 * `call_tool`) the key is there, and only that run's gate counts: a missing or broken one refuses.
 * With no key at all (`langgraph dev`, a plain `graph.invoke`) no tollgate server is involved, so
 * the gate is the approval LangGraph's `Command({ resume })` delivered for this very call.
 */
export function toolGateOf(config: Pick<ToolRunnableConfig, "configurable"> | undefined): ToolGate | undefined {
  const configurable = config?.configurable as Record<string, unknown> | undefined;
  if (configurable && Object.hasOwn(configurable, TOOL_GATE_KEY)) return runGateOf(config);
  return studioGate(configurable);
}
