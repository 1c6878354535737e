import type { Frame } from "./stream-frames.js";

/** One frame as langgraph-api writes it: `event`, `data`, then `id` when it has one. */
export function encodeFrame(f: Frame): string {
  return `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n${f.id !== undefined ? `id: ${f.id}\n` : ""}\n`;
}
