/**
 * Studio's graph with an environment it refuses is traced by nobody: with tracing turned on in
 * the environment, a graph carrying SILENT_TRACING uploads nothing, where the same graph without
 * it is traced by LangChain's default (unmasked) client. Against a real LangSmith stand-in.
 */
import { Annotation, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { studioConfig, studioTracing } from "../../../graphs/studio.js";
import { SILENT_TRACING } from "../../../src/ops/index.js";
import { type LangSmithStandIn, startLangSmithStandIn } from "../../helpers/langsmith-stand-in.js";

const State = Annotation.Root({ note: Annotation<string> });
const graph = () =>
  new StateGraph(State)
    .addNode("echo", (s: typeof State.State) => ({ note: `${s.note} (seen)` }))
    .addEdge("__start__", "echo")
    .compile();

/** LangSmith's and LangChain's variables, all cleared: a developer's shell must not steer this test. */
const ENV = Object.keys(process.env).filter((k) => /^(LANGSMITH|LANGCHAIN)_/.test(k));
const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
let standIn: LangSmithStandIn;

beforeAll(async () => {
  standIn = await startLangSmithStandIn();
  for (const k of ENV) delete process.env[k];
  Object.assign(process.env, {
    LANGSMITH_TRACING: "true",
    LANGSMITH_ENDPOINT: standIn.url,
    LANGSMITH_API_KEY: "lsv2-silent-test",
    // Callbacks awaited in line and the root run's upload awaited: when invoke returns, whatever
    // LangChain's tracer was going to send has been sent.
    LANGCHAIN_CALLBACKS_BACKGROUND: "false",
  });
});
afterAll(async () => {
  for (const k of Object.keys(process.env)) if (/^(LANGSMITH|LANGCHAIN)_/.test(k)) delete process.env[k];
  Object.assign(process.env, saved);
  await standIn.close();
});

describe("tracing a graph Studio cannot configure", () => {
  it("without it, tracing from the environment uploads the run's state (so the check below can fail)", async () => {
    await graph().invoke({ note: "visible-7f3a" });
    expect(standIn.allBodies()).toContain("visible-7f3a");
  });

  it("with it, nothing of the run is uploaded", async () => {
    const before = standIn.requests.length;
    expect(await SILENT_TRACING.traced(graph()).invoke({ note: "hidden-91c2" })).toEqual({ note: "hidden-91c2 (seen)" });
    expect(standIn.allBodies()).not.toContain("hidden-91c2");
    expect(standIn.requests.slice(before).filter((r) => r.path.startsWith("/runs"))).toEqual([]);
  });

  it("Studio with a refused environment and tracing on: the graph is traced silently, nothing uploaded", async () => {
    // Settings the LangSmith client would refuse at construction do not stop the silent one.
    process.env.LANGSMITH_TRACING_SAMPLING_RATE = "7";
    const config = studioConfig({ MODEL: "demo", MAX_ROUNDS: "zero", LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: standIn.url });
    expect(config).toMatchObject({ problem: expect.stringContaining("MAX_ROUNDS") });
    const before = standIn.requests.length;
    await studioTracing(config, []).traced(graph()).invoke({ note: "refused-5d0e" });
    expect(standIn.allBodies()).not.toContain("refused-5d0e");
    expect(standIn.requests.length).toBe(before);
  });
});
