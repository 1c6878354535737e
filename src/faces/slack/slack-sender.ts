import { ErrorCode, type WebClient } from "@slack/web-api";
import type { AttemptResult, DeliverySender } from "../../ops/index.js";
import type { ApprovalWebhook } from "../../protocol/index.js";
import { slackMessage } from "./slack-message.js";

export const SLACK_LANE = "slack";

/**
 * Sends one Slack delivery of the outbox: the first for an interrupt posts its message to the
 * channel (the receipt keeps its `ts`); every later one updates that message. A rate limit
 * retries after Slack's `Retry-After`; any other failure with the outbox's backoff.
 */
export function slackSender(o: { client: WebClient; channel: string; pageUrl?: string }): DeliverySender {
  return async (d, { receipt }): Promise<AttemptResult> => {
    const change = JSON.parse(d.body) as ApprovalWebhook;
    const message = slackMessage(change, { pageUrl: o.pageUrl });
    try {
      const ts = await receipt();
      if (ts) {
        await o.client.chat.update({ channel: o.channel, ts, ...message });
        return { receipt: ts };
      }
      const posted = await o.client.chat.postMessage({ channel: o.channel, ...message });
      return posted.ts ? { receipt: posted.ts } : { error: "chat.postMessage answered no ts" };
    } catch (err) {
      return failure(err);
    }
  };
}

/** Why an attempt failed, without the token or the message (it holds call arguments). */
function failure(err: unknown): AttemptResult {
  const e = err as { code?: string; retryAfter?: number; data?: { error?: string }; statusCode?: number };
  if (e.code === ErrorCode.RateLimitedError) return { error: "rate limited", retryAfterMs: (e.retryAfter ?? 1) * 1000 };
  if (e.code === ErrorCode.PlatformError) return { error: `slack: ${e.data?.error ?? "error"}` };
  if (e.code === ErrorCode.HTTPError) return { error: `HTTP ${e.statusCode ?? "?"}` };
  return { error: e.code === ErrorCode.RequestError ? "request failed" : err instanceof Error ? err.message : String(err) };
}
