import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { DEFAULT_SYSTEM_PROMPT } from "../../graphs/agent.js";
import type { TollgateOptions } from "../../src/index.js";
import { inProcessTollgates } from "../helpers/in-process-tollgate.js";
import { Scripted } from "../helpers/scripted-model.js";

// createTollgate's systemPrompt reaches the model: a team's agent is told what it is, not that
// it supports orders.

const openTollgate = inProcessTollgates();

/** Runs one message through a Tollgate built with `options` and returns what the model was sent. */
async function sentToModel(options: Pick<TollgateOptions, "systemPrompt">): Promise<BaseMessage[]> {
  const calls: BaseMessage[][] = [];
  const model = new Scripted((messages) => {
    calls.push(messages);
    return new AIMessage("hello");
  });
  const tg = await openTollgate({ model, tools: () => [], ...options });
  const res = await tg.app.request("/threads/t1/runs", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ message: "hi" }),
  });
  expect(await res.text()).toContain("event: done");
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

describe("createTollgate({ systemPrompt })", () => {
  it("sends the team's prompt as the first message, before the user's", async () => {
    const sent = await sentToModel({ systemPrompt: "You are the payout desk." });
    expect(sent.map((m) => [m.type, m.text])).toEqual([["system", "You are the payout desk."], ["human", "hi"]]);
  });

  it("sends the demo's order-support prompt when none is given", async () => {
    const sent = await sentToModel({});
    expect(sent.map((m) => [m.type, m.text])).toEqual([["system", DEFAULT_SYSTEM_PROMPT], ["human", "hi"]]);
  });

  it("sends no system message for an empty prompt", async () => {
    const sent = await sentToModel({ systemPrompt: "" });
    expect(sent.map((m) => m.type)).toEqual(["human"]);
  });
});
