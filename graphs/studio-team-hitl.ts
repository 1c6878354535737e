import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { studioConfig, studioGraphOptions, studioTracing } from "./studio-setup.js";

/*
 * A team's own agent in LangGraph Studio (`langgraph.json` → `team-hitl`), written as a team writes
 * it: LangChain's `createAgent` with `humanInTheLoopMiddleware` in front of the irreversible demo
 * tools (made with `defineTool`); the order lookup runs unasked. The middleware asks with its own
 * interrupt; the approval `Command({ resume: { decisions } })` gives it is what the tool itself
 * accepts outside a tollgate server. The model and tools are Studio's (demo model unless MODEL
 * says otherwise), so it runs offline.
 */

const config = studioConfig();
const { model, tools } = studioGraphOptions(config);

const agent = createAgent({
  model,
  tools: [...tools],
  middleware: [humanInTheLoopMiddleware({ interruptOn: { refund_order: true, send_email: true } })],
});

export const graph = studioTracing(config, tools).traced(agent.graph);
