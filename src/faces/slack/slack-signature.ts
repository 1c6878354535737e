import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a request's timestamp may be from now: Slack's own advice, against replays. */
export const SLACK_SIGNATURE_WINDOW_S = 300;

/**
 * Whether a request is Slack's: `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, under the
 * signing secret, of `v0:<X-Slack-Request-Timestamp>:<raw body>`, and the timestamp is within
 * 300 s of `nowMs`. Compared in constant time, so a guess learns nothing from how long it took.
 */
export function verifySlackSignature(o: { secret: string; timestamp: string | undefined; signature: string | undefined; rawBody: string; nowMs: number }): boolean {
  const { secret, timestamp, signature, rawBody, nowMs } = o;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_WINDOW_S) return false;
  const expected = Buffer.from(signSlack(secret, timestamp, rawBody));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The signature Slack sends for `rawBody` at `timestamp` (seconds). */
export function signSlack(secret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}
