import type { WebClient } from "@slack/web-api";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Directory, Principal } from "../../auth/index.js";
import { interruptCard, refusals } from "../../gate/index.js";
import { AppError } from "../../protocol/index.js";
import type { Logger } from "../../logger.js";
import { type ChannelDecisionDeps, type ChannelOutcome, decideViaChannel, type ThreadService } from "../../runs/index.js";
import { slackMayApprove } from "./slack-limits.js";
import { APPROVE_ACTION, type ButtonValue, REASON_BLOCK, REASON_INPUT, REJECT_ACTION, REJECT_VIEW } from "./slack-message.js";
import { verifySlackSignature } from "./slack-signature.js";

/** Slack sends small forms; anything bigger is not Slack's. */
const MAX_BODY = 64 * 1024;

export interface SlackInteractivityDeps extends ChannelDecisionDeps {
  /** The thread as the clicker may see it: its open interrupt's card says whether Slack may approve it. */
  threads: ThreadService;
  client: WebClient;
  signingSecret: string;
  directory: Directory;
  log: Logger;
  now: () => number;
  /** Counts a request refused for its signature. */
  onForged?: () => void;
}

interface SlackPayload {
  type: string;
  user?: { id: string };
  trigger_id?: string;
  response_url?: string;
  channel?: { id: string };
  actions?: Array<{ action_id: string; value?: string }>;
  view?: { callback_id?: string; private_metadata?: string; state?: { values?: Record<string, Record<string, { value?: string | null }>> } };
}

/**
 * `POST /integrations/slack/interactivity`: its own auth is Slack's signature, checked before the
 * body is parsed. A click is answered 200 at once and decided after; the reject modal opens at
 * once with the click's `trigger_id` (it expires in 3 s); a modal's submission is decided before
 * its ack, so a refusal can show in the modal.
 */
export function slackInteractivity(deps: SlackInteractivityDeps): Hono {
  const app = new Hono();
  // Mounted before the API's own body limit: this one stops an oversized body before it is read whole.
  app.use(
    bodyLimit({
      maxSize: MAX_BODY,
      onError: () => {
        throw refusals.bodyTooLarge();
      },
    }),
  );
  app.post("/slack/interactivity", async (c) => {
    const raw = await c.req.text();
    const ok = verifySlackSignature({
      secret: deps.signingSecret,
      timestamp: c.req.header("x-slack-request-timestamp"),
      signature: c.req.header("x-slack-signature"),
      rawBody: raw,
      nowMs: deps.now(),
    });
    if (!ok) {
      deps.onForged?.();
      deps.log.warn("slack interactivity refused: bad or stale signature"); // never the body
      const refused = refusals.slackSignature();
      return c.json({ error: { code: refused.code, message: refused.message } }, 401);
    }
    const payload = parsePayload(raw);
    if (!payload?.user?.id) return c.body(null, 200);
    if (payload.type === "block_actions") {
      const action = payload.actions?.[0];
      const value = parseValue(action?.value);
      if (!action || !value) return c.body(null, 200);
      if (action.action_id === REJECT_ACTION) {
        await openRejectModal(deps, payload, value);
        return c.body(null, 200);
      }
      if (action.action_id === APPROVE_ACTION) {
        // Slack wants its ack within 3 s; the decision follows it.
        void decide(deps, payload, { value, decision: { approve: true } }).then((out) => tell(deps, payload, out));
      }
      return c.body(null, 200);
    }
    if (payload.type === "view_submission" && payload.view?.callback_id === REJECT_VIEW) {
      const value = parseValue(payload.view.private_metadata);
      if (!value) return c.body(null, 200);
      const reason = payload.view.state?.values?.[REASON_BLOCK]?.[REASON_INPUT]?.value?.trim() || "Rejected in Slack";
      const out = await decide(deps, payload, { value, decision: { approve: false, reason } });
      if (!out.ok) return c.json({ response_action: "errors", errors: { [REASON_BLOCK]: out.message } });
      return c.body(null, 200);
    }
    return c.body(null, 200);
  });
  return app;
}

async function decide(
  deps: SlackInteractivityDeps,
  p: SlackPayload,
  o: { value: ButtonValue; decision: { approve: true } | { approve: false; reason: string } },
): Promise<ChannelOutcome> {
  const { value, decision } = o;
  const userId = p.user!.id;
  const principal = deps.directory.bySlackUser(userId);
  if (!principal) {
    return refusedWith(refusals.unknownChannelUser());
  }
  try {
    if (decision.approve) {
      const refused = await notApprovableInSlack(deps, { principal, value });
      if (refused) {
        deps.log.info("slack decision", { thread_id: value.t, interrupt_id: value.i, principal: principal.sub, slack_user: userId, refused: refused.code });
        return refused;
      }
    }
    const out = await decideViaChannel(deps, { threadId: value.t, interruptId: value.i, principal, via: "slack", channelUser: userId, decision, versions: value.v });
    deps.log.info("slack decision", { thread_id: value.t, interrupt_id: value.i, principal: principal.sub, slack_user: userId, ...(out.ok ? {} : { refused: out.code }) });
    return out;
  } catch (err) {
    deps.log.error("slack decision failed", { thread_id: value.t, interrupt_id: value.i, err });
    return refusedWith(refusals.internal());
  }
}

/**
 * Why Slack may not approve the interrupt as it stands, if it may not: it may only when a message
 * can show its card whole. A click from an older message, or a value written by hand, approves
 * nothing Slack could not show. Which calls are open, and to whom, stays the gate's to say: a
 * thread out of sight, or an interrupt no longer open, gets its refusal when the decision is tried.
 */
async function notApprovableInSlack(deps: SlackInteractivityDeps, o: { principal: Principal; value: ButtonValue }): Promise<Extract<ChannelOutcome, { ok: false }> | undefined> {
  let view;
  try {
    view = await deps.threads.view(o.principal, o.value.t);
  } catch (err) {
    // Out of this person's sight, or gone: the gate's own refusal comes when the decision is tried.
    if (err instanceof AppError) return undefined;
    throw err;
  }
  const pending = view.pending;
  if (pending?.interrupt_id !== o.value.i) return undefined;
  return slackMayApprove(interruptCard({ ...pending, requested_by: view.owner })) ? undefined : refusedWith(refusals.notShownWhole());
}

/** A refusal of the catalogue as the channel's outcome: its code and its words. */
const refusedWith = (e: AppError): Extract<ChannelOutcome, { ok: false }> => ({ ok: false, code: e.code, message: e.message });

/** A refusal, told to the one who clicked: by the payload's `response_url`, else an ephemeral message. */
async function tell(deps: SlackInteractivityDeps, p: SlackPayload, out: ChannelOutcome): Promise<void> {
  if (out.ok) return; // the message itself follows the interrupt (chat.update through the outbox)
  const text = `Not applied: ${out.message}`;
  try {
    if (p.response_url) {
      const res = await fetch(p.response_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ response_type: "ephemeral", replace_original: false, text }) });
      await res.arrayBuffer();
      if (res.ok) return;
    }
    if (p.channel?.id) await deps.client.chat.postEphemeral({ channel: p.channel.id, user: p.user!.id, text });
  } catch (err) {
    deps.log.warn("slack refusal could not be told", { slack_user: p.user!.id, error: err instanceof Error ? err.message : String(err) });
  }
}

async function openRejectModal(deps: SlackInteractivityDeps, p: SlackPayload, value: ButtonValue): Promise<void> {
  if (!p.trigger_id) return;
  try {
    await deps.client.views.open({
      trigger_id: p.trigger_id,
      view: {
        type: "modal",
        callback_id: REJECT_VIEW,
        private_metadata: JSON.stringify(value),
        title: { type: "plain_text", text: "Reject" },
        submit: { type: "plain_text", text: "Reject" },
        close: { type: "plain_text", text: "Cancel" },
        blocks: [{ type: "input", block_id: REASON_BLOCK, label: { type: "plain_text", text: "Reason (told to the agent)" }, element: { type: "plain_text_input", action_id: REASON_INPUT, multiline: true, max_length: 2000 } }],
      },
    });
  } catch (err) {
    deps.log.warn("slack reject modal could not open", { slack_user: p.user?.id, error: err instanceof Error ? err.message : String(err) });
  }
}

function parsePayload(raw: string): SlackPayload | undefined {
  try {
    const json = new URLSearchParams(raw).get("payload");
    return json ? (JSON.parse(json) as SlackPayload) : undefined;
  } catch {
    return undefined;
  }
}

function parseValue(v: string | undefined): ButtonValue | undefined {
  try {
    const x = JSON.parse(v ?? "") as ButtonValue;
    return typeof x?.t === "string" && typeof x.i === "string" && x.v && typeof x.v === "object" ? x : undefined;
  } catch {
    return undefined;
  }
}
