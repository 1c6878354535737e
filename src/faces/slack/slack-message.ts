import { type CardBlock, type CardPart, fitCard, interruptCard, type InterruptCard } from "../../gate/index.js";
import type { ApprovalWebhook } from "../../protocol/index.js";
import { escapeSlackText } from "./slack-escape.js";
import { SLACK_CARD_LIMITS } from "./slack-limits.js";

/** What a button carries: the interrupt and the versions the message shows. It grants nothing by itself. */
export interface ButtonValue {
  /** thread id */
  t: string;
  /** interrupt id */
  i: string;
  /** call id → version shown */
  v: Record<string, number>;
}

export const APPROVE_ACTION = "tollgate.approve";
export const REJECT_ACTION = "tollgate.reject";
export const REJECT_VIEW = "tollgate.reject_reason";
export const REASON_BLOCK = "reason";
export const REASON_INPUT = "reason_input";

/** Slack's caps: a header's text, a button's value. */
const MAX_HEADER = 150;
const MAX_BUTTON_VALUE = 2_000;

/**
 * The Block Kit message for an interrupt as its latest change leaves it, drawn from the gate's
 * card of the approval webhook's body (already masked and scrubbed): the head, each call whole
 * (split over as many blocks as it takes), and while it is open the buttons; once closed, who
 * decided what and when, no buttons. A card too long for one message shows what fits, says the
 * rest is on the page and offers no Approve: Approve approves every open call, so it is offered
 * only where every call is shown. Values go only in `plain_text` and `rich_text` elements, which
 * Slack never reads as markup; the fallback `text` is escaped.
 */
export function slackMessage(w: ApprovalWebhook, o: { pageUrl?: string }): { text: string; blocks: unknown[] } {
  const card = interruptCard(w);
  const fit = fitCard(card, SLACK_CARD_LIMITS);
  const page = o.pageUrl ? `${o.pageUrl}/#thread=${encodeURIComponent(card.thread_id)}` : undefined;
  const blocks: unknown[] = [header(card), ...fit.blocks.map(richBlock)];
  if (!fit.whole) blocks.push(notWholeNote(page));
  if (card.open) {
    const buttons = decideButtons(card, { approve: fit.whole });
    if (buttons) blocks.push(buttons);
  }
  if (page) blocks.push({ type: "rich_text", elements: [section([link(page, "Open the thread"), plain(" for edits and call-by-call choices")])] });
  const asked = card.requested_by !== undefined ? `, asked by ${card.requested_by}` : "";
  return { text: escapeSlackText(`${card.headline}: ${card.tools.join(", ")} on thread ${card.thread_id}${asked}`), blocks };
}

function header(card: InterruptCard): unknown {
  const full = `${card.headline}: ${card.tools.join(", ")}`;
  // The tools are named again, whole, in each call's title: a header too long for Slack drops them.
  return { type: "header", text: { type: "plain_text", text: full.length <= MAX_HEADER ? full : card.headline, emoji: false } };
}

/** Approve (when the message shows every call whole) and Reject…; none when their value is longer than Slack takes. */
function decideButtons(card: InterruptCard, o: { approve: boolean }): unknown {
  const value: ButtonValue = { t: card.thread_id, i: card.interrupt_id, v: card.versions };
  const v = JSON.stringify(value);
  if (v.length > MAX_BUTTON_VALUE) return undefined; // Slack refuses the whole message; the page decides
  const approve = { type: "button", action_id: APPROVE_ACTION, style: "primary", text: { type: "plain_text", text: "Approve" }, value: v };
  const reject = { type: "button", action_id: REJECT_ACTION, style: "danger", text: { type: "plain_text", text: "Reject…" }, value: v };
  return { type: "actions", block_id: "tollgate.decide", elements: o.approve ? [approve, reject] : [reject] };
}

function notWholeNote(page: string | undefined): unknown {
  const words = "Too long to show whole in Slack: the calls go on past what is shown here. Approve it on the page, where every call is shown whole";
  const where = page ? [plain(`${words}: `), link(page, "open the thread"), plain(". Reject… works here.")] : [plain(`${words}. Reject… works here.`)];
  return { type: "rich_text", elements: [section(where, { bold: true })] };
}

/** One block of the card: each part a rich text element, JSON preformatted. */
function richBlock(b: CardBlock): unknown {
  return { type: "rich_text", elements: b.parts.map(richPart) };
}

function richPart(p: CardPart): unknown {
  if (p.kind === "code") return { type: "rich_text_preformatted", elements: [plain(p.text)] };
  return section([plain(p.text)], p.kind === "title" ? { bold: true } : p.kind === "label" ? { italic: true } : undefined);
}

const section = (elements: unknown[], style?: { bold?: boolean; italic?: boolean }): unknown => ({
  type: "rich_text_section",
  elements: style ? elements.map((e) => ({ ...(e as object), style })) : elements,
});
const plain = (text: string) => ({ type: "text", text });
const link = (url: string, text: string) => ({ type: "link", url, text });
