import { Command } from "@langchain/langgraph";

/** What a run starts the graph with: a state update (a message), a resume `Command`, or null (continue). */
export type RunInputValue = Record<string, unknown> | Command | null;

/**
 * A resume's input: the values the graph's own interrupts wait for (answers, by LangGraph
 * interrupt id) as `Command({ resume })`; with none, null: the graph continues where it paused
 * (the gate's decisions travel in the run's gate, not here).
 */
export function resumeInput(values: Record<string, unknown>): RunInputValue {
  return Object.keys(values).length ? new Command({ resume: values }) : null;
}
