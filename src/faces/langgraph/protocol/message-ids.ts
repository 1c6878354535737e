import { runInputOf } from "../../../graph/index.js";
import type { RunRow } from "../../../runs/index.js";
import type { Values } from "../runs/stream-frames.js";

/**
 * Message ids as the thread-centric face shows them, so a client's streamed messages and the
 * state it is sent afterwards name each message alike (LangChain's clients merge the two by id):
 * a user message under the id its client gave it; an assistant message as the n-th answer to the
 * user message before it (`<that id>:ai<n>`), which the stream can name while the model still
 * speaks. The history keeps its own ids; only this face's views are renamed.
 */
export class MessageIds {
  private constructor(private readonly clientIds: ReadonlyMap<string, string>) {}

  /** From the thread's runs: each message run keeps its user message's ids. */
  static of(runs: readonly RunRow[]): MessageIds {
    const ids = new Map<string, string>();
    for (const r of runs) {
      const input = runInputOf(r);
      if (input?.clientId) ids.set(input.id, input.clientId);
    }
    return new MessageIds(ids);
  }

  /** The id a message run's user message is shown under; undefined for a run without one (a resume). */
  anchorOf(run: RunRow): string | undefined {
    const input = runInputOf(run);
    return input && (input.clientId ?? input.id);
  }

  /** The state with its messages renamed. */
  display(values: Values): Values {
    let anchor = "start";
    let n = 0;
    const messages = values.messages.map((m) => {
      if (m.type === "human" && typeof m.id === "string") {
        anchor = this.clientIds.get(m.id) ?? m.id;
        n = 0;
        return { ...m, id: anchor };
      }
      return m.type === "ai" ? { ...m, id: aiMessageId(anchor, n++) } : m;
    });
    return { ...values, messages };
  }
}

/** The `n`-th assistant message answering the user message shown as `anchor`. */
export const aiMessageId = (anchor: string, n: number): string => `${anchor}:ai${n}`;
