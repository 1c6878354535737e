import { RunCancelled } from "../run-abort.js";
import type { RunContext } from "../run-context.js";

/**
 * Cancels every run of this process with reason `shutdown`, those whose claim is still being
 * written included, and waits for them to end; open interrupts stay as they are. Then writes the
 * events still queued and stops the settler.
 */
export async function stopEveryRun(ctx: Pick<RunContext, "inFlight" | "persister" | "settler">): Promise<void> {
  const shutdown = new RunCancelled("shutdown");
  const starting = [...ctx.inFlight.starting.values()];
  for (const s of starting) s.controller.abort(shutdown);
  const launched = (await Promise.all(starting.map((s) => s.started))).filter((r) => r !== undefined);
  const runs = [...new Set([...launched, ...ctx.inFlight.active.values()])];
  for (const r of runs) r.controller.abort(shutdown);
  await Promise.all(runs.map((r) => r.done));
  await ctx.persister.flush();
  ctx.settler.stop(); // what it still holds, the lease sweep (or start-up recovery) settles
}
