import { createHash, randomBytes } from "node:crypto";

/** 32 random bytes (256 bits) as base64url: 43 characters, no padding. */
const TOKEN_BYTES = 32;
/** What a minted token looks like; anything else is unknown without asking the store. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * What a decision link grants: one principal's decision on one interrupt, at the versions the
 * mail showed, until the interrupt's deadline. Nothing else travels with the link.
 */
export interface DecisionTokenGrant {
  principalSub: string;
  threadId: string;
  interruptId: string;
  /** call id → version, as the mail shows them. */
  versions: Readonly<Record<string, number>>;
  /** The interrupt's deadline (ms since the epoch): the token is dead from then on. */
  expiresAt: number;
}

/** A fresh token for a link. Only its hash is ever stored. */
export function mintDecisionToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

/** The SHA-256 of a token, hex: what the stores keep and look up by. */
export function hashDecisionToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Whether `s` could be a token at all (cheap refusal before any lookup). */
export function looksLikeDecisionToken(s: string): boolean {
  return TOKEN_SHAPE.test(s);
}
