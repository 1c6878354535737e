import type Database from "better-sqlite3";
import { type DecisionTokenGrant, hashDecisionToken, mintDecisionToken } from "../decision-token.js";
import { type ConsumeResult, type DecisionTokenRecord, type DecisionTokenStore, refusedConsume } from "../decision-token-store.js";

/** The table, its own: created on `init`, untouched by the server's schema migrations. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS email_decision_tokens (
  token_hash   TEXT PRIMARY KEY,
  principal_sub TEXT NOT NULL,
  thread_id    TEXT NOT NULL,
  interrupt_id TEXT NOT NULL,
  versions     TEXT NOT NULL,
  expires_at   INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  used_at      INTEGER,
  closed_at    INTEGER
);
CREATE INDEX IF NOT EXISTS email_decision_tokens_interrupt ON email_decision_tokens (interrupt_id);
`;

interface Row {
  token_hash: string;
  principal_sub: string;
  thread_id: string;
  interrupt_id: string;
  versions: string;
  expires_at: number;
  created_at: number;
  used_at: number | null;
  closed_at: number | null;
}

/** Runs a synchronous statement when the connection is free: the server's `SqliteConn.lock.gate`. */
export type SqliteGate = <T>(work: () => T) => Promise<T>;

/**
 * Decision tokens in SQLite. `consume` is one `UPDATE … WHERE used_at IS NULL … RETURNING`:
 * SQLite runs it whole. On the server's own connection pass its lock's `gate`, so no statement
 * here lands inside another store's open transaction; alone on a handle, none is needed.
 */
export class SqliteDecisionTokenStore implements DecisionTokenStore {
  private readonly gate: SqliteGate;

  constructor(
    private readonly db: Database.Database,
    gate?: SqliteGate,
  ) {
    this.gate = gate ?? (async (work) => work());
  }

  async init(): Promise<void> {
    await this.gate(() => this.db.exec(SCHEMA));
  }

  async issue(grant: DecisionTokenGrant, now: number): Promise<string> {
    const token = mintDecisionToken();
    await this.gate(() =>
      this.db
        .prepare(
          `INSERT INTO email_decision_tokens (token_hash, principal_sub, thread_id, interrupt_id, versions, expires_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(hashDecisionToken(token), grant.principalSub, grant.threadId, grant.interruptId, JSON.stringify(grant.versions), grant.expiresAt, now),
    );
    return token;
  }

  async find(token: string): Promise<DecisionTokenRecord | undefined> {
    const row = await this.gate(() => this.db.prepare<[string], Row>("SELECT * FROM email_decision_tokens WHERE token_hash = ?").get(hashDecisionToken(token)));
    return row ? fromRow(row) : undefined;
  }

  async consume(token: string, now: number): Promise<ConsumeResult> {
    const hash = hashDecisionToken(token);
    const taken = await this.gate(() =>
      this.db
        .prepare<[number, string, number], Row>(
          `UPDATE email_decision_tokens SET used_at = ?
           WHERE token_hash = ? AND used_at IS NULL AND closed_at IS NULL AND expires_at > ?
           RETURNING *`,
        )
        .get(now, hash, now),
    );
    if (taken) return { ok: true, record: fromRow(taken) };
    return refusedConsume(await this.find(token), now);
  }

  async release(token: string, usedAt: number): Promise<void> {
    await this.gate(() => this.db.prepare("UPDATE email_decision_tokens SET used_at = NULL WHERE token_hash = ? AND used_at = ?").run(hashDecisionToken(token), usedAt));
  }

  async closeInterrupt(interruptId: string, now: number): Promise<number> {
    return this.gate(() => this.db.prepare("UPDATE email_decision_tokens SET closed_at = ? WHERE interrupt_id = ? AND closed_at IS NULL AND used_at IS NULL").run(now, interruptId).changes);
  }

  async discard(token: string): Promise<void> {
    await this.gate(() => this.db.prepare("DELETE FROM email_decision_tokens WHERE token_hash = ?").run(hashDecisionToken(token)));
  }

  async prune(before: number): Promise<number> {
    return this.gate(() => this.db.prepare("DELETE FROM email_decision_tokens WHERE COALESCE(used_at, closed_at, expires_at) < ?").run(before).changes);
  }
}

function fromRow(r: Row): DecisionTokenRecord {
  return {
    tokenHash: r.token_hash,
    principalSub: r.principal_sub,
    threadId: r.thread_id,
    interruptId: r.interrupt_id,
    versions: JSON.parse(r.versions) as Record<string, number>,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    usedAt: r.used_at,
    closedAt: r.closed_at,
  };
}
