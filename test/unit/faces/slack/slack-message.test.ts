/**
 * The Slack message of an interrupt, drawn from the gate's card: every call whole within Slack's
 * limits (50 blocks, 3,000 characters a text), or no Approve for that interrupt; values only in
 * elements Slack never reads as markup, and an escaped fallback text.
 */
import { describe, expect, it } from "vitest";
import { APPROVE_ACTION, REJECT_ACTION, slackMessage } from "../../../../src/faces/slack/index.js";
import { slackMayApprove } from "../../../../src/faces/slack/slack-limits.js";
import { interruptCard } from "../../../../src/gate/index.js";
import type { ApprovalWebhook } from "../../../../src/protocol/index.js";
import { pendingCall } from "../../../helpers/pending-call.js";
import { slackTexts } from "../../../helpers/slack-blocks.js";

const call = pendingCall;
const hook = (over: Partial<ApprovalWebhook> = {}): ApprovalWebhook => ({
  type: "approval.requested",
  thread_id: "t1",
  interrupt_id: "i1",
  calls: [call()],
  expires_at: "2026-12-05T13:00:00.000Z",
  requested_by: "alice",
  at: "2026-12-05T12:00:00.000Z",
  ...over,
});
const PAGE = "https://tollgate.example.com";

type Block = { type: string; elements?: Array<{ action_id?: string; value?: string }> };

const texts = slackTexts;
const read = (blocks: unknown): string =>
  texts(blocks)
    .map((t) => t.text)
    .join("");
const button = (blocks: unknown[], id: string) => (blocks as Block[]).flatMap((b) => (b.type === "actions" ? (b.elements ?? []) : [])).find((e) => e.action_id === id);

function expectWithinLimits(blocks: unknown[]): void {
  expect(blocks.length).toBeLessThanOrEqual(50);
  for (const b of blocks as Block[]) expect(read([b]).length).toBeLessThanOrEqual(b.type === "header" ? 150 : 3_000);
}

describe("every call whole, or no Approve", () => {
  it("a call of 2,700 characters and more is split over blocks and reads back whole; Approve is offered", () => {
    const args = { reason: `*amount is 5 dollars*\n${"charged twice. ".repeat(200)}`, amount_cents: 49_999 };
    const { blocks } = slackMessage(hook({ calls: [call({ args, preview: { refund: "49999 cents" } })] }), { pageUrl: PAGE });
    expectWithinLimits(blocks);
    expect(read(blocks)).toContain(JSON.stringify(args, null, 2));
    expect(read(blocks)).toContain('{\n  "refund": "49999 cents"\n}');
    expect(button(blocks, APPROVE_ACTION)).toBeDefined();
  });

  it.each([
    ["one call past every block", [call({ args: { reason: "r".repeat(150_000), amount_cents: 49_999 } })]],
    ["fifty short calls", Array.from({ length: 50 }, (_, i) => call({ call_id: `c${i}` }))],
  ])("%s: what fits, a note that the rest is on the page with its link, Reject… and no Approve", (_what, calls) => {
    const { blocks } = slackMessage(hook({ calls }), { pageUrl: PAGE });
    expectWithinLimits(blocks);
    expect(button(blocks, APPROVE_ACTION)).toBeUndefined();
    expect(JSON.parse(button(blocks, REJECT_ACTION)!.value!)).toEqual({ t: "t1", i: "i1", v: Object.fromEntries(calls.map((c) => [c.call_id, 1])) });
    const note = JSON.stringify(blocks.find((b) => JSON.stringify(b).includes("Too long to show whole in Slack")));
    expect(note).toContain("Approve it on the page");
    expect(note).toContain(`"url":"${PAGE}/#thread=t1"`);
    expect(read(blocks)).toContain("refund_order · c");
  });

  it("the message offers Approve exactly when the card says Slack shows it whole, at the edge too", () => {
    let seen = { whole: 0, not: 0 };
    for (let n = 130_000; n <= 140_000; n += 250) {
      const w = hook({ calls: [call({ args: { reason: "r".repeat(n) } })] });
      const may = slackMayApprove(interruptCard(w));
      seen = may ? { ...seen, whole: seen.whole + 1 } : { ...seen, not: seen.not + 1 };
      expect(button(slackMessage(w, {}).blocks, APPROVE_ACTION) !== undefined).toBe(may);
    }
    expect(seen.whole).toBeGreaterThan(0);
    expect(seen.not).toBeGreaterThan(0);
  });

  it("a closed interrupt has no buttons and says who decided what", () => {
    const { blocks } = slackMessage(hook({ type: "approval.decided", decided_by: "ops", decisions: [{ call_id: "c1", decision: "approved" }] }), {});
    expect(blocks.some((b) => (b as Block).type === "actions")).toBe(false);
    expect(read(blocks)).toContain("decided by ops at 2026-12-05T12:00:00.000Z (c1: approved)");
  });
});

describe("values never become markup", () => {
  const evil = "<https://evil.example|Click to approve> <!channel> ``` *b* _i_ ~s~ <@U123> &amp;";
  const hostile = (over: Partial<ApprovalWebhook> = {}) =>
    hook({ thread_id: evil, requested_by: evil, calls: [call({ name: evil, call_id: evil, args: { note: evil }, preview: { p: evil }, preview_error: evil })], ...over });

  it.each([
    ["asked", hostile()],
    ["decided", hostile({ type: "approval.decided", decided_by: evil, decisions: [{ call_id: evil, decision: "rejected" }] })],
    ["cancelled", hostile({ type: "approval.cancelled", decided_by: evil })],
  ])("%s: no mrkdwn element at all; every value in plain or rich text, shown as it is", (_what, w) => {
    const { blocks } = slackMessage(w, { pageUrl: PAGE });
    const all = texts(blocks);
    expect(all.filter((t) => t.type === "mrkdwn")).toEqual([]);
    expect(JSON.stringify(blocks)).not.toContain('"mrkdwn"');
    for (const t of all.filter((x) => x.text.includes("<!channel>"))) expect(["text", "plain_text"]).toContain(t.type);
    expect(read(blocks)).toContain(`"note": ${JSON.stringify(evil)}`);
    expect(read(blocks)).toContain(`Thread ${evil} · asked by ${evil}`);
    expect(read(blocks)).toContain(`${evil} · ${evil} · version 1`);
  });

  it("the preview's error text is a line of text inside the call, not loose mrkdwn", () => {
    const { blocks } = slackMessage(hostile(), {});
    expect(texts(blocks)).toContainEqual({ type: "text", text: `Preview unavailable: ${evil}` });
  });

  it("the fallback text escapes &, < and > as Slack asks", () => {
    const { text } = slackMessage(hostile(), {});
    expect(text).not.toMatch(/[<>]/);
    expect(text).toContain("&lt;!channel&gt;");
    expect(text).toContain("&lt;https://evil.example|Click to approve&gt;");
    expect(text).toContain("&amp;amp;");
  });

  it("a header too long for Slack says where the interrupt stands and names the tools in each call instead", () => {
    const { blocks } = slackMessage(hook({ calls: [call({ name: "t".repeat(200) })] }), {});
    expect(blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: "Approval needed", emoji: false } });
    expect(read(blocks)).toContain(`${"t".repeat(200)} · c1 · version 1`);
  });
});
