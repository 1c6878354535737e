import { createParser, type EventSourceMessage } from "eventsource-parser";

/** One SSE message: `event` and `id` are undefined when the frame had no such field. */
export type SseMessage = EventSourceMessage;

/**
 * Reads a response body as SSE messages, yielding each as soon as its blank line arrives.
 * Comments (`: ping`) are dropped. A frame cut off by the end of the body is never yielded: the
 * SSE spec discards an event without its terminating blank line, and a half frame is exactly what
 * a dropped connection leaves behind. Read errors (a reset socket, an abort) are thrown as is.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage, void, undefined> {
  const ready: SseMessage[] = [];
  // No onError: the parser only reports unknown fields and bad `retry` values, which the SSE spec
  // says to ignore.
  const parser = createParser({ onEvent: (message) => ready.push(message) });
  // `stream: true` keeps a multi-byte character split across chunks for the next decode.
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let drained = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      for (const message of ready.splice(0)) yield message;
      if (done) {
        drained = true;
        return;
      }
    }
  } finally {
    if (!drained) {
      // The consumer left early or the read failed: release the connection. A rejection here only
      // repeats the read error already on its way to the caller.
      reader.cancel().catch(() => undefined);
    }
  }
}
