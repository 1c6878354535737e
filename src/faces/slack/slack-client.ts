import { WebClient } from "@slack/web-api";
import type { SlackSettings } from "../../config.js";

/**
 * Slack's own Web API client, at `SLACK_API_URL`. It retries nothing itself: the outbox retries
 * (durably, with backoff) and a rate limit comes back as an error carrying Slack's `Retry-After`.
 */
export function slackClient(s: SlackSettings, timeoutMs: number): WebClient {
  return new WebClient(s.botToken, { slackApiUrl: s.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, timeout: timeoutMs });
}
