import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Logger } from "../../logger.js";
import { type ApprovalNotice, versionsCurrent } from "./approval-notice.js";
import { type DecideViaEmail, GONE_CODES, TRY_AGAIN_CODES } from "./decide-callback.js";
import { badRequestPage, decideFormPage, gonePage, notFoundPage, outcomePage, refusedPage, tryAgainPage } from "./decide-page.js";
import { type DeadTokenReason, deadReason, type DecisionTokenRecord, type DecisionTokenStore, looksLikeDecisionToken } from "../../runs/index.js";

/** The page's own needs and nothing more: no script, no image, no frame, forms only back here. */
export const DECIDE_CSP = "default-src 'none'; form-action 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
const MAX_REASON = 500;
const MAX_BODY = 8 * 1024;

export interface DecideRoutesDeps {
  tokens: DecisionTokenStore;
  /** PUBLIC_URL: a POST must come from its origin. */
  publicUrl: string;
  now: () => number;
  /**
   * The interrupt as it stands, if it still waits: the calls (masked) the page shows. Null when
   * the thread waits on no interrupt or on another one. The integrator reads the thread view.
   */
  openInterrupt: (args: { threadId: string; interruptId: string; principalSub: string }) => Promise<ApprovalNotice | null>;
  decide: DecideViaEmail;
  /**
   * The gate's word for why a link's interrupt takes no decision (`approval_expired`, or
   * `not_waiting` for one closed otherwise), or undefined while it waits: a link dead with its
   * interrupt says which as every face does, whenever the sweep or the close reached the link.
   */
  closedAs: (args: { threadId: string; interruptId: string }) => Promise<string | undefined>;
  /** Lines carry thread, interrupt, principal and outcome: never the token or the path. */
  log?: Logger;
}

/**
 * `GET /decide/:token` shows the request and changes nothing (mail scanners open links);
 * `POST /decide/:token` from PUBLIC_URL's origin decides once as the token's principal, through
 * the gate, and renders what the gate answered.
 * Mount at `/decide`, outside bearer auth and the JSON-only rule (the token is the credential).
 */
export function decideRoutes(deps: DecideRoutesDeps): Hono {
  const app = new Hono();
  const origin = new URL(deps.publicUrl).origin;

  app.use(async (c, next) => {
    await next();
    c.header("Content-Security-Policy", DECIDE_CSP);
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Cache-Control", "no-store");
  });

  app.get("/:token", async (c) => {
    const found = await live(c.req.param("token"));
    if (found.kind === "unknown") return c.html(notFoundPage(), 404);
    if (found.kind === "gone") return c.html(gonePage(found.reason), 410);
    return c.html(decideFormPage(found.notice, { principalSub: found.record.principalSub }), 200);
  });

  app.post(
    "/:token",
    bodyLimit({ maxSize: MAX_BODY, onError: (c) => c.html(badRequestPage("The form is too large."), 413) }),
    async (c) => {
      // Another site's form cannot post here: before the token or the body is looked at.
      if (!fromOwnPage(c.req.header("origin"), c.req.header("sec-fetch-site"), origin)) return c.html(badRequestPage("This form can only be sent from its own page."), 403);
      const form = await readForm(c);
      if ("error" in form) return c.html(badRequestPage(form.error), 400);
      const token = c.req.param("token");
      if (!looksLikeDecisionToken(token)) return c.html(notFoundPage(), 404);
      // The link's own life (used, closed, past its deadline) is the token's; whether the decision
      // may be taken (the interrupt still open, the versions still current, who may decide) is the
      // gate's, through the one door, and its refusal is rendered below.
      const taken = await deps.tokens.consume(token, deps.now());
      if (!taken.ok) return taken.reason === "unknown" ? c.html(notFoundPage(), 404) : c.html(gonePage(await whyDead(taken.record, taken.reason)), 410);
      const r = taken.record;
      const fields = { thread_id: r.threadId, interrupt_id: r.interruptId, principal: r.principalSub, via: "email" };
      let outcome;
      try {
        outcome = await deps.decide({ threadId: r.threadId, interruptId: r.interruptId, principalSub: r.principalSub, via: "email", ...form, versions: r.versions });
      } catch (err) {
        // Not tried: give the link back so the person can try again.
        await deps.tokens.release(token, r.usedAt!);
        deps.log?.error("email decision failed", { ...fields, err });
        return c.html(tryAgainPage(), 503);
      }
      if (outcome.ok) {
        deps.log?.info("email decision taken", { ...fields, decision: form.decision });
        return c.html(outcomePage(form.decision, outcome.summary), 200);
      }
      deps.log?.info("email decision refused", { ...fields, decision: form.decision, code: outcome.code });
      if (TRY_AGAIN_CODES.has(outcome.code)) {
        await deps.tokens.release(token, r.usedAt!);
        return c.html(tryAgainPage(), 503);
      }
      const gone = GONE_CODES[outcome.code];
      if (gone) return c.html(gonePage(gone), 410);
      return c.html(refusedPage(outcome.message), 403);
    },
  );

  type Live = { kind: "unknown" } | { kind: "gone"; reason: DeadTokenReason } | { kind: "open"; record: DecisionTokenRecord; notice: ApprovalNotice };

  /** What the GET page shows: the token's record and the interrupt it decides, if both still stand; else why not. */
  async function live(token: string): Promise<Live> {
    if (!looksLikeDecisionToken(token)) return { kind: "unknown" };
    const record = await deps.tokens.find(token);
    if (!record) return { kind: "unknown" };
    const dead = deadReason(record, deps.now());
    if (dead) return { kind: "gone", reason: await whyDead(record, dead) };
    const notice = await deps.openInterrupt({ threadId: record.threadId, interruptId: record.interruptId, principalSub: record.principalSub });
    if (!notice || notice.interrupt_id !== record.interruptId) return { kind: "gone", reason: "closed" };
    if (!(Date.parse(notice.expires_at) > deps.now())) return { kind: "gone", reason: "expired" };
    if (!versionsCurrent(record.versions, notice)) return { kind: "gone", reason: "stale" };
    return { kind: "open", record, notice };
  }

  /** A link dead with its interrupt (closed, or past its deadline) says why as the gate does; its own life (used) is its own. */
  async function whyDead(record: DecisionTokenRecord, reason: DeadTokenReason): Promise<DeadTokenReason> {
    if (reason !== "closed" && reason !== "expired") return reason;
    const code = await deps.closedAs({ threadId: record.threadId, interruptId: record.interruptId });
    return code === "approval_expired" ? "expired" : code ? "closed" : reason;
  }

  return app;
}

/**
 * Whether a POST comes from the decide page itself. `Origin` is PUBLIC_URL's; or, because the
 * page's `Referrer-Policy: no-referrer` makes browsers send `Origin: null` on its own form posts
 * (Fetch: a non-GET request's origin is serialized as null under no-referrer), `null` with
 * `Sec-Fetch-Site: same-origin`, a header only the browser sets. Anything else is refused.
 */
export function fromOwnPage(originHeader: string | undefined, fetchSite: string | undefined, origin: string): boolean {
  if (originHeader === origin) return true;
  return originHeader === "null" && fetchSite === "same-origin";
}

/** The form's fields, checked: `decision=approve|reject`, an optional `reason` of at most 500 characters. */
async function readForm(c: Context): Promise<{ decision: "approve" | "reject"; reason?: string } | { error: string }> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return { error: "Send the page's form." };
  const body = new URLSearchParams(await c.req.text());
  const decision = body.get("decision");
  if (decision !== "approve" && decision !== "reject") return { error: "Choose Approve or Reject." };
  const reason = (body.get("reason") ?? "").trim();
  if (reason.length > MAX_REASON) return { error: `The reason is longer than ${MAX_REASON} characters.` };
  return reason ? { decision, reason } : { decision };
}
