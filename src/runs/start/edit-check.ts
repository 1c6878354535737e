import { readGateState } from "../../graph/index.js";
import { applyEdit, hashArgs, validateArgs } from "../../tools/index.js";
import type { Decision } from "../../protocol/index.js";
import type { CheckedEdit as GateEdit } from "../../gate/index.js";
import type { RunContext } from "../run-context.js";
import { previewOf } from "./previews.js";
import { realEdit } from "../decide/kept-edits.js";
import { graphOfThread } from "../threads/thread-graph.js";

const NEVER_ABORTS = new AbortController().signal;

/** An edit checked before the gate opens: the merged arguments, or why it is refused. */
export type CheckedEdit = GateEdit | { error: string };

/** The edits of one resume, checked against one interrupt. */
export interface PreparedEdits {
  interruptId: string | undefined;
  byCall: ReadonlyMap<string, CheckedEdit>;
  /** The interrupt's progress count they were checked against (calls edited earlier count in). */
  progressSeq?: number;
}

export const NO_EDITS: PreparedEdits = { interruptId: undefined, byCall: new Map() };

/**
 * Checks each `edited_args` against the real arguments of its pending call (masked ones included:
 * an edit may leave them as they are), and the merged arguments against the tool's schema. This
 * needs the checkpoint and an async schema check, so it runs before the gate's transaction; the
 * gate uses the result only for the interrupt it was made for, and turns errors into 400s after
 * its own checks, so nothing here is revealed to a caller who may not see the thread.
 */
export async function prepareEdits(
  ctx: RunContext,
  resume: { threadId: string; interruptId: string; decisions: readonly Decision[] },
): Promise<PreparedEdits> {
  const { threadId, interruptId, decisions } = resume;
  const record = await ctx.store.interrupts.get(interruptId);
  if (!record || record.thread_id !== threadId || record.status !== "waiting_human") return NO_EDITS;
  // Calls edited earlier while the interrupt waits (decided call by call): a new edit goes on top
  // of theirs, and the run that starts applies theirs too.
  const stored = Object.entries(record.progress).flatMap(([call_id, p]) => (p.edit ? [{ call_id, edited_args: realEdit(ctx, p.edit) }] : []));
  if (!decisions.some((d) => d.edited_args !== undefined) && !stored.length) return NO_EDITS;
  const named = new Set(decisions.map((d) => d.call_id));
  const all: Decision[] = [
    ...decisions.map((d) => {
      const kept = record.progress[d.call_id]?.edit;
      const before = kept && realEdit(ctx, kept);
      return before && d.approved ? { ...d, edited_args: { ...before, ...d.edited_args } } : d;
    }),
    ...stored.filter((s) => !named.has(s.call_id)).map((s) => ({ call_id: s.call_id, approved: true, edited_args: s.edited_args })),
  ];
  const at = await readGateState(await graphOfThread(ctx, threadId), threadId);
  const real = new Map(at.calls.map((c) => [c.id!, c]));
  const byCall = new Map<string, CheckedEdit>();
  for (const d of all) {
    if (d.edited_args === undefined) continue;
    const shown = record.calls.find((c) => c.call_id === d.call_id);
    const call = real.get(d.call_id);
    if (!shown) continue; // unknown_call, from the gate
    // The record says what may be edited (a graph's middleware may allow less than the tool).
    if (!shown.editable) {
      byCall.set(d.call_id, { error: `Tool '${shown.name}' is not editable here` });
      continue;
    }
    // The checkpoint must hold the very call the person was shown.
    if (!call || hashArgs(call.args) !== shown.args_hash) {
      byCall.set(d.call_id, { error: `Call ${d.call_id} cannot be edited: it is not the call that was shown` });
      continue;
    }
    const checked = await check(ctx, call, d);
    // The person approves what the edited call would do: its preview, taken again on the new arguments.
    const preview = "error" in checked ? undefined : await previewOf(ctx, { signal: NEVER_ABORTS, threadId }, { id: call.id, name: call.name, args: checked.args });
    byCall.set(d.call_id, preview ? { ...checked, preview } : checked);
  }
  return { interruptId, byCall, progressSeq: record.progress_seq };
}

async function check(ctx: Pick<RunContext, "registry">, call: { id?: string; name: string; args: Record<string, unknown> }, d: Decision): Promise<CheckedEdit> {
  if (!d.approved) return { error: "edited_args is only allowed with approved: true" };
  const edit = applyEdit(ctx.registry, call, d.edited_args);
  if ("error" in edit) return edit;
  const invalid = await validateArgs(ctx.registry, { id: call.id!, name: call.name, args: edit.args });
  return invalid ? { error: `edited_args: ${invalid}` } : { ...edit, edited_args: d.edited_args! };
}
