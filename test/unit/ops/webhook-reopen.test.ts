/**
 * Approval webhooks through `createTollgate` in-process (no child process): a decision the
 * database refused before anything ran is voided and the interrupt opens again, and the receiver,
 * which heard it was decided, hears it is waiting again; the outcomes reach `onWebhookOutcome`.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import type { WebhookOutcome } from "../../../src/ops/index.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { defineTool } from "../../../src/tools/index.js";
import { Scripted } from "../../helpers/scripted-model.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

const payOnce = (messages: BaseMessage[]) =>
  ToolMessage.isInstance(messages.at(-1))
    ? new AIMessage("paid")
    : new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "pay", args: { to: "bob" }, type: "tool_call" }] });

let tg: Tollgate | undefined;
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await tg?.close();
  await receiver?.close();
  tg = receiver = undefined;
});

const post = (t: Tollgate, url: string, body: unknown) =>
  t.app.request(url, { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify(body) });

it("a decision voided by a refused write is followed by approval.requested for the same interrupt; then the new decision", async () => {
  receiver = await startWebhookReceiver();
  const effects: string[] = [];
  const pay = defineTool(
    tool(async ({ to }) => (effects.push(to), `paid ${to}`), { name: "pay", description: "pay", schema: z.object({ to: z.string() }) }),
    { kind: "irreversible" },
  );
  const outcomes: WebhookOutcome[] = [];
  const config = loadConfig({
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-hook-reopen-")),
    APPROVAL_WEBHOOK_URL: receiver.url,
    APPROVAL_WEBHOOK_SECRET: "whsec-test-0123456789abcdef",
    WEBHOOK_SWEEP_MS: "100",
  });
  tg = await createTollgate({ config, log: silentLogger, model: new Scripted(payOnce), tools: () => [pay], onWebhookOutcome: (o) => outcomes.push(o) });
  const t = tg;
  await (await post(t, "/threads/w1/runs", { message: "pay bob" })).text();
  const { pending } = (await (await t.app.request("/threads/w1")).json()) as { pending: { interrupt_id: string } };
  // The ledger refuses the approved call's claim once: nothing ran, so the decision is voided.
  const claim = t.store.ledger.claim.bind(t.store.ledger);
  let refuse = 1;
  t.store.ledger.claim = (...args: Parameters<typeof claim>) =>
    refuse-- > 0 ? Promise.reject(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })) : claim(...args);
  const decide = () => post(t, "/threads/w1/resume", { interrupt_id: pending.interrupt_id, decisions: [{ call_id: "c1", approved: true }] });
  expect(await (await decide()).text()).toContain("storage_unavailable");
  await t.runs.settled();
  expect(await (await decide()).text()).toContain("event: done");
  expect(effects).toEqual(["bob"]);
  await receiver.waitFor(() => receiver!.delivered().length === 4, 10_000, "four deliveries");
  expect(receiver.delivered().map((w) => [w.body.type, w.body.interrupt_id, w.body.decided_by])).toEqual([
    ["approval.requested", pending.interrupt_id, undefined],
    ["approval.decided", pending.interrupt_id, "anonymous"],
    ["approval.requested", pending.interrupt_id, undefined],
    ["approval.decided", pending.interrupt_id, "anonymous"],
  ]);
  await receiver.waitFor(() => outcomes.length === 4, 5_000, "outcomes");
  expect(outcomes).toEqual(["delivered", "delivered", "delivered", "delivered"]);
});
