// Forked by window-probes.ts for one measured window: GETs one URL (a server's health endpoint)
// every ~20 ms over one keep-alive connection of its own, in a process of its own, so the load
// generator's busy event loop is not in its timings. It starts at once (the connection is warm
// before the window opens); IPC "open" starts keeping round trips, "close" stops (a request in
// flight is waited for: it was sent inside the window) and sends them back, then it exits.
// Ticks are fixed-rate: a slow answer delays the next GET, never adds a second one in flight.
// argv: <url> [everyMs]. Plain .mjs: no TypeScript loader to start.
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

const url = process.argv[2];
const everyMs = Number(process.argv[3]) || 20;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const sockets = new WeakSet();
let connections = 0;
let keeping = false;
let closing = false;
let ready = false;
const ms = [];
let errors = 0;
let firstError = null;

process.on("message", (m) => {
  if (m === "open") keeping = true;
  if (m === "close") closing = true;
});
process.on("disconnect", () => process.exit(0)); // the bench is gone

function get() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200 ? { ms: performance.now() - t0 } : { error: `HTTP ${res.statusCode}` }));
      res.on("error", (e) => resolve({ error: e.message }));
    });
    req.on("socket", (s) => {
      if (!sockets.has(s)) sockets.add(s), connections++;
    });
    req.setTimeout(30_000, () => req.destroy(new Error("no answer in 30 s")));
    req.on("error", (e) => resolve({ error: e.message }));
  });
}

let next = performance.now();
while (!closing) {
  const kept = keeping;
  const r = await get();
  if (!ready) {
    ready = true;
    process.send({ type: "ready", error: r.error ?? null });
  }
  if (kept) {
    if (r.error) {
      errors++;
      firstError ??= r.error;
    } else ms.push(r.ms);
  }
  next += everyMs;
  const wait = next - performance.now();
  if (wait > 0) await sleep(wait);
  else next = performance.now();
}
process.send({ type: "samples", ms, errors, firstError, connections }, () => process.exit(0));
