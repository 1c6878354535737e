import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, DeltaChannel, END, type Messages, messagesDeltaReducer, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, expect, it } from "vitest";
import { openSqliteStore, type Store } from "../../../src/store/index.js";

let store: Store | undefined;
afterAll(async () => store?.close());

it("rebuilds a delta channel exactly as LangGraph's own ancestor walk does, at every checkpoint", async () => {
  store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-ckpt-")));
  // A small snapshot interval, so walks end at snapshots as well as at the root.
  const State = Annotation.Root({
    messages: new DeltaChannel<BaseMessage[], Messages>(messagesDeltaReducer, { snapshotFrequency: 4 }),
  });
  let n = 0;
  const graph = new StateGraph(State)
    .addNode("reply", () => ({ messages: [new AIMessage({ id: `a${n}`, content: `reply ${n++}` })] }))
    .addNode("again", () => ({ messages: [new AIMessage({ id: `b${n}`, content: `again ${n++}` })] }))
    .addEdge(START, "reply")
    .addEdge("reply", "again")
    .addEdge("again", END)
    .compile({ checkpointer: store.checkpointer });
  const config = { configurable: { thread_id: "h" } };
  for (let i = 0; i < 12; i++) {
    await graph.invoke({ messages: [new HumanMessage({ id: `h${i}`, content: `hi ${i}` })] }, config);
    if (i % 5 === 0) await graph.updateState(config, { messages: [new AIMessage({ id: `u${i}`, content: "edited in" })] }, "again");
  }

  const saver = store.checkpointer;
  const configs = [];
  for await (const tuple of saver.list(config)) configs.push(tuple.config);
  let seeded = 0;
  for (const c of [config, ...configs]) {
    const ours = await saver.getDeltaChannelHistory({ config: c, channels: ["messages"] });
    const base = await SqliteSaver.prototype.getDeltaChannelHistory.call(saver, { config: c, channels: ["messages"] });
    expect(JSON.stringify(ours)).toBe(JSON.stringify(base));
    if (ours.messages!.seed !== undefined) seeded++;
  }
  expect(configs.length).toBeGreaterThan(40);
  expect(seeded).toBeGreaterThan(0);
  expect(seeded).toBeLessThan(configs.length + 1); // and some walks reached the root
  // and the state read back is the conversation as written
  const state = await graph.getState(config);
  expect((state.values.messages as BaseMessage[]).length).toBe(12 * 3 + 3);
});
