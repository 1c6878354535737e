/**
 * `npx tsx bench/io-probe.ts [--streams 200] [--seconds 6] [--tokens 100]`: TOLLGATE alone under
 * closed-loop load, with what its process group wrote (bytes and write calls, /proc/<pid>/io:
 * SQLite's WAL appends and checkpoints, and the sockets) per token event and per run, beside the
 * token rate and server CPU per token event.
 */
import fs from "node:fs";
import { directive } from "./directive.js";
import { closedLoop } from "./load.js";
import { startModel, startTollgate } from "./targets.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};

function groupIo(pgid: number): { wchar: number; syscw: number; write_bytes: number } {
  const sum = { wchar: 0, syscw: 0, write_bytes: 0 };
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      for (const line of fs.readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n")) {
        const [k, v] = line.split(": ");
        if (k! in sum) sum[k as keyof typeof sum] += Number(v);
      }
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

const streams = Number(arg("streams", "200"));
const seconds = Number(arg("seconds", "6"));
const tokens = Number(arg("tokens", "100"));
const model = await startModel();
const tg = await startTollgate(model.url);
try {
  const message = () => directive({ tokens, firstGap: 5 });
  await closedLoop(tg, 8, 1500, message);
  let before = groupIo(tg.child.proc.pid!);
  let after = before;
  const w = await closedLoop(tg, streams, seconds * 1000, message, {
    rampMs: 2000,
    drainMs: 10_000,
    watch: {
      io: () => {
        // called at the window's opening and closing
        before = after;
        after = groupIo(tg.child.proc.pid!);
        return 0;
      },
    },
  });
  const d = { wchar: after.wchar - before.wchar, syscw: after.syscw - before.syscw, disk: after.write_bytes - before.write_bytes };
  const events = w.tokensPerSec * seconds;
  const runs = w.runsPerSec * seconds;
  process.stdout.write(
    `@${streams}: ${w.tokensPerSec.toFixed(0)} token events/s, ${w.runsPerSec.toFixed(1)} runs/s, ${((w.cpu.server! * 1e6) / events).toFixed(0)} µs server CPU per token event; ` +
      `written ${(d.wchar / events).toFixed(0)} B and ${(d.syscw / events).toFixed(2)} write calls per token event (${(d.wchar / runs / 1024).toFixed(0)} KiB per run, ${(d.wchar / seconds / 1e6).toFixed(1)} MB/s; to disk ${(d.disk / seconds / 1e6).toFixed(1)} MB/s)\n`,
  );
} finally {
  await tg.child.kill();
  await model.kill();
}
