import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { describe, expect, it } from "vitest";
import { MemoryLedger } from "../../../src/ledger/index.js";
import { createAgentNode } from "../../../graphs/nodes/agent-node.js";
import type { TokenChunk } from "../../../src/graph/index.js";
import { DEFAULT_MODEL_TIMEOUTS } from "../../../graphs/nodes/model-deadline.js";
import { StreamTurns, TOKENS_PER_TURN, turnOverBudget } from "../../../graphs/nodes/turn-budget.js";
import { ToolRegistry } from "../../../src/tools/index.js";

/** Busy for `ms` of wall time without giving the loop back: the cost of relaying one chunk, exaggerated. */
const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Streams `n` chunks that are all already there (a burst in the socket's buffer): no macrotask between them. */
class Burst extends BaseChatModel {
  constructor(private readonly n: number) {
    super({});
  }
  _llmType() {
    return "burst";
  }
  async _generate(): Promise<ChatResult> {
    throw new Error("streamed only");
  }
  override async *_streamResponseChunks(_m: BaseMessage[]): AsyncGenerator<ChatGenerationChunk> {
    for (let i = 0; i < this.n; i++) {
      spin(0.5);
      yield new ChatGenerationChunk({ text: "x", message: new AIMessageChunk({ content: "x" }) });
    }
    yield new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", response_metadata: { finish_reason: "stop" } }) });
  }
}

describe("a burst of tokens does not hold the event loop", () => {
  it("turnOverBudget lets a timer in while microtask-only work goes on, then the work resumes", async () => {
    let timerAt = -1;
    let done = 0;
    setTimeout(() => (timerAt = done), 0);
    for (; done < 100; done++) {
      spin(0.5);
      const pause = turnOverBudget();
      if (pause) await pause;
    }
    // Without the budget, 100 × 0.5 ms of microtasks run to the end before the timer.
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(100);
    expect(done).toBe(100);
  });

  it("the agent node relays a whole burst, and a request waiting meanwhile is served mid-way", async () => {
    const node = createAgentNode({
      model: new Burst(100),
      registry: new ToolRegistry([]),
      ledger: new MemoryLedger(),
      systemPrompt: undefined,
      timeouts: DEFAULT_MODEL_TIMEOUTS,
    });
    const tokens: string[] = [];
    let tokensWhenTimerRan = -1;
    const answer = node(
      { messages: [new HumanMessage("go")], rounds: 0, closed: false },
      { writer: (chunk) => void tokens.push((chunk as TokenChunk).token) },
    );
    setTimeout(() => (tokensWhenTimerRan = tokens.length), 0);
    const update = await answer;
    expect(tokens.join("")).toBe("x".repeat(100));
    expect(String((update.messages as BaseMessage[]).at(-1)?.content)).toBe("x".repeat(100));
    expect(tokensWhenTimerRan).toBeGreaterThan(0);
    expect(tokensWhenTimerRan).toBeLessThan(100);
  });

  it("over budget, each stream still relays a few tokens of the turn before it pauses, so its writes stay batched", async () => {
    const hot = new StreamTurns();
    const cold = new StreamTurns();
    expect(hot.next()).toBeUndefined(); // the turn's first token
    spin(5); // the turn is over budget from here on
    let calls = 1;
    let pause: Promise<void> | undefined;
    while (!pause) {
      calls++;
      pause = hot.next();
    }
    expect(calls).toBe(TOKENS_PER_TURN);
    expect(cold.next()).toBeUndefined(); // another stream's first token of this turn still goes
    await pause;
    expect(hot.next()).toBeUndefined(); // the next turn: a new share
  });
});
