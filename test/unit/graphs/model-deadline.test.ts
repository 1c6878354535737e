import { AIMessageChunk } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ModelDeadline } from "../../../graphs/nodes/model-deadline.js";
import { loadConfig } from "../../../src/config.js";

// Time is faked: the deadline is a timer, and what counts is which chunks move it.
beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const chunk = (fields: ConstructorParameters<typeof AIMessageChunk>[0]) => new AIMessageChunk(fields);

describe("ModelDeadline", () => {
  it("expires after the first-token timeout when nothing but empty chunks came, and aborts its signal", () => {
    const d = new ModelDeadline({ firstTokenMs: 1000, idleMs: 200 });
    vi.advanceTimersByTime(600);
    d.observe(chunk({ content: "" })); // the role chunk
    d.observe(chunk({ content: "", usage_metadata: { input_tokens: 1, output_tokens: 0, total_tokens: 1 } }));
    d.observe(chunk({ content: "", response_metadata: { finish_reason: null } }));
    vi.advanceTimersByTime(399);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect([d.signal.aborted, d.expired]).toEqual([true, "first_token"]);
    expect(d.describe()).toBe("Model timed out: no output within 1 s of the request");
  });

  it("after the first output, allows the idle timeout between outputs: text, tool-call pieces and reasoning count", () => {
    const d = new ModelDeadline({ firstTokenMs: 1000, idleMs: 200 });
    d.observe(chunk({ content: "Hel" }));
    for (const c of [
      chunk({ content: "lo" }),
      chunk({ content: "", tool_call_chunks: [{ index: 0, args: '{"a"', type: "tool_call_chunk" }] }),
      chunk({ content: "", additional_kwargs: { reasoning_content: "thinking…" } }),
    ]) {
      vi.advanceTimersByTime(199);
      d.observe(c);
    }
    vi.advanceTimersByTime(199);
    expect(d.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(d.expired).toBe("idle");
    expect(d.describe()).toBe("Model timed out: no output for 0.2 s in the middle of its answer");
  });

  it("a reasoning model thinking before its first word is not timed out", () => {
    const d = new ModelDeadline({ firstTokenMs: 300, idleMs: 300 });
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(250);
      d.observe(chunk({ content: "", additional_kwargs: { reasoning_content: "still thinking " } }));
    }
    expect(d.signal.aborted).toBe(false);
    d.stop();
  });
});

describe("timeout settings", () => {
  it("refuses values past what a Node timer can wait (it would fire after 1 ms)", () => {
    expect(() => loadConfig({ MODEL_FIRST_TOKEN_TIMEOUT_SECONDS: "1e7" })).toThrow(/MODEL_FIRST_TOKEN_TIMEOUT_SECONDS/);
    expect(() => loadConfig({ HEARTBEAT_SECONDS: "0" })).toThrow(/HEARTBEAT_SECONDS/);
    expect(loadConfig({ MODEL_IDLE_TIMEOUT_SECONDS: "0.25" }).modelTimeouts.idleMs).toBe(250);
  });
});
