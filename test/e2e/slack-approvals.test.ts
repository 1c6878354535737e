/**
 * Slack as a face on the gate, with the real `@slack/web-api` client against a local stand-in that
 * records every Web API call and posts signed interactivity payloads as Slack does. Every rule is
 * the gate's own (the click calls the entry `POST …/resume` calls): four eyes, roles, a quorum from
 * two Slack users, expiry, a double click deciding once, and the message following the interrupt
 * whoever decides. Slack down for a while delays the message, never a run or a decision.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { APPROVE_ACTION, REJECT_ACTION, REJECT_VIEW } from "../../src/faces/slack/index.js";
import { loadConfig } from "../../src/config.js";
import { createTollgate, type Tollgate } from "../../src/index.js";
import { silentLogger } from "../../src/logger.js";
import { click, type SlackCall, slackRequest, startSlackStandIn, type SlackStandIn } from "../fixtures/slack/slack-stand-in.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { inProcessTollgates } from "../helpers/in-process-tollgate.js";
import { ensurePgDatabase, pgTestClusterUrl } from "../helpers/pg-test-db.js";
import { within } from "../helpers/within.js";
import { refundDesk } from "../fixtures/refund-desk.js";
import { wordyRefundDesk } from "../fixtures/slack/wordy-refund.js";
import { slackTexts } from "../helpers/slack-blocks.js";

const open = inProcessTollgates();
let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

const SECRET = "slack-signing-secret-0123456789";
const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user", "finance"], slack_user: "UALICE" },
  "tok-ops-000001": { sub: "ops", roles: ["approver"], slack_user: "UOPS" },
  "tok-fin1-0001": { sub: "fin1", roles: ["approver", "finance"], slack_user: "UFIN1" },
  "tok-fin2-0001": { sub: "fin2", roles: ["approver", "finance"], slack_user: "UFIN2" },
  "tok-metrics-01": { sub: "prom", roles: ["metrics"] },
  // A requester whose name is markup: in the message it must stay text.
  "tok-eve-000001": { sub: "eve <!channel> & <@UOPS>", roles: ["user"] },
};

/** The directory and Slack settings every server here runs with, Slack at the stand-in's `apiUrl`. */
const slackEnv = (apiUrl: string) => ({
  AUTH_TOKENS: JSON.stringify(TOKENS),
  AUTH_ROLES: "finance",
  SLACK_BOT_TOKEN: "xoxb-test-token",
  SLACK_SIGNING_SECRET: SECRET,
  SLACK_CHANNEL: "C0APPROVALS",
  SLACK_API_URL: apiUrl,
});

/** The refund tool and model of this test; `refunds` and `amounts`: what ran in it. */
type Desk = Pick<ReturnType<typeof refundDesk>, "ran" | "model"> & { refund: ReturnType<typeof refundDesk>["refund"] | ReturnType<typeof wordyRefundDesk>["refund"] };
let desk: Desk = refundDesk();
let refunds = desk.ran.orders;
let amounts = desk.ran.cents;
function freshDesk(make: () => Desk = refundDesk): void {
  desk = make();
  refunds = desk.ran.orders;
  amounts = desk.ran.cents;
}

interface Rig {
  t: Tollgate;
  slack: SlackStandIn;
  clock: { now(): number };
  client: (token: string) => TollgateClient;
  /** Posts a payload to the interactivity endpoint, signed as Slack signs it (now, or at `atMs`). */
  post(payload: object, o?: { atMs?: number; tamper?: boolean }): Promise<Response>;
}

async function rig(o: { clock?: FakeClock; env?: Record<string, string>; desk?: () => Desk } = {}): Promise<Rig> {
  freshDesk(o.desk);
  slack = await startSlackStandIn();
  const s = slack;
  const clock = o.clock ?? { now: () => Date.now() };
  // In the postgres project, a database of its own on the project's cluster.
  const cluster = pgTestClusterUrl();
  const database: Record<string, string> = cluster ? { DATABASE_URL: await ensurePgDatabase(cluster, fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-slack-"))) } : {};
  const t = await open({
    env: {
      ...database,
      ...slackEnv(s.apiUrl),
      PUBLIC_URL: "https://tollgate.example.com/",
      WEBHOOK_BACKOFF_BASE_MS: "20",
      WEBHOOK_BACKOFF_CAP_MS: "50",
      WEBHOOK_SWEEP_MS: "50",
      EXPIRY_SWEEP_MS: "3600000",
      ...o.env,
    },
    ...(o.clock ? { clock: o.clock } : {}),
    model: desk.model(),
    tools: () => [desk.refund],
    systemPrompt: "",
  });
  return {
    t,
    slack: s,
    clock,
    client: (token) => new TollgateClient({ baseUrl: "http://localhost", token, fetch: async (url, init) => t.app.request(url, init) }),
    post: (payload, p = {}) => Promise.resolve(t.app.request("/integrations/slack/interactivity", slackRequest(payload, { secret: SECRET, nowMs: p.atMs ?? clock.now(), tamper: p.tamper }))),
  };
}

/** alice (or `as`) asks for a refund; resolves with the interrupt and the Slack message posted for it. */
async function asked(r: Rig, thread: string, order: string, cents: number, o: { as?: string } = {}) {
  const last = (await r.client(o.as ?? "tok-alice-0001").run(thread, `refund ${order} ${cents}`).collect()).at(-1);
  if (last?.type !== "interrupt") throw new Error(`expected an interrupt, got ${JSON.stringify(last)}`);
  const posted = await within(r.slack.waitFor((c) => c.method === "chat.postMessage" && JSON.stringify(c.args).includes(last.interrupt_id)), {
    ms: 5_000,
    failure: "no chat.postMessage for the interrupt",
  });
  return { interrupt: last, posted, button: buttonOf(posted, APPROVE_ACTION)! };
}

/** The value of a button of a message, or undefined once its buttons are gone. */
function buttonOf(c: SlackCall, actionId: string): string | undefined {
  const blocks = c.args.blocks as Array<{ type: string; elements?: Array<{ action_id?: string; value?: string }> }>;
  return blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId)?.value;
}

/** Every element of a message that holds text, in order, with its type. */
const textElements = (c: SlackCall) => slackTexts(c.args.blocks);

/** What a reader of the message sees, its texts run together (a text split over blocks reads whole again). */
const shownText = (c: SlackCall): string =>
  textElements(c)
    .map((e) => e.text)
    .join("");

/** Slack's limits, which a message over them breaks: 50 blocks, 3,000 characters a text (and a block), 150 a header. */
function expectWithinSlackLimits(c: SlackCall): void {
  const blocks = c.args.blocks as Array<{ type: string }>;
  expect(blocks.length).toBeLessThanOrEqual(50);
  for (const e of textElements(c)) expect(e.text.length).toBeLessThanOrEqual(3_000);
  for (const b of blocks) expect(textElements({ ...c, args: { blocks: [b] } }).reduce((n, e) => n + e.text.length, 0)).toBeLessThanOrEqual(b.type === "header" ? 150 : 3_000);
}

const updated = (r: Rig, ts: unknown, pred: (text: string) => boolean) =>
  within(r.slack.waitFor((c) => c.method === "chat.update" && c.args.ts === ts && pred(JSON.stringify(c.args))), { ms: 5_000, failure: "the Slack message was not updated" });

const ephemeralTo = (r: Rig, user: string) =>
  within(r.slack.waitFor((c) => c.method === "chat.postEphemeral" && c.args.user === user), { ms: 5_000, failure: `no refusal told to ${user}` });

/** Resolves once the outbox holds the message's ts (the post's outcome is recorded). */
async function receiptOf(r: Rig, interruptId: string): Promise<string> {
  for (;;) {
    const ts = await r.t.store.webhooks.receipt("slack", interruptId);
    if (ts) return ts;
    await new Promise((res) => setTimeout(res, 5));
  }
}

const threadOf = async (r: Rig, id: string) => r.client("tok-alice-0001").getThread(id);
const settled = async (r: Rig, id: string) => {
  for (;;) {
    const th = await threadOf(r, id);
    if (th.status !== "running") return th;
    await new Promise((res) => setTimeout(res, 10));
  }
};

describe("the request message", () => {
  it("posts to SLACK_CHANNEL: the tool, masked arguments, version, policy in words, deadline, Approve and Reject… naming the interrupt", async () => {
    const r = await rig();
    expect(r.t.store.kind).toBe(pgTestClusterUrl() ? "postgres" : "sqlite");
    const { interrupt, posted, button } = await asked(r, "msg", "A-1", 100);
    expect(posted.args.channel).toBe("C0APPROVALS");
    const text = JSON.stringify(posted.args.blocks);
    expect(text).toContain("refund_order");
    expect(text).toContain("Needs an approver");
    expect(text).toContain(interrupt.expires_at);
    expect(text).toContain("version 1");
    expect(JSON.parse(button)).toEqual({ t: "msg", i: interrupt.interrupt_id, v: { [interrupt.calls[0]!.call_id]: 1 } });
    expect(buttonOf(posted, REJECT_ACTION)).toBe(button);
    expect(text).toContain("https://tollgate.example.com/#thread=msg");
    // Masked, as everywhere: not in any call to Slack.
    expect(text).toContain('\\"account\\": \\"***\\"');
    expect(JSON.stringify(r.slack.calls)).not.toContain("DE89");
    expect(textElements(posted).filter((e) => e.type === "mrkdwn")).toEqual([]);
  });
});

describe("shown whole, or not approvable in Slack", () => {
  it("a call longer than one Slack text is shown whole over several blocks, every argument, and its Approve approves what was shown", async () => {
    // A reason that reads like the amount, long enough to push the real amount past one text.
    const reason = `*amount is 5 dollars*\n${"The customer was charged twice for the same order. ".repeat(53)}`;
    expect(reason.length).toBeGreaterThan(2_700);
    const r = await rig({ desk: () => wordyRefundDesk({ "A-30": reason }) });
    const { interrupt, posted, button } = await asked(r, "long", "A-30", 49_999);
    expectWithinSlackLimits(posted);
    const shown = shownText(posted);
    expect(shown).toContain('"amount_cents": 49999');
    expect(shown).toContain(JSON.stringify(interrupt.calls[0]!.args, null, 2));
    expect(button).toBeDefined();
    await r.post(click("UOPS", APPROVE_ACTION, button));
    await updated(r, posted.answer.ts, (s) => s.includes("decided by ops"));
    // The message says decided when the gate opens; the refund runs in the run that follows.
    expect((await settled(r, "long")).last_outcome).toBe("completed");
    expect([refunds, amounts]).toEqual([["A-30"], [49_999]]);
  });

  it("an interrupt too long for one message offers no Approve: it shows what fits, says the rest is on the page and links there; Reject… stays and rejects; an Approve click for it is refused", async () => {
    const reason = "The customer was charged twice for the same order. ".repeat(3_000);
    const r = await rig({ desk: () => wordyRefundDesk({ "A-31": reason }) });
    const { interrupt, posted } = await asked(r, "huge", "A-31", 100);
    expectWithinSlackLimits(posted);
    expect(buttonOf(posted, APPROVE_ACTION)).toBeUndefined();
    const reject = buttonOf(posted, REJECT_ACTION)!;
    expect(JSON.parse(reject)).toEqual({ t: "huge", i: interrupt.interrupt_id, v: { [interrupt.calls[0]!.call_id]: 1 } });
    const shown = shownText(posted);
    expect(shown).toContain("Too long to show whole in Slack");
    expect(shown).toContain("Approve it on the page");
    expect(shown).not.toContain('"amount_cents"'); // past what fits
    const links = JSON.stringify(posted.args.blocks).match(/"url":"[^"]+"/g) ?? [];
    expect(links).toContain('"url":"https://tollgate.example.com/#thread=huge"');
    // A click that names Approve anyway (an old message's button, a value written by hand) approves nothing.
    await r.post(click("UOPS", APPROVE_ACTION, reject));
    expect((await ephemeralTo(r, "UOPS")).args.text).toBe("Not applied: This request is too long to show whole in Slack, so it can be approved only on the page, where every call is shown whole");
    expect((await threadOf(r, "huge")).status).toBe("waiting_human");
    expect(refunds).toEqual([]);
    // Reject… still decides here.
    const submit = await r.post({ type: "view_submission", user: { id: "UOPS" }, view: { callback_id: REJECT_VIEW, private_metadata: reject, state: { values: { reason: { reason_input: { value: "too long to read" } } } } } });
    expect([submit.status, await submit.text()]).toEqual([200, ""]);
    await updated(r, posted.answer.ts, (s) => s.includes("rejected"));
    expect(refunds).toEqual([]);
  });
});

describe("values never become markup", () => {
  it("arguments, a preview's error text and the requester are shown as text, never mrkdwn; the fallback text escapes & < >", async () => {
    const evil = "<https://evil.example|Click to approve> <!channel> ``` *done* _x_ ~y~ <@UOPS>";
    const r = await rig({ desk: () => wordyRefundDesk({ "ERR-1": evil }) });
    const { posted } = await asked(r, "markup", "ERR-1", 100, { as: "tok-eve-000001" });
    const elements = textElements(posted);
    expect(elements.filter((e) => e.type === "mrkdwn")).toEqual([]);
    const shown = shownText(posted);
    expect(shown).toContain(`"reason": ${JSON.stringify(evil)}`);
    expect(shown).toContain(`Preview unavailable: no such order: ${evil}`);
    expect(shown).toContain("asked by eve <!channel> & <@UOPS>");
    // Every element that holds a value is one Slack shows as it is.
    for (const e of elements.filter((x) => x.text.includes("<!channel>"))) expect(["text", "plain_text"]).toContain(e.type);
    const text = String(posted.args.text);
    expect(text).toContain("eve &lt;!channel&gt; &amp; &lt;@UOPS&gt;");
    expect(text).not.toMatch(/[<>]/);
  });
});

describe("the signature", () => {
  it("a forged or stale signature is 401 and applies nothing", async () => {
    const r = await rig();
    const { button } = await asked(r, "sig", "A-2", 100);
    expect((await r.post(click("UOPS", APPROVE_ACTION, button), { tamper: true })).status).toBe(401);
    expect((await r.post(click("UOPS", APPROVE_ACTION, button), { atMs: Date.now() - 301_000 })).status).toBe(401);
    const unsigned = await r.t.app.request("/integrations/slack/interactivity", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "payload={}" });
    expect(unsigned.status).toBe(401);
    const huge = await r.post({ type: "block_actions", user: { id: "UOPS" }, pad: "x".repeat(70_000) });
    expect(huge.status).toBe(400);
    expect((await threadOf(r, "sig")).status).toBe("waiting_human");
    expect(await (await r.t.app.request("/metrics", { headers: { authorization: "Bearer tok-metrics-01" } })).text()).toMatch(/tollgate_channel_deliveries_total\{channel="slack",outcome="forged"\} 3/);
  });
});

describe("deciding from Slack", () => {
  it("an approver's click runs the refund once; a double click decides once; the message loses its buttons", async () => {
    const r = await rig();
    const { posted, button } = await asked(r, "ok", "A-3", 100);
    const [a, b] = await Promise.all([r.post(click("UOPS", APPROVE_ACTION, button)), r.post(click("UOPS", APPROVE_ACTION, button))]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const done = await updated(r, posted.answer.ts, (s) => s.includes("decided by ops"));
    expect(buttonOf(done, APPROVE_ACTION)).toBeUndefined();
    expect((await settled(r, "ok")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-3"]);
    // The second click was refused, told to that user alone.
    expect((await ephemeralTo(r, "UOPS")).args.text).toMatch(/Not applied: /);
    const audit = (await r.client("tok-alice-0001").audit("ok")).entries;
    // One decision, credited to the principal the Slack user maps to, saying how it came.
    expect(audit.filter((e) => e.decision === "approved")).toEqual([expect.objectContaining({ by: "ops", via: "slack", channel_user: "UOPS" })]);
    const metrics = await (await r.t.app.request("/metrics", { headers: { authorization: "Bearer tok-metrics-01" } })).text();
    expect(metrics).toMatch(/tollgate_approvals_total\{decision="approved",via="slack"\} 1\n/);
  });

  it("a refusal goes to the payload's response_url when it has one, as an ephemeral reply", async () => {
    const r = await rig();
    const { button } = await asked(r, "resp", "A-12", 100);
    const responseUrl = r.slack.apiUrl.replace(/api\/$/, "actions/T1/123/abc");
    await r.post(click("UALICE", APPROVE_ACTION, button, { response_url: responseUrl }));
    const reply = await within(r.slack.waitFor((c) => c.method === "/actions/T1/123/abc"), { ms: 5_000, failure: "no reply to the response_url" });
    expect(reply.args).toMatchObject({ response_type: "ephemeral", replace_original: false });
    expect(String(reply.args.text)).toMatch(/^Not applied: /);
    expect(r.slack.calls.some((c) => c.method === "chat.postEphemeral")).toBe(false);
  });

  it("the requester's own click is refused (four eyes), told to them alone, and changes nothing", async () => {
    const r = await rig();
    const { button } = await asked(r, "own", "A-4", 100);
    expect((await r.post(click("UALICE", APPROVE_ACTION, button))).status).toBe(200);
    expect((await ephemeralTo(r, "UALICE")).args.text).toMatch(/Not applied: /);
    expect((await threadOf(r, "own")).status).toBe("waiting_human");
    expect(refunds).toEqual([]);
  });

  it("an approver outside the quorum's role is refused; a Slack user in no entry is refused", async () => {
    const r = await rig();
    const { button } = await asked(r, "role", "A-5", 60_000);
    await r.post(click("UOPS", APPROVE_ACTION, button));
    expect((await ephemeralTo(r, "UOPS")).args.text).toMatch(/Not applied: /);
    await r.post(click("UNOBODY", APPROVE_ACTION, button));
    expect((await ephemeralTo(r, "UNOBODY")).args.text).toMatch(/not in tollgate's directory of principals/);
    expect((await threadOf(r, "role")).pending?.calls[0]?.approvals).toEqual([]);
  });

  it("a quorum is reached from two Slack users: the first is a partial decision shown on the message, the second runs the refund once", async () => {
    const r = await rig();
    const { posted, button } = await asked(r, "quorum", "A-6", 60_000);
    await r.post(click("UFIN1", APPROVE_ACTION, button));
    const partial = await updated(r, posted.answer.ts, (s) => s.includes("approved by fin1"));
    expect(JSON.stringify(partial.args.blocks)).toContain("waiting for 1 more of finance");
    expect(buttonOf(partial, APPROVE_ACTION)).toBeDefined();
    expect(refunds).toEqual([]);
    await r.post(click("UFIN2", APPROVE_ACTION, buttonOf(partial, APPROVE_ACTION)!));
    await updated(r, posted.answer.ts, (s) => s.includes("decided by fin2"));
    expect((await settled(r, "quorum")).last_outcome).toBe("completed");
    const audit = (await r.client("tok-alice-0001").audit("quorum")).entries;
    expect(audit.map((e) => [e.by, e.decision, e.via, e.channel_user])).toEqual([
      ["fin1", "approved", "slack", "UFIN1"],
      ["fin2", "approved", "slack", "UFIN2"],
    ]);
    expect(refunds).toEqual(["A-6"]);
  });

  it("an edit on the page updates the message with the new version; a click on the old version is refused (call_changed), the new one counts", async () => {
    const r = await rig();
    const { posted, button, interrupt } = await asked(r, "edit", "A-15", 60_000);
    const callId = interrupt.calls[0]!.call_id;
    // fin1 lowers the amount on the page: their approval, of version 2.
    const editing = await r.t.app.request("/threads/edit/resume", {
      method: "POST",
      headers: { authorization: "Bearer tok-fin1-0001", "content-type": "application/json" },
      body: JSON.stringify({ interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: callId, approved: true, edited_args: { cents: 55_000 } }] }),
    });
    expect(editing.status).toBe(202);
    const edited = await updated(r, posted.answer.ts, (s) => s.includes("version 2"));
    const fresh = buttonOf(edited, APPROVE_ACTION)!;
    expect(JSON.parse(fresh).v).toEqual({ [callId]: 2 });
    // fin2 clicks the button of the first message, which showed version 1.
    await r.post(click("UFIN2", APPROVE_ACTION, button));
    expect((await ephemeralTo(r, "UFIN2")).args.text).toMatch(/^Not applied: Call .* is at version 2, not 1: look at it again$/);
    expect(refunds).toEqual([]);
    await r.post(click("UFIN2", APPROVE_ACTION, fresh));
    await updated(r, posted.answer.ts, (s) => s.includes("decided by fin2"));
    expect((await settled(r, "edit")).last_outcome).toBe("completed");
    expect([refunds, amounts]).toEqual([["A-15"], [55_000]]);
  });

  it("Reject… opens the modal at once; its submission rejects with the reason; nothing runs", async () => {
    const r = await rig();
    const { posted, button } = await asked(r, "rej", "A-7", 100);
    expect((await r.post(click("UOPS", REJECT_ACTION, button, { trigger_id: "trig-1" }))).status).toBe(200);
    const modal = r.slack.calls.find((c) => c.method === "views.open"); // opened before the ack
    expect(modal?.args.trigger_id).toBe("trig-1");
    const view = modal!.args.view as { private_metadata: string };
    const submit = await r.post({
      type: "view_submission",
      user: { id: "UOPS" },
      view: { callback_id: REJECT_VIEW, private_metadata: view.private_metadata, state: { values: { reason: { reason_input: { value: "duplicate order" } } } } },
    });
    expect([submit.status, await submit.text()]).toEqual([200, ""]);
    await updated(r, posted.answer.ts, (s) => s.includes("rejected"));
    expect((await settled(r, "rej")).last_outcome).not.toBe("waiting_human");
    expect(refunds).toEqual([]);
    const audit = (await r.client("tok-alice-0001").audit("rej")).entries;
    expect(audit).toEqual([expect.objectContaining({ decision: "rejected", reason: "duplicate order", by: "ops", via: "slack", channel_user: "UOPS" })]);
  });

  it("a refused modal submission answers response_action errors, in the modal", async () => {
    const r = await rig();
    const { button } = await asked(r, "rej-own", "A-8", 100);
    const submit = await r.post({ type: "view_submission", user: { id: "UALICE" }, view: { callback_id: REJECT_VIEW, private_metadata: button, state: { values: {} } } });
    const body = (await submit.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe("errors");
    expect((await threadOf(r, "rej-own")).status).toBe("waiting_human");
  });

  it("a click after expiry is refused with the API's words for that person, and the message says expired, without buttons", async () => {
    const clock = new FakeClock(Date.now());
    const r = await rig({ clock });
    const { posted, button, interrupt } = await asked(r, "late", "A-9", 100);
    // The post's outcome recorded before time jumps: a jump past its lease would take it as lost.
    await within(receiptOf(r, interrupt.interrupt_id), { ms: 5_000, failure: "the posted message's ts was not recorded" });
    clock.advance(new Date(interrupt.expires_at).getTime() - clock.now());
    await r.t.expiry.sweep();
    const expired = await updated(r, posted.answer.ts, (s) => s.includes("Expired"));
    expect(buttonOf(expired, APPROVE_ACTION)).toBeUndefined();
    await r.post(click("UOPS", APPROVE_ACTION, button));
    // The API's own answer to the same person, word for word (past its window, an approver no longer sees the thread).
    const api = await r.t.app.request("/threads/late/resume", {
      method: "POST",
      headers: { authorization: "Bearer tok-ops-000001", "content-type": "application/json" },
      body: JSON.stringify({ interrupt_id: interrupt.interrupt_id, decisions: [{ call_id: interrupt.calls[0]!.call_id, approved: true }] }),
    });
    const { error } = (await api.json()) as { error: { message: string } };
    expect((await ephemeralTo(r, "UOPS")).args.text).toBe(`Not applied: ${error.message}`);
    expect(refunds).toEqual([]);
  });
});

describe("the message follows the interrupt", () => {
  it("a decision made through the API updates the Slack message", async () => {
    const r = await rig();
    const { interrupt, posted } = await asked(r, "api", "A-10", 100);
    await r.client("tok-ops-000001").resume("api", interrupt.interrupt_id, { decisions: [{ call_id: interrupt.calls[0]!.call_id, approved: true }] }).collect();
    const done = await updated(r, posted.answer.ts, (s) => s.includes("decided by ops"));
    expect(buttonOf(done, APPROVE_ACTION)).toBeUndefined();
    expect(refunds).toEqual(["A-10"]);
    const audit = (await r.client("tok-alice-0001").audit("api")).entries;
    expect(audit).toEqual([expect.objectContaining({ decision: "approved", by: "ops", via: "api" })]);
    expect(audit[0]).not.toHaveProperty("channel_user");
  });

  it("a cancel by the owner updates the message (Cancelled by alice, no buttons); a click after it is refused and runs nothing", async () => {
    const r = await rig();
    const { posted, button } = await asked(r, "cancel", "A-16", 100);
    await r.client("tok-alice-0001").cancel("cancel");
    const done = await updated(r, posted.answer.ts, (s) => s.includes("Cancelled") && s.includes("cancelled by alice"));
    expect(buttonOf(done, APPROVE_ACTION)).toBeUndefined();
    await r.post(click("UOPS", APPROVE_ACTION, button));
    expect((await ephemeralTo(r, "UOPS")).args.text).toMatch(/^Not applied: /);
    expect(refunds).toEqual([]);
  });

  it("an escalation updates the message (Still waiting for approval) and keeps its buttons, which still decide", async () => {
    const clock = new FakeClock(Date.now());
    const r = await rig({ clock, env: { APPROVAL_ESCALATE_SECONDS: "60" } });
    const { posted, interrupt } = await asked(r, "escalate", "A-17", 100);
    // The post's outcome recorded before time jumps: a jump past its lease would take it as lost.
    await within(receiptOf(r, interrupt.interrupt_id), { ms: 5_000, failure: "the posted message's ts was not recorded" });
    clock.advance(61_000);
    await r.t.expiry.sweep();
    const still = await updated(r, posted.answer.ts, (s) => s.includes("Still waiting for approval"));
    const button = buttonOf(still, APPROVE_ACTION);
    expect(button).toBeDefined();
    await r.post(click("UOPS", APPROVE_ACTION, button!));
    await updated(r, posted.answer.ts, (s) => s.includes("decided by ops"));
    expect((await settled(r, "escalate")).last_outcome).toBe("completed");
    expect(refunds).toEqual(["A-17"]);
  });

  it("Slack down for a while, then back: the message is retried until accepted (Retry-After honoured); the run never waited", async () => {
    const r = await rig();
    r.slack.failNext(2, { status: 503 });
    const first = await asked(r, "down", "A-11", 100);
    expect(first.posted.args.channel).toBe("C0APPROVALS");
    r.slack.failNext(1, { status: 429, retryAfterS: 1 });
    const t0 = Date.now();
    await r.client("tok-ops-000001").resume("down", first.interrupt.interrupt_id, { decisions: [{ call_id: first.interrupt.calls[0]!.call_id, approved: true }] }).collect();
    expect(refunds).toEqual(["A-11"]); // the decision ran with Slack refusing
    await updated(r, first.posted.answer.ts, (s) => s.includes("decided by ops"));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900); // Slack's Retry-After, not our 20 ms backoff
    const metrics = await (await r.t.app.request("/metrics", { headers: { authorization: "Bearer tok-metrics-01" } })).text();
    expect(metrics).toMatch(/tollgate_channel_deliveries_total\{channel="slack",outcome="retry"\} 3/);
  });

  it("a message owed when the server stops is sent by the next one on the same database: the outbox survives restarts", async () => {
    freshDesk();
    slack = await startSlackStandIn();
    const s = slack;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-slack-restart-"));
    const cluster = pgTestClusterUrl();
    const env = {
      ...slackEnv(s.apiUrl),
      // The retry comes 0.5–1 s after the failure: the first server has stopped by then.
      WEBHOOK_BACKOFF_BASE_MS: "1000",
      WEBHOOK_BACKOFF_CAP_MS: "1000",
      WEBHOOK_SWEEP_MS: "50",
      DATA_DIR: dataDir,
      ...(cluster ? { DATABASE_URL: await ensurePgDatabase(cluster, dataDir) } : {}),
    };
    const start = () => createTollgate({ config: loadConfig(env), log: silentLogger, model: desk.model(), tools: () => [desk.refund], systemPrompt: "" });
    let t = await start();
    try {
      s.failNext(1, { status: 503 });
      const client = new TollgateClient({ baseUrl: "http://localhost", token: "tok-alice-0001", fetch: async (url, init) => t.app.request(url, init) });
      const last = (await client.run("restart", "refund A-14 100").collect()).at(-1);
      if (last?.type !== "interrupt") throw new Error("expected an interrupt");
      const tried = async () => {
        for (;;) {
          if ((await t.store.webhooks.list("restart"))[0]?.last_error) return;
          await new Promise((res) => setTimeout(res, 5));
        }
      };
      await within(tried(), { ms: 5_000, failure: "the first attempt was not made" });
      await t.close();
      expect(s.calls.filter((c) => c.method === "chat.postMessage")).toEqual([]);
      t = await start();
      expect((await t.store.webhooks.list("restart"))[0]?.status).toBe("pending");
      const posted = await within(s.waitFor((c) => c.method === "chat.postMessage" && JSON.stringify(c.args).includes(last.interrupt_id)), {
        ms: 5_000,
        failure: "the owed message was not sent after the restart",
      });
      expect(buttonOf(posted, APPROVE_ACTION)).toBeDefined();
    } finally {
      await t.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("after CHANNEL_MAX_ATTEMPTS a message is marked failed and counted, and the thread's next one goes", async () => {
    const r = await rig({ env: { CHANNEL_MAX_ATTEMPTS: "2" } });
    r.slack.failNext(2, { status: 503 });
    const last = (await r.client("tok-alice-0001").run("dead", "refund A-13 100").collect()).at(-1);
    if (last?.type !== "interrupt") throw new Error("expected an interrupt");
    const failed = async () => {
      for (;;) {
        const rows = await r.t.store.webhooks.list("dead");
        if (rows[0]?.status === "failed") return rows[0];
        await new Promise((res) => setTimeout(res, 5));
      }
    };
    expect(await within(failed(), { ms: 5_000, failure: "the post was not marked failed" })).toMatchObject({ lane: "slack", attempts: 2, last_error: "HTTP 503" });
    // The next change of the interrupt still goes: with no message to update, it is posted.
    await r.client("tok-ops-000001").resume("dead", last.interrupt_id, { decisions: [{ call_id: last.calls[0]!.call_id, approved: true }] }).collect();
    const posted = await within(r.slack.waitFor((c) => c.method === "chat.postMessage" && JSON.stringify(c.args).includes("decided by ops")), { ms: 5_000, failure: "the next message did not go" });
    expect(buttonOf(posted, APPROVE_ACTION)).toBeUndefined();
    const metrics = await (await r.t.app.request("/metrics", { headers: { authorization: "Bearer tok-metrics-01" } })).text();
    expect(metrics).toMatch(/tollgate_channel_deliveries_total\{channel="slack",outcome="failed"\} 1/);
  });
});
