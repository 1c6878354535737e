import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import { startServer } from "../helpers/server-process.js";
import { call, expectNoStackTraces, type Stack, startStack, terminal, threadId } from "./support.js";

// A JWKS served over a real socket, as an identity provider would, and tokens signed with its key.
const ISSUER = "https://idp.test";
const AUDIENCE = "tollgate";
let jwks: http.Server;
let jwksUrl: string;
let key: CryptoKey;
let strangerKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  key = pair.privateKey;
  strangerKey = (await generateKeyPair("ES256")).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  jwks = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => jwks.listen(0, "127.0.0.1", r));
  jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(() => new Promise<void>((r) => jwks.close(() => r())));

function token(claims: Record<string, unknown> = {}, o: { exp?: string | number; iss?: string; aud?: string; signer?: CryptoKey } = {}) {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject((claims.sub as string | undefined) ?? "carol")
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(o.exp ?? "5m")
    .sign(o.signer ?? key);
}

describe("JWTs verified against the identity provider's JWKS", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ AUTH_JWKS_URL: jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE });
  });
  afterAll(async () => {
    expectNoStackTraces(s.server);
    await s?.stop();
  });

  it("a valid token is its subject with its roles; no roles claim is the role user", async () => {
    const me = (t: string) => call(s.server.url, "GET", "/me", undefined, { authorization: `Bearer ${t}` });
    expect((await me(await token({ roles: ["approver", "metrics"] }))).json).toEqual({ sub: "carol", roles: ["approver", "metrics"] });
    expect((await me(await token({ sub: "dave" }))).json).toEqual({ sub: "dave", roles: ["user"] });
  });

  it("the verified subject owns what it creates and runs", async () => {
    const carol = new TollgateClient({ baseUrl: s.server.url, token: await token() });
    const dave = new TollgateClient({ baseUrl: s.server.url, token: await token({ sub: "dave" }) });
    const id = threadId("jwt");
    s.model.push({ text: "hello carol" });
    terminal(await carol.run(id, "hi").collect(), "done");
    expect((await carol.getThread(id)).owner).toBe("carol");
    await expect(dave.getThread(id)).rejects.toMatchObject({ code: "thread_not_found" });
    expect((await carol.listThreads()).items.map((t) => t.thread_id)).toEqual([id]);
  });

  it("expired, wrong issuer, wrong audience, wrong key, alg none and garbage are all 401", async () => {
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const unsecured = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "root", roles: ["admin"], iss: ISSUER, aud: AUDIENCE, exp: now + 300 })}.`;
    const bad: Array<[string, string | undefined]> = [
      ["expired", await token({}, { exp: now - 60 })],
      ["wrong issuer", await token({}, { iss: "https://evil.test" })],
      ["wrong audience", await token({}, { aud: "someone-else" })],
      ["wrong key", await token({ roles: ["admin"] }, { signer: strangerKey })],
      ["alg none", unsecured],
      ["the reserved subject", await token({ sub: "anonymous", roles: ["admin"] })],
      ["garbage", "not-a-token-at-all"],
      ["three garbage parts", "aaa.bbb.ccc"],
      ["no header", undefined],
    ];
    const before = s.db.countRows("threads");
    for (const [what, t] of bad) {
      const headers: Record<string, string> = t === undefined ? {} : { authorization: `Bearer ${t}` };
      const res = await fetch(`${s.server.url}/threads`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
      expect(res.status, what).toBe(401);
      expect(res.headers.get("www-authenticate"), what).toMatch(/^Bearer/);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe("unauthorized");
      if (t) expect(body.error.message, what).not.toContain(t);
    }
    expect(s.db.countRows("threads")).toBe(before);
    // /healthz never needs a token (load balancers probe it).
    expect((await call(s.server.url, "GET", "/healthz")).status).toBe(200);
  });
});

describe("start-up without auth", () => {
  it("refuses a non-loopback HOST with exit 2 and one line saying what to set", async () => {
    const refused = startServer({ HOST: "0.0.0.0", MODEL: "demo", OPENAI_API_KEY: undefined });
    await expect(refused).rejects.toThrow(/exited before ready \(code 2[\s\S]*HOST=0\.0\.0\.0 is not a loopback address[^\n]*AUTH_TOKENS/);
  });

  it("serves it open only when told to, and refuses a malformed AUTH_TOKENS", async () => {
    const open = await startServer({ HOST: "0.0.0.0", TOLLGATE_INSECURE_NO_AUTH: "1", MODEL: "demo", OPENAI_API_KEY: undefined });
    try {
      const port = new URL(open.url).port;
      expect((await call(`http://127.0.0.1:${port}`, "GET", "/me")).json).toEqual({ sub: "anonymous", roles: ["user", "approver", "metrics", "admin"] });
    } finally {
      await open.kill();
    }
    await expect(startServer({ AUTH_TOKENS: '{"short": {"sub": "a", "roles": ["user"]}}' })).rejects.toThrow(/code 2[\s\S]*AUTH_TOKENS/);
    await expect(startServer({ AUTH_TOKENS: '{"long-enough-token": {"sub": "a", "roles": ["root"]}}' })).rejects.toThrow(/code 2[\s\S]*AUTH_TOKENS/);
    // `anonymous` owns every thread made with auth off: no token may become it.
    await expect(startServer({ AUTH_TOKENS: '{"long-enough-token": {"sub": "anonymous", "roles": ["user"]}}' })).rejects.toThrow(
      /code 2[\s\S]*reserved/,
    );
    // Without an audience, a token the provider minted for another app would be accepted.
    await expect(startServer({ AUTH_JWKS_URL: jwksUrl })).rejects.toThrow(/code 2[\s\S]*AUTH_AUDIENCE/);
  });
});
