import { createHash } from "node:crypto";
import { refusals } from "../../../protocol/index.js";
import type { GraphCatalog, ServedGraph } from "../../../graph/index.js";

/** The namespace langgraph-api derives assistant ids in (not RFC 4122's URL namespace, `6ba7b811…`). */
const ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The assistant id LangGraph's servers give a graph: uuid5 of its id, so clients' stored ids carry over. */
export function assistantIdOf(graphId: string): string {
  const ns = Buffer.from(ASSISTANT_NAMESPACE.replace(/-/g, ""), "hex");
  const bytes = createHash("sha1").update(ns).update(graphId, "utf8").digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The graph an assistant id (or a graph id, which clients may send instead) names; unknown → 404. */
export function graphOfAssistant(catalog: GraphCatalog, assistantId: string): ServedGraph {
  const g = catalog.all().find((x) => x.id === assistantId || assistantIdOf(x.id) === assistantId);
  if (!g) throw refusals.noAssistant(assistantId);
  return g;
}
