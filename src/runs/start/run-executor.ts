import { AIMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { MessagesState, RunInputValue } from "../../graph/index.js";
import { TOOL_GATE_KEY } from "../../tools/index.js";
import { adaptGraphStream, customWriter, type GraphChunk } from "./adapter.js";
import { CLIENT_ONLY_MODES, type FrameTap, frameTap } from "../stream/graph-frames.js";
import type { ActiveRun, RunContext } from "../run-context.js";
import { failClosed, finishCancelled, finishFailed, finishNormally, forget, type GraphEnd } from "../finish/run-finish.js";

/**
 * Drives one run to exactly one terminal event: streams the graph through the adapter into the
 * run's log, then ends as `interrupt`, `done`, `cancelled` or `error`, and always hands the thread
 * back: itself, or (when the database refuses the end) through the settler. Never rejects.
 */
export async function executeRun(ctx: RunContext, run: ActiveRun, input: RunInputValue): Promise<void> {
  let outcome = "error";
  try {
    run.controller.signal.throwIfAborted(); // a cancel that landed while the run was starting wins
    // Tokens: the adapter's writer puts each one into the run's log as the node writes it, rather
    // than on the graph stream (`custom` mode), whose queue costs more per token (see customWriter).
    const lean = run.graph.tokens === "writer";
    // What a LangGraph API client asked to see of the graph's own stream, beside the events.
    const tap = run.frames ? frameTap(run.frames, ctx.redactor, (f) => run.log.frame(f)) : undefined;
    const tokens: Pick<LangGraphRunnableConfig, "writer"> = lean
      ? {
          writer: customWriter(
            (event) => {
              if (!run.log.isEnded) run.log.append(event);
            },
            tap && ((chunk) => tap("custom", chunk, [])),
          ),
        }
      : {};
    // The lean agent's writer already hands what nodes write to the tap (see customWriter).
    const extraModes = [...(run.frames?.modes ?? [])].filter((m) => CLIENT_ONLY_MODES.has(m) && !(m === "custom" && lean));
    // The graph's own iterator, not `graph.stream`: that one races the abort and lets go at once,
    // while the graph winds down and saves what the run did (`durability: "exit"`) afterwards; a
    // closer reading the thread meanwhile answered calls the save then answered again (two answers
    // to one call, in the wrong order). Here the loop ends when the graph has, its save included.
    const stream = run.graph.graph._streamIterator(input, {
      configurable: {
        // The run's approvals: the only thing that lets an irreversible tool run, at any depth.
        [TOOL_GATE_KEY]: run.gate,
        thread_id: run.threadId,
        // A fork goes on from the checkpoint it names; its saves follow that one.
        ...(run.from ? { checkpoint_id: run.from, checkpoint_ns: "" } : {}),
        run_id: run.runId,
        max_rounds: ctx.settings.maxRounds,
      },
      signal: run.controller.signal,
      ...tokens,
      // `values` (in-memory state after each step) spares a checkpoint read at the end: on a
      // long thread, rebuilding the state is the dearest part of a run.
      // Other graphs: tokens from any chat model call, in any node or subgraph (LangGraph's
      // messages stream), and the updates of subgraphs, where a kit's gate may sit.
      streamMode: [...(lean ? ["updates", "values"] : ["updates", "values", "messages"]), ...extraModes] as ["updates", "values"],
      subgraphs: !lean || run.frames?.subgraphs === true,
      // A round is at most agent → tools → call_tool: let MAX_ROUNDS, not LangGraph's default
      // step limit (25), end a long run.
      // Other graphs may take more steps a round (middleware, supervisors): a wider bound.
      recursionLimit: lean ? 3 * ctx.settings.maxRounds + 5 : 10 * ctx.settings.maxRounds + 25,
      // Checkpoints only when the run ends (done, interrupt, error or cancel): none stands between
      // the user's message and the model request. The run row keeps the message meanwhile, and
      // a run that dies before its end is settled from the ledger and that row (see run-input.ts).
      durability: "exit",
    });
    const end: GraphEnd = { values: undefined, interrupted: false, calls: new Map() };
    for await (const body of adaptGraphStream(watchEnd(stream as AsyncIterable<unknown[]>, end, tap), ctx.registry)) {
      run.log.append(body);
    }
    outcome = await finishNormally(ctx, run, end);
  } catch (err) {
    try {
      outcome = run.controller.signal.aborted ? await finishCancelled(ctx, run) : await finishFailed(ctx, run, err);
    } catch (finishErr) {
      outcome = "error";
      await failClosed(ctx, run, finishErr);
    }
  } finally {
    run.gate.close(); // a tool still running, or called late, finds no approval
    forget(ctx, run, outcome);
  }
}

/**
 * Remembers the tool calls AI messages made in this run, as the model made them: the checkpoint
 * keeps them scrubbed of secrets, and an approval binds the real arguments.
 */
function noteCalls(update: object, calls: Map<string, ToolCall>): void {
  for (const node of Object.values(update)) {
    const messages = (node as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(messages)) continue;
    for (const m of messages) if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) calls.set(c.id, c);
  }
}

/**
 * Passes the stream through as `[mode, data, namespace]` (LangGraph sends a subgraph's chunks as
 * `[namespace, mode, data]`), noting the top-level final state and whether the graph stopped at
 * an interrupt, and showing each chunk to the frame tap, if any.
 */
async function* watchEnd(chunks: AsyncIterable<unknown[]>, end: GraphEnd, tap?: FrameTap): AsyncGenerator<GraphChunk> {
  for await (const chunk of chunks) {
    const nested = chunk.length === 3;
    const ns = nested ? (chunk[0] as string[]) : [];
    const top = ns.length === 0;
    const [mode, data] = (nested ? chunk.slice(1) : chunk) as GraphChunk;
    tap?.(mode, data, ns);
    if (CLIENT_ONLY_MODES.has(mode)) continue;
    if (mode === "values") {
      if (top && data && typeof data === "object" && "messages" in data) end.values = data as MessagesState;
      continue;
    }
    if (top && mode === "updates" && data && typeof data === "object" && "__interrupt__" in data) end.interrupted = true;
    if (mode === "updates" && data && typeof data === "object") noteCalls(data, end.calls);
    yield [mode, data, ns];
  }
}
