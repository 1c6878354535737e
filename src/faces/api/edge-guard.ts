import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { refusals } from "../../protocol/index.js";

/** The host part of a `Host` header, lower-cased, without its port (`[::1]:8787` → `[::1]`). */
export function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end > 0 ? h.slice(0, end + 1) : undefined;
  }
  const colon = h.indexOf(":");
  return colon >= 0 ? h.slice(0, colon) : h;
}

/**
 * DNS rebinding: a page on attacker.example whose name now resolves to 127.0.0.1 sends its
 * requests here with `Host: attacker.example`. Only the names this server answers for pass.
 */
export function hostGuard(allowedHosts: readonly string[]): MiddlewareHandler {
  const allowed = new Set(allowedHosts);
  return async (c, next) => {
    // From a socket, the Host header exactly as sent (the server fills in a default when it is
    // missing, and keeps only the first of two); in-process requests (app.request) have their URL.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const sent = incoming ? hostHeaders(incoming) : [new URL(c.req.url).host];
    const host = sent.length === 1 ? hostOf(sent[0]) : undefined; // none, or two: RFC 9112 says 400
    if (!host || !allowed.has(host)) throw refusals.wrongHost();
    await next();
  };
}

function hostHeaders(incoming: IncomingMessage): string[] {
  const values: string[] = [];
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
    if (incoming.rawHeaders[i]!.toLowerCase() === "host") values.push(incoming.rawHeaders[i + 1]!);
  }
  return values;
}

/**
 * Cross-site requests: a browser names the page's origin in `Origin` (on every POST, and on
 * cross-origin GETs). Anything but this server's own origin or one in `CORS_ORIGINS` is refused,
 * body-less POSTs included, before a token or a body is looked at. With `CORS_ORIGINS` set, those
 * origins also get CORS headers and preflight answers.
 */
export function originGuard(corsOrigins: readonly string[]): MiddlewareHandler[] {
  const listed = new Set(corsOrigins);
  const check: MiddlewareHandler = async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      const host = c.req.header("host") ?? new URL(c.req.url).host;
      const own = origin === `http://${host}` || origin === `https://${host}`;
      if (!own && !listed.has(origin)) throw refusals.crossSite();
    }
    await next();
  };
  if (listed.size === 0) return [check];
  // Studio, hosted on a public origin, calls a server on this machine: Chrome first asks whether
  // a private network may be reached. Only listed origins, only for LangGraph's API, hear yes.
  const privateNetwork: MiddlewareHandler = async (c, next) => {
    await next();
    const origin = c.req.header("origin");
    if (c.req.method === "OPTIONS" && origin && listed.has(origin) && isLangGraphPath(c.req.path) && c.req.header("access-control-request-private-network") === "true") {
      c.res.headers.set("Access-Control-Allow-Private-Network", "true");
    }
  };
  return [
    check,
    privateNetwork,
    cors({
      origin: [...listed],
      allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
      // x-api-key: LangGraph's SDK sends its key so; x-auth-scheme: Agent Chat UI may add it.
      allowHeaders: ["authorization", "content-type", "accept", "last-event-id", "x-api-key", "x-auth-scheme"],
      // Date: a page on another origin counts down to `expires_at` on the server's clock.
      // Content-Location: LangGraph's SDK reads a new run's id from it.
      exposeHeaders: ["X-Run-Id", "Retry-After", "WWW-Authenticate", "Date", "Content-Location"],
      maxAge: 600,
    }),
  ];
}

/** Paths of LangGraph's API, where Studio's browser rules apply. */
function isLangGraphPath(path: string): boolean {
  return path === "/langgraph" || path.startsWith("/langgraph/");
}

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

const TEXT_TYPE = /^text\/plain\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * A POST that carries a body must say it is JSON (UTF-8): a `text/plain` or form POST is what a
 * page on another site can send without a CORS preflight. A POST without a body (cancel) passes.
 * One exception, for LangGraph Studio, which sends its JSON as `text/plain`: under `/langgraph`,
 * from an origin listed in `CORS_ORIGINS` (and only such an origin, which the origin guard has
 * already let through), a `text/plain` body is read as JSON.
 */
export function jsonBodies(corsOrigins: readonly string[] = []): MiddlewareHandler {
  const listed = new Set(corsOrigins);
  return async (c, next) => {
    if (c.req.method === "POST") {
      const length = c.req.header("content-length");
      const hasBody = (length !== undefined && length !== "0") || c.req.header("transfer-encoding") !== undefined;
      const type = c.req.header("content-type") ?? "";
      const studio = isLangGraphPath(c.req.path) && listed.has(c.req.header("origin") ?? "") && TEXT_TYPE.test(type);
      if (hasBody && !JSON_TYPE.test(type) && !studio) throw refusals.notJson();
    }
    await next();
  };
}
