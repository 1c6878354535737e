import type { StructuredToolInterface } from "@langchain/core/tools";
import { MALFORMED_CALL_NAME } from "../../graphs/history.js";
import { maskArgs } from "./mask-args.js";
import type { TollgateTool, ToolKind } from "./tollgate-tool.js";

/** The tools a graph serves, by name. Graph, adapter and views all read kinds and masks from here. */
export class ToolRegistry {
  private readonly byName = new Map<string, TollgateTool>();

  constructor(tools: readonly TollgateTool[]) {
    for (const t of tools) {
      if (this.byName.has(t.tool.name)) throw new Error(`Duplicate tool name '${t.tool.name}'`);
      // Calls the model sends without a valid name are stored under it and never run.
      if (t.tool.name === MALFORMED_CALL_NAME) throw new Error(`The tool name '${MALFORMED_CALL_NAME}' is reserved`);
      this.byName.set(t.tool.name, t);
    }
  }

  get(name: string): TollgateTool | undefined {
    return this.byName.get(name);
  }

  kindOf(name: string): ToolKind | undefined {
    return this.byName.get(name)?.kind;
  }

  /** Unknown tools never need approval: they cannot run, so they fail at once. */
  needsApproval(name: string): boolean {
    return this.kindOf(name) === "irreversible";
  }

  mask(name: string, args: Record<string, unknown>): Record<string, unknown> {
    return maskArgs(args, this.byName.get(name)?.sensitive ?? []);
  }

  /** Plain LangChain tools, for `model.bindTools`. */
  langchainTools(): StructuredToolInterface[] {
    return [...this.byName.values()].map((t) => t.tool);
  }
}
