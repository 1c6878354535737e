import { createHmac, timingSafeEqual } from "node:crypto";

/** The header's scheme prefix: `X-Tollgate-Signature: sha256=<hex>`. */
const SCHEME = "sha256=";

/** `sha256=<hex HMAC-SHA256 of the raw body under secret>`, the `X-Tollgate-Signature` value. */
export function signWebhook(body: string | Buffer, secret: string): string {
  return SCHEME + createHmac("sha256", secret).update(body).digest("hex");
}

/** Whether `header` signs `body` under `secret`; constant-time, as a receiver should check it. */
export function verifyWebhook(body: string | Buffer, secret: string, header: string | undefined | null): boolean {
  if (!header) return false;
  const expected = Buffer.from(signWebhook(body, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
