import { HEARTBEAT_FRAME, type LoggedEvent, sseFrame } from "../protocol/index.js";
import type { Logger } from "../logger.js";

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  // Reverse proxies (nginx) must not buffer a live stream.
  "X-Accel-Buffering": "no",
} as const;

/** `T`: what the batches hold; the run's events unless another face of the API encodes more. */
export interface SseOptions<T = LoggedEvent> {
  /** The run streamed (sent as `X-Run-Id`); a thread's stream across runs names its thread instead. */
  runId?: string;
  threadId?: string;
  /** Event batches to send; the stream closes when this ends. Stops when `signal` fires. */
  events: (signal: AbortSignal) => AsyncIterable<T[]>;
  /** The request's signal: fires when the client goes away. */
  clientSignal: AbortSignal;
  onClientGone?: () => void;
  heartbeatMs: number;
  log: Logger;
  /** How a batch becomes SSE text: tollgate's frames unless another face of the API says otherwise. */
  encode?: (batch: T[]) => string | Promise<string>;
  /** Text sent before the first batch (LangGraph's `metadata`). */
  prelude?: () => string | Promise<string>;
  /** Headers besides the SSE ones and `X-Run-Id`. */
  headers?: Record<string, string>;
}

const encoder = new TextEncoder();

/**
 * The only place where events become SSE bytes. Each batch of events available at once goes out
 * as one write, so a burst of tokens costs one syscall, not one per token.
 */
export function sseResponse<T = LoggedEvent>(o: SseOptions<T>): Response {
  const stop = new AbortController();
  let heartbeat: NodeJS.Timeout | undefined;
  const gone = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    clearInterval(heartbeat);
    o.onClientGone?.();
  };
  o.clientSignal.addEventListener("abort", gone, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      heartbeat = setInterval(() => controller.enqueue(encoder.encode(HEARTBEAT_FRAME)), o.heartbeatMs);
      heartbeat.unref();
      void (async () => {
        try {
          if (o.prelude) {
            const first = await o.prelude();
            if (!stop.signal.aborted) controller.enqueue(encoder.encode(first));
          }
          for await (const batch of o.events(stop.signal)) {
            let text: string;
            if (o.encode) {
              const out = o.encode(batch);
              text = typeof out === "string" ? out : await out;
              if (stop.signal.aborted) break; // the client left while the batch was being read
            } else {
              text = "";
              for (const e of batch as LoggedEvent[]) text += sseFrame(o.runId ?? "", e);
            }
            if (text) controller.enqueue(encoder.encode(text));
          }
        } catch (err) {
          o.log.error("event stream failed", { ...(o.runId ? { run_id: o.runId } : { thread_id: o.threadId }), err });
        } finally {
          clearInterval(heartbeat);
          if (!stop.signal.aborted) controller.close();
          o.clientSignal.removeEventListener("abort", gone);
        }
      })();
    },
    cancel: gone,
  });
  // A client can be gone before its response exists (it sent the request and left): an abort
  // that already happened never fires its listeners, so it is acted on here.
  if (o.clientSignal.aborted) gone();
  // The run id up front lets a client recover a stream that drops before its first event.
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...(o.runId ? { "X-Run-Id": o.runId } : {}), ...o.headers } });
}
