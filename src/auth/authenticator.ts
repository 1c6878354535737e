import { createHash } from "node:crypto";
import type { Logger } from "../logger.js";
import { refusals } from "../protocol/index.js";
import { createJwtVerifier, type JwtSettings, type VerifyToken } from "./jwt-verifier.js";
import { ANONYMOUS, type Principal } from "./principal.js";

export interface AuthSettings {
  /** `AUTH_TOKENS`: static bearer tokens and their principals. */
  tokens?: ReadonlyMap<string, Principal>;
  /** `AUTH_JWKS_URL` and friends: JWTs from the team's identity provider. */
  jwt?: JwtSettings;
}

/** Turns a request's `Authorization` header into a principal, or refuses it. */
export interface Authenticator {
  /** Off when neither tokens nor a JWKS are configured: every request is `anonymous`. */
  readonly enabled: boolean;
  /** Rejects with `unauthorized` for a missing, unknown, expired or badly signed token. */
  authenticate(authorization: string | undefined): Promise<Principal>;
}

const BEARER = /^Bearer +([^\s]+) *$/i;
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

export function createAuthenticator(s: AuthSettings, log: Logger): Authenticator {
  // Looked up by digest: a Map compares strings char by char, which would time how much of a
  // guessed token is right; digests of a guess share nothing predictable with the real one.
  const tokens = new Map([...(s.tokens ?? [])].map(([token, p]) => [digest(token), p]));
  const verifyJwt: VerifyToken | undefined = s.jwt ? createJwtVerifier(s.jwt, log) : undefined;
  const enabled = tokens.size > 0 || verifyJwt !== undefined;
  return {
    enabled,
    async authenticate(authorization) {
      if (!enabled) return ANONYMOUS;
      const token = BEARER.exec(authorization ?? "")?.[1];
      if (!token) throw refusals.bearerRequired();
      const known = tokens.get(digest(token));
      if (known) return known;
      if (verifyJwt && JWT_SHAPE.test(token)) return verifyJwt(token);
      throw refusals.unknownToken();
    },
  };
}
