import type { Database } from "better-sqlite3";
import { LocalBus } from "../local-bus.js";
import { ScrubbingSerializer } from "../scrubbing-serializer.js";
import { NO_SCRUB, type SecretFilter } from "../stored-secrets.js";
import type { Store, StoreOps } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import { SqliteAuditStore } from "./audit-store.js";
import { TollgateSaver } from "./checkpointer.js";
import { ConnectionLock } from "./connection-lock.js";
import { openDatabase } from "./database.js";
import { SqliteInterruptStore } from "./interrupt-store.js";
import { SqliteLedger } from "./ledger-store.js";
import { SqliteReplicaStore } from "./replica-store.js";
import { SqliteRunStore } from "./run-store.js";
import { SqliteThreadStore } from "./thread-store.js";
import { EnqueueSignal } from "../webhook-outbox.js";
import { SqliteWebhookOutboxStore } from "./webhook-outbox-store.js";

/** The default store: one SQLite file, `$DATA_DIR/tollgate.db`, one process. */
export interface SqliteStore extends Store {
  readonly kind: "sqlite";
  /** The connection, for the demo tools' tables in the same file. */
  readonly db: Database;
  /**
   * Runs synchronous statements on `db` when no transaction of the store's holds the connection
   * (else they would become part of it): how anything but the store writes to the file.
   */
  gate<T>(work: () => T): Promise<T>;
}

/** `clock`: the time rows are stamped with (created, updated, decided, started, settled). */
export interface SqliteStoreOptions {
  /** Where "now" comes from for the rows' timestamps; the system clock when not given. */
  clock?: Clock;
  /** Scrubs secrets from what is stored: checkpoints, checkpoint writes, ledger outcomes. */
  scrub?: SecretFilter;
}

export async function openSqliteStore(dataDir: string, { clock = systemClock, scrub = NO_SCRUB }: SqliteStoreOptions = {}): Promise<SqliteStore> {
  const db = openDatabase(dataDir);
  const conn = { db, lock: new ConnectionLock() };
  const probe = db.prepare("SELECT count(*) FROM threads");
  // Statements, as better-sqlite3's own transactions use (crash tests hook every statement run).
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const bus = new LocalBus();
  const audit = new SqliteAuditStore(conn, clock);
  const replicas = new SqliteReplicaStore(conn);
  // Webhooks enqueued in a transaction are announced once it commits.
  const signal = new EnqueueSignal();
  let enqueuedInTx = false;
  const ops: StoreOps = {
    threads: new SqliteThreadStore(conn, replicas.id, clock),
    interrupts: new SqliteInterruptStore(conn, (v) => audit.hash(v), clock),
    runs: new SqliteRunStore(conn, bus, clock),
    audit,
    webhooks: new SqliteWebhookOutboxStore(conn, signal, () => (db.inTransaction ? (enqueuedInTx = true) : signal.fire())),
  };
  return {
    kind: "sqlite",
    db,
    gate: (work) => conn.lock.gate(work),
    ...ops,
    ledger: new SqliteLedger(conn, { replicaId: replicas.id, clock, scrub }),
    // Same connection: checkpoints and tollgate's tables share the file and its WAL.
    checkpointer: new TollgateSaver(conn, new ScrubbingSerializer(scrub)),
    replicas,
    bus,
    async transaction<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T> {
      let enqueued = false;
      const result = await conn.lock.hold(async () => {
        if (db.inTransaction) return fn(ops); // within one already: part of it
        begin.run();
        enqueuedInTx = false;
        try {
          const result = await fn(ops);
          commit.run();
          enqueued = enqueuedInTx;
          return result;
        } catch (err) {
          if (db.inTransaction) rollback.run();
          throw err;
        }
      });
      // Outside the lock: whoever hears it works in its own context, not in this transaction's.
      if (enqueued) signal.fire();
      return result;
    },
    readable: () =>
      conn.lock.gate(() => {
        try {
          probe.get();
          return true;
        } catch {
          return false; // what failed is the answer; /healthz reports it
        }
      }),
    async close() {
      db.close();
    },
  };
}
