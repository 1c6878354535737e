/**
 * What the built-in agent writes with the graph's stream writer (`config.writer`, LangGraph's
 * `custom` stream) for each piece of assistant text; the engine turns each one into a `token`.
 */
export interface TokenChunk {
  token: string;
}
