/**
 * The real system under the gate model: a tollgate in the test's own process (auth on, the demo
 * tools, a scripted model, a fake clock, no background sweeps), driven through `app.request`, and
 * restartable on the same data dir. On PostgreSQL (TOLLGATE_TEST_BACKEND=postgres) each data dir
 * gets a database of its own on the test cluster, as `startServer` does.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/logger.js";
import { ScriptedChatModel } from "../../../src/testing/index.js";
import { createTollgate, type Tollgate } from "../../../src/index.js";
import { FakeClock } from "../fake-clock.js";
import { ensurePgDatabase, pgTestClusterUrl } from "../pg-test-db.js";
import { openDb, type TestDb } from "../sqlite.js";
import { within } from "../within.js";
import { startSlackStandIn, slackRequest, type SlackStandIn } from "../../fixtures/slack/slack-stand-in.js";
import { startSmtpCatcher, type SmtpCatcher } from "../../fixtures/smtp/smtp-catcher.js";
import { AUTH_TOKENS, TOKEN, type Who } from "./principals.js";

/** A tool call the scripted model makes for a message. */
export interface PlannedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** An HTTP answer, read to its end (a stream included: its run has then ended). */
export interface Answer {
  status: number;
  json: any;
  text: string;
}

const PREFIX = "gate-model turn: ";

export const SLACK_SECRET = "gate-model-slack-signing-secret";
/** PUBLIC_URL: the origin a decide link's form posts from. */
export const PUBLIC_URL = "https://tollgate.example.com";

/** The message that makes the scripted model ask for `calls`: they travel in it, so a restart changes nothing. */
export const messageFor = (calls: readonly PlannedCall[]): string => PREFIX + JSON.stringify(calls);

/** Asks for the calls its message carries; once tools have answered, says it is done. */
function scriptedModel(): ScriptedChatModel {
  return new ScriptedChatModel({
    rules: [
      {
        when: (request) => request.startsWith(PREFIX),
        reply: ({ request }) => ({ toolCalls: JSON.parse(request.slice(PREFIX.length)) as PlannedCall[] }),
        then: "Done.",
      },
    ],
  });
}

export class GateSystem {
  private constructor(
    readonly dataDir: string,
    readonly clock: FakeClock,
    private readonly env: Record<string, string>,
    public tg: Tollgate,
    public db: TestDb,
    /** Slack's Web API, which the server posts its messages to; Slack's clicks come from the test. */
    readonly slack: SlackStandIn,
    /** The SMTP server the request mails go to. */
    readonly smtp: SmtpCatcher,
  ) {}

  /** Decide links posted so far (a link works once: a person with only used ones has none left). */
  readonly postedLinks = new Set<string>();

  /** A fresh tollgate on a fresh data dir (and database), with Slack and email on. */
  static async open(): Promise<GateSystem> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-gate-model-"));
    const [slack, smtp] = await Promise.all([startSlackStandIn(), startSmtpCatcher()]);
    const env: Record<string, string> = {
      SLACK_BOT_TOKEN: "xoxb-gate-model",
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_CHANNEL: "C0APPROVALS",
      SLACK_API_URL: slack.apiUrl,
      SMTP_URL: smtp.url,
      EMAIL_FROM: "Tollgate <tollgate@example.com>",
      PUBLIC_URL,
      // Messages and mails go at once; a step that reads them waits for the outbox to drain.
      WEBHOOK_SWEEP_MS: "10",
      WEBHOOK_BACKOFF_BASE_MS: "10",
      WEBHOOK_BACKOFF_CAP_MS: "20",
      AUTH_TOKENS,
      AUTH_ROLES: "finance",
      APPROVAL_TTL_SECONDS: "900",
      // Sweeps only when a command says so: expiry is a step of the model, not a timer.
      EXPIRY_SWEEP_MS: "3600000",
      // The fake clock hardly moves: a rate limit would refuse alice's hundredth message.
      RATE_LIMIT_RUNS_PER_MINUTE: "0",
      DATA_DIR: dataDir,
    };
    const cluster = pgTestClusterUrl();
    if (cluster) Object.assign(env, { DATABASE_URL: await ensurePgDatabase(cluster, dataDir), REPLICA_LEASE_SECONDS: "1" });
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const tg = await GateSystem.start(env, clock);
    return new GateSystem(dataDir, clock, env, tg, openDb(dataDir), slack, smtp);
  }

  private static start(env: Record<string, string>, clock: FakeClock): Promise<Tollgate> {
    return createTollgate({ config: loadConfig(env), log: silentLogger, clock, model: scriptedModel(), processMetrics: false });
  }

  /** Closes the tollgate and opens another on the same data dir; waits for its start-up sweep. */
  async restart(): Promise<void> {
    await this.tg.close();
    this.tg = await GateSystem.start(this.env, this.clock);
    await this.tg.expiry.sweep();
  }

  /** The server's own expiry sweep, now. */
  async sweep(): Promise<void> {
    await this.tg.expiry.sweep();
  }

  async close(): Promise<void> {
    this.db.close();
    await this.tg.close();
    await Promise.all([this.slack.close(), this.smtp.close()]);
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Resolves once no Slack message or mail of the thread is still owed or in flight. */
  async drained(threadId: string): Promise<void> {
    await within(
      (async () => {
        while ((await this.tg.store.webhooks.list(threadId)).some((d) => d.status === "pending")) await new Promise((r) => setTimeout(r, 5));
      })(),
      { ms: 10_000, failure: `the Slack messages and mails of thread ${threadId} were not all delivered` },
    );
  }

  /** A payload posted to the interactivity endpoint, signed as Slack signs it, at the server's now. */
  async slackPost(payload: object): Promise<{ status: number; text: string }> {
    const r = await this.tg.app.request("/integrations/slack/interactivity", slackRequest(payload, { secret: SLACK_SECRET, nowMs: this.clock.now() }));
    const res = { status: r.status, text: await r.text() };
    if (res.status >= 500) throw new Error(`Slack's interactivity answered ${res.status}: ${res.text.slice(0, 500)}`);
    return res;
  }

  /** A decide link's form, posted from its own page (Origin PUBLIC_URL). */
  async emailPost(link: string, form: Record<string, string>): Promise<{ status: number; text: string }> {
    this.postedLinks.add(link);
    const r = await this.tg.app.request(new URL(link).pathname, {
      method: "POST",
      headers: { origin: PUBLIC_URL, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
    const res = { status: r.status, text: await r.text() };
    if (res.status >= 500 && res.status !== 503) throw new Error(`POST ${new URL(link).pathname.slice(0, 16)}… answered ${res.status}: ${res.text.slice(0, 500)}`);
    return res;
  }

  /** One request as `who`, its body read to the end (so a run it streams has ended). */
  async request(who: Who, method: string, url: string, body?: unknown, accept = "application/json"): Promise<Answer> {
    const res = await within(
      (async () => {
        const r = await this.tg.app.request(url, {
          method,
          headers: { authorization: `Bearer ${TOKEN[who]}`, "content-type": "application/json", accept },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: r.status, text: await r.text() };
      })(),
      { ms: 15_000, failure: `${method} ${url} as ${who} did not answer to its end` },
    );
    // Never a 5xx: whatever a step does, the server answers it as the contract says.
    if (res.status >= 500) throw new Error(`${method} ${url} as ${who} answered ${res.status}: ${res.text.slice(0, 500)}`);
    let json: unknown = null;
    try {
      json = JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    return { ...res, json };
  }

  /** The thread as its owner reads it, once no run is in flight on it. */
  async settled(threadId: string): Promise<{ status: string; last_outcome: string | null; pending: any }> {
    return within(
      (async () => {
        for (;;) {
          const view = await this.request("alice", "GET", `/threads/${threadId}`);
          if (view.json?.status !== "running") return view.json;
          // A run's stream has ended but its end may still be on its way to the store.
          await new Promise((r) => setTimeout(r, 5));
        }
      })(),
      { ms: 10_000, failure: `thread ${threadId} did not settle` },
    );
  }

  /** The demo's effects: refunds and emails, in the order they were written. */
  effects(): { refunds: Array<{ id: number; order_id: string; amount_cents: number; call_id: string }>; outbox: Array<{ call_id: string; subject: string }>; ledger: Array<{ call_id: string }> } {
    return { refunds: this.db.rows("refunds"), outbox: this.db.rows("outbox"), ledger: this.db.rows("ledger") };
  }
}
