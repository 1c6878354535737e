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
  ) {}

  /** A fresh tollgate on a fresh data dir (and database). */
  static async open(): Promise<GateSystem> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-gate-model-"));
    const env: Record<string, string> = {
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
    return new GateSystem(dataDir, clock, env, tg, openDb(dataDir));
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
    fs.rmSync(this.dataDir, { recursive: true, force: true });
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
