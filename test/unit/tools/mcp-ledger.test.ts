/**
 * An MCP tool's call runs through the execution ledger like any irreversible tool's: approved, it
 * reaches the server once however often it is invoked; an approval for other arguments does not
 * open it; a call cut off mid-run (a crash: claimed, never settled) is `outcome unknown` and is
 * never sent again.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunGate } from "../../../src/graph/run-gate.js";
import { MemoryLedger } from "../../../src/ledger/memory-ledger.js";
import { defineTool, hashArgs, TOOL_GATE_KEY } from "../../../src/tools/index.js";
import { inMemoryDesk, type InMemoryDesk } from "../../fixtures/mcp/in-memory-tools.js";

let desk: InMemoryDesk;
beforeEach(async () => {
  desk = await inMemoryDesk();
});
afterEach(async () => desk.close());

const ARGS = { order_id: "A-1", amount_cents: 300 };
const toolCall = (id: string, args: Record<string, unknown> = ARGS) => ({ id, name: "refund_order", args, type: "tool_call" as const });

/** A run's gate holding one approval for `call_id` on these arguments, over `ledger`. */
const gateFor = (ledger: MemoryLedger, callId: string) =>
  new RunGate({ threadId: "t1", ledger, decisions: [{ call_id: callId, approved: true, name: "refund_order", args_hash: hashArgs(ARGS) }] });

const configWith = (gate: RunGate) => ({ configurable: { [TOOL_GATE_KEY]: gate, thread_id: "t1" } });
const text = (m: unknown) => (m as { content: string }).content;

describe("an MCP tool through the ledger", () => {
  it("approved, it reaches the server once, however often it is invoked", async () => {
    const refund = defineTool(desk.tools.refund_order!);
    const ledger = new MemoryLedger();
    const first = await refund.invoke(toolCall("c1"), configWith(gateFor(ledger, "c1")));
    const again = await refund.invoke(toolCall("c1"), configWith(gateFor(ledger, "c1")));
    expect([text(first), text(again)]).toEqual(["Refunded 300 cents on A-1", "Refunded 300 cents on A-1"]);
    expect(desk.events).toEqual([{ refunded: "A-1", amount_cents: 300 }]);
  });

  it("an approval for other arguments does not open it", async () => {
    const refund = defineTool(desk.tools.refund_order!);
    const answer = await refund.invoke(toolCall("c1", { order_id: "A-1", amount_cents: 9_999 }), configWith(gateFor(new MemoryLedger(), "c1")));
    expect(text(answer)).toBe("Rejected: no approval for this call");
    expect(desk.events).toEqual([]);
  });

  it("a call cut off mid-run is outcome unknown, and is not sent again", async () => {
    const refund = defineTool(desk.tools.refund_order!);
    const ledger = new MemoryLedger();
    await ledger.claim("t1:c1", { threadId: "t1", callId: "c1", name: "refund_order", argsHash: hashArgs(ARGS) });
    const answer = await refund.invoke(toolCall("c1"), configWith(gateFor(ledger, "c1")));
    expect(text(answer)).toBe("Error: outcome unknown");
    expect(desk.events).toEqual([]);
  });
});
