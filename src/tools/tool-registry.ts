import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { PendingCall } from "../protocol/index.js";
import { maskAll, maskArgs, maskOutput, maskValues, sensitiveValues } from "./mask-args.js";
import type { TollgateTool, ToolKind, ToolPolicy } from "./tollgate-tool.js";

/**
 * The name a call is stored under when the model sent it without a valid one: it is answered
 * `error` "malformed tool call" and never reaches a tool or the gate. Reserved here, where tools
 * are registered, so the graph (above) reads it from the tools layer and not the other way round.
 */
export const MALFORMED_CALL_NAME = "invalid_tool_call";

/** The tools a graph serves, by name. Graph, adapter and views all read kinds and masks from here. */
export class ToolRegistry {
  private readonly byName = new Map<string, TollgateTool>();
  private readonly schemas = new Map<string, Record<string, unknown>>();

  constructor(tools: readonly TollgateTool[]) {
    for (const t of tools) {
      if (this.byName.has(t.name)) throw new Error(`Duplicate tool name '${t.name}'`);
      // Calls the model sends without a valid name are stored under it and never run.
      if (t.name === MALFORMED_CALL_NAME) throw new Error(`The tool name '${MALFORMED_CALL_NAME}' is reserved`);
      this.byName.set(t.name, t);
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

  /**
   * Who may approve this call, as people are shown it: the tool's policy, or what its rule says for
   * these (real) arguments. A rule that throws or answers something else fails closed: an
   * approver (four eyes) decides.
   */
  policyOf(name: string, args: Record<string, unknown>): ResolvedPolicy {
    const policy = this.byName.get(name)?.policy ?? "owner";
    if (typeof policy !== "function") return resolved(policy) ?? { policy: "approver" };
    try {
      return resolved(policy(args)) ?? { policy: "approver" };
    } catch {
      return { policy: "approver" };
    }
  }

  /** This tool's approval window in ms, if it sets its own. */
  ttlMsOf(name: string): number | undefined {
    const s = this.byName.get(name)?.ttl_seconds;
    return s === undefined ? undefined : Math.round(s * 1000);
  }

  /** After how many ms a waiting call of this tool is escalated, if the tool says. */
  escalateMsOf(name: string): number | undefined {
    const s = this.byName.get(name)?.escalate_after_seconds;
    return s === undefined ? undefined : Math.round(s * 1000);
  }

  isEditable(name: string): boolean {
    return this.byName.get(name)?.editable === true;
  }

  /** The tool's arguments as JSON Schema (for an edit form); made once per tool. */
  argsSchema(name: string): Record<string, unknown> {
    let s = this.schemas.get(name);
    if (!s) {
      const t = this.byName.get(name);
      s = t ? (toJsonSchema(t.schema as never) as Record<string, unknown>) : {};
      this.schemas.set(name, s);
    }
    return s;
  }

  /** A pending call as people see it: masked arguments, policy, and what an edit may change. */
  pendingCall(call: { id: string; name: string; args: Record<string, unknown> }): PendingCall {
    return {
      call_id: call.id,
      name: call.name,
      args: this.mask(call.name, call.args),
      ...this.policyOf(call.name, call.args),
      editable: this.isEditable(call.name),
      args_schema: this.argsSchema(call.name),
    };
  }

  /** The tool's preview, if it has one. */
  previewOf(name: string): TollgateTool["preview"] {
    return this.byName.get(name)?.preview;
  }

  /**
   * A call's arguments as people and logs see them: the tool's sensitive paths masked. A tool this
   * server does not know has no masks to go by (a package loaded twice may carry sensitive ones):
   * every argument is masked.
   */
  mask(name: string, args: Record<string, unknown>): Record<string, unknown> {
    const t = this.byName.get(name);
    return t ? maskArgs(args, t.sensitive) : maskAll(args);
  }

  /**
   * A tool's or a preview's error message as people and logs see it: the exact values of the
   * call's sensitive arguments (every argument's, for a tool this server does not know) masked.
   */
  maskError(name: string, args: Record<string, unknown>, message: string): string {
    const t = this.byName.get(name);
    const paths = t ? t.sensitive : Object.keys(args && typeof args === "object" ? args : {});
    return maskValues(message, sensitiveValues(args, paths));
  }

  /** A tool's output as people and logs see them: sensitive paths masked when it is JSON. */
  maskOutput(name: string, output: string): string {
    return maskOutput(output, this.byName.get(name)?.sensitiveOutput ?? []);
  }

  /** The tools as LangChain sees them (each holds its own gate), for `model.bindTools` and tool nodes. */
  langchainTools(): StructuredToolInterface[] {
    return [...this.byName.values()];
  }
}

/** A call's policy as people see it: `quorum` with what it requires. */
export type ResolvedPolicy = Pick<PendingCall, "policy" | "requires">;

/** What a tool's policy (or its rule's answer) means; undefined for anything that is not a policy. */
function resolved(p: ToolPolicy | unknown): ResolvedPolicy | undefined {
  if (p === "owner" || p === "approver") return { policy: p };
  if (!p || typeof p !== "object") return undefined;
  const { role = "approver", approvers } = p as { role?: unknown; approvers?: unknown };
  if (typeof role !== "string" || !role || !Number.isInteger(approvers) || (approvers as number) < 1) return undefined;
  return { policy: "quorum", requires: { role, approvers: approvers as number } };
}
