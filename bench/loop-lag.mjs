// Preloaded (NODE_OPTIONS=--import) into the servers the streaming suite compares: how late the
// event loop runs, read inside the server process itself. `perf_hooks.monitorEventLoopDelay`
// (a timer every 10 ms; each sample is the time between its firings, so lag = sample − 10 ms)
// is off until the bench asks. The bench writes `{"cmd":"start"|"stop","seq":N,"sentUs":…}` to
// `$BENCH_LOOP_LAG_DIR/command` and sends SIGUSR1 (SIGUSR2 is gc-on-signal.mjs's): "start"
// resets and enables the histogram, "stop" disables it; either way the answer, with `seq`, how
// long the signal waited for the loop (`delayMs`, on the monotonic clock all processes share),
// and on "stop" the figures in ms, is written to `<dir>/<pid>.json`. The histogram records a
// sample only when its timer fires after an earlier firing: a block in progress at "start" is
// not counted, and "stop" is answered from a 1 ms timeout, after the histogram's own overdue
// timer has recorded the block in progress at "stop". `<dir>/<pid>.ready` tells the bench which
// processes of a group have this module (SIGUSR1 would open the inspector on any other node
// process). Plain .mjs so it loads before any TypeScript. Nothing else changes.
import fs from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const dir = process.env.BENCH_LOOP_LAG_DIR;
const RESOLUTION_MS = 10;

if (dir) {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let startedAt = 0;
  const lag = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  const sinceMs = (sentUs) => (typeof sentUs === "number" ? Number(process.hrtime.bigint() / 1000n) / 1000 - sentUs / 1000 : null);
  const answer = (o) => {
    const file = path.join(dir, `${process.pid}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ pid: process.pid, ...o }));
    fs.renameSync(`${file}.tmp`, file); // the bench never reads half a file
  };
  process.on("SIGUSR1", () => {
    let command;
    try {
      command = JSON.parse(fs.readFileSync(path.join(dir, "command"), "utf8"));
    } catch {
      return; // not the bench's signal
    }
    const delayMs = sinceMs(command.sentUs);
    if (command.cmd === "start") {
      h.disable();
      h.reset();
      h.enable();
      startedAt = performance.now();
      answer({ seq: command.seq, state: "started", delayMs });
    } else if (command.cmd === "stop") {
      setTimeout(() => {
        h.disable();
        const n = h.count;
        answer({
          seq: command.seq,
          state: "stopped",
          delayMs,
          ms: performance.now() - startedAt,
          samples: n,
          p50: n ? lag(h.percentile(50)) : null,
          p99: n ? lag(h.percentile(99)) : null,
          max: n ? lag(h.max) : null,
          mean: n ? lag(h.mean) : null,
        });
      }, 1);
    }
  });
  fs.writeFileSync(path.join(dir, `${process.pid}.ready`), "");
}
