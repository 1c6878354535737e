import { isDeepStrictEqual } from "node:util";
import type { CallEdit } from "../../gate/index.js";
import type { RunContext } from "../run-context.js";

/**
 * An edit's keys as an interrupt's progress may keep them: real values of sensitive arguments
 * live only in checkpoints and the ledger, so those are masked here and the keys as sent are
 * sealed with a key the database does not hold.
 */
export function keptEdit(ctx: Pick<RunContext, "registry" | "sealer">, tool: string, editedArgs: Record<string, unknown>): Pick<CallEdit, "edited_args" | "sealed_args"> {
  const masked = ctx.registry.mask(tool, editedArgs);
  if (isDeepStrictEqual(masked, editedArgs)) return { edited_args: editedArgs };
  return { edited_args: masked, sealed_args: ctx.sealer.seal(editedArgs) };
}

/** The keys an edit kept in the progress replaced, as the editor sent them. */
export function realEdit(ctx: Pick<RunContext, "sealer">, edit: Pick<CallEdit, "edited_args" | "sealed_args">): Record<string, unknown> {
  return edit.sealed_args === undefined ? edit.edited_args : (ctx.sealer.open(edit.sealed_args) as Record<string, unknown>);
}
