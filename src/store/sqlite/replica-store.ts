import { randomUUID } from "node:crypto";
import type { ReplicaStore, ThreadRow } from "../types.js";
import type { SqliteConn } from "./sqlite-conn.js";

/**
 * Leases in SQLite, where one process owns the file (by contract): this process is the only live
 * replica, so a thread `running` under any other replica id was left by a process that is gone,
 * and is taken over at once. No lease is written (a write at start could meet LangGraph Studio
 * holding the file's lock).
 */
export class SqliteReplicaStore implements ReplicaStore {
  readonly id = randomUUID();
  readonly shared = false;
  private readonly q;

  constructor(private readonly conn: SqliteConn) {
    const { db } = conn;
    this.q = {
      orphaned: db.prepare<[string], ThreadRow>(
        "SELECT * FROM threads WHERE status = 'running' AND (replica_id IS NULL OR replica_id <> ?)",
      ),
      adopt: db.prepare(
        "UPDATE threads SET replica_id = ? WHERE thread_id = ? AND status = 'running' AND holder_id = ? AND replica_id IS ?",
      ),
    };
  }

  async heartbeat(): Promise<void> {}

  listOrphaned(): Promise<ThreadRow[]> {
    return this.conn.lock.gate(() => this.q.orphaned.all(this.id));
  }

  adopt(threadId: string, holderId: string, fromReplica: string | null): Promise<boolean> {
    return this.conn.lock.gate(() => this.q.adopt.run(this.id, threadId, holderId, fromReplica).changes === 1);
  }

  async retire(): Promise<void> {}
}
