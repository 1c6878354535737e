/**
 * Loading a team's graphs: what createTollgate's `graphs` and a langgraph.json file may hold
 * becomes compiled graphs on tollgate's checkpointer, and everything else is refused in one line
 * that names the graph. Real StateGraphs throughout.
 */
import { HumanMessage } from "@langchain/core/messages";
import { Annotation, END, MemorySaver, messagesStateReducer, START, StateGraph } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it, vi } from "vitest";
import { resolveGraphs } from "../../../src/graph/load-graphs.js";

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
