import { systemClock } from "../clock.js";
import { createSecretScrubber, Metrics, NO_SEALER, Redactor } from "../ops/index.js";
import { LiveRuns } from "./live-runs.js";
import { EventPersister } from "./stream/event-persister.js";
import type { RunContext, RunContextOptions, ThreadSettler } from "./run-context.js";
import { Settler } from "./recovery/settler.js";

/**
 * The run machinery's shared context (see `RunContext`): the dependencies given, the maps of this
 * process's runs, and the settler working on them. The settler takes the context it belongs to,
 * so it is made last.
 */
export function createRunContext(o: RunContextOptions): RunContext {
  const { log } = o;
  const metrics = o.metrics ?? new Metrics();
  const clock = o.clock ?? systemClock;
  const ctx: Omit<RunContext, "settler"> & { settler?: ThreadSettler } = {
    inFlight: new LiveRuns(clock),
    persister: new EventPersister(o.store.runs, (err, queued) =>
      log.warn("run event log write refused; kept for a retry", { queued, message: err instanceof Error ? err.message : String(err) }),
    ),
    redactor: new Redactor(o.registry, o.scrubber ?? createSecretScrubber()),
    graphs: o.graphs,
    store: o.store,
    registry: o.registry,
    settings: o.settings,
    log,
    access: o.access,
    clock,
    metrics,
    sealer: o.sealer ?? NO_SEALER,
    gateRefused(run, call) {
      metrics.gateRefused(call.name);
      log.warn("irreversible tool called without a live approval; refused", {
        thread_id: run.threadId,
        run_id: run.runId,
        graph_id: run.graph.id,
        tool: call.name,
        call_id: call.id,
      });
    },
  };
  const whole = ctx as RunContext;
  ctx.settler = new Settler(whole);
  return whole;
}
