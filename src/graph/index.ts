export { checkGraphId, GRAPH_ID_PATTERN } from "./graph-id.js";
export { type CompiledGraphLike, isCompiledGraph, isStateGraph } from "./graph-kinds.js";
export {
  describeImportFailure,
  type GraphsFileEntry,
  loadGraphsFile,
  resolveGraphs,
  type ResolveGraphsOptions,
  type ServedGraphSpec,
} from "./load-graphs.js";
