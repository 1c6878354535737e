import type { StateSnapshot } from "@langchain/langgraph";

/** A checkpoint as the views name it: LangGraph's `step` is the superstep that wrote it (-1 for the input). */
export interface CheckpointSummary {
  id: string;
  parentId: string | undefined;
  createdAt: string | undefined;
  step: number | undefined;
  /** What wrote it (LangGraph's `metadata.source`): `input`, `loop`, `update` or `fork`. */
  source: string | undefined;
}

/** The checkpoint a `getState`/`getStateHistory` snapshot comes from, if it was saved. */
export function checkpointOf(state: StateSnapshot): CheckpointSummary | undefined {
  const id = (state.config?.configurable as { checkpoint_id?: string } | undefined)?.checkpoint_id;
  if (!id) return undefined;
  const parent = (state.parentConfig?.configurable as { checkpoint_id?: string } | undefined)?.checkpoint_id;
  const { step, source } = (state.metadata ?? {}) as { step?: unknown; source?: unknown };
  return { id, parentId: parent, createdAt: state.createdAt, step: typeof step === "number" ? step : undefined, source: typeof source === "string" ? source : undefined };
}
