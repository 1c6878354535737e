import { AIMessageChunk } from "@langchain/core/messages";

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

  /** Adds one chunk and returns its text (empty when it has none). */
  add(chunk: AIMessageChunk): string {
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
