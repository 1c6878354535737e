/**
 * Slack and email as faces of the model. Slack: the approver clicks Approve on the message the
 * server posted (or updated) for the interrupt, signed with the signing secret, or Reject… and
 * submits the modal; the click is answered 200 at once and decided after, so its outcome is
 * awaited: the refusal told to that user (by the click's `response_url`), or the message following
 * the decision. Email: the approver posts the decide link of the mail the server sent them. Both
 * read what they show (calls and versions) from what the server sent, never from the model.
 */
import { APPROVE_ACTION, REJECT_ACTION, REJECT_VIEW } from "../../../src/faces/slack/index.js";
import { click, type SlackCall } from "../../fixtures/slack/slack-stand-in.js";
import { within } from "../within.js";
import { type ChannelAction, channelBind, linkRefusal } from "./channel-model.js";
import type { Prepared } from "./faces.js";
import { InvariantBroken } from "./invariants.js";
import type { MInterrupt, Model, MThread } from "./model.js";
import type { Outcome } from "./outcome.js";
import { EMAIL, SLACK_USER, type Who } from "./principals.js";
import { codeOfGonePage, codeOfWords, pageText } from "./refusal-words.js";
import type { GateSystem } from "./system.js";

export interface ChannelIntent {
  action: ChannelAction;
  /** The first message or mail of the interrupt (versions as first shown), not the latest. */
  blind: boolean;
}

/** How long a channel's answer may take to show (the outbox delivers within tens of ms). */
const ANSWER_MS = 10_000;

/** A taken decision: the thread once its run (if any) has ended; still waiting is a partial decision. */
async function taken(sys: GateSystem, t: MThread): Promise<Outcome> {
  const view = await sys.settled(t.id);
  return view.status === "waiting_human" ? { kind: "waiting" } : { kind: "run" };
}

/** The value of a message's Approve button, or undefined once its buttons are gone. */
function approveValue(c: SlackCall): string | undefined {
  const blocks = (c.args.blocks ?? []) as Array<{ elements?: Array<{ action_id?: string; value?: string }> }>;
  return blocks.flatMap((b) => b.elements ?? []).find((e) => e.action_id === APPROVE_ACTION)?.value;
}

/** The interrupt's messages in Slack, posted and updated, oldest first. */
function messagesOf(sys: GateSystem, intr: MInterrupt): SlackCall[] {
  const posts = sys.slack.calls.filter((c) => c.method === "chat.postMessage" && JSON.stringify(c.args).includes(intr.id));
  const ts = new Set(posts.map((p) => p.answer.ts));
  return sys.slack.calls.filter((c) => posts.includes(c) || (c.method === "chat.update" && ts.has(c.args.ts)));
}

let clicks = 0;

export async function prepareSlack(sys: GateSystem, _m: Model, w: Who, t: MThread, intr: MInterrupt, o: ChannelIntent): Promise<Prepared> {
  const user = SLACK_USER[w];
  if (!user) return { usable: false, why: `${w} has no Slack user` };
  await sys.drained(t.id);
  const withButtons = messagesOf(sys, intr).filter((c) => approveValue(c) !== undefined);
  const message = o.blind ? withButtons[0] : withButtons.at(-1);
  if (!message) throw new InvariantBroken(`interrupt ${intr.id} of ${t.id} was never shown in Slack with buttons`);
  const value = approveValue(message)!;
  const shown = (JSON.parse(value) as { v?: Record<string, number> }).v;
  if (!shown || typeof shown !== "object") throw new InvariantBroken(`the Slack button of ${intr.id} does not say which versions it shows: ${value}`);
  const ds = channelBind(intr, w, o.action, shown);
  return { usable: true, ds, send: () => (o.action === "approve" ? slackApprove(sys, t, intr, user, value) : slackReject(sys, t, user, value)) };
}

/** Approve: answered at once; then either the refusal reaches the click's `response_url`, or the message changes. */
async function slackApprove(sys: GateSystem, t: MThread, intr: MInterrupt, user: string, value: string): Promise<Outcome> {
  const n = ++clicks;
  const reply = `/actions/T0GATE/${n}/r`;
  const mark = sys.slack.calls.length;
  const res = await sys.slackPost(click(user, APPROVE_ACTION, value, { response_url: sys.slack.apiUrl.replace(/api\/$/, reply.slice(1)) }));
  if (res.status !== 200) throw new InvariantBroken(`a signed Slack click answered ${res.status}: ${res.text.slice(0, 200)}`);
  const isNew = (c: SlackCall) => sys.slack.calls.indexOf(c) >= mark;
  const ours = new Set(messagesOf(sys, intr).map((c) => c.answer.ts));
  const seen = await within(
    sys.slack.waitFor(
      (c) =>
        isNew(c) &&
        (c.method === reply || (c.method === "chat.update" && ours.has(c.args.ts)) || (c.method === "chat.postMessage" && JSON.stringify(c.args).includes(intr.id))),
    ),
    { ms: ANSWER_MS, failure: `${user}'s Approve click on ${t.id} was neither refused to them nor shown on the message` },
  );
  if (seen.method === reply) return { kind: "refused", code: codeOfWords(String(seen.args.text ?? "").replace(/^Not applied: /, "")) };
  return taken(sys, t);
}

/** Reject…: the modal opens at once; its submission is decided before the ack (a refusal shows in the modal). */
async function slackReject(sys: GateSystem, t: MThread, user: string, value: string): Promise<Outcome> {
  const trigger = `trig-gate-${++clicks}`;
  const res = await sys.slackPost(click(user, REJECT_ACTION, value, { trigger_id: trigger }));
  if (res.status !== 200) throw new InvariantBroken(`a signed Slack click answered ${res.status}: ${res.text.slice(0, 200)}`);
  const modal = sys.slack.calls.find((c) => c.method === "views.open" && c.args.trigger_id === trigger);
  if (!modal) throw new InvariantBroken(`Reject… by ${user} on ${t.id} did not open the modal before its ack`);
  const view = modal.args.view as { private_metadata: string };
  const submit = await sys.slackPost({
    type: "view_submission",
    user: { id: user },
    view: { callback_id: REJECT_VIEW, private_metadata: view.private_metadata, state: { values: { reason: { reason_input: { value: "not this one" } } } } },
  });
  if (submit.status !== 200) throw new InvariantBroken(`the reject modal's submission answered ${submit.status}: ${submit.text.slice(0, 200)}`);
  if (!submit.text) return taken(sys, t);
  const body = JSON.parse(submit.text) as { response_action?: string; errors?: Record<string, string> };
  if (body.response_action !== "errors") throw new InvariantBroken(`the reject modal's submission answered ${submit.text.slice(0, 200)}`);
  return { kind: "refused", code: codeOfWords(Object.values(body.errors ?? {})[0] ?? "") };
}

/** A request mail: its link and the calls it shows, at their versions ("c3 · version 2" on a call's line; call ids are the model's own). */
interface Mail {
  link: string;
  shown: Record<string, number>;
}

function mailsOf(sys: GateSystem, address: string, intr: MInterrupt): Mail[] {
  const ids = new Set(intr.calls.map((c) => c.id));
  return sys.smtp.mails
    .filter((mail) => mail.to.includes(address.toLowerCase()))
    .map((mail) => {
      const shown = Object.fromEntries([...mail.text.matchAll(/\b(c\d+)\b[^\S\n]*[,·]?[^\S\n]*version (\d+)/g)].map((x) => [x[1]!, Number(x[2])]));
      const link = /(https?:\/\/\S+\/decide\/[A-Za-z0-9_-]{43})/.exec(mail.text)?.[1];
      return { link: link ?? "", shown };
    })
    .filter((mail) => Object.keys(mail.shown).length > 0 && Object.keys(mail.shown).every((id) => ids.has(id)));
}

export async function prepareEmail(sys: GateSystem, m: Model, w: Who, t: MThread, intr: MInterrupt, o: ChannelIntent): Promise<Prepared> {
  const address = EMAIL[w];
  if (!address) return { usable: false, why: `${w} has no email` };
  await sys.drained(t.id);
  const mails = mailsOf(sys, address, intr);
  // The opening mail goes to exactly those with an email who may decide the interrupt.
  const opening = mails.find((mail) => Object.values(mail.shown).every((v) => v === 1));
  if (intr.mailed.includes(w) !== (opening !== undefined)) {
    throw new InvariantBroken(`interrupt ${intr.id} of ${t.id} ${opening ? "was mailed to" : "was not mailed to"} ${w}; the model: ${intr.mailed.includes(w) ? "mailed" : "not mailed"}`);
  }
  const mail = o.blind ? opening : mails.at(-1);
  if (!mail) return { usable: false, why: `${w} got no mail for ${intr.id}` };
  if (!mail.link) throw new InvariantBroken(`the mail to ${w} for ${intr.id} holds no decide link`);
  if (sys.postedLinks.has(mail.link)) return { usable: false, why: `${w}'s link for ${intr.id} was used` };
  const ds = channelBind(intr, w, o.action, mail.shown);
  const before = linkRefusal(m, intr, mail.shown);
  return {
    usable: true,
    ds,
    ...(before ? { before } : {}),
    send: async () => {
      const res = await sys.emailPost(mail.link, o.action === "approve" ? { decision: "approve" } : { decision: "reject", reason: "not this one" });
      return emailOutcome(sys, t, res);
    },
  };
}

/** A decide page, read back: taken, or the refusal it words (a dead link's 410 says why; a refusal's 403 the gate's words). */
async function emailOutcome(sys: GateSystem, t: MThread, res: { status: number; text: string }): Promise<Outcome> {
  const text = pageText(res.text);
  if (res.status === 200) return taken(sys, t);
  if (res.status === 410) return { kind: "refused", code: codeOfGonePage(text) };
  if (res.status === 403) return { kind: "refused", code: codeOfWords(text.replace(/^Not applied\s*/, "").replace(/\s*Nothing was changed\.$/, "")) };
  if (res.status === 404) return { kind: "refused", code: "link_unknown" };
  if (res.status === 503) return { kind: "refused", code: "thread_busy" };
  return { kind: "refused", code: `page ${res.status}: ${text.slice(0, 160)}` };
}
