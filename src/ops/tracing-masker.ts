import { MASK, maskArgs, maskOutput } from "../tools/mask-args.js";
import type { ToolRegistry } from "../tools/index.js";
import type { SecretScrubber } from "./secret-scrubber.js";

/** The parts of a LangSmith run create or update that carry data (the rest are ids and times). */
export interface TracedRun {
  name?: string;
  run_type?: string;
  inputs?: unknown;
  outputs?: unknown;
  error?: unknown;
  extra?: unknown;
  events?: unknown;
  serialized?: unknown;
  tags?: unknown;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const CONTENT_FIELDS = ["inputs", "outputs", "error", "extra", "events", "serialized", "tags"] as const;

/**
 * Makes a run fit to leave for LangSmith, as the API masks what people see (`Redactor`): each
 * tool's sensitive argument paths wherever a call appears (the model's `tool_calls`, their OpenAI
 * wire form, streamed chunks, a tool run's own inputs, an approval's `edited_args`), its sensitive
 * output paths in tool results (a tool run's output, tool messages in later model inputs), then
 * every string scrubbed of secrets.
 *
 * A trace is not a protocol event: its shapes are LangChain's, found by walking the run's JSON
 * form (messages as `toJSON` gives them). Where the tool cannot be named (a tool message without
 * a name or a known call id, an edit without its call), every tool's paths apply: a trace may
 * lose a value it could have shown, never show one it must not. What cannot be made JSON is
 * dropped.
 */
export class TraceMasker {
  private readonly allArgPaths: string[];
  private readonly allOutputPaths: string[];

  constructor(
    private readonly registry: ToolRegistry,
    private readonly scrubber: SecretScrubber,
  ) {
    const tools = registry.langchainTools().map((t) => registry.get(t.name)!);
    this.allArgPaths = [...new Set(tools.flatMap((t) => t.sensitive ?? []))];
    this.allOutputPaths = [...new Set(tools.flatMap((t) => t.sensitiveOutput ?? []))];
  }

  /** A copy of the run with its data masked and scrubbed; ids, times and the like as they were. */
  run<T extends TracedRun>(run: T): T {
    const out: TracedRun = { ...run };
    const toolName = run.run_type === "tool" && typeof run.name === "string" ? run.name : undefined;
    for (const field of CONTENT_FIELDS) {
      if (run[field] === undefined) continue;
      let value = toJson(run[field]);
      if (toolName && field === "inputs") value = this.toolRunInputs(toolName, value);
      if (toolName && field === "outputs") value = this.toolRunOutputs(toolName, value);
      out[field] = this.scrubber.scrubDeep(this.walk(value, callNames(value)));
    }
    if (typeof out.name === "string") out.name = this.scrubber.scrub(out.name);
    return out as T;
  }

  /** A tool run's inputs are the call's arguments (or, for a string tool, `{input}`). */
  private toolRunInputs(name: string, inputs: Json): Json {
    if (!isObj(inputs)) return inputs;
    if (Object.keys(inputs).length === 1 && typeof inputs.input === "string") return { input: this.argsText(name, inputs.input) };
    return maskArgs(inputs, this.argPaths(name)) as Obj;
  }

  /** A tool run's output is `{output}`: the tool message it made, or its text. */
  private toolRunOutputs(name: string, outputs: Json): Json {
    if (!isObj(outputs) || outputs.output === undefined) return outputs;
    const output = outputs.output;
    if (typeof output === "string") return { ...outputs, output: this.toolContent(name, output) };
    return outputs; // a tool message: the walk masks it, with the name it carries
  }

  /** Masks every shape that carries a call's arguments or a tool's result, depth first. */
  private walk(node: Json, names: Map<string, string>): Json {
    if (Array.isArray(node)) return node.map((n) => this.walk(n, names));
    if (!isObj(node)) return node;
    let o: Obj = node;
    // LangChain's serialized message: `{lc: 1, type: "constructor", id: [..., "ToolMessage"], kwargs}`.
    if (o.lc === 1 && Array.isArray(o.id) && isObj(o.kwargs) && String(o.id.at(-1)).startsWith("ToolMessage")) {
      o = { ...o, kwargs: this.toolMessage(o.kwargs, names) };
    }
    // A plain tool message (`role` or `type` "tool").
    if ((o.role === "tool" || o.type === "tool") && "content" in o && ("tool_call_id" in o || "name" in o)) o = this.toolMessage(o, names);
    // A call (`tool_calls`, `tool_call_chunks`, `invalid_tool_calls`, an interrupt's calls).
    if ("args" in o && ("name" in o || "index" in o || "call_id" in o)) o = { ...o, args: this.args(toolName(o, names), o.args) };
    // The OpenAI wire form: `{function: {name, arguments: "<json>"}}`.
    if (isObj(o.function) && typeof o.function.arguments === "string") {
      const fn = o.function;
      o = { ...o, function: { ...fn, arguments: this.argsText(typeof fn.name === "string" ? fn.name : undefined, fn.arguments as string) } };
    }
    // An approval's edit: `{call_id, edited_args}`.
    if ("edited_args" in o && isObj(o.edited_args)) o = { ...o, edited_args: this.args(toolName(o, names), o.edited_args) };
    const out: Obj = {};
    for (const [k, v] of Object.entries(o)) out[k] = this.walk(v, names);
    return out;
  }

  private toolMessage(m: Obj, names: Map<string, string>): Obj {
    const name = typeof m.name === "string" && m.name ? m.name : typeof m.tool_call_id === "string" ? names.get(m.tool_call_id) : undefined;
    return { ...m, content: this.toolContent(name, m.content) };
  }

  /** A tool's result text (or text blocks); an edited call's result follows one header line. */
  private toolContent(name: string | undefined, content: Json | undefined): Json {
    if (Array.isArray(content)) {
      return content.map((b) => (isObj(b) && typeof b.text === "string" ? { ...b, text: this.toolContent(name, b.text) } : b));
    }
    if (typeof content !== "string") return content ?? null;
    const paths = this.outputPaths(name);
    const whole = maskOutput(content, paths);
    if (whole !== content) return whole;
    const at = content.indexOf("\n");
    if (at < 0) return content;
    const rest = content.slice(at + 1);
    const masked = maskOutput(rest, paths);
    return masked === rest ? content : content.slice(0, at + 1) + masked;
  }

  private args(name: string | undefined, args: Json): Json {
    if (typeof args === "string") return this.argsText(name, args);
    return isObj(args) ? (maskArgs(args, this.argPaths(name)) as Obj) : args;
  }

  /** Arguments as JSON text (OpenAI's form, a streamed chunk): masked when readable, else all masked. */
  private argsText(name: string | undefined, text: string): string {
    const paths = this.argPaths(name);
    if (paths.length === 0) return text;
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObj(parsed as Json)) return JSON.stringify(maskArgs(parsed as Obj, paths));
    } catch {
      // a partial chunk: cannot be masked path by path
    }
    return text.trim() === "" ? text : MASK;
  }

  private argPaths(name: string | undefined): readonly string[] {
    const tool = name ? this.registry.get(name) : undefined;
    return tool ? (tool.sensitive ?? []) : this.allArgPaths;
  }

  private outputPaths(name: string | undefined): readonly string[] {
    const tool = name ? this.registry.get(name) : undefined;
    return tool ? (tool.sensitiveOutput ?? []) : this.allOutputPaths;
  }
}

/** The value as JSON would carry it (messages through their `toJSON`); anything that cannot be, dropped. */
function toJson(value: unknown): Json {
  try {
    const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    return text === undefined ? null : (JSON.parse(text) as Json);
  } catch {
    return { dropped: "not serializable" };
  }
}

function isObj(v: Json | undefined): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The tool a call-shaped object names, directly or through its call id. */
function toolName(o: Obj, names: Map<string, string>): string | undefined {
  if (typeof o.name === "string" && o.name) return o.name;
  const id = typeof o.call_id === "string" ? o.call_id : typeof o.id === "string" ? o.id : undefined;
  return id ? names.get(id) : undefined;
}

/** Call id → tool name, from every call in the value (a history names the calls its tool messages answer). */
function callNames(value: Json): Map<string, string> {
  const names = new Map<string, string>();
  const visit = (n: Json) => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!isObj(n)) return;
    const id = typeof n.id === "string" ? n.id : typeof n.call_id === "string" ? n.call_id : undefined;
    const fn = isObj(n.function) ? n.function : undefined;
    const name = typeof n.name === "string" ? n.name : typeof fn?.name === "string" ? fn.name : undefined;
    if (id && name && ("args" in n || fn)) names.set(id, name);
    Object.values(n).forEach(visit);
  };
  visit(value);
  return names;
}
