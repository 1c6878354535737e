/**
 * Tool-level approval settings, in-process on an injected clock: a policy by rule (resolved from
 * the call's real arguments when the interrupt opens, failing closed), a tool's own approval
 * window (the interrupt's deadline is its calls' smallest), and escalation (once, at the soonest
 * of its calls' times; never for an interrupt already decided), all without sleeping.
 */
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { TollgateClient } from "../../../src/client/index.js";
import { defineTool } from "../../../src/index.js";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import type { Tollgate } from "../../../src/index.js";
import { collected } from "../../helpers/collected.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { inProcessTollgates } from "../../helpers/in-process-tollgate.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";

const open = inProcessTollgates();
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const sent: Array<{ to: string; cents: number }> = [];
/** A payment whose policy depends on the amount, with its own window and escalation time. */
const wire = defineTool(
  tool(
    async (args: { to: string; cents: number }) => {
      sent.push(args);
      return `sent ${args.cents}`;
    },
    { name: "wire_money", description: "Send money", schema: z.object({ to: z.string(), cents: z.number().int() }) },
  ),
  {
    kind: "irreversible",
    sensitive: ["to"],
    policy: ({ cents, to }) => {
      if (to === "nobody") throw new Error("no such payee");
      if (to === "odd") return "everyone" as never;
      return (cents as number) > 1000 ? "approver" : "owner";
    },
    ttl_seconds: 60,
    escalate_after_seconds: 30,
  },
);
/** The signal each preview of `pay` was given, held weakly. */
const previewSignals: Array<WeakRef<AbortSignal>> = [];
/** Irreversible, with a preview that masks the payee's account and fails for an unknown payee. */
const pay = defineTool(
  tool(async ({ to, cents }: { to: string; cents: number }) => `paid ${cents} to ${to}`, { name: "pay", description: "Pay", schema: z.object({ to: z.string(), cents: z.number().int() }) }),
  {
    kind: "irreversible",
    editable: true,
    sensitiveOutput: ["payee.account"],
    policy: ({ cents }) => ((cents as number) > 1000 ? { role: "approver", approvers: 2 } : "owner"),
    preview: ({ to }, { signal }) => {
      previewSignals.push(new WeakRef(signal));
      if (to === "ghost") throw new Error("no payee named ghost");
      return { payee: { name: to, account: "DE89 3704 0044 0532 0130 00" }, balance_cents: 9_000 };
    },
  },
);
/** Irreversible, with nothing of its own: the server's window and escalation time. */
const note = defineTool(tool(async ({ text }: { text: string }) => `noted ${text}`, { name: "file_note", description: "File a note", schema: z.object({ text: z.string() }) }), {
  kind: "irreversible",
});

const model = () =>
  new ScriptedChatModel({
    rules: [
      { when: /wire (\d+) to (\w+) and note/, reply: ({ match }) => ({ toolCalls: [{ name: "wire_money", args: { to: match[2]!, cents: Number(match[1]) } }, { name: "file_note", args: { text: "paid" } }] }), then: "done" },
      { when: /wire (\d+) to (\w+)/, reply: ({ match }) => ({ toolCalls: [{ name: "wire_money", args: { to: match[2]!, cents: Number(match[1]) } }] }), then: "done" },
      { when: /note/, reply: () => ({ toolCalls: [{ name: "file_note", args: { text: "hello" } }] }), then: "done" },
      { when: /pay (\d+) to (\w+)/, reply: ({ match }) => ({ toolCalls: [{ name: "pay", args: { to: match[2]!, cents: Number(match[1]) } }] }), then: "done" },
    ],
  });

const START = Date.UTC(2030, 0, 1);

async function tollgate(clock: FakeClock, env: Record<string, string> = {}): Promise<{ t: Tollgate; client: TollgateClient }> {
  const t = await open({
    env: { APPROVAL_TTL_SECONDS: "900", APPROVAL_ESCALATE_SECONDS: "120", EXPIRY_SWEEP_MS: "3600000", ...env },
    clock,
    model: model(),
    tools: () => [wire, note, pay],
    systemPrompt: "",
  });
  return { t, client: new TollgateClient({ baseUrl: "http://localhost", fetch: async (url, init) => t.app.request(url, init) }) };
}

async function interruptOf(client: TollgateClient, thread: string, message: string) {
  const last = (await client.run(thread, message).collect()).at(-1);
  if (last?.type !== "interrupt") throw new Error(`expected an interrupt, got ${JSON.stringify(last)}`);
  return last;
}

describe("policies by rule", () => {
  it("resolve from the call's real arguments when the interrupt opens; a rule that throws or answers nonsense fails closed to approver", async () => {
    const { client } = await tollgate(new FakeClock(START));
    expect((await interruptOf(client, "small", "wire 500 to amy")).calls).toMatchObject([{ policy: "owner", args: { to: "***", cents: 500 } }]);
    expect((await interruptOf(client, "large", "wire 5000 to amy")).calls).toMatchObject([{ policy: "approver" }]);
    expect((await interruptOf(client, "throws", "wire 5 to nobody")).calls).toMatchObject([{ policy: "approver" }]);
    expect((await interruptOf(client, "nonsense", "wire 5 to odd")).calls).toMatchObject([{ policy: "approver" }]);
    // The resolved policy is what the inbox and the thread show.
    expect((await client.getThread("large")).pending?.calls[0]?.policy).toBe("approver");
  });
});

describe("approval windows", () => {
  it("an interrupt's deadline is its opening time plus the smallest window of its calls: a tool's own, or APPROVAL_TTL_SECONDS", async () => {
    const clock = new FakeClock(START);
    const { t, client } = await tollgate(clock);
    expect((await interruptOf(client, "both", "wire 5 to amy and note")).expires_at).toBe(new Date(START + 60_000).toISOString());
    expect((await interruptOf(client, "plain", "note")).expires_at).toBe(new Date(START + 900_000).toISOString());
    clock.advance(60_000);
    expect(await t.expiry.sweep()).toBe(1);
    expect(await client.getThread("both")).toMatchObject({ status: "idle", last_outcome: "expired" });
    expect(await client.getThread("plain")).toMatchObject({ status: "waiting_human" });
  });
});

describe("escalation", () => {
  const escalatedTotal = async (t: Tollgate) => Number(/^tollgate_approvals_escalated_total (\d+)/m.exec(await (await t.app.request("/metrics")).text())?.[1]);
  const inbox = async (t: Tollgate) => ((await (await t.app.request("/approvals")).json()) as { items: Array<{ thread_id: string; escalated: boolean }> }).items;

  it("a call still waiting at its time is escalated once: one webhook with what it waits on, the inbox marks it, the metric counts it", async () => {
    receiver = await startWebhookReceiver();
    const clock = new FakeClock(START);
    const { t, client } = await tollgate(clock, { APPROVAL_WEBHOOK_URL: receiver.url, APPROVAL_WEBHOOK_SECRET: "whsec-test-0123456789abcdef", WEBHOOK_SWEEP_MS: "20" });
    const waiting = await interruptOf(client, "slow", "note");
    clock.advance(120_000 - 1);
    await t.expiry.sweep();
    expect(await inbox(t)).toEqual([expect.objectContaining({ thread_id: "slow", escalated: false })]);
    clock.advance(1);
    await t.expiry.sweep();
    await t.expiry.sweep();
    expect(await inbox(t)).toEqual([expect.objectContaining({ thread_id: "slow", escalated: true })]);
    expect(await escalatedTotal(t)).toBe(1);
    const hooks = await receiver.waitFor(() => {
      const got = receiver!.delivered().filter((w) => w.body?.thread_id === "slow");
      return got.length === 2 && got;
    }, 10_000, "requested and escalated");
    expect(hooks.map((w) => w.body!.type)).toEqual(["approval.requested", "approval.escalated"]);
    expect(hooks[1]!.body).toMatchObject({ interrupt_id: waiting.interrupt_id, waiting_on: [waiting.calls[0]!.call_id], calls: [{ name: "file_note" }], at: new Date(START + 120_000).toISOString() });
  });

  it("at the soonest of its calls' times (a tool's own first); an interrupt decided before then never is", async () => {
    const clock = new FakeClock(START);
    const { t, client } = await tollgate(clock);
    await interruptOf(client, "both", "wire 5 to amy and note");
    const decided = await interruptOf(client, "decided", "wire 6 to amy");
    await client.resume("decided", decided.interrupt_id, { decisions: [{ call_id: decided.calls[0]!.call_id, approved: true }] }).collect();
    clock.advance(30_000);
    await t.expiry.sweep();
    expect(await inbox(t)).toEqual([expect.objectContaining({ thread_id: "both", escalated: true })]);
    expect(await escalatedTotal(t)).toBe(1);
  });
});

describe("previews", () => {
  it("show what the call would do, masked by the tool's sensitiveOutput; a preview that fails shows why and the call can still be decided", async () => {
    const { client } = await tollgate(new FakeClock(START));
    const shown = await interruptOf(client, "pv", "pay 50 to amy");
    expect(shown.calls[0]).toMatchObject({ name: "pay", preview: { payee: { name: "amy", account: "***" }, balance_cents: 9_000 } });
    expect(JSON.stringify(await client.getThread("pv"))).not.toContain("DE89");
    const failed = await interruptOf(client, "pv-ghost", "pay 50 to ghost");
    expect(failed.calls[0]).toMatchObject({ name: "pay", preview_error: "no payee named ghost" });
    expect(failed.calls[0]).not.toHaveProperty("preview");
    const done = await client.resume("pv-ghost", failed.interrupt_id, { decisions: [{ call_id: failed.calls[0]!.call_id, approved: true }] }).collect();
    expect(done.at(-1)).toMatchObject({ type: "done" });
  });

  it("a thread waiting for approval keeps nothing of its preview: the signal the preview was given is let go", async () => {
    const { client } = await tollgate(new FakeClock(START));
    previewSignals.length = 0;
    await interruptOf(client, "pv-kept", "pay 50 to amy");
    expect(previewSignals).toHaveLength(1);
    expect(await collected(previewSignals[0]!)).toBe(true);
  });
});

describe("an edit re-resolves the policy", () => {
  it("an edit that would need a quorum is refused (403), and nothing is decided; one within the policy goes through", async () => {
    const { client } = await tollgate(new FakeClock(START));
    const asked = await interruptOf(client, "edit-up", "pay 50 to amy");
    const id = asked.calls[0]!.call_id;
    await expect(client.resume("edit-up", asked.interrupt_id, { decisions: [{ call_id: id, approved: true, edited_args: { cents: 5000 } }] }).collect()).rejects.toMatchObject({ status: 403 });
    expect(await client.getThread("edit-up")).toMatchObject({ status: "waiting_human" });
    const done = await client.resume("edit-up", asked.interrupt_id, { decisions: [{ call_id: id, approved: true, edited_args: { cents: 60 } }] }).collect();
    expect(done.at(-1)).toMatchObject({ type: "done" });
  });
});
