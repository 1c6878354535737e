import { AIMessageChunk } from "@langchain/core/messages";
import { freshCallId } from "../history.js";

/**
 * Merges a model's streamed chunks into one message without a `concat` per token: `concat`
 * builds a new AIMessageChunk each time, the largest per-token cost in a CPU profile. Chunks of
 * plain text (nearly all of them) are kept as strings; chunks carrying anything else (tool call
 * pieces, usage, finish reason, content blocks) are merged with LangChain's own `concat`, after the
 * text before them, so the order of the content is kept.
 */
export class ChunkAccumulator {
  private texts: string[] = [];
  private merged: AIMessageChunk | undefined;
  private readonly calls = new CallIndexer();

  /** Adds one chunk and returns its text (empty when it has none). */
  add(chunk: AIMessageChunk): string {
    if (chunk.tool_call_chunks?.length) chunk = this.calls.indexed(chunk);
    const plainText = typeof chunk.content === "string" ? chunk.content : undefined;
    if (plainText !== undefined && this.merged && isPlain(chunk)) {
      if (plainText) this.texts.push(plainText);
      return plainText;
    }
    this.flushText();
    this.merged = this.merged ? this.merged.concat(chunk) : chunk;
    return plainText ?? chunk.text;
  }

  /** Everything added so far, as one chunk; undefined when nothing was. */
  result(): AIMessageChunk | undefined {
    this.flushText();
    return this.merged;
  }

  private flushText(): void {
    if (!this.texts.length || !this.merged) return;
    this.merged = this.merged.concat(new AIMessageChunk({ content: this.texts.join("") }));
    this.texts = [];
  }
}

function isPlain(c: AIMessageChunk): boolean {
  return (
    !c.tool_call_chunks?.length &&
    !c.usage_metadata &&
    Object.keys(c.additional_kwargs).length === 0 &&
    c.response_metadata?.finish_reason == null
  );
}

/**
 * Gives tool-call fragments that came without `index` the index of the call they belong to.
 * LangChain merges fragments by index; without one, every fragment became a call of its own
 * (one call streamed in 8 pieces gave 8 calls, 7 without a name). A fragment with a new id, or
 * with a name when the current call has one, starts a call; any other continues the current one.
 */
class CallIndexer {
  private current: { index: number; id: string | undefined; named: boolean } | undefined;
  private next = 0;

  indexed(chunk: AIMessageChunk): AIMessageChunk {
    let fixed = false;
    const pieces = chunk.tool_call_chunks!.map((t) => {
      if (typeof t.index === "number") {
        const same = this.current?.index === t.index;
        this.current = { index: t.index, id: t.id ?? (same ? this.current!.id : undefined), named: !!t.name || (same && this.current!.named) };
        this.next = Math.max(this.next, t.index + 1);
        return t;
      }
      fixed = true;
      // A new id, or a second name (whole calls sent one per delta, with neither index nor id), starts a call.
      const starts = !this.current || (!!t.id && t.id !== this.current.id) || (!!t.name && this.current.named);
      if (starts) {
        // LangChain only parses a call that has an id: one that came without gets one of ours.
        this.current = { index: this.next++, id: t.id ?? freshCallId(), named: !!t.name };
        return { ...t, id: this.current.id, index: this.current.index };
      }
      if (t.name) this.current!.named = true;
      return { ...t, index: this.current!.index };
    });
    if (!fixed) return chunk;
    // The raw deltas in additional_kwargs would be merged the same broken way; nothing reads them.
    const { tool_calls: _raw, ...kwargs } = chunk.additional_kwargs;
    return new AIMessageChunk({
      id: chunk.id,
      content: chunk.content,
      tool_call_chunks: pieces,
      additional_kwargs: kwargs,
      response_metadata: chunk.response_metadata,
      usage_metadata: chunk.usage_metadata,
    });
  }
}
