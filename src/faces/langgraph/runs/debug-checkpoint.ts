/** A checkpoint named the way LangGraph's API names one, from the config that points at it. */
function checkpointOf(config: unknown): Record<string, unknown> | null {
  const c = (config as { configurable?: Record<string, unknown> } | null | undefined)?.configurable;
  if (!c || typeof c.thread_id !== "string") return null;
  return { thread_id: c.thread_id, checkpoint_id: c.checkpoint_id, checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "", checkpoint_map: c.checkpoint_map ?? null };
}

/**
 * A `debug` chunk as langgraph-api forwards it: a `checkpoint` event's payload also names its
 * checkpoint and its parent (`checkpoint`, `parent_checkpoint`), which Studio's time travel reads,
 * and `parentConfig` is spelt `parent_config`. The chunk is already masked; only its shape changes.
 */
export function debugChunk(data: unknown): unknown {
  const d = data as { type?: unknown; payload?: Record<string, unknown> } | null;
  if (!d || d.type !== "checkpoint" || !d.payload || typeof d.payload !== "object") return data;
  const { parentConfig, ...payload } = d.payload;
  return { ...d, payload: { ...payload, parent_config: parentConfig ?? null, checkpoint: checkpointOf(payload.config), parent_checkpoint: checkpointOf(parentConfig) } };
}
