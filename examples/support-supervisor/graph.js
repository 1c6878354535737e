// @ts-check
// A supervisor and two sub-agents, each a LangGraph StateGraph of its own. The refund tool sits
// in the billing sub-agent's graph, behind tollgate's kit: its call_tool pauses with interrupt()
// one level down, and the server holds the whole graph at that gate until a person decides.
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { gatedToolNodes } from "tollgate/graph";

/**
 * One sub-agent: its model with its tools, the kit's nodes between them.
 * @param {import("@langchain/core/language_models/chat_models").BaseChatModel} model
 * @param {import("tollgate").TollgateTool[]} tools
 */
function subAgent(model, tools) {
  const gate = gatedToolNodes(tools);
  const bound = /** @type {NonNullable<typeof model.bindTools>} */ (model.bindTools)?.call(model, tools) ?? model;
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", gate.tools)
    .addNode("call_tool", gate.call_tool)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", gate.afterModel(END), ["tools", END])
    .addConditionalEdges("tools", gate.afterTools("agent"), ["call_tool", "agent"])
    .addEdge("call_tool", "agent")
    .compile();
}

/**
 * The supervisor: sends each request to the sub-agent that owns it.
 * @param {{ model: import("@langchain/core/language_models/chat_models").BaseChatModel, billing: import("tollgate").TollgateTool[], shipping: import("tollgate").TollgateTool[] }} o
 */
export function supportGraph({ model, billing, shipping }) {
  return new StateGraph(MessagesAnnotation)
    .addNode("billing", subAgent(model, billing))
    .addNode("shipping", subAgent(model, shipping))
    .addConditionalEdges(START, (state) => (/refund|invoice|charge/i.test(state.messages.at(-1)?.text ?? "") ? "billing" : "shipping"), ["billing", "shipping"])
    .addEdge("billing", END)
    .addEdge("shipping", END);
}
