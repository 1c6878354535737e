import type { EventType, ProtocolEvent } from "./events.js";

/**
 * One event of a run as its log keeps it and the stream sends it: the run's sequence number, the
 * event's type and its JSON `data` as the exact string that first went on the wire, so a replay
 * sends the same bytes.
 */
export interface LoggedEvent {
  seq: number;
  type: EventType;
  data: string;
}

/** `<run_id>:<seq>`, the SSE id of every frame. */
export function eventId(runId: string, seq: number): string {
  return `${runId}:${seq}`;
}

/** Splits an SSE id back into run and sequence; null when it is not one of ours. */
export function parseEventId(id: string): { runId: string; seq: number } | null {
  const at = id.lastIndexOf(":");
  if (at <= 0) return null;
  const seq = Number(id.slice(at + 1));
  if (!Number.isSafeInteger(seq) || seq < 0) return null;
  return { runId: id.slice(0, at), seq };
}

/** One SSE frame of a logged event, its `data` sent as serialized (one line: JSON.stringify emits no raw newlines). */
export function sseFrame(runId: string, e: LoggedEvent): string {
  return `id: ${runId}:${e.seq}\nevent: ${e.type}\ndata: ${e.data}\n\n`;
}

/** One SSE frame for an event object. */
export function encodeFrame(seq: number, event: ProtocolEvent): string {
  const { type, ...data } = event;
  return sseFrame(event.run_id, { seq, type, data: JSON.stringify(data) });
}

export const HEARTBEAT_FRAME = ": ping\n\n";
