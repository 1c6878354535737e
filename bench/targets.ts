/**
 * The processes one bench run starts: the model, and the three servers it compares (FLOOR,
 * TOLLGATE, PEER), each with the request that streams one run of a message on a new thread.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Child, freePort, listeningLine, REPO_ROOT, startChild, tsxArgs } from "./processes.js";

export type TargetName = "floor" | "tollgate" | "peer";
export const TARGETS: readonly TargetName[] = ["floor", "tollgate", "peer"];

export interface Target {
  name: TargetName;
  child: Child;
  /** The POST that streams one run of `message`, on a new thread where the server has threads. */
  streamRequest(message: string): { path: string; body: string };
  /** The SSE `event:` of a frame that carries one token. */
  tokenEvent: string;
  /** The server's health endpoint (GET). */
  healthPath: string;
}

// The key is a configured secret: tollgate holds back a token whose end could begin it (see
// src/ops/token-filter.ts). Upper case, so no token of the model server (` ~<base 36 stamp>`) can,
// and every token's transit is measured alone, as it is for FLOOR and PEER.
const MODEL_ENV = (modelUrl: string) => ({ MODEL: "fake", OPENAI_API_KEY: "BENCH-KEY", OPENAI_BASE_URL: `${modelUrl}/v1` });
const tempDirs: string[] = [];
process.once("exit", () => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(label: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `tollgate-bench-${label}-`));
  tempDirs.push(d);
  return d;
}

export function startModel(): Promise<Child> {
  return startChild({ name: "model", args: tsxArgs("bench/model-server.ts"), ready: listeningLine });
}

/** How a server is started: extra node flags (e.g. `--cpu-prof`), the memory suite's GC hook, the streaming suite's event-loop lag. */
export interface StartFlags {
  nodeFlags?: string[];
  gcOnSignal?: boolean;
  loopLag?: boolean;
}

export async function startFloor(modelUrl: string, f: StartFlags = {}): Promise<Target> {
  const child = await startChild({ name: "floor", args: tsxArgs("bench/floor-server.ts", f.nodeFlags), env: MODEL_ENV(modelUrl), ready: listeningLine, gcOnSignal: f.gcOnSignal, loopLag: f.loopLag });
  return {
    name: "floor",
    child,
    tokenEvent: "token",
    healthPath: "/healthz",
    streamRequest: (message) => ({ path: "/stream", body: JSON.stringify({ message }) }),
  };
}

/** The real server (`src/main.ts`) on a fresh DATA_DIR. */
export async function startTollgate(modelUrl: string, f: StartFlags = {}): Promise<Target> {
  const dataDir = tempDir("tollgate");
  const child = await startChild({
    name: "tollgate",
    args: tsxArgs("src/main.ts", f.nodeFlags),
    env: { ...MODEL_ENV(modelUrl), PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir },
    ready: listeningLine,
    gcOnSignal: f.gcOnSignal,
    loopLag: f.loopLag,
  });
  return {
    name: "tollgate",
    child,
    tokenEvent: "token",
    healthPath: "/healthz",
    streamRequest: (message) => ({ path: `/threads/${randomUUID()}/runs`, body: JSON.stringify({ message }) }),
  };
}

/**
 * PEER: `langgraph dev` serving `graphs/studio.ts:graph` from the repository's langgraph.json,
 * run from a temp project dir so its `.langgraph_api/` never lands in the work tree. Tokens are
 * the graph's `custom` stream: the same chunks tollgate turns into `token` events.
 */
export async function startPeer(modelUrl: string, jobs: number, f: StartFlags = {}): Promise<Target> {
  const dir = tempDir("peer");
  const config = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "langgraph.json"), "utf8")) as { graphs: Record<string, string>; env?: unknown };
  for (const [id, spec] of Object.entries(config.graphs)) {
    const [file, symbol] = spec.split(":");
    // Relative to the config's dir: the CLI joins an absolute path onto it.
    config.graphs[id] = `${path.relative(dir, path.resolve(REPO_ROOT, file!))}:${symbol}`;
  }
  delete config.env; // the bench sets the environment itself
  fs.writeFileSync(path.join(dir, ".gitignore"), ".langgraph_api\n");
  fs.writeFileSync(path.join(dir, "langgraph.json"), JSON.stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const cli = path.join(REPO_ROOT, "node_modules/.bin/langgraphjs");
  const child = await startChild({
    name: "peer",
    args: [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port), "--n-jobs-per-worker", String(jobs), "--config", path.join(dir, "langgraph.json")],
    env: {
      ...MODEL_ENV(modelUrl),
      DATA_DIR: path.join(dir, "data"),
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      LANGSMITH_TRACING: "false",
      LANGCHAIN_TRACING_V2: "false",
      BROWSER: "none",
    },
    timeoutMs: 90_000,
    gcOnSignal: f.gcOnSignal,
    loopLag: f.loopLag,
    ready: async () => {
      try {
        return (await fetch(`${url}/ok`, { signal: AbortSignal.timeout(1000) })).ok ? url : null;
      } catch {
        return null;
      }
    },
  });
  return {
    name: "peer",
    child,
    tokenEvent: "custom",
    healthPath: "/ok",
    streamRequest: (message) => ({
      path: `/threads/${randomUUID()}/runs/stream`,
      body: JSON.stringify({
        assistant_id: "agent",
        input: { messages: [{ role: "user", content: message }] },
        stream_mode: ["custom"],
        if_not_exists: "create",
        on_disconnect: "cancel",
      }),
    }),
  };
}
