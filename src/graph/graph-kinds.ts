import { type CompiledStateGraph, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/**
 * What a team may hand tollgate as a graph, told apart by shape. Shape rather than `instanceof`
 * alone: a team's project may bring its own copy of @langchain/langgraph, whose classes are not
 * ours, and `createAgent` comes from the `langchain` package, which tollgate does not depend on.
 */

/**
 * A compiled graph, whatever its state (hence the `any`s): tollgate drives it through what every
 * compiled graph has (stream, getState, updateState, its checkpointer).
 */
export type CompiledGraphLike = CompiledStateGraph<any, any, any, any, any, any>;

/** An uncompiled graph: tollgate compiles it with its own checkpointer. */
export interface StateGraphLike {
  compile(options: { checkpointer: BaseCheckpointSaver }): unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** A StateGraph (ours, or one from another copy of langgraph: it builds nodes and compiles). */
export function isStateGraph(v: unknown): v is StateGraphLike {
  return v instanceof StateGraph || (isObject(v) && typeof v.compile === "function" && typeof v.addNode === "function");
}

/** A compiled graph: it can be streamed, its state read, and it knows its nodes. */
export function isCompiledGraph(v: unknown): v is CompiledGraphLike {
  return (
    isObject(v) &&
    typeof v.getState === "function" &&
    (typeof v.streamEvents === "function" || typeof v.stream === "function") &&
    isObject(v.nodes)
  );
}

/**
 * The compiled graph inside what LangChain's `createAgent` returns (a `ReactAgent`, whose `graph`
 * getter is the compiled graph); undefined for anything else. Looked at before the compiled shape:
 * the wrapper streams too, and serving the wrapper would hide the graph's checkpointer and nodes.
 */
export function agentGraph(v: unknown): CompiledGraphLike | undefined {
  if (!isObject(v) || !("graph" in v)) return undefined;
  const inner = v.graph;
  return isCompiledGraph(inner) ? inner : undefined;
}

/** What a value is, in a few words, for an error that says what was found instead of a graph. */
export function describeFound(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  switch (typeof v) {
    case "undefined":
      return "undefined";
    case "function":
      return `a function${v.name ? ` (${v.name})` : ""}`;
    case "object": {
      const ctor = Object.getPrototypeOf(v)?.constructor?.name;
      if (ctor && ctor !== "Object") return `an instance of ${ctor}`;
      const keys = Object.keys(v);
      if (!keys.length) return "an empty object";
      return `an object with keys ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", …" : ""}`;
    }
    case "string":
      return "a string";
    default:
      return `a ${typeof v} (${String(v)})`;
  }
}
