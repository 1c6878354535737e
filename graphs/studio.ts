import { createAgentWorkflow } from "./agent.js";
import { studioConfig, studioGraphOptions, studioTracing } from "./studio-setup.js";

export { lazyDemoTools, type StudioConfig, studioConfig, studioGraphOptions, studioTracing } from "./studio-setup.js";

/*
 * LangGraph Studio's entry file for the built-in agent (`langgraph.json` → `graphs/studio.ts:graph`):
 * nothing in src/ or graphs/ imports it, so the Hono server never builds this graph or reads the
 * environment through it. `langgraph dev` imports it, so loading it must not open a database,
 * start a timer or throw (see studio-setup.ts).
 */

const config = studioConfig();
const options = studioGraphOptions(config);

/**
 * What LangGraph Studio loads: the workflow the Hono server compiles, with the same gate, but
 * without a checkpointer because `langgraph dev` brings its own.
 */
export const graph = studioTracing(config, options.tools).traced(createAgentWorkflow(options).compile({ interruptBefore: ["call_tool"] }));
