import type pg from "pg";
import { type DecisionTokenGrant, hashDecisionToken, mintDecisionToken } from "../decision-token.js";
import { type ConsumeResult, type DecisionTokenRecord, type DecisionTokenStore, refusedConsume } from "../decision-token-store.js";

/** The table, its own: created on `init`, shared by every replica on the database. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS email_decision_tokens (
  token_hash    TEXT PRIMARY KEY,
  principal_sub TEXT NOT NULL,
  thread_id     TEXT NOT NULL,
  interrupt_id  TEXT NOT NULL,
  versions      JSONB NOT NULL,
  expires_at    BIGINT NOT NULL,
  created_at    BIGINT NOT NULL,
  used_at       BIGINT,
  closed_at     BIGINT
);
CREATE INDEX IF NOT EXISTS email_decision_tokens_interrupt ON email_decision_tokens (interrupt_id);
`;

/** The advisory lock `init` takes (ASCII "tgem"; tollgate's own tables use "tgsc"). */
const INIT_LOCK_KEY = 0x7467656d;

interface Row {
  token_hash: string;
  principal_sub: string;
  thread_id: string;
  interrupt_id: string;
  versions: Record<string, number>;
  // BIGINT comes back from pg as a string.
  expires_at: string;
  created_at: string;
  used_at: string | null;
  closed_at: string | null;
}

/** Anything that runs a query: the pool, or a client inside a transaction. */
type Queryable = Pick<pg.Pool, "query">;

/**
 * Decision tokens in PostgreSQL. `consume` is one `UPDATE … WHERE used_at IS NULL … RETURNING`:
 * the row lock makes a second concurrent UPDATE re-check the WHERE after the first commits and
 * find `used_at` set, so two replicas taking the same POST decide once.
 */
export class PgDecisionTokenStore implements DecisionTokenStore {
  constructor(private readonly q: Queryable) {}

  async init(): Promise<void> {
    // Replicas starting together: two CREATE TABLE IF NOT EXISTS at once can both pass the check
    // and one fail on the catalog. One simple query runs as one transaction, so the lock holds to its end.
    await this.q.query(`SELECT pg_advisory_xact_lock(${INIT_LOCK_KEY});\n${SCHEMA}`);
  }

  async issue(grant: DecisionTokenGrant, now: number): Promise<string> {
    const token = mintDecisionToken();
    await this.q.query(
      `INSERT INTO email_decision_tokens (token_hash, principal_sub, thread_id, interrupt_id, versions, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [hashDecisionToken(token), grant.principalSub, grant.threadId, grant.interruptId, JSON.stringify(grant.versions), grant.expiresAt, now],
    );
    return token;
  }

  async find(token: string): Promise<DecisionTokenRecord | undefined> {
    const { rows } = await this.q.query<Row>("SELECT * FROM email_decision_tokens WHERE token_hash = $1", [hashDecisionToken(token)]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async consume(token: string, now: number): Promise<ConsumeResult> {
    const { rows } = await this.q.query<Row>(
      `UPDATE email_decision_tokens SET used_at = $1
       WHERE token_hash = $2 AND used_at IS NULL AND closed_at IS NULL AND expires_at > $1
       RETURNING *`,
      [now, hashDecisionToken(token)],
    );
    if (rows[0]) return { ok: true, record: fromRow(rows[0]) };
    return refusedConsume(await this.find(token), now);
  }

  async release(token: string, usedAt: number): Promise<void> {
    await this.q.query("UPDATE email_decision_tokens SET used_at = NULL WHERE token_hash = $1 AND used_at = $2", [hashDecisionToken(token), usedAt]);
  }

  async closeInterrupt(interruptId: string, now: number): Promise<number> {
    const r = await this.q.query("UPDATE email_decision_tokens SET closed_at = $1 WHERE interrupt_id = $2 AND closed_at IS NULL AND used_at IS NULL", [now, interruptId]);
    return r.rowCount ?? 0;
  }

  async discard(token: string): Promise<void> {
    await this.q.query("DELETE FROM email_decision_tokens WHERE token_hash = $1", [hashDecisionToken(token)]);
  }

  async prune(before: number): Promise<number> {
    const r = await this.q.query("DELETE FROM email_decision_tokens WHERE COALESCE(used_at, closed_at, expires_at) < $1", [before]);
    return r.rowCount ?? 0;
  }
}

const ms = (v: string | null): number | null => (v === null ? null : Number(v));

function fromRow(r: Row): DecisionTokenRecord {
  return {
    tokenHash: r.token_hash,
    principalSub: r.principal_sub,
    threadId: r.thread_id,
    interruptId: r.interrupt_id,
    versions: r.versions,
    expiresAt: Number(r.expires_at),
    createdAt: Number(r.created_at),
    usedAt: ms(r.used_at),
    closedAt: ms(r.closed_at),
  };
}
