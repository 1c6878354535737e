/**
 * Starts `langgraph dev` (the CLI LangGraph Studio talks to) as a real child process, through
 * the package's own binary, on a free port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { freePort } from "../../helpers/free-port.js";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CLI_BIN = path.join(REPO_ROOT, "node_modules/.bin/langgraphjs");
const READY_TIMEOUT_MS = 45_000;
const KILL_GRACE_MS = 5_000;

/** tollgate's own variables: dropped from the inherited env so a developer's shell cannot leak in. */
const SCRUBBED = ["PORT", "HOST", "DATA_DIR", "MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MAX_ROUNDS", "DEMO_TOKEN_DELAY_MS"];

/**
 * Why `langgraph dev` cannot start on this machine at all, or null when it can. Only these
 * preconditions make the Studio test skip; a CLI that starts and then fails is a test failure.
 */
export function langgraphDevUnavailable(): string | null {
  if (!fs.existsSync(CLI_BIN)) return `${path.relative(REPO_ROOT, CLI_BIN)} is missing (run npm ci)`;
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  // @langchain/langgraph-cli's engines field: ^18.19.0 || >=20.16.0.
  if (major < 20 || (major === 20 && minor < 16)) return `Node ${process.versions.node} is older than the CLI needs (>=20.16)`;
  return null;
}

export interface LangGraphDev {
  url: string;
  dataDir: string;
  /** Everything the CLI and its server printed so far. */
  output(): string;
  /** Ends the whole process tree (CLI, tsx, server) and removes the temp dirs. */
  stop(): Promise<void>;
}

/**
 * Runs the repository's `langgraph.json` from a temp project dir, so the CLI's own files
 * (`.langgraph_api/`: threads and checkpoints) never mix with a developer's. The graph and `.env`
 * paths are rewritten to point back at the repo; the process cwd stays the repo root.
 */
export async function startLangGraphDev(env: Record<string, string> = {}): Promise<LangGraphDev> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-studio-"));
  const dataDir = path.join(tmp, "data");
  const configPath = writeConfigCopy(path.join(tmp, "project"));
  const port = await freePort();

  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const k of SCRUBBED) delete childEnv[k];
  Object.assign(childEnv, {
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    LANGSMITH_TRACING: "false",
    LANGCHAIN_TRACING_V2: "false",
    BROWSER: "none",
    MODEL: "demo",
    DATA_DIR: dataDir,
    DEMO_TOKEN_DELAY_MS: "0",
    ...env,
  });
  const args = ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port), "--config", configPath];
  // Its own process group: the CLI spawns tsx, which spawns the server; one signal reaches all.
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: REPO_ROOT,
    env: childEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // ESRCH: the group is already gone
    }
  };
  const lastResort = () => killGroup("SIGKILL");
  process.once("exit", lastResort);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", lastResort);
    killGroup("SIGTERM");
    if (!(await groupGone(child, KILL_GRACE_MS))) killGroup("SIGKILL");
    await groupGone(child, KILL_GRACE_MS);
    await exited;
    fs.rmSync(tmp, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, child, () => out);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, dataDir, output: () => out, stop };
}

/** The repository's `langgraph.json` (graph specs as `"./file:export"` or `{ path, description }`). */
function readConfig(): { graphs: Record<string, string | { path: string; description?: string }>; env?: string } {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "langgraph.json"), "utf8"));
}

/** The ids of the graphs `langgraph.json` serves in Studio, with each one's file and export. */
export function studioGraphs(): Array<{ id: string; file: string; symbol: string }> {
  return Object.entries(readConfig().graphs).map(([id, spec]) => {
    const [file, symbol] = (typeof spec === "string" ? spec : spec.path).split(":");
    return { id, file: file!, symbol: symbol! };
  });
}

function writeConfigCopy(projectDir: string): string {
  // Relative to the copy: the API server does not take absolute graph paths.
  const fromCopy = (p: string) => path.relative(projectDir, path.resolve(REPO_ROOT, p));
  const config = readConfig();
  for (const { id, file, symbol } of studioGraphs()) {
    const spec = config.graphs[id]!;
    const moved = `${fromCopy(file)}:${symbol}`;
    config.graphs[id] = typeof spec === "string" ? moved : { ...spec, path: moved };
  }
  if (typeof config.env === "string") config.env = fromCopy(config.env);
  fs.mkdirSync(projectDir, { recursive: true });
  // The CLI adds `.langgraph_api` to the project's .gitignore unless it is there already.
  fs.writeFileSync(path.join(projectDir, ".gitignore"), ".langgraph_api\n");
  const configPath = path.join(projectDir, "langgraph.json");
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2));
  return configPath;
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`langgraph dev exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output()}`);
    }
    try {
      const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`langgraph dev was not ready within ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

/** Waits until no process of the child's group is left (signal 0 probes without killing). */
async function groupGone(child: ChildProcess, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      process.kill(-child.pid!, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

