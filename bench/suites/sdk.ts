/**
 * LangGraph's JS SDK on both LangGraph APIs: the same `Client` code (`runs.stream` with
 * `streamMode: "messages-tuple"`, a new thread per run) against TOLLGATE's `/langgraph` and PEER
 * (`langgraph dev`), the same graph and model. What a LangGraph frontend moving to tollgate would
 * see: token parts per second at each concurrency, and time to first token. FLOOR does not speak
 * this API, so it has no value here. The points, windows and repetitions are the streaming suite's
 * (full and quick alike), so these rows read beside its rows.
 */
import { type BenchContext, type Row, rotate } from "../context.js";
import { directive } from "../directive.js";
import { type LoadWindow, untilIdle } from "../load.js";
import { sdkClosedLoop, type SdkProtocol } from "../sdk-load.js";
import { dist } from "../stats.js";
import { peerQueueRemark, runningAtOnce } from "./streaming.js";

const SDK_TARGETS = ["tollgate", "peer"] as const;
type SdkTarget = (typeof SDK_TARGETS)[number];
/** The figures' names for each way the SDK streams a run. */
const FIGURES: Record<SdkProtocol, string> = { runs: "SDK messages-tuple", thread: "SDK ThreadStream" };

export const sdkSuite = (ctx: BenchContext): Promise<Row[]> => sdkRows(ctx, "runs");
/** The same load through `ThreadStream` (the thread-centric protocol `@langchain/react` speaks). */
export const sdkThreadSuite = (ctx: BenchContext): Promise<Row[]> => sdkRows(ctx, "thread");

async function sdkRows(ctx: BenchContext, protocol: SdkProtocol): Promise<Row[]> {
  const s = ctx.settings.streaming;
  const message = () => directive({ tokens: s.tokens, firstGap: s.firstGapMs });
  const apiUrl: Record<SdkTarget, string> = { tollgate: `${ctx.targets.tollgate.child.url}/langgraph`, peer: ctx.targets.peer.child.url };
  const load = (name: SdkTarget, c: number, windowMs: number, o: Parameters<typeof sdkClosedLoop>[5] = {}) =>
    sdkClosedLoop(apiUrl[name], ctx.targets[name].child, c, windowMs, message, { ...o, protocol });
  for (const name of SDK_TARGETS) {
    ctx.focus(name);
    await load(name, 8, s.warmupMs); // the SDK's and the server's code paths warmed up
    await untilIdle(ctx.targets[name]);
  }
  const rows: Row[] = [];
  for (const c of s.concurrencies) {
    const windows: Record<SdkTarget, LoadWindow[]> = { tollgate: [], peer: [] };
    for (let rep = 0; rep < s.reps; rep++) {
      for (const name of rotate(SDK_TARGETS, rep + c)) {
        ctx.focus(name);
        const w = await load(name, c, s.windowMs, { rampMs: s.rampMs, drainMs: s.drainMs, watch: { model: () => ctx.model.cpuSeconds() } });
        windows[name].push(w);
        await untilIdle(ctx.targets[name]);
        const cpu = Object.entries(w.cpu).map(([k, v]) => `${k} ${(v / (s.windowMs / 1000)).toFixed(2)}`).join(" ");
        ctx.log(`  ${name} @${c}: ${w.tokensPerSec.toFixed(0)} tok/s, ${w.runsPerSec.toFixed(1)} runs/s, ttft p50 ${dist(w.ttftMs).p50.toFixed(2)} ms, cores used: ${cpu}${w.cut ? `, ${w.cut} cut after the drain` : ""}${w.errors ? `, ${w.errors} errors (${w.firstError})` : ""}`);
      }
    }
    rows.push(...pointRows({ c, windows, tokens: s.tokens, peerJobs: ctx.settings.peerJobs, figure: FIGURES[protocol] }));
  }
  return rows;
}

/** Token parts/s at every point; TTFT at 1 and 50 streams (at 200 the client's own event loop, busy with 200 streams, weighs on every reading). */
function pointRows(o: { c: number; windows: Record<SdkTarget, LoadWindow[]>; tokens: number; peerJobs: number; figure: string }): Row[] {
  const { c, windows, tokens, peerJobs, figure: FIGURE } = o;
  const per = (f: (ws: LoadWindow[]) => number) => Object.fromEntries(SDK_TARGETS.map((t) => [t, f(windows[t])])) as Record<SdkTarget, number>;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const { tollgate, peer } = runningAtOnce(c, peerJobs);
  const concurrent_runs = { tollgate, peer };
  const remark = peerQueueRemark(c, peerJobs);
  const streams = `${c} stream${c === 1 ? "" : "s"}`;
  const detail = {
    client: `@langchain/langgraph-sdk Client (${FIGURE}), one per stream, maxRetries 0`,
    concurrent_runs,
    model_tokens_per_run: tokens,
    runs: per((ws) => ws.reduce((n, w) => n + w.runs.length, 0)),
    // PEER sends its whole answer once more at the node's end: one token part per run more.
    token_parts_per_completed_run: per((ws) => mean(ws.flatMap((w) => w.runs.filter((r) => !r.error).map((r) => r.tokens)))),
    errors: per((ws) => ws.reduce((n, w) => n + w.errors, 0)),
    cut_after_drain: per((ws) => ws.reduce((n, w) => n + w.cut, 0)),
    errors_by_kind: Object.fromEntries(SDK_TARGETS.map((t) => [t, errorKinds(windows[t])])),
    tokens_per_sec_each_rep: Object.fromEntries(SDK_TARGETS.map((t) => [t, windows[t].map((w) => Math.round(w.tokensPerSec))])),
    runs_per_sec_each_rep: Object.fromEntries(SDK_TARGETS.map((t) => [t, windows[t].map((w) => +w.runsPerSec.toFixed(1))])),
    cores_used_each_rep: Object.fromEntries(SDK_TARGETS.map((t) => [t, windows[t].map((w) => Object.fromEntries(Object.entries(w.cpu).map(([k, v]) => [k, +(v / (w.windowMs / 1000)).toFixed(2)])))])),
  };
  const tokensPerSec: Row = { group: "sdk", figure: `${FIGURE} token events/s, ${streams}`, unit: "1/s", better: "higher", values: per((ws) => mean(ws.map((w) => w.tokensPerSec))), remark, detail };
  if (c >= 50) {
    const v = tokensPerSec.values;
    tokensPerSec.target = { text: "≥ 2× PEER", met: v.tollgate! >= 2 * v.peer! };
  }
  if (c > 50) return [tokensPerSec];
  const ttft = (p: "p50" | "p99") => per((ws) => dist(ws.flatMap((w) => w.ttftMs))[p]);
  const p50: Row = { group: "sdk", figure: `${FIGURE} TTFT p50, ${streams}`, unit: "ms", better: "lower", values: ttft("p50"), remark, detail: { concurrent_runs, samples: per((ws) => ws.reduce((n, w) => n + w.ttftMs.length, 0)) } };
  const p99: Row = { group: "sdk", figure: `${FIGURE} TTFT p99, ${streams}`, unit: "ms", better: "lower", values: ttft("p99"), remark, detail: { concurrent_runs } };
  if (c === 1) {
    const v = p50.values;
    p50.target = { text: "≤ 0.5× PEER", met: v.tollgate! <= 0.5 * v.peer! };
  }
  return [p50, p99, tokensPerSec];
}

/** Failed runs by what went wrong (`HTTP 503: <body>`, `error event: …`), with a count each. */
function errorKinds(ws: LoadWindow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of ws.flatMap((w) => w.runs)) {
    if (r.error === "aborted" || (!r.error && r.firstTokenUs !== null)) continue;
    const kind = (r.error ?? "no token").slice(0, 200);
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}
