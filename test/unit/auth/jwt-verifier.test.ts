import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CompactSign, exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtVerifier, type JwtSettings, type VerifyToken } from "../../../src/auth/jwt-verifier.js";
import { silentLogger, type Logger } from "../../../src/logger.js";

const ISSUER = "https://idp.test/realms/tollgate";
const AUDIENCE = "tollgate";
const KID = "k1";

/** The identity provider: a real HTTP server whose paths answer as a working, broken or odd JWKS would. */
let server: Server;
let baseUrl: string;
/** Requests per path, so tests can tell whether the key set was fetched. */
const hits = new Map<string, number>();
let publicJwks: { keys: unknown[] };

let idpKey: CryptoKey;
let idpPublicKey: CryptoKey;
/** Same algorithm, never published: what a forger holds. */
let otherKey: CryptoKey;

beforeAll(async () => {
  const idp = await generateKeyPair("RS256");
  idpKey = idp.privateKey;
  idpPublicKey = idp.publicKey;
  otherKey = (await generateKeyPair("RS256")).privateKey;
  publicJwks = { keys: [{ ...(await exportJWK(idp.publicKey)), kid: KID, alg: "RS256", use: "sig" }] };

  server = createServer((req, res) => {
    const path = req.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path.startsWith("/jwks")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(publicJwks));
    } else if (path === "/html") {
      res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><h1>Sign in</h1>");
    } else if (path === "/error") {
      res.writeHead(500).end("upstream down");
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let jwksPathSeq = 0;
/** A verifier on its own JWKS path, so its requests can be counted apart from other tests'. */
function verifier(overrides: Partial<JwtSettings> = {}, log: Logger = silentLogger): { verify: VerifyToken; fetches: () => number } {
  const path = `/jwks/${++jwksPathSeq}`;
  const verify = createJwtVerifier({ jwksUrl: `${baseUrl}${path}`, issuer: ISSUER, audience: AUDIENCE, rolesClaim: "roles", ...overrides }, log);
  return { verify, fetches: () => hits.get(path) ?? 0 };
}

/** A token as the identity provider would issue it, with claims and header overridable. */
function sign(claims: JWTPayload = {}, opts: { key?: CryptoKey; kid?: string; exp?: number | string } = {}): Promise<string> {
  return new SignJWT({ sub: "alice", iss: ISSUER, aud: AUDIENCE, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: opts.kid ?? KID, typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? "5m")
    .sign(opts.key ?? idpKey);
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

/** A logger that keeps its warn lines. */
function recordingLogger(): Logger & { warns: { msg: string; fields?: Record<string, unknown> }[] } {
  const warns: { msg: string; fields?: Record<string, unknown> }[] = [];
  return { ...silentLogger, warn: (msg, fields) => warns.push({ msg, fields }), warns };
}

/** Asserts the rejection is `unauthorized` and that the client-facing message does not echo the token. */
async function expectRefused(verify: VerifyToken, token: string, message?: string): Promise<void> {
  const err: unknown = await verify(token).then(
    () => expect.fail("token was accepted"),
    (e: unknown) => e,
  );
  expect(err).toMatchObject({ code: "unauthorized", name: "AppError" });
  const text = (err as Error).message;
  if (message !== undefined) expect(text).toBe(message);
  if (token.length > 3) expect(text).not.toContain(token);
}

describe("createJwtVerifier: tokens that verify", () => {
  it("a valid token gives its subject and roles", async () => {
    const { verify } = verifier();
    await expect(verify(await sign({ roles: ["approver", "admin"] }))).resolves.toEqual({ sub: "alice", roles: ["approver", "admin"] });
  });

  it("roles may be a space- or comma-separated string", async () => {
    const { verify } = verifier();
    await expect(verify(await sign({ roles: "approver metrics" }))).resolves.toMatchObject({ roles: ["approver", "metrics"] });
    await expect(verify(await sign({ roles: "admin, user" }))).resolves.toMatchObject({ roles: ["admin", "user"] });
  });

  it("a dotted roles claim is read as a path (Keycloak realm_access.roles)", async () => {
    const { verify } = verifier({ rolesClaim: "realm_access.roles" });
    const token = await sign({ realm_access: { roles: ["offline_access", "approver"] }, roles: ["admin"] });
    await expect(verify(token)).resolves.toEqual({ sub: "alice", roles: ["approver"] });
  });

  it("a claim whose own name has dots is taken whole (Auth0 namespaced claims)", async () => {
    const { verify } = verifier({ rolesClaim: "https://tollgate.example/roles" });
    await expect(verify(await sign({ "https://tollgate.example/roles": ["metrics"] }))).resolves.toMatchObject({ roles: ["metrics"] });
  });

  it("unknown roles are dropped; a claim with no known role grants none", async () => {
    const { verify } = verifier();
    await expect(verify(await sign({ roles: ["superuser", "admin", 7, "Admin", "admin"] }))).resolves.toMatchObject({ roles: ["admin"] });
    await expect(verify(await sign({ roles: ["offline_access"] }))).resolves.toMatchObject({ roles: [] });
    await expect(verify(await sign({ roles: "" }))).resolves.toMatchObject({ roles: [] });
    await expect(verify(await sign({ roles: { admin: true } }))).resolves.toMatchObject({ roles: [] });
  });

  it("a token without the roles claim has the role user", async () => {
    await expect(verifier().verify(await sign())).resolves.toEqual({ sub: "alice", roles: ["user"] });
    // Also when the path stops early: no realm_access at all.
    await expect(verifier({ rolesClaim: "realm_access.roles" }).verify(await sign())).resolves.toMatchObject({ roles: ["user"] });
  });

  it("without issuer and audience settings, any iss and aud are accepted", async () => {
    const { verify } = verifier({ issuer: undefined, audience: undefined });
    await expect(verify(await sign({ iss: "https://elsewhere.test", aud: "someone-else" }))).resolves.toMatchObject({ sub: "alice" });
  });
});

describe("createJwtVerifier: tokens that are refused", () => {
  it("an expired token", async () => {
    await expectRefused(verifier().verify, await sign({}, { exp: now() - 60 }), "Token expired");
  });

  it("a token without an expiry (it could never be revoked)", async () => {
    const token = await new SignJWT({ sub: "alice", iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: "RS256", kid: KID, typ: "JWT" })
      .setIssuedAt()
      .sign(idpKey);
    await expect(verifier().verify(token)).rejects.toMatchObject({ code: "unauthorized", message: "Token has no expiry" });
  });

  it("a token not yet valid (nbf in the future)", async () => {
    await expectRefused(verifier().verify, await sign({ nbf: now() + 60 }), "Token is not yet valid");
  });

  it("a token from another issuer, or naming none", async () => {
    const { verify } = verifier();
    await expectRefused(verify, await sign({ iss: "https://evil.test" }), "Token issuer is not accepted");
    await expectRefused(verify, await sign({ iss: undefined }), "Token issuer is not accepted");
  });

  it("a token for another audience, or naming none", async () => {
    const { verify } = verifier();
    await expectRefused(verify, await sign({ aud: ["other-api", "account"] }), "Token audience is not accepted");
    await expectRefused(verify, await sign({ aud: undefined }), "Token audience is not accepted");
  });

  it("a token without a subject, or with an empty one", async () => {
    const { verify } = verifier();
    await expectRefused(verify, await sign({ sub: undefined }));
    await expectRefused(verify, await sign({ sub: "" }));
  });

  it("a token signed by a key not in the JWKS, whether or not its kid matches one there", async () => {
    const { verify } = verifier();
    await expectRefused(verify, await sign({}, { key: otherKey }), "Token is not valid");
    await expectRefused(verify, await sign({}, { key: otherKey, kid: "k-unknown" }), "Token is not valid");
  });

  it("an unsecured token (alg none) is refused before any key is fetched", async () => {
    const { verify, fetches } = verifier();
    const token = `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "mallory", iss: ISSUER, aud: AUDIENCE, roles: ["admin"], exp: now() + 300 })}.`;
    await expectRefused(verify, token, "Token is not valid");
    expect(fetches()).toBe(0);
  });

  it("an HS256 token keyed with the public key's bytes is refused before any key is fetched", async () => {
    const { verify, fetches } = verifier();
    const secret = new TextEncoder().encode(await exportSPKI(idpPublicKey));
    const token = await new SignJWT({ sub: "mallory", iss: ISSUER, aud: AUDIENCE, roles: ["admin"] })
      .setProtectedHeader({ alg: "HS256", kid: KID })
      .setExpirationTime("5m")
      .sign(secret);
    await expectRefused(verify, token, "Token is not valid");
    expect(fetches()).toBe(0);
  });

  it("strings that are not JWTs", async () => {
    const { verify } = verifier();
    for (const garbage of ["abc", "a.b.c", "", "..", `${b64url({ alg: "RS256" })}.%%%.`, `${(await sign()).slice(0, -4)}AAAA`]) {
      await expectRefused(verify, garbage);
    }
  });

  it("a valid signature over a payload that is not a JSON object", async () => {
    const token = await new CompactSign(new TextEncoder().encode('"just a string"')).setProtectedHeader({ alg: "RS256", kid: KID }).sign(idpKey);
    await expectRefused(verifier().verify, token, "Token is not valid");
  });
});

describe("createJwtVerifier and the JWKS endpoint", () => {
  it("creating a verifier fetches nothing; the first verify fetches once and later ones use the cache", async () => {
    const { verify, fetches } = verifier();
    expect(fetches()).toBe(0);
    await verify(await sign());
    await verify(await sign());
    expect(fetches()).toBe(1);
  });

  it("an unreachable JWKS refuses every token and logs one warn line for many attempts", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const log = recordingLogger();
    const jwksUrl = `http://127.0.0.1:${port}/jwks`;
    const verify = createJwtVerifier({ jwksUrl, rolesClaim: "roles" }, log);
    const token = await sign();
    for (let i = 0; i < 5; i++) {
      await expectRefused(verify, token, "Could not verify the token: the identity provider's keys are unreachable");
    }
    expect(log.warns).toHaveLength(1);
    expect(log.warns[0]!.fields).toEqual({ jwks_url: jwksUrl, reason: expect.stringContaining("ECONNREFUSED") });
    expect(log.warns[0]!.fields!.reason).not.toMatch(/\n\s+at /);
  });

  it("a JWKS answering 200 with HTML, or 500, refuses tokens and warns once", async () => {
    for (const path of ["/html", "/error"]) {
      const log = recordingLogger();
      const verify = createJwtVerifier({ jwksUrl: `${baseUrl}${path}`, rolesClaim: "roles" }, log);
      const token = await sign();
      await expectRefused(verify, token, "Could not verify the token: the identity provider's keys are unreachable");
      await expectRefused(verify, token, "Could not verify the token: the identity provider's keys are unreachable");
      expect(log.warns).toEqual([{ msg: expect.any(String), fields: { jwks_url: `${baseUrl}${path}`, reason: expect.any(String) } }]);
    }
  });
});
