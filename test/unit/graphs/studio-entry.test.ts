/**
 * LangGraph Studio's graph lives in its own entry file: importing the server's module must not
 * build that graph (a second model) nor read the environment, which only src/main.ts parses.
 * Checked in a fresh child process, so the module graph is loaded for the first time.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../helpers/server-process.js";

/**
 * Imports `file` with `process.env` behind a proxy that records each read made from the
 * repository's own code (a stack frame in src/ or graphs/; libraries' reads are their business),
 * then prints those reads and whatever `probe` evaluates to.
 */
function importWatchingEnv(file: string, probe = "null"): { reads: string[]; probe: unknown } {
  const url = pathToFileURL(path.join(REPO_ROOT, file)).href;
  const ownCode = JSON.stringify([path.join(REPO_ROOT, "src") + path.sep, path.join(REPO_ROOT, "graphs") + path.sep]);
  const script = `
    const ownCode = ${ownCode};
    const reads = new Set();
    const real = process.env;
    const note = (key) => {
      const stack = new Error().stack.split("\\n").slice(2).join("\\n");
      if (ownCode.some((dir) => stack.includes(dir))) reads.add(String(key));
    };
    process.env = new Proxy(real, {
      get(target, key) { if (typeof key === "string") note(key); return Reflect.get(target, key); },
      has(target, key) { if (typeof key === "string") note(key); return Reflect.has(target, key); },
      ownKeys(target) { note("(all keys)"); return Reflect.ownKeys(target); },
    });
    const mod = await import(${JSON.stringify(url)});
    process.env = real;
    console.log(JSON.stringify({ reads: [...reads], probe: ${probe} }));`;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    env: { ...process.env, MODEL: "demo" },
    encoding: "utf8",
    timeout: 25_000,
  });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!);
}

describe("importing the server module", () => {
  it("reads no environment variable (so it builds no Studio graph from it)", () => {
    const { reads, probe } = importWatchingEnv("src/tollgate.ts", `typeof mod.createTollgate`);
    expect(probe).toBe("function");
    expect(reads).toEqual([]);
  });

  it("does not export a graph from graphs/agent.ts either: Studio's graph is graphs/studio.ts's", () => {
    const { reads, probe } = importWatchingEnv("graphs/agent.ts", `"graph" in mod`);
    expect(reads).toEqual([]);
    expect(probe).toBe(false);
  });
});

describe("graphs/studio.ts", () => {
  it("is the one that reads the environment, at import, and exports the gated graph", () => {
    // The watcher is real: it sees Studio's own reads (the variables its graph is built from).
    const { reads, probe } = importWatchingEnv("graphs/studio.ts", `mod.graph.interruptBefore`);
    expect(reads).toEqual(expect.arrayContaining(["MODEL", "DATA_DIR"]));
    expect(probe).toEqual(["call_tool"]);
  });
});
