import { randomUUID } from "node:crypto";
import type { ReplicaStore, ThreadRow } from "../types.js";
import { changedOne, type Queryable } from "./queryable.js";

/** The database's clock in ms: every replica's lease is read against the same clock. */
const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * Replica leases in PostgreSQL. Each process renews a row `(replica_id, lease_expires_at)`; a
 * thread `running` under another replica whose lease has run out (or under none) was left by a
 * process that is gone, and a survivor adopts it with a compare-and-set on holder and replica.
 * Leases are set and read on the database's clock, not the callers' (`now` is ignored, and so is an injected `Clock`): replicas
 * whose clocks disagree by more than a lease would otherwise adopt each other's live runs.
 */
export class PgReplicaStore implements ReplicaStore {
  /** New at every start: a restarted process never mistakes a dead predecessor's threads for its own. */
  readonly id: string = randomUUID();
  readonly shared = true;

  constructor(private readonly q: Queryable) {}

  async heartbeat(_now: number, leaseMs: number): Promise<void> {
    await this.q.query(
      `INSERT INTO replicas (replica_id, lease_expires_at) VALUES ($1, ${DB_NOW} + $2)
       ON CONFLICT (replica_id) DO UPDATE SET lease_expires_at = EXCLUDED.lease_expires_at`,
      [this.id, leaseMs],
    );
  }

  async listOrphaned(): Promise<ThreadRow[]> {
    // Never this replica's own: its runs are alive while it asks, whatever its lease says.
    const { rows } = await this.q.query<ThreadRow>(
      `SELECT t.* FROM threads t WHERE t.status = 'running' AND t.replica_id IS DISTINCT FROM $1 AND (t.replica_id IS NULL OR NOT EXISTS (
         SELECT 1 FROM replicas r WHERE r.replica_id = t.replica_id AND r.lease_expires_at > ${DB_NOW}))`,
      [this.id],
    );
    return rows;
  }

  async adopt(threadId: string, holderId: string, fromReplica: string | null): Promise<boolean> {
    // IS NOT DISTINCT FROM: a NULL replica (a row from before replicas) matches a NULL `fromReplica`.
    const r = await this.q.query(
      // The lease is read again here, not trusted from the list: the replica may have renewed since.
      `UPDATE threads SET replica_id = $1
       WHERE thread_id = $2 AND status = 'running' AND holder_id = $3 AND replica_id IS NOT DISTINCT FROM $4::text
         AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.replica_id = $4::text AND r.lease_expires_at > ${DB_NOW})`,
      [this.id, threadId, holderId, fromReplica],
    );
    return changedOne(r);
  }

  async retire(): Promise<void> {
    await this.q.query("DELETE FROM replicas WHERE replica_id = $1", [this.id]);
  }
}
