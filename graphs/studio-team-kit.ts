import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { gatedToolNodes } from "../src/graph/kit/index.js";
import { studioConfig, studioGraphOptions, studioTracing } from "./studio-setup.js";

/*
 * A team's own graph in LangGraph Studio (`langgraph.json` → `team-kit`), written as a team writes
 * it: its own StateGraph and model node, tollgate's kit for the tools (the demo tools, made with
 * `defineTool`). No static interrupt: the kit's `call_tool` pauses itself and takes the approval
 * from `Command({ resume })`. The model and tools are Studio's (demo model unless MODEL says
 * otherwise), so it runs offline.
 */

const config = studioConfig();
const { model, tools } = studioGraphOptions(config);
const gate = gatedToolNodes(tools);
const agent = model.bindTools!([...tools]);

export const graph = studioTracing(config, tools).traced(
  new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s, runConfig) => ({ messages: [await agent.invoke(s.messages, runConfig)] }))
    .addNode("tools", gate.tools)
    .addNode("call_tool", gate.call_tool)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", gate.afterModel(END), ["tools", END])
    .addConditionalEdges("tools", gate.afterTools("agent"), ["call_tool", "agent"])
    .addEdge("call_tool", "agent")
    .compile(),
);
