import { type Callbacks, parseCallbackConfigArg } from "@langchain/core/callbacks/manager";
import { ToolMessage } from "@langchain/core/messages";
import { StructuredTool, type StructuredToolInterface, type ToolRunnableConfig } from "@langchain/core/tools";
import type { ApprovalPolicy } from "../protocol/index.js";
import { maskValues, sensitiveValues } from "./mask-args.js";
import { isMcpTool, kindFromHints } from "./mcp-hints.js";
import { closingOutcomes, DEFAULT_REASON, NO_DECISION } from "../protocol/index.js";
import { outcomeMessage } from "./outcome-message.js";
import { callOwnCode, innerConfig, runInner, untilAborted } from "./run-tool-call.js";
import type { ToolOutcome } from "./tool-outcome.js";
import { PREVIEW_KEY, toolContext } from "./tool-context.js";
import { toolGateOf } from "./tool-gate.js";
import { answersWithArtifact, maskedArtifact, splitOutput } from "./tool-output.js";

/** `read` tools run at once; `irreversible` tools run only after a person approves the exact call. */
export type ToolKind = "read" | "irreversible";

/**
 * Who may approve a call: `owner` (the thread's owner, or an approver), `approver` (an approver who
 * is neither the owner nor the requester: four eyes), or a quorum: `approvers` distinct principals
 * with `role` (default `approver`; `admin` counts for any), none of them the owner or requester.
 */
export type ToolPolicy = Exclude<ApprovalPolicy, "quorum"> | { role?: string; approvers: number };

/**
 * A policy that depends on the call: given its real arguments (before masking), who may approve it.
 * Run once, when the interrupt opens; what it returns is what people see.
 */
export type PolicyRule = (args: Record<string, unknown>) => ToolPolicy;

/** What tollgate knows about a tool besides what LangChain knows. */
export interface ToolMeta {
  /**
   * Omitted, the tool's MCP hints decide: `read` for `readOnlyHint: true`, else `irreversible`
   * (so a tool with no hints waits at the gate). See `kindFromHints`.
   */
  kind?: ToolKind;
  /** Dotted argument paths (e.g. "card.number") masked in every event and view. */
  sensitive?: readonly string[];
  /**
   * Dotted paths into the tool's output, when it is a JSON object or array (e.g.
   * "customer.email"), masked in every event and view. The model still reads the real output.
   */
  sensitiveOutput?: readonly string[];
  /**
   * Who may approve a call (irreversible tools): `owner` — the thread's owner or an approver;
   * `approver` — only an approver who is not the thread's owner (four eyes). Default `owner`.
   * Or `{ role?, approvers }`: that many distinct people of that role (a quorum). Or a rule: a
   * function of the call's arguments returning one of them.
   */
  policy?: ToolPolicy | PolicyRule;
  /** This tool's approval window in seconds, instead of APPROVAL_TTL_SECONDS. */
  ttl_seconds?: number;
  /**
   * Seconds after which a call still waiting is escalated (one `approval.escalated` webhook, and
   * `escalated` in the inbox), instead of APPROVAL_ESCALATE_SECONDS.
   */
  escalate_after_seconds?: number;
  /** Whether an approver may change the call's arguments (`edited_args`) before it runs. */
  editable?: boolean;
  /**
   * What the call would do, for the person deciding it (the order, the balance, the diff): run
   * when the interrupt opens, read-only, with the run's signal and a 10 s deadline; masked by
   * `sensitiveOutput`. The approval is bound to it, and the tool gets it back in
   * `toolContext(config).preview` to refuse with `StalePreview` when the world changed since.
   */
  preview?: (args: Record<string, unknown>, ctx: PreviewContext) => unknown;
}

/** What a preview gets besides the call's arguments. */
export interface PreviewContext {
  signal: AbortSignal;
  threadId: string;
  callId: string;
}

/**
 * What marks a TollgateTool, whichever copy of this package made it (a team's package may load
 * its own, or load it both as CommonJS and as ESM): a class from another copy fails `instanceof`.
 */
const TOLLGATE_TOOL = Symbol.for("tollgate.tool");

/** Whether `v` is a TollgateTool, from this copy of the package or another. */
export function isTollgateTool(v: unknown): v is TollgateTool {
  return !!v && typeof v === "object" && (v as { [TOLLGATE_TOOL]?: unknown })[TOLLGATE_TOOL] === true;
}

/**
 * A LangChain tool that carries tollgate's metadata and holds the gate itself: usable wherever a
 * tool goes (`ToolNode`, `createAgent`, `bindTools`, a node calling `.invoke`). A read tool runs
 * as the tool it wraps. An irreversible one runs only for a tool call (`invoke` with a ToolCall)
 * that the run's gate holds a live approval for (call id, tool name, argument hash), and only
 * through the execution ledger; otherwise it answers "Rejected: no approval for this call" and
 * its code never runs, whichever node, prebuilt or middleware called it.
 */
export class TollgateTool extends StructuredTool {
  name: string;
  description: string;
  schema: StructuredToolInterface["schema"];
  readonly kind: ToolKind;
  /** Whether the kind came from the tool's MCP hints (none was given): `mcpHints: false` overrules it. */
  readonly hinted: boolean;
  readonly sensitive: readonly string[];
  readonly sensitiveOutput: readonly string[];
  readonly policy: ToolPolicy | PolicyRule;
  readonly editable: boolean;
  readonly ttl_seconds: number | undefined;
  readonly escalate_after_seconds: number | undefined;
  readonly preview: ToolMeta["preview"];
  /** See `isTollgateTool`. */
  readonly [TOLLGATE_TOOL] = true;

  constructor(
    /** The team's own tool: what runs once the gate lets a call through. */
    readonly inner: StructuredToolInterface,
    meta: ToolMeta,
  ) {
    super({ verboseParsingErrors: true });
    this.name = inner.name;
    this.description = inner.description;
    this.schema = inner.schema;
    this.kind = meta.kind ?? kindFromHints(inner);
    this.hinted = meta.kind === undefined;
    this.sensitive = meta.sensitive ?? [];
    this.sensitiveOutput = meta.sensitiveOutput ?? [];
    this.policy = meta.policy ?? "owner";
    // An async rule would resolve to a promise, which is no policy: the call would fall to `approver`.
    if (typeof this.policy === "function" && this.policy.constructor.name === "AsyncFunction") {
      throw new Error(`Tool '${inner.name}': a policy rule must be synchronous (it is run when the interrupt opens)`);
    }
    if (typeof this.policy === "object" && (!Number.isInteger(this.policy.approvers) || this.policy.approvers < 1 || this.policy.role === "")) {
      throw new Error(`Tool '${inner.name}': a quorum policy needs approvers, a whole number of at least 1, and a role name if any`);
    }
    this.editable = meta.editable ?? false;
    this.ttl_seconds = positiveSeconds(meta.ttl_seconds, "ttl_seconds", inner.name);
    this.escalate_after_seconds = positiveSeconds(meta.escalate_after_seconds, "escalate_after_seconds", inner.name);
    this.preview = meta.preview;
  }

  static lc_name() {
    return "TollgateTool";
  }

  /** Traced under the tool's own name, as LangChain's `tool()` tools are (one run per call). */
  override async call(arg: unknown, configArg?: Callbacks | ToolRunnableConfig, tags?: string[]): Promise<unknown> {
    const config = parseCallbackConfigArg(configArg);
    if (config.runName === undefined) config.runName = this.name;
    return super.call(arg as never, config, tags);
  }

  /** The metadata as given (what `createTollgate({ toolMeta })` takes). */
  get meta(): ToolMeta {
    const { kind, sensitive, sensitiveOutput, policy, editable, ttl_seconds, escalate_after_seconds, preview } = this;
    return {
      kind,
      sensitive,
      sensitiveOutput,
      policy,
      editable,
      ...(ttl_seconds ? { ttl_seconds } : {}),
      ...(escalate_after_seconds ? { escalate_after_seconds } : {}),
      ...(preview ? { preview } : {}),
    };
  }

  protected async _call(args: unknown, run: unknown, config: ToolRunnableConfig = {}): Promise<unknown> {
    const signal = toolContext(config).signal;
    const id = config.toolCall?.id;
    const call = { id: id ?? "", name: this.name, args: args as Record<string, unknown> };
    if (this.kind !== "irreversible") {
      // Errors propagate: the caller (ToolNode, the kit, a node) reports them as it always does,
      // so their text is masked here, the one place every caller's path goes through.
      // The tool's own code, inside this run: one traced run a call, under the tool's name.
      try {
        const result = await callOwnCode(this.inner, { args, run, config: innerConfig(config, { call, signal }) });
        return answersWithArtifact(this.inner) ? this.withArtifact(result, id) : result;
      } catch (err) {
        throw maskThrown(err, this.sensitiveIn(call.args, config));
      }
    }
    // Bound to the arguments as the model sent them (and the person saw them), not as parsed.
    const raw = (config.toolCall?.args as Record<string, unknown> | undefined) ?? call.args;
    const gate = toolGateOf(config);
    const permit = id ? gate?.permit({ id, name: this.name, args: raw }) : undefined;
    if (!permit) {
      // A person's own rejection of this very call (a graph's middleware may still call the tool):
      // answered with their reason, as the kit's gate answers it.
      const d = id ? gate?.decision(id) : undefined;
      if (d && !d.approved && d.name === this.name) return answer(call, id, closingOutcomes.rejected(d.reason ?? DEFAULT_REASON));
      if (id && !d && gate?.covers(id)) return answer(call, id, closingOutcomes.rejected(NO_DECISION));
      gate?.refused({ id: call.id, name: this.name });
      return answer(call, id, closingOutcomes.noApproval());
    }
    const edited = permit.decision.edited?.length ? { edited: permit.decision.edited } : {};
    const { preview } = permit.decision;
    const withPreview = preview === undefined ? config : { ...config, configurable: { ...config.configurable, [PREVIEW_KEY]: preview } };
    // Masked before the ledger keeps the outcome: what it answers again later is what people may see.
    const settled = permit.execute(async () => {
      try {
        return { ...this.maskedOutcome(await runInner(this.inner, call, { config: withPreview, signal, parent: { run } }), call.args, config), ...edited };
      } catch (err) {
        // An MCP server told to stop may have done part of the work already (its cancel is advisory):
        // not "not executed", but unknown, and never sent again.
        if (signal?.aborted && isMcpTool(this.inner)) return closingOutcomes.outcomeUnknown();
        throw err;
      }
    });
    return answer(call, id, await untilAborted(settled, signal));
  }

  /**
   * A content-and-artifact result (an MCP tool's) as LangChain's tools answer: a ToolMessage for a
   * tool call, the text otherwise. The model reads the text; the artifact, stored on the message,
   * has its structured content masked.
   */
  private withArtifact(result: unknown, id: string | undefined): unknown {
    const { text, artifact } = splitOutput(result);
    if (!id) return text;
    const kept = maskedArtifact(artifact, this.sensitiveOutput);
    return new ToolMessage({ content: text, tool_call_id: id, name: this.name, status: "success", ...(kept === undefined ? {} : { artifact: kept }) });
  }

  /**
   * The exact values of this call's sensitive arguments, as sent (and approved) and as parsed
   * (a schema may coerce or default them): what the tool's error text must not show.
   */
  private sensitiveIn(parsed: Record<string, unknown>, config: ToolRunnableConfig): string[] {
    if (this.sensitive.length === 0) return [];
    const sent = config.toolCall?.args as Record<string, unknown> | undefined;
    return [...new Set([...sensitiveValues(parsed, this.sensitive), ...sensitiveValues(sent, this.sensitive)])];
  }

  /** An outcome whose error text shows none of the call's sensitive values. */
  private maskedOutcome(o: ToolOutcome, parsed: Record<string, unknown>, config: ToolRunnableConfig): ToolOutcome {
    return o.error ? { ...o, error: maskValues(o.error, this.sensitiveIn(parsed, config)) } : o;
  }
}

/**
 * Wraps a LangChain tool with tollgate's metadata (see `TollgateTool`), whatever its schema: zod 3,
 * zod 4 or JSON Schema (an MCP tool's). Without a kind, its MCP hints give one (`kindFromHints`).
 * A tool that is already a TollgateTool is wrapped around its own tool again, with the new metadata.
 */
export function defineTool(tool: StructuredToolInterface, meta: ToolMeta = {}): TollgateTool {
  return new TollgateTool(isTollgateTool(tool) ? tool.inner : tool, meta);
}

/** A ToolMessage when called with a tool call (LangChain passes it through as is), else the text. */
function answer(call: { name: string }, id: string | undefined, outcome: ToolOutcome): unknown {
  if (id) return outcomeMessage({ id, name: call.name }, outcome);
  if (outcome.status === "ok") return outcome.output ?? "";
  return outcomeMessage({ id: "", name: call.name }, outcome).content;
}

/**
 * A thrown error with the given values masked in its message and stack, as the same error (its
 * class and fields kept, so callers still tell an abort or a stale preview apart); a thrown
 * non-error as masked text.
 */
function maskThrown(err: unknown, values: readonly string[]): unknown {
  if (values.length === 0) return err;
  if (!(err instanceof Error)) return typeof err === "string" ? maskValues(err, values) : err;
  try {
    err.message = maskValues(err.message, values);
    if (typeof err.stack === "string") err.stack = maskValues(err.stack, values);
    return err;
  } catch {
    // A frozen error cannot be changed: a plain one with the masked text stands in for it.
    return new Error(maskValues(err.message, values));
  }
}

/** A number of seconds a tool's metadata may give: positive and finite, or absent. */
function positiveSeconds(v: number | undefined, what: string, tool: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 2_147_483) throw new Error(`Tool '${tool}': ${what} must be a positive number of seconds`);
  return v;
}
