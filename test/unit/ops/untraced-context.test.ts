import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { RunnableLambda } from "@langchain/core/runnables";
import { getContextVariable, setContextVariable } from "@langchain/core/context";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { Annotation, getConfig, MemorySaver, StateGraph } from "@langchain/langgraph";
import { isRunTree } from "langsmith/run_trees";
import { beforeAll, describe, expect, it } from "vitest";
import { skipIdleRunTrees } from "../../../src/ops/untraced-context.js";

const store = () => AsyncLocalStorageProviderSingleton.getInstance().getStore() as unknown;

describe("skipIdleRunTrees (LangChain's context without a RunTree per invocation)", () => {
  beforeAll(() => skipIdleRunTrees());

  it("builds no RunTree for a runnable, and still hands the config to the code it calls", async () => {
    const seen = await RunnableLambda.from(() => ({ runTree: isRunTree(store()), tag: getConfig()?.configurable?.tag })).invoke(null, {
      configurable: { tag: "t-1" },
    });
    expect(seen).toEqual({ runTree: false, tag: "t-1" });
  });

  it("keeps what a LangGraph node reads from its context: the config, and context variables set outside", async () => {
    const State = Annotation.Root({ out: Annotation<string> });
    const graph = new StateGraph(State)
      .addNode("n", () => ({ out: `${String(getConfig()?.configurable?.thread_id)}/${String(getContextVariable("who"))}` }))
      .addEdge("__start__", "n")
      .compile({ checkpointer: new MemorySaver() });
    setContextVariable("who", "alice");
    const result = await graph.invoke({ out: "" }, { configurable: { thread_id: "th-9" } });
    expect(result.out).toBe("th-9/alice");
  });

  it("leaves a call that brings its own LangChain tracer on the original path", async () => {
    const traced = { name: "traced-root" };
    class Tracer extends BaseCallbackHandler {
      name = "langchain_tracer";
      getRunTreeWithTracingConfig() {
        return traced;
      }
    }
    const seen = await RunnableLambda.from(() => store()).invoke(null, { callbacks: [new Tracer()] });
    expect(seen).toBe(traced);
  });
});
