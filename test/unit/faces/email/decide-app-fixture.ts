/**
 * The decide routes on a bare Hono app, as the integrator will mount them: a token store, a fake
 * `decide` that records its calls and answers what the test says, the open interrupt the test
 * holds, a fake clock, and a JSON logger whose lines are kept (to look for tokens in them).
 */
import { Hono } from "hono";
import {
  type ApprovalNotice,
  decideRoutes,
  type EmailDecisionArgs,
  type EmailDecisionOutcome,
  shownVersions,
} from "../../../../src/faces/email/index.js";
import { type DecisionTokenStore, MemoryDecisionTokenStore } from "../../../../src/store/index.js";
import { loggedPath } from "../../../../src/http/index.js";
import { jsonLogger } from "../../../../src/logger.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { notice as makeNotice } from "./notice-fixture.js";

export interface DecideHarness {
  app: Hono;
  tokens: DecisionTokenStore;
  clock: FakeClock;
  /** The interrupt as it stands; null: closed. */
  open: { notice: ApprovalNotice | null };
  decided: EmailDecisionArgs[];
  /** What the next decide answers (default: taken). */
  answer: { next?: EmailDecisionOutcome | Error };
  logLines: string[];
  /** Mints a token for `sub` bound to the open notice's versions. */
  mint(sub?: string): Promise<string>;
}

export function decideHarness(o: { publicUrl: string; tokens?: DecisionTokenStore }): DecideHarness {
  const clock = new FakeClock(Date.parse("2026-12-05T12:00:00Z"));
  const tokens = o.tokens ?? new MemoryDecisionTokenStore();
  const logLines: string[] = [];
  const log = jsonLogger({ level: "debug", destination: { write: (line: string) => logLines.push(line) } });
  const open: DecideHarness["open"] = { notice: makeNotice(clock.now()) };
  const decided: EmailDecisionArgs[] = [];
  const answer: DecideHarness["answer"] = {};
  const app = new Hono();
  // An access log as the integrator must write it: every path through loggedPath.
  app.use(async (c, next) => {
    await next();
    log.info("request", { method: c.req.method, path: loggedPath(c.req.path), status: c.res.status });
  });
  app.route(
    "/decide",
    decideRoutes({
      tokens,
      publicUrl: o.publicUrl,
      now: () => clock.now(),
      log,
      openInterrupt: async ({ interruptId }) => (open.notice && open.notice.interrupt_id === interruptId ? open.notice : null),
      // The gate's word for a closed interrupt, as the thread service gives it: past its deadline, or closed otherwise.
      closedAs: async ({ interruptId }) => {
        const n = open.notice?.interrupt_id === interruptId ? open.notice : undefined;
        if (n && Date.parse(n.expires_at) > clock.now()) return undefined;
        return n ? "approval_expired" : "not_waiting";
      },
      decide: async (args) => {
        decided.push(args);
        const a = answer.next ?? { ok: true, summary: `${args.decision === "approve" ? "Approved" : "Rejected"} as ${args.principalSub}` };
        answer.next = undefined;
        if (a instanceof Error) throw a;
        return a;
      },
    }),
  );
  return {
    app,
    tokens,
    clock,
    open,
    decided,
    answer,
    logLines,
    mint: (sub = "fin1") =>
      tokens.issue(
        { principalSub: sub, threadId: open.notice!.thread_id, interruptId: open.notice!.interrupt_id, versions: shownVersions(open.notice!), expiresAt: Date.parse(open.notice!.expires_at) },
        clock.now(),
      ),
  };
}
