import { EDITED_PREFIX, type EventBody, type InterruptPayload, type ThreadMessage } from "../protocol/index.js";
import type { ToolRegistry } from "../tools/index.js";
import type { SecretScrubber } from "./secret-scrubber.js";
import type { TokenFilter } from "./token-filter.js";

/**
 * The one exit for what people and logs may see of a run: every event on its way into the run's
 * log (and so to the wire and the stored event log), and every message of a thread view.
 * Sensitive argument and output paths of each tool are masked, then every string is scrubbed of
 * secrets. The model and the tools never see this: they keep the real values, in the checkpoint
 * and the ledger, and approvals stay bound to the hash of the real arguments.
 *
 * Free text (tokens, the model's words, the user's) is not scanned for sensitive values; secrets
 * are scrubbed from every string, and from tokens by the configured secrets (`tokenFilter`).
 */
export class Redactor {
  constructor(
    private readonly registry: ToolRegistry,
    readonly scrubber: SecretScrubber,
  ) {}

  /** An event as it may leave the process. Token events are returned as they are. */
  event(body: EventBody): EventBody {
    if (body.type === "token") return body;
    return this.scrubber.scrubDeep(this.mask(body));
  }

  /** A filter for one run's tokens: the configured secrets, even split across tokens. */
  tokenFilter(): TokenFilter {
    return this.scrubber.tokenFilter();
  }

  /** A message of `GET /threads/:id`. */
  message(m: ThreadMessage): ThreadMessage {
    let shown = m;
    if (m.tool_calls?.length) {
      shown = { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, args: this.registry.mask(c.name, c.args) })) };
    } else if (m.role === "tool" && m.name && (m.status ?? "ok") === "ok") {
      shown = { ...m, content: this.toolContent(m.name, m.content, m.edited === true) };
    }
    return this.scrubber.scrubDeep(shown);
  }

  /** A tool call's arguments as people may see them (the tool's sensitive paths masked; an unknown tool's all masked). */
  callArgs(name: string, args: Record<string, unknown>): Record<string, unknown> {
    return this.registry.mask(name, args);
  }

  /** An interrupt's payload (`pending`, `/approvals`): its calls were masked when it opened; again, in case. */
  interrupt<T extends Pick<InterruptPayload, "calls">>(payload: T): T {
    return this.scrubber.scrubDeep(this.maskCalls(payload));
  }

  private maskCalls<T extends Pick<InterruptPayload, "calls">>(payload: T): T {
    return { ...payload, calls: payload.calls.map((c) => ({ ...c, args: this.registry.mask(c.name, c.args) })) };
  }

  private mask(body: Exclude<EventBody, { type: "token" }>): EventBody {
    switch (body.type) {
      case "tool_call":
        return { ...body, args: this.registry.mask(body.name, body.args) };
      case "tool_result":
        return body.output === undefined ? body : { ...body, output: this.registry.maskOutput(body.name, body.output) };
      case "interrupt":
        return this.maskCalls(body);
      default:
        return body;
    }
  }

  /** A tool message's content: the output masked, after the line naming edited arguments if there is one. */
  private toolContent(name: string, content: string, edited: boolean): string {
    const at = content.indexOf("\n");
    if (edited && content.startsWith(EDITED_PREFIX) && at >= 0) {
      return `${content.slice(0, at + 1)}${this.registry.maskOutput(name, content.slice(at + 1))}`;
    }
    return this.registry.maskOutput(name, content);
  }
}
