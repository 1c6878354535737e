/**
 * Loading a team's graphs: what createTollgate's `graphs` and a langgraph.json file may hold
 * becomes compiled graphs on tollgate's checkpointer, and everything else is refused in one line
 * that names the graph. Real StateGraphs throughout; the graph files are written by the test.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Annotation, END, MemorySaver, messagesStateReducer, START, StateGraph } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it, vi } from "vitest";
import { describeImportFailure, loadGraphsFile, resolveGraphs } from "../../../src/graph/load-graphs.js";
import { REPO_ROOT } from "../../helpers/server-process.js";

const State = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
});

/** A one-node graph that answers "pong": enough to run and to checkpoint. */
const workflow = () =>
  new StateGraph(State)
    .addNode("reply", () => ({ messages: [new HumanMessage("pong")] }))
    .addEdge(START, "reply")
    .addEdge("reply", END);

/** Tollgate's checkpointer as these tests see it, and a warn that records its lines. */
function setup() {
  const checkpointer = new MemorySaver();
  const warn = vi.fn<(msg: string, fields?: Record<string, unknown>) => void>();
  return { checkpointer, warn, opts: { checkpointer, warn } };
}

/** Whatever `fn` throws (it must throw). */
async function thrown(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected it to throw");
}

describe("resolveGraphs", () => {
  it("compiles a StateGraph with tollgate's checkpointer: a run's state lands there", async () => {
    const { checkpointer, warn, opts } = setup();
    const [served] = await resolveGraphs({ ping: workflow() }, opts);
    expect(served).toMatchObject({ graphId: "ping", description: null });
    expect(served!.graph.checkpointer).toBe(checkpointer);
    const config = { configurable: { thread_id: "t1" } };
    await served!.graph.invoke({ messages: [new HumanMessage("ping")] }, config);
    const saved = await checkpointer.getTuple(config);
    expect((saved!.checkpoint.channel_values.messages as BaseMessage[]).map((m) => m.content)).toEqual(["ping", "pong"]);
    expect(warn).not.toHaveBeenCalled();
  });

  it("serves a compiled graph as it is, on tollgate's checkpointer, without a warning when it had none", async () => {
    const { checkpointer, warn, opts } = setup();
    const compiled = workflow().compile();
    const [served] = await resolveGraphs({ ping: compiled }, opts);
    expect(served!.graph).toBe(compiled);
    expect(compiled.checkpointer).toBe(checkpointer);
    expect(warn).not.toHaveBeenCalled();
  });

  it("replaces a graph's own checkpointer with one warning line naming the graph", async () => {
    const { checkpointer, warn, opts } = setup();
    const own = new MemorySaver();
    const compiled = workflow().compile({ checkpointer: own });
    // The same graph under a second id: it is on tollgate's checkpointer by then, nothing to say.
    const served = await resolveGraphs({ mine: compiled, again: compiled, plain: workflow() }, opts);
    expect(served.map((s) => s.graph.checkpointer)).toEqual([checkpointer, checkpointer, checkpointer]);
    expect(warn).toHaveBeenCalledTimes(1);
    const [msg, fields] = warn.mock.calls[0]!;
    expect(msg).toContain('"mine"');
    expect(msg).toContain("MemorySaver");
    expect(msg).not.toContain("\n");
    expect(fields).toEqual({ graph_id: "mine", replaced: "MemorySaver" });
  });

  it("serves the compiled graph inside what createAgent returns", async () => {
    const { checkpointer, opts } = setup();
    const compiled = workflow().compile({ checkpointer: new MemorySaver(), description: "Answers pings" });
    // createAgent's ReactAgent: not a graph itself; its `graph` getter is (langchain is not a dependency).
    const agent = { options: {}, graph: compiled, invoke: () => undefined, stream: () => undefined };
    const [served] = await resolveGraphs({ agent }, opts);
    expect(served).toEqual({ graphId: "agent", description: "Answers pings", graph: compiled });
    expect(compiled.checkpointer).toBe(checkpointer);
  });

  it("calls a function once, sync or async, with a config, and serves what it returns", async () => {
    const { opts } = setup();
    const compiled = workflow().compile();
    const factory = vi.fn(async (config: { configurable: Record<string, unknown> }) => (config.configurable ? compiled : null));
    const served = await resolveGraphs(
      {
        sync: () => workflow(),
        async: factory,
        agentFactory: async () => ({ graph: workflow().compile() }),
        promised: Promise.resolve(workflow()),
      },
      opts,
    );
    expect(served.map((s) => s.graphId)).toEqual(["sync", "async", "agentFactory", "promised"]);
    expect(factory).toHaveBeenCalledTimes(1);
    expect(factory).toHaveBeenCalledWith({ configurable: {} });
    expect(served[1]!.graph).toBe(compiled);
    for (const s of served) expect(typeof s.graph.getState).toBe("function");
  });

  it("compiles a StateGraph from another copy of langgraph (not ours by instanceof, a StateGraph by shape)", async () => {
    const { checkpointer, opts } = setup();
    const real = workflow();
    const foreign = { addNode: () => foreign, compile: (o: { checkpointer: MemorySaver }) => real.compile(o) };
    const [served] = await resolveGraphs({ foreign }, opts);
    expect(served!.graph.checkpointer).toBe(checkpointer);
  });

  it("takes descriptions given beside the graphs over a graph's own", async () => {
    const { checkpointer, warn } = setup();
    const described = workflow().compile({ description: "its own" });
    const served = await resolveGraphs(
      { a: described, b: workflow().compile({ description: "b's own" }), c: workflow() },
      { checkpointer, warn, descriptions: { a: "from the file", b: null } },
    );
    expect(served.map((s) => s.description)).toEqual(["from the file", "b's own", null]);
  });

  it("refuses ids outside [A-Za-z0-9_-]{1,64}, naming them", async () => {
    const { opts } = setup();
    for (const id of ["", "has space", "a/b", "ü", "x".repeat(65), "new\nline"]) {
      const err = await thrown(() => resolveGraphs({ [id]: workflow() }, opts));
      expect(err.message).toMatch(/^graph id ".*" is not allowed: use 1 to 64 letters, digits, "_" or "-"$/);
      expect(err.message).not.toContain("\n");
    }
    await expect(resolveGraphs({ ["x".repeat(64)]: workflow(), "A-z_09": workflow() }, opts)).resolves.toHaveLength(2);
  });

  it("refuses anything that is not a graph in one line naming the graph and what was found", async () => {
    const { opts } = setup();
    const cases: [unknown, string][] = [
      [undefined, 'graph "g": not a graph: found undefined; expected a StateGraph'],
      [null, "found null;"],
      [42, "found a number (42);"],
      ["./graph.js:graph", "found a string;"],
      [{}, "found an empty object;"],
      [{ nodes: {}, stream: 1 }, "found an object with keys nodes, stream;"],
      [new Map(), "found an instance of Map;"],
      [{ graph: "not compiled" }, "found an object with keys graph;"],
      [() => "nope", "its function returned a string;"],
      [async () => undefined, "its function returned undefined;"],
      [
        () => {
          throw new Error("no API key\n    at somewhere (stack)");
        },
        'graph "g": its function threw: no API key',
      ],
    ];
    for (const [value, says] of cases) {
      const err = await thrown(() => resolveGraphs({ g: value }, opts));
      expect(err.message).toContain(says);
      expect(err.message).not.toContain("\n");
    }
  });

  it("refuses a StateGraph that does not compile, and an empty or odd set of graphs", async () => {
    const { opts } = setup();
    const broken = new StateGraph(State).addNode("reply", () => ({})); // no edge from START
    const err = await thrown(() => resolveGraphs({ broken }, opts));
    expect(err.message).toMatch(/^graph "broken": compiling its StateGraph failed: /);
    expect(err.message).not.toContain("\n");
    await expect(resolveGraphs({}, opts)).rejects.toThrow(/^graphs is empty/);
    await expect(resolveGraphs([workflow()] as unknown as Record<string, unknown>, opts)).rejects.toThrow(
      "graphs must be an object keyed by graph id, not an array of 1",
    );
  });
});

describe("loadGraphsFile", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A project dir with these files; `node_modules` is the repository's, so graphs import langgraph. */
  function project(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-graphs-"));
    dirs.push(dir);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  }

  /** A graph module in plain JavaScript: `exports` is the export statements after the graph is built. */
  const graphModule = (exports: string) => `
    import { Annotation, END, messagesStateReducer, START, StateGraph } from "@langchain/langgraph";
    const State = Annotation.Root({ messages: Annotation({ reducer: messagesStateReducer, default: () => [] }) });
    const build = () => new StateGraph(State).addNode("reply", () => ({ messages: [] })).addEdge(START, "reply").addEdge("reply", END);
    ${exports}
  `;

  it("imports each graph's export, paths relative to the file, the default export without ':export'", async () => {
    const dir = project({
      "config/langgraph.json": JSON.stringify({
        node_version: "20",
        graphs: {
          uncompiled: "../src/graphs.mjs:workflow",
          compiled: { path: "../src/graphs.mjs:compiled", description: "A compiled one" },
          factory: "../src/factory.js",
        },
        env: ".env",
      }),
      "src/graphs.mjs": graphModule("export const workflow = build(); export const compiled = build().compile();"),
      "src/factory.js": graphModule("export default async (config) => build().compile();"),
    });
    const loaded = await loadGraphsFile(path.join(dir, "config/langgraph.json"));
    expect(Object.keys(loaded)).toEqual(["uncompiled", "compiled", "factory"]);
    expect(loaded.compiled!.description).toBe("A compiled one");
    expect(loaded.uncompiled!.description).toBeNull();
    expect(typeof loaded.factory!.value).toBe("function");

    // What the file gave becomes served graphs.
    const { checkpointer, warn } = setup();
    const served = await resolveGraphs(
      Object.fromEntries(Object.entries(loaded).map(([id, e]) => [id, e.value])),
      { checkpointer, warn, descriptions: Object.fromEntries(Object.entries(loaded).map(([id, e]) => [id, e.description])) },
    );
    expect(served.map((s) => [s.graphId, s.description, s.graph.checkpointer === checkpointer])).toEqual([
      ["uncompiled", null, true],
      ["compiled", "A compiled one", true],
      ["factory", null, true],
    ]);
  });

  it("names the graph, the file and the export when the file or the export is missing", async () => {
    const dir = project({ "graphs.mjs": graphModule("export const workflow = build(); export const other = 1;") });
    const file = path.join(dir, "langgraph.json");
    const write = (graphs: unknown) => fs.writeFileSync(file, JSON.stringify({ graphs }));

    write({ gone: "./missing.mjs:graph" });
    let err = await thrown(() => loadGraphsFile(file));
    expect(err.message).toBe(`graph "gone": ${path.join(dir, "missing.mjs")} (export "graph") does not exist`);

    write({ typo: "./graphs.mjs:workflw" });
    err = await thrown(() => loadGraphsFile(file));
    expect(err.message).toBe(`graph "typo": ${path.join(dir, "graphs.mjs")} has no export "workflw" (it exports other, workflow)`);

    write({ nodefault: "./graphs.mjs" });
    err = await thrown(() => loadGraphsFile(file));
    expect(err.message).toBe(`graph "nodefault": ${path.join(dir, "graphs.mjs")} has no export "default" (it exports other, workflow)`);
  });

  it("says in one line why a module did not import", async () => {
    const dir = project({ "broken.mjs": "export const graph = ;\n", "throws.mjs": 'throw new Error("DATABASE_URL is not set\\nmore");\n' });
    const file = path.join(dir, "langgraph.json");
    for (const [id, spec, says] of [
      ["broken", "./broken.mjs:graph", `graph "broken": importing ${path.join(dir, "broken.mjs")} failed: `],
      ["throws", "./throws.mjs:graph", `graph "throws": importing ${path.join(dir, "throws.mjs")} failed: DATABASE_URL is not set`],
    ] as const) {
      fs.writeFileSync(file, JSON.stringify({ graphs: { [id]: spec } }));
      const err = await thrown(() => loadGraphsFile(file));
      expect(err.message.startsWith(says)).toBe(true);
      expect(err.message).not.toContain("\n");
    }
  });

  it("refuses a graphs file that is missing, not JSON, without graphs, or with an entry of another shape", async () => {
    const dir = project({});
    const file = path.join(dir, "langgraph.json");
    await expect(loadGraphsFile(file)).rejects.toThrow(`graphs file ${file} cannot be read: no such file`);
    const cases: [string, string][] = [
      ["{ not json", `graphs file ${file} is not valid JSON: `],
      ['{"dependencies": ["."]}', `graphs file ${file} has no "graphs" object`],
      ['{"graphs": []}', `graphs file ${file} has no "graphs" object`],
      ['{"graphs": {}}', `graphs file ${file} names no graphs`],
      ['{"graphs": {"g": 42}}', `graph "g": ${file} gives it neither "./path.js:export" nor {"path"`],
      ['{"graphs": {"g": {"path": "./a.mjs", "description": 7}}}', `graph "g": ${file} gives it neither`],
      ['{"graphs": {"bad id": "./a.mjs"}}', 'graph id "bad id" is not allowed'],
    ];
    for (const [text, says] of cases) {
      fs.writeFileSync(file, text);
      const err = await thrown(() => loadGraphsFile(file));
      expect(err.message.startsWith(says)).toBe(true);
      expect(err.message).not.toContain("\n");
    }
  });
});

describe("describeImportFailure", () => {
  const unknownExtension = (file: string) =>
    Object.assign(new TypeError(`Unknown file extension ".ts" for ${file}\n    at Object.getFileProtocolModuleFormat`), {
      code: "ERR_UNKNOWN_FILE_EXTENSION",
    });

  it("a .ts file Node cannot load says to add a TypeScript loader such as tsx, in one line", () => {
    for (const file of ["/p/graph.ts", "/p/graph.mts", "/p/graph.cts", "/p/graph.tsx"]) {
      const says = describeImportFailure(unknownExtension(file), file);
      expect(says).toBe(
        `${file} is TypeScript, which Node cannot import by itself (ERR_UNKNOWN_FILE_EXTENSION): ` +
          "add a TypeScript loader such as tsx to your project (npm install -D tsx) and start tollgate with it (node --import tsx …)",
      );
    }
    // Newer Node strips types itself but refuses some syntax (enums): the same advice.
    const enumError = Object.assign(new SyntaxError("TypeScript enum is not supported in strip-only mode"), { code: "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX" });
    expect(describeImportFailure(enumError, "/p/graph.ts")).toContain("a TypeScript loader such as tsx");
  });

  it("anything else is the first line of what the import threw", () => {
    expect(describeImportFailure(unknownExtension("/p/graph.coffee"), "/p/graph.coffee")).toBe(
      'importing /p/graph.coffee failed: Unknown file extension ".ts" for /p/graph.coffee',
    );
    const syntax = new SyntaxError("Unexpected token ';'\n    at compileSourceTextModule");
    expect(describeImportFailure(syntax, "/p/graph.ts")).toBe("importing /p/graph.ts failed: Unexpected token ';'");
    expect(describeImportFailure("a string", "/p/g.js")).toBe("importing /p/g.js failed: a string");
  });

  it("what a plain node (no loader) throws for a .ts graph file maps to the tsx advice", () => {
    // vitest loads TypeScript itself, so the refusal is Node's own, seen in a child process.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-ts-graph-"));
    try {
      const file = path.join(dir, "graph.ts");
      // An enum: even a Node that strips types by itself cannot run it.
      fs.writeFileSync(file, "enum Kind { A }\nexport const graph: Kind = Kind.A;\n");
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
      const script = `import(${JSON.stringify(`file://${file}`)}).then(
        () => console.log("null"),
        (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`;
      const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        encoding: "utf8",
        env: { ...process.env, NODE_OPTIONS: "" },
      });
      const failure = JSON.parse(child.stdout.trim()) as { code: string; message: string } | null;
      expect(failure).not.toBeNull();
      const err = Object.assign(new Error(failure!.message), { code: failure!.code });
      expect(describeImportFailure(err, file)).toContain("add a TypeScript loader such as tsx to your project");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
