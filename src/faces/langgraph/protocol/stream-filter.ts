import { isPrefixMatch } from "@langchain/langgraph/stream";
import { channelOf, type StreamItem } from "./protocol-event.js";

/** What a stream (SSE) or a subscription (WebSocket) asked to carry. */
export interface StreamFilter {
  channels: ReadonlySet<string>;
  /** Namespace prefixes; none: every namespace. */
  namespaces?: ReadonlyArray<readonly string[]>;
  /** How far below a prefix an event may be; none: any depth. */
  depth?: number;
}

/** A filter from a stream's body or a subscribe command's params, whatever they hold. */
export function filterOf(params: { channels?: unknown; namespaces?: unknown; depth?: unknown }): StreamFilter {
  const channels = new Set(Array.isArray(params.channels) ? params.channels.map(String) : []);
  const namespaces = Array.isArray(params.namespaces) ? params.namespaces.filter(Array.isArray).map((ns: unknown[]) => ns.map(String)) : undefined;
  const depth = typeof params.depth === "number" && Number.isInteger(params.depth) && params.depth >= 0 ? params.depth : undefined;
  return { channels, ...(namespaces?.length ? { namespaces } : {}), ...(depth !== undefined ? { depth } : {}) };
}

/**
 * Whether the filter lets an item through, as langgraph-api matches a subscription: by channel,
 * then (when prefixes are given) by namespace prefix, `desk` matching `desk:<task id>`, at most
 * `depth` below it. A gap in the kept log always goes through: it is said, never skipped.
 */
export function wants(f: StreamFilter, e: StreamItem): boolean {
  if (e.type === "error") return true;
  if (!f.channels.has(channelOf(e.method))) return false;
  if (!f.namespaces) return true;
  const ns = e.params.namespace;
  return f.namespaces.some((prefix) => isPrefixMatch(ns, [...prefix]) && (f.depth === undefined || ns.length - prefix.length <= f.depth));
}
