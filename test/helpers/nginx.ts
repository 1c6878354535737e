/**
 * Debian's real nginx in front of test replicas, running the deploy/ recipe as written: its
 * upstream servers and listen port swapped for the test's, wrapped in a minimal nginx.conf whose
 * pid, logs and temp files live in a temp dir, in the foreground, as a child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { freePort } from "./free-port.js";
import { REPO_ROOT } from "./server-process.js";
import { within } from "./within.js";

export const NGINX_BIN = process.env.NGINX_BIN ?? "/usr/sbin/nginx";
export const RECIPE = path.join(REPO_ROOT, "deploy/nginx/tollgate.conf");

/** Whether nginx can run here, and why not. */
export function nginxAvailable(): { ok: true } | { ok: false; why: string } {
  return fs.existsSync(NGINX_BIN) ? { ok: true } : { ok: false, why: `${NGINX_BIN} not found (install it: apt-get install -y nginx, or set NGINX_BIN)` };
}

export interface RunningNginx {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The recipe's access log, as written so far. */
  accessLog(): string;
  /** Stops nginx and removes its temp dir. */
  stop(): Promise<void>;
}

/**
 * The recipe with its `server host:port` lines replaced by `upstreams` (in order), its `listen`
 * by `port`; `extraHttp` goes into the wrapper's http block (e.g. a header naming the upstream).
 */
export function recipeFor(o: { upstreams: readonly string[]; port: number; accessLog: string }): string {
  let i = 0;
  const text = fs.readFileSync(RECIPE, "utf8").replace(/^(\s*)server 127\.0\.0\.1:\d+(.*);$/gm, (_m, indent: string, rest: string) => {
    const up = o.upstreams[i++];
    if (!up) throw new Error("the recipe names more upstream servers than the test started");
    return `${indent}server ${up}${rest};`;
  });
  if (i !== o.upstreams.length) throw new Error(`the recipe names ${i} upstream servers, the test started ${o.upstreams.length}`);
  return text.replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${o.port};`).replace("/var/log/nginx/tollgate.access.log", o.accessLog);
}

/** Starts nginx on the recipe and waits until it answers. */
export async function startNginx(o: { upstreams: readonly string[]; extraHttp?: string }): Promise<RunningNginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-nginx-"));
  const port = await freePort();
  for (const d of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, "tollgate.conf"), recipeFor({ upstreams: o.upstreams, port, accessLog: path.join(dir, "tollgate.access.log") }));
  fs.writeFileSync(
    path.join(dir, "nginx.conf"),
    [
      "worker_processes 1;",
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      "events { worker_connections 256; }",
      "http {",
      `  access_log ${dir}/access.log;`,
      `  client_body_temp_path ${dir}/client_body;`,
      `  proxy_temp_path ${dir}/proxy;`,
      `  fastcgi_temp_path ${dir}/fastcgi;`,
      `  uwsgi_temp_path ${dir}/uwsgi;`,
      `  scgi_temp_path ${dir}/scgi;`,
      o.extraHttp ?? "",
      `  include ${dir}/tollgate.conf;`,
      "}",
      "",
    ].join("\n"),
  );
  let output = "";
  const child: ChildProcess = spawn(NGINX_BIN, ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-g", "daemon off;"], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const up = (async () => {
    for (;;) {
      const answer = await Promise.race([probe(port).then((ok) => (ok ? "up" : "not yet")), exited.then(() => "exited" as const)]);
      if (answer === "up") return;
      if (answer === "exited") throw new Error(`nginx exited before it answered:\n${output}${readIf(path.join(dir, "error.log"))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  await within(up, { ms: 15_000, failure: `nginx did not answer on ${url}:\n${output}` });
  return {
    url,
    port,
    accessLog: () => readIf(path.join(dir, "tollgate.access.log")),
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGQUIT");
        await within(exited, { ms: 10_000, failure: "nginx did not exit after SIGQUIT" }).catch(() => child.kill("SIGKILL"));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether something answers HTTP on the port (any status). */
function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/healthz", timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
  });
}

function readIf(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
}
