import type { Principal } from "../../../auth/index.js";
import type { Logger } from "../../../logger.js";
import { isTerminal, type LoggedEvent } from "../../../protocol/index.js";
import { FRAME_MODES, type GraphFrame, type RunService, type ThreadService } from "../../../runs/index.js";
import { sseResponse } from "../../../http/index.js";
import { assistantIdOf } from "./assistant-id.js";
import { interruptsOf } from "./hitl-value.js";
import { valuesOf } from "./resources.js";
import { encodeFrame } from "./sse-frames.js";
import { type Frame, FrameTranslator, seenAt, type StreamMode, type StreamPosition } from "./stream-frames.js";

export interface RunStreamOptions {
  runs: RunService;
  threads: ThreadService;
  principal: Principal;
  threadId: string;
  runId: string;
  graphId: string;
  modes: ReadonlySet<StreamMode>;
  /** A rejoin: what the client has already seen. */
  after?: StreamPosition;
  clientSignal: AbortSignal;
  onClientGone?: () => void;
  heartbeatMs: number;
  log: Logger;
}

/**
 * A run's events as LangGraph's stream: `metadata` first, then its modes. The run's whole log is
 * translated from its first event (a frame depends on the ones before it: which message a token
 * belongs to), with the graph's own chunks in their places when the modes want them, and what a
 * rejoining client has seen is left out.
 */
export function runStream(o: RunStreamOptions): Response {
  const translator = new FrameTranslator({
    runId: o.runId,
    threadId: o.threadId,
    graphId: o.graphId,
    assistantId: assistantIdOf(o.graphId),
    modes: o.modes,
    readValues: async () => valuesOf(await o.threads.snapshot(o.principal, o.threadId)),
  });
  const text = (frames: Frame[]) => frames.filter((f) => !seenAt(o.after, f.id)).map(encodeFrame).join("");
  // The graph's own chunks only when asked for: this process keeps them while the run is live and a while after.
  const chunks = FRAME_MODES.some((m) => o.modes.has(m));
  return sseResponse<LoggedEvent | GraphFrame>({
    runId: o.runId,
    events: (signal) => (chunks ? o.runs.eventsWithFrames(o.runId, signal) : o.runs.events(o.runId, -1, signal)),
    clientSignal: o.clientSignal,
    onClientGone: o.onClientGone,
    heartbeatMs: o.heartbeatMs,
    log: o.log,
    prelude: async () => (o.after ? "" : encodeFrame({ event: "metadata", data: { run_id: o.runId, attempt: 1 } }) + text(await translator.start())),
    encode: async (batch) => {
      let out = "";
      for (const e of batch) out += text(await translator.frames(e));
      return out;
    },
    headers: { "Content-Location": `/threads/${o.threadId}/runs/${o.runId}` },
  });
}

/** What `runs/wait` and `join` answer once the run has ended: its state, its interrupt, or its error. */
export async function finalResult(o: { runs: RunService; threads: ThreadService; principal: Principal; threadId: string; runId: string; signal: AbortSignal }): Promise<unknown> {
  let last: LoggedEvent | undefined;
  for await (const batch of o.runs.events(o.runId, -1, o.signal)) {
    for (const e of batch) if (isTerminal(e)) last = e;
  }
  if (last?.type === "error") {
    const d = JSON.parse(last.data) as { code: string; message: string };
    return { __error__: { error: d.code, message: d.message } };
  }
  const snapshot = await o.threads.snapshot(o.principal, o.threadId);
  if (last?.type === "interrupt" && snapshot.pending) {
    return { __interrupt__: interruptsOf(snapshot.pending) };
  }
  return valuesOf(snapshot);
}
