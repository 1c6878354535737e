import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TollgateClient } from "../../../src/client/index.js";
import type { EventOf, ProtocolEvent } from "../../../src/protocol/index.js";
import { ScriptedChatModel, type ScriptedChatModelParams } from "../../../src/testing/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { inProcessTollgates } from "../../helpers/in-process-tollgate.js";
import { within } from "../../helpers/within.js";

// `tollgate/testing`'s model drives a team's own gated tool through a whole Tollgate in-process,
// as a team's test would: tokens stream, the call waits, an approval runs it once, the rule's
// `then` turns the result into the answer; a cancel stops the answer mid-word.

const openTollgate = inProcessTollgates();

/** A Tollgate serving one irreversible `transfer` tool on `model`, and a client talking to it without a socket. */
async function open(params: ScriptedChatModelParams) {
  const transfers: Array<{ to: string; cents: number }> = [];
  const transfer = defineTool(
    tool(async ({ to, cents }) => (transfers.push({ to, cents }), `T-${transfers.length}`), {
      name: "transfer",
      description: "Send money.",
      schema: z.object({ to: z.string(), cents: z.number().int() }),
    }),
    { kind: "irreversible" },
  );
  const { app } = await openTollgate({ model: new ScriptedChatModel(params), tools: () => [transfer] });
  const client = new TollgateClient({ baseUrl: "http://localhost", fetch: async (input, init) => app.request(input, init) });
  return { client, transfers };
}

const of = <T extends ProtocolEvent["type"]>(events: ProtocolEvent[], type: T) => events.filter((e): e is EventOf<T> => e.type === type);

describe("a ScriptedChatModel behind tollgate", () => {
  it("streams tokens, stops the tool call at the gate, and after approval runs it once and answers from its result", async () => {
    const { client, transfers } = await open({
      rules: [{
        when: /send (\d+) cents to (\w+)/,
        reply: ({ match }) => ({ text: "Sending it once approved.", toolCalls: [{ name: "transfer", args: { to: match[2], cents: Number(match[1]) } }] }),
        then: ({ toolResults }) => `Sent as ${toolResults[0]!.text}.`,
      }],
    });
    const asked = await client.run("t1", "please send 250 cents to bob").collect();
    expect(of(asked, "token").map((e) => e.text).join("")).toBe("Sending it once approved.");
    expect(of(asked, "token").length).toBeGreaterThan(1);
    expect(of(asked, "tool_call")).toMatchObject([{ name: "transfer", args: { to: "bob", cents: 250 }, needs_approval: true }]);
    const gate = asked.at(-1) as EventOf<"interrupt">;
    expect(gate.type).toBe("interrupt");
    expect(transfers).toEqual([]);

    const done = await client.resume("t1", gate.interrupt_id, { decisions: [{ call_id: gate.calls[0]!.call_id, approved: true }] }).collect();
    expect(of(done, "tool_result")).toMatchObject([{ name: "transfer", status: "ok", output: "T-1" }]);
    expect(done.at(-1)).toMatchObject({ type: "done", outcome: "completed", message: "Sent as T-1." });
    expect(transfers).toEqual([{ to: "bob", cents: 250 }]);
  });

  it("a message no rule matches ends the run with a model_error that names it", async () => {
    const { client } = await open({ rules: [] });
    const events = await client.run("t2", "hello").collect();
    expect(events.at(-1)).toMatchObject({ type: "error", code: "model_error", message: expect.stringContaining('no rule matches the message "hello"') });
  });

  it("a cancel mid-answer stops the model in its pause between words: the stream ends cancelled", async () => {
    // A minute between words: the run can only end in time if the model gives up its wait.
    const { client } = await open({ rules: [{ when: /talk/, reply: "one two three" }], tokenDelayMs: 60_000 });
    const events: ProtocolEvent[] = [];
    const stream = client.run("t3", "talk");
    const ended = (async () => {
      for await (const e of stream) {
        events.push(e);
        if (e.type === "token") await client.cancel("t3");
      }
    })();
    await within(ended, { ms: 5_000, failure: "the stream did not end", since: "the cancel" }).catch((err: Error) => {
      throw new Error(`${err.message}; events: ${JSON.stringify(events)}`);
    });
    expect(events.map((e) => e.type)).toEqual(["token", "cancelled"]);
    expect(events.at(-1)).toMatchObject({ reason: "api" });
  });
});
