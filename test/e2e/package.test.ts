/**
 * The package as a user gets it: `npm pack` of this repository, installed from the tarball into a
 * temp copy of examples/payout-desk, whose own server (its own tools and model settings) runs as a
 * child process on a real OpenAI-compatible test server. One approval flow goes through it with
 * `tollgate/client` from the installed package; `npx tollgate` starts the packaged server.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { within } from "../helpers/within.js";
import type * as ClientModule from "../../src/client/index.js";
import type { EventOf, ProtocolEvent } from "../../src/protocol/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { REPO_ROOT } from "../helpers/server-process.js";

const exec = promisify(execFile);
const EXAMPLE = "payout-desk";
const READY = /^tollgate listening on (http:\/\/\S+)\s*$/m;
/** Pack, install and build take a while on a busy machine; nothing here is timed. */
const SETUP_TIMEOUT_MS = 240_000;

/**
 * What the copy of the repository that is packed leaves out: installs, builds, VCS, and what runs
 * write meanwhile (local data, screenshots, Studio's state). Tests and benchmarks are copied, so a
 * `files` list that took them in would show in the tarball.
 */
const NOT_COPIED = new Set(["node_modules", ".git", "dist", "data", "test-output", ".langgraph_api", ".mb"]);

/** npm's own variables from an enclosing `npm test` (package, lifecycle, prefix) would steer the inner npm. */
function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^npm_(package|lifecycle)_|^npm_config_local_prefix$|^INIT_CWD$/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** A server's environment: only what a shell needs, so a developer's tollgate variables cannot leak in. */
function serverEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "TMPDIR", "LANG"]) if (process.env[k]) env[k] = process.env[k]!;
  return { ...env, PORT: "0", HOST: "127.0.0.1", ...extra };
}

interface Proc {
  child: ChildProcess;
  url: string;
  out(): string;
  err(): string;
  /** Resolves when the process has exited and every holder of its output pipes (its children too) is gone. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const procs = new Set<ChildProcess>();

/** Starts a command in its own process group and waits for tollgate's listening line. */
async function startProc(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<Proc> {
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  procs.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (out += s));
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (err += s));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => {
      procs.delete(child);
      resolve({ code, signal });
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail("not ready after 60 s"), 60_000);
    const onData = () => {
      const m = READY.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]!);
    };
    function fail(why: string) {
      clearTimeout(timer);
      killGroup(child, "SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")}: ${why}\n--- stderr ---\n${err}\n--- stdout ---\n${out}`));
    }
    child.stdout!.on("data", onData);
    void closed.then(({ code }) => fail(`exited before ready (code ${code})`));
  });
  return { child, url, out: () => out, err: () => err, closed };
}

/** How long a server that cannot start may take to say so and exit. */
const FAILURE_EXIT_MS = 30_000;

/** Runs a command that must fail at start-up and returns its exit code and everything it printed. */
async function runToExit(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  procs.add(child);
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (s: string) => (output += s));
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (output += s));
  const closed = new Promise<number | null>((resolve) => {
    child.once("close", (code) => {
      procs.delete(child);
      resolve(code);
    });
  });
  try {
    return { code: await within(closed, { ms: FAILURE_EXIT_MS, failure: `${cmd} ${args.join(" ")} did not exit`, since: "failing to start" }), output };
  } catch (err) {
    killGroup(child, "SIGKILL");
    throw new Error(`${(err as Error).message}:\n${output}`);
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Sends `signal` to the whole group (as a terminal or a service manager does) and waits for it all to end. */
async function stopProc(p: Proc, signal: NodeJS.Signals = "SIGTERM") {
  killGroup(p.child, signal);
  const timer = setTimeout(() => killGroup(p.child, "SIGKILL"), 15_000);
  const result = await p.closed;
  clearTimeout(timer);
  return result;
}

/** Copies an example project into the work dir and installs the packed tarball into it, as a team would. */
async function installExample(example: string, dir: string): Promise<void> {
  fs.cpSync(path.join(REPO_ROOT, "examples", example), dir, { recursive: true, filter: (src) => !src.split(path.sep).includes("node_modules") });
  await exec("npm", ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: dir,
    // better-sqlite3 takes a local prebuild (see beforeAll) instead of compiling for minutes.
    env: npmEnv({ npm_config_better_sqlite3_local_prebuilds: path.join(work, "prebuilds") }),
    maxBuffer: 16 << 20,
  });
}

/**
 * What tsc says of `files` in `dir`, checked as a demanding project checks them: strict, JS
 * included, and the installed declarations too (no skipLibCheck). Empty when they check.
 */
async function typeCheck(dir: string, files: string[]): Promise<string> {
  fs.writeFileSync(
    path.join(dir, "tsconfig.check.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true,
        allowJs: true, checkJs: true, skipLibCheck: false, types: ["node"],
      },
      files,
    }),
  );
  const tsc = path.join(REPO_ROOT, "node_modules/typescript/bin/tsc");
  const run = await exec(process.execPath, [tsc, "-p", "tsconfig.check.json"], { cwd: dir }).catch((e: { stdout: string }) => e);
  return run.stdout;
}

/** `npm test` in `dir`, as the team runs it (node's own test runner): everything it printed. */
async function npmTest(dir: string): Promise<string> {
  const run = await exec("npm", ["test"], { cwd: dir, env: npmEnv(), maxBuffer: 16 << 20 }).catch((e: { stdout: string; stderr: string }) => e);
  return `${run.stdout}\n${run.stderr}`;
}

let work: string;
let tarball: string;
let tarFiles: string[];
let app: string;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-pkg-"));

  // Pack a copy of the checkout: prepack rebuilds dist/, which the other test files' servers
  // serve the page from meanwhile. The copy is also what a fresh clone packs: no dist/ yet.
  const repo = path.join(work, "repo");
  fs.cpSync(REPO_ROOT, repo, {
    recursive: true,
    filter: (src) => {
      const rel = path.relative(REPO_ROOT, src);
      return !NOT_COPIED.has(rel.split(path.sep)[0]!) && !rel.endsWith(".tgz") && !rel.split(path.sep).includes("node_modules");
    },
  });
  fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(repo, "node_modules"), "dir");
  const packs = path.join(work, "packs");
  fs.mkdirSync(packs);
  await exec("npm", ["pack", "--pack-destination", packs], { cwd: repo, env: npmEnv(), maxBuffer: 16 << 20 });
  const made = fs.readdirSync(packs);
  expect(made).toHaveLength(1);
  tarball = path.join(packs, made[0]!);
  tarFiles = (await exec("tar", ["-tzf", tarball], { maxBuffer: 16 << 20 })).stdout.split("\n").filter(Boolean);

  // better-sqlite3 would compile its native module for a minute or more (no prebuilt binary can
  // be downloaded here); its installer takes a local prebuild instead: this checkout's own build.
  const prebuilds = path.join(work, "prebuilds");
  fs.mkdirSync(prebuilds);
  const sqliteDir = path.join(REPO_ROOT, "node_modules/better-sqlite3");
  const { version } = JSON.parse(fs.readFileSync(path.join(sqliteDir, "package.json"), "utf8")) as { version: string };
  const prebuild = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await exec("tar", ["-czf", path.join(prebuilds, prebuild), "-C", sqliteDir, "build/Release/better_sqlite3.node"]);

  app = path.join(work, "app");
  await installExample(EXAMPLE, app);
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  for (const child of procs) killGroup(child, "SIGKILL");
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("holds the compiled code, declarations and the built page, and no tests or data", () => {
    const names = tarFiles.map((f) => f.replace(/^package\//, ""));
    for (const f of ["package.json", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/main.js", "dist/src/client/index.d.ts",
      "dist/src/protocol/index.js", "dist/src/react/index.js", "dist/web/index.html",
      // The README's map of the docs points into docs/: they travel with it.
      "docs/guides/your-graph.md", "docs/reference/configuration.md"]) {
      expect(names, f).toContain(f);
    }
    expect(names.some((f) => f.startsWith("dist/web/assets/"))).toBe(true);
    const unwanted = names.filter((f) =>
      /^(test|bench|scripts|examples|data|src)\/|\.test\.|\.ts$(?<!\.d\.ts)|\.(sqlite|db|tgz)$/.test(f),
    );
    expect(unwanted).toEqual([]);
  });

  it("loads each entry from a plain Node ESM script; react only when the project brings it", async () => {
    const load = async (entries: string[]) => {
      const script = `for (const e of ${JSON.stringify(entries)}) console.log(e, Object.keys(await import(e)).sort().join(","));`;
      fs.writeFileSync(path.join(app, "entries.mjs"), script);
      return (await exec(process.execPath, ["entries.mjs"], { cwd: app })).stdout;
    };
    const server = await load(["tollgate", "tollgate/client", "tollgate/protocol"]);
    expect(server).toMatch(/^tollgate .*\bcreateTollgate\b.*\bdefineTool\b.*\bloadConfig\b.*\bserveTollgate\b/m);
    expect(server).toMatch(/^tollgate\/client .*\bTollgateClient\b/m);
    expect(server).toMatch(/^tollgate\/protocol .*\bprotocolEventSchema\b/m);
    // react is an optional peer: a server-only project has none, and the react entry says so.
    await expect(load(["tollgate/react"])).rejects.toThrow(/Cannot find package 'react'/);
    const peers = (JSON.parse(fs.readFileSync(path.join(app, "node_modules/tollgate/package.json"), "utf8")) as {
      peerDependencies: Record<string, string>;
    }).peerDependencies;
    await exec("npm", ["install", `react@${peers.react}`, `react-dom@${peers["react-dom"]}`, "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: app,
      env: npmEnv(),
    });
    expect(await load(["tollgate/react"])).toMatch(/^tollgate\/react .*\bTollgateSession\b.*\buseTollgate\b/m);
  }, 120_000);

  it("declares every entry with types first, and they check under strict without skipLibCheck with only what npm installed", async () => {
    // The example's own JS and one import of each entry, checked against the installed declarations
    // and everything they reach (pg's and better-sqlite3's types, LangChain's): a demanding project
    // checks its libraries' declarations too. It installed no @types itself: Node's come with pg's.
    fs.writeFileSync(
      path.join(app, "entries.ts"),
      [
        'import { createTollgate, defineTool, loadConfig, serveTollgate, type ApprovalPolicy, type Config, type ToolMeta } from "tollgate";',
        'import { TollgateClient } from "tollgate/client";',
        'import type { ProtocolEvent } from "tollgate/protocol";',
        'import { useTollgate } from "tollgate/react";',
        'const policy: ApprovalPolicy = "approver";',
        'const meta: ToolMeta = { kind: "irreversible", sensitive: ["iban"], policy, editable: false };',
        "const config: Config = loadConfig({});",
        'const client = new TollgateClient({ baseUrl: "http://127.0.0.1:1" });',
        "const seen: ProtocolEvent[] = [];",
        "export { createTollgate, defineTool, serveTollgate, useTollgate, meta, config, client, seen };",
        "",
      ].join("\n"),
    );
    expect(await typeCheck(app, ["entries.ts", "server.js", "tools.js"])).toBe("");
  }, 60_000);

  it("the example serves its own tools and model: a payout waits for a second person, then runs once", async () => {
    const IBAN = "DE89370400440532013000";
    const model: FakeOpenAI = await startFakeOpenAI({
      script: [
        { toolCalls: [{ id: "look1", name: "lookup_customer", args: { customer_id: "C-100" } }] },
        { toolCalls: [{ id: "pay1", name: "send_payout", args: { customer_id: "C-100", amount_cents: 12_500, iban: IBAN } }] },
        { text: "Paid out." },
      ],
    });
    const tokens = {
      "tok-requester-01": { sub: "sam", roles: ["user"] },
      "tok-approver-001": { sub: "pat", roles: ["approver"] },
    };
    const server = await startProc(process.execPath, ["server.js"], app, serverEnv({
      DATA_DIR: path.join(work, "example-data"),
      AUTH_TOKENS: JSON.stringify(tokens),
      DESK_MODEL: "desk-model",
      DESK_BASE_URL: model.url,
      DESK_API_KEY: "sk-desk-test-key-0001",
    }));
    try {
      // The client as the example's users import it: resolved through the installed package's exports.
      const entry = createRequire(path.join(app, "package.json")).resolve("tollgate/client");
      expect(entry).toContain(`${path.sep}node_modules${path.sep}tollgate${path.sep}`);
      const { TollgateClient } = (await import(pathToFileURL(entry).href)) as typeof ClientModule;
      const sam = new TollgateClient({ baseUrl: server.url, token: "tok-requester-01" });
      const pat = new TollgateClient({ baseUrl: server.url, token: "tok-approver-001" });

      const asked = await sam.run("payout-1", "Pay Ada what we owe her.").collect();
      const intr = asked.at(-1) as EventOf<"interrupt">;
      expect(intr.type).toBe("interrupt");
      expect(intr.calls).toMatchObject([{ call_id: "pay1", name: "send_payout", policy: "approver", args: { iban: "***", amount_cents: 12_500 } }]);
      expect(JSON.stringify(asked)).not.toContain(IBAN);
      expect(of(asked, "tool_result")).toMatchObject([{ call_id: "look1", name: "lookup_customer", status: "ok" }]);
      // The model was offered the example's tools, not the demo's, under the example's model name.
      const first = model.requests[0]!.body;
      expect(first.model).toBe("desk-model");
      expect(first.tools.map((t: { function: { name: string } }) => t.function.name).sort()).toEqual(["lookup_customer", "send_payout"]);
      expect(first.messages[0]).toMatchObject({ role: "system", content: expect.stringMatching(/^You are a support desk agent\./) });

      // Four eyes: the requester may not approve its own payout.
      const own = await fetch(`${server.url}/threads/payout-1/resume`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer tok-requester-01" },
        body: JSON.stringify({ interrupt_id: intr.interrupt_id, decisions: [{ call_id: "pay1", approved: true }] }),
      });
      expect(own.status).toBe(403);

      const approved = await pat.resume("payout-1", intr.interrupt_id, { decisions: [{ call_id: "pay1", approved: true }] }).collect();
      const [result] = of(approved, "tool_result");
      expect(result).toMatchObject({ call_id: "pay1", name: "send_payout", status: "ok" });
      expect(JSON.parse(result!.output!)).toEqual({ payout_id: "P-1", customer_id: "C-100", amount_cents: 12_500, iban_last4: "3000" });
      expect(approved.at(-1)).toMatchObject({ type: "done", message: "Paid out." });
      expect(JSON.stringify(approved)).not.toContain(IBAN);
      // The tool got the real account number; the model read what it returned.
      expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain('"payout_id\\":\\"P-1\\"');
      expect(server.out() + server.err()).not.toContain(IBAN);
    } finally {
      expect((await stopProc(server)).code).toBe(0);
      await model.close();
    }
    // The packaged server logs JSON lines with the run's ids and outcome (read once it has exited:
    // the line is written as the run is let go, which may be after its last event was sent).
    const lines = server.out().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const finished = lines.filter((l) => l.msg === "run finished");
    expect(finished.map((l) => [l.principal, l.outcome])).toEqual([["sam", "interrupted"], ["pat", "completed"]]);
    // The ready line names the example's own model, not MODEL's default.
    expect(lines.filter((l) => l.msg === "ready")).toMatchObject([{ model: "desk-model", store: "sqlite" }]);
  }, 90_000);

  it("the example's own test (its README recipe) passes against the installed package: its tools through the gate on tollgate/testing's model, no key", async () => {
    const names = tarFiles.map((f) => f.replace(/^package\//, ""));
    expect(names).toEqual(expect.arrayContaining(["dist/src/testing/index.js", "dist/src/testing/index.d.ts"]));
    // Checked against the installed declarations first, as a team's editor would check it.
    expect(await typeCheck(app, ["test/payout.test.js"])).toBe("");
    // Then `npm test`, as the team runs it: node's own test runner, nothing but the example's dependencies.
    const output = await npmTest(app);
    expect(output, output).toMatch(/\bpass 1\b/);
    expect(output, output).toMatch(/\bfail 0\b/);
  }, 90_000);

  /** The examples that serve a team's own graph, and the files a team's editor would check. */
  const GRAPH_EXAMPLES = [
    { example: "support-supervisor", what: "a supervisor graph, the gate one level down in a sub-agent", files: ["graph.js", "tools.js", "server.js", "test/supervisor.test.js"] },
    { example: "hitl-desk", what: "createAgent with humanInTheLoopMiddleware", files: ["agent.js", "server.js", "test/desk.test.js"] },
    { example: "plan-confirm", what: "a plan node that asks with interrupt() before the gate", files: ["graph.js", "server.js", "test/plan.test.js"] },
    { example: "mcp-desk", what: "createAgent over tools from a stdio MCP server, kinds from its hints", files: ["agent.js", "mcp-server.js", "server.js", "test/desk.test.js"] },
  ];

  it.each(GRAPH_EXAMPLES)("the $example example ($what) serves its own graph from the installed package, type-checked, and its test passes", async ({ example, files }) => {
    const dir = path.join(work, example);
    await installExample(example, dir);
    expect(await typeCheck(dir, files)).toBe("");
    const output = await npmTest(dir);
    expect(output, output).toMatch(/\bpass 1\b/);
    expect(output, output).toMatch(/\bfail 0\b/);
  }, 240_000);

  // The example's server is the docs' snippet (docs/guides/your-tools.md): neither it nor the bin may greet a team's first
  // mistake with a stack, nor print the database password.
  const UNREACHABLE = { DATABASE_URL: "postgres://u:secretpw@127.0.0.1:1/x" }; // nothing listens on port 1
  const example = () => [process.execPath, "server.js"];
  const bin = () => [path.join(app, "node_modules/.bin/tollgate")];
  const failures: { who: string; what: string; cmd: () => string[]; env: Record<string, string>; code: number; line: RegExp }[] = [
    { who: "the example's server", what: "an unreachable DATABASE_URL", cmd: example, env: UNREACHABLE, code: 1,
      line: /^payout desk failed to start: connect ECONNREFUSED 127\.0\.0\.1:1$/ },
    { who: "the example's server", what: "a refused configuration", cmd: example, env: { PORT: "not-a-port" }, code: 2,
      line: /^payout desk failed to start: invalid configuration: PORT: / },
    { who: "the bin", what: "an unreachable DATABASE_URL", cmd: bin, env: UNREACHABLE, code: 1,
      line: /^tollgate failed to start: connect ECONNREFUSED 127\.0\.0\.1:1$/ },
  ];
  it.each(failures)("$who on $what: one line, exit $code, no stack, no password", async ({ cmd, env, code, line }) => {
    const [exe, ...args] = cmd();
    const run = await runToExit(exe!, args, app, serverEnv({ DATA_DIR: path.join(work, "failing-data"), ...env }));
    const lines = run.output.split("\n").filter((l) => l.trim() !== "");
    expect(lines, run.output).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(run.output).not.toMatch(/^\s+at /m);
    expect(run.output).not.toContain("secretpw");
    expect(run.code).toBe(code);
  }, 60_000);

  it("`npx tollgate` starts the packaged server with its page, and stops on SIGTERM", async () => {
    const server = await startProc("npx", ["--no", "tollgate"], app, serverEnv({ DATA_DIR: path.join(work, "bin-data"), MODEL: "demo" }));
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    // The page is found inside the installed package, not in the cwd.
    const page = await fetch(`${server.url}/`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    await stopProc(server, "SIGTERM");
    expect(server.out() + server.err()).toMatch(/SIGTERM: shutting down/);
    expect(server.out() + server.err()).not.toMatch(/took too long|failed/);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  }, 90_000);
});

function of<T extends ProtocolEvent["type"]>(events: ProtocolEvent[], type: T): EventOf<T>[] {
  return events.filter((e): e is EventOf<T> => e.type === type);
}
