// @ts-check
// Plan first, then act: the `plan` node asks a person to confirm the plan with LangGraph's own
// interrupt() before any tool runs (tollgate shows it as a question); the agent then works with
// tollgate's kit, so each irreversible call still waits for its own approval.
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { defineTool, toolContext } from "tollgate";
import { gatedToolNodes } from "tollgate/graph";
import { z } from "zod";

/**
 * The one irreversible tool, over a list of what it did (your scheduling API).
 * @param {Array<object>} done
 */
export function migrationTools(done = []) {
  const migrate = tool(
    async ({ database, window }, config) => {
      done.push({ database, window, key: toolContext(config).idempotencyKey });
      return `Migration of ${database} scheduled for ${window}`;
    },
    { name: "schedule_migration", description: "Schedule a database migration. Irreversible.", schema: z.object({ database: z.string(), window: z.string() }) },
  );
  return [defineTool(migrate, { kind: "irreversible", editable: true })];
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Whether the person confirmed the plan. */
  confirmed: Annotation({ reducer: (/** @type {boolean} */ _prev, /** @type {boolean} */ next) => next, default: () => false }),
});

/**
 * @param {{ model: import("@langchain/core/language_models/chat_models").BaseChatModel, tools: import("tollgate").TollgateTool[] }} o
 */
export function planGraph({ model, tools }) {
  const gate = gatedToolNodes(tools);
  const bound = /** @type {NonNullable<typeof model.bindTools>} */ (model.bindTools)?.call(model, tools) ?? model;
  return new StateGraph(State)
    .addNode("plan", (state) => {
      const request = state.messages.at(-1)?.text ?? "";
      // Nothing before this line has an effect: on resume LangGraph runs the node again from the top.
      const answer = interrupt({ plan: `Plan: ${request}. Then each change waits for approval.`, options: ["yes", "no"] });
      const confirmed = answer === "yes";
      return { confirmed, messages: confirmed ? [] : [new AIMessage("Plan dropped; nothing was done.")] };
    })
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", gate.tools)
    .addNode("call_tool", gate.call_tool)
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (state) => (state.confirmed ? "agent" : END), ["agent", END])
    .addConditionalEdges("agent", gate.afterModel(END), ["tools", END])
    .addConditionalEdges("tools", gate.afterTools("agent"), ["call_tool", "agent"])
    .addEdge("call_tool", "agent");
}
