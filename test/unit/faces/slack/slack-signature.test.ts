/** Slack's request signature: v0 HMAC-SHA256 over `v0:<ts>:<raw body>`, within 300 s. */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signSlack, verifySlackSignature } from "../../../../src/faces/slack/index.js";

const secret = "8f742231b10e8888abcd99yyyzzz85a5";
const now = 1_531_420_618_000;
const rawBody = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather";

describe("verifySlackSignature", () => {
  const ok = { secret, timestamp: "1531420618", signature: signSlack(secret, "1531420618", rawBody), rawBody, nowMs: now };
  it("takes a request signed as Slack documents it", () => {
    const slacks = `v0=${createHmac("sha256", secret).update(`v0:1531420618:${rawBody}`).digest("hex")}`;
    expect(signSlack(secret, "1531420618", rawBody)).toBe(slacks);
    expect(verifySlackSignature(ok)).toBe(true);
  });
  it("refuses another body, another secret, a missing header, and a timestamp more than 300 s away", () => {
    expect(verifySlackSignature({ ...ok, rawBody: `${rawBody}&x=1` })).toBe(false);
    expect(verifySlackSignature({ ...ok, secret: "other" })).toBe(false);
    expect(verifySlackSignature({ ...ok, signature: undefined })).toBe(false);
    expect(verifySlackSignature({ ...ok, signature: "v0=abc" })).toBe(false);
    expect(verifySlackSignature({ ...ok, nowMs: now + 301_000 })).toBe(false);
    expect(verifySlackSignature({ ...ok, nowMs: now - 301_000 })).toBe(false);
    expect(verifySlackSignature({ ...ok, nowMs: now + 299_000 })).toBe(true);
  });
});
