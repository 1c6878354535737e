import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import type { Logger } from "../logger.js";
import { type AppError, refusals } from "../protocol/index.js";
import { ANONYMOUS, type Principal, ROLES } from "./principal.js";

/** How JWTs are checked (auth on, token not a static one). */
export interface JwtSettings {
  /** AUTH_JWKS_URL: the identity provider's public keys. */
  jwksUrl: string;
  /** AUTH_ISSUER: when set, `iss` must equal it. */
  issuer?: string;
  /** AUTH_AUDIENCE: when set, `aud` must contain it. */
  audience?: string;
  /** AUTH_ROLES_CLAIM, default "roles"; a dotted path such as "realm_access.roles" (Keycloak) reaches into objects. */
  rolesClaim: string;
  /** The roles a JWT may grant: the contract's and AUTH_ROLES'; others in its claim are dropped. */
  roles?: readonly string[];
}

/** Turns a bearer token into its principal, or rejects with AppError("unauthorized"). */
export type VerifyToken = (token: string) => Promise<Principal>;

/**
 * Asymmetric algorithms only. Listing them is what refuses `alg: none` and an HS256 token "signed"
 * with the public key as the HMAC secret, before any key is looked up.
 */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
/** Seconds of clock skew forgiven between us and the identity provider, for `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 5;
/** A JWKS outage fails every request; one log line per this interval is enough to notice it. */
const WARN_INTERVAL_MS = 30_000;

/**
 * Key lookup failures that are the token's fault (its `kid` is not in the set, or it names none and
 * the set holds several keys); any other lookup failure means the set itself could not be had.
 */
const TOKEN_KEY_ERRORS = new Set(["ERR_JWKS_NO_MATCHING_KEY", "ERR_JWKS_MULTIPLE_MATCHING_KEYS"]);

/** jose errors that only say the token is bad: nothing for an operator to see. */
const TOKEN_ERRORS = new Set([
  ...TOKEN_KEY_ERRORS,
  "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
  "ERR_JWS_INVALID",
  "ERR_JWT_INVALID",
  "ERR_JOSE_ALG_NOT_ALLOWED",
]);

/** Marks a failure of the key set (fetch, status, JSON, shape) so it is not reported as a bad token. */
class KeysUnavailable extends Error {}

/**
 * A verifier for JWTs signed by a key from `settings.jwksUrl`. The key set is fetched on the first
 * verify, not here, and cached by jose. Rejects with AppError("unauthorized", <short safe message>)
 * for every token that does not verify; the message never holds the token.
 *
 * @throws TypeError when `settings.jwksUrl` is not a URL.
 */
export function createJwtVerifier(settings: JwtSettings, log: Logger): VerifyToken {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl));
  const mayWarnUnreachable = throttle(WARN_INTERVAL_MS);
  const mayWarnUnexpected = throttle(WARN_INTERVAL_MS);

  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (err) {
      if (err instanceof errors.JOSEError && TOKEN_KEY_ERRORS.has(err.code)) throw err;
      throw new KeysUnavailable(describe(err), { cause: err });
    }
  };

  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms: ALGORITHMS,
        issuer: settings.issuer,
        audience: settings.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        // A token that never expires is a password that can never be revoked.
        requiredClaims: ["exp"],
      }));
    } catch (err) {
      if (err instanceof KeysUnavailable) {
        if (mayWarnUnreachable()) log.warn("JWKS could not be fetched; JWTs are refused until it can", { jwks_url: settings.jwksUrl, reason: err.message });
        throw refusals.keysUnreachable();
      }
      const refused = refusalFor(err);
      // Not a plain bad token: likely an unusable key in the set (e.g. RSA under 2048 bits), which an operator must fix.
      if (refused === undefined && mayWarnUnexpected()) log.warn("JWT verification failed unexpectedly", { jwks_url: settings.jwksUrl, reason: describe(err) });
      throw refused ?? refusals.tokenNotValid();
    }
    if (typeof payload.sub !== "string" || payload.sub === "") throw refusals.tokenNoSubject();
    // `anonymous` owns what was made with auth off; a token must not become that owner.
    if (payload.sub === ANONYMOUS.sub) throw refusals.tokenAnonymous();
    return { sub: payload.sub, roles: rolesFrom(claimAt(payload, settings.rolesClaim), settings.roles ?? ROLES) };
  };
}

/** The client-safe refusal for a jose error, or undefined when the error is not one a bad token explains. */
function refusalFor(err: unknown): AppError | undefined {
  if (!(err instanceof errors.JOSEError)) return undefined;
  if (err.code === "ERR_JWT_EXPIRED") return refusals.tokenExpired();
  if (err.code === "ERR_JWT_CLAIM_VALIDATION_FAILED") {
    const { claim } = err as errors.JWTClaimValidationFailed;
    if (claim === "iss") return refusals.tokenIssuer();
    if (claim === "aud") return refusals.tokenAudience();
    if (claim === "nbf") return refusals.tokenNotYetValid();
    if (claim === "exp") return refusals.tokenNeverExpires();
    return refusals.tokenNotValid();
  }
  return TOKEN_ERRORS.has(err.code) ? refusals.tokenNotValid() : undefined;
}

/**
 * The claim at `path`. A claim named with dots as a whole (Auth0's "https://example.com/roles") wins
 * over reading the dots as a path. Own properties only, so "constructor" or "__proto__" find nothing.
 */
function claimAt(payload: JWTPayload, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let node: unknown = payload;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Known roles in the claim. No claim at all means a plain user; a claim naming no known role grants none. */
function rolesFrom(value: unknown, known: readonly string[]): string[] {
  if (value === undefined) return ["user"];
  const names: unknown[] = Array.isArray(value) ? value : typeof value === "string" ? value.split(/[\s,]+/) : [];
  return [...new Set(names.filter((n): n is string => typeof n === "string" && known.includes(n)))];
}

/** The error's message and its cause's (fetch says only "fetch failed"; the cause says why), never a stack. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (!(err.cause instanceof Error)) return err.message;
  // Node's connect errors can be an AggregateError with an empty message; its code still says why.
  return `${err.message}: ${err.cause.message || (err.cause as NodeJS.ErrnoException).code || err.cause.name}`;
}

/** True at most once per `intervalMs`. */
function throttle(intervalMs: number): () => boolean {
  let last = -Infinity;
  return () => {
    const now = performance.now();
    if (now - last < intervalMs) return false;
    last = now;
    return true;
  };
}
