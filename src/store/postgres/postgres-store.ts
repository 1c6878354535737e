import type pg from "pg";
import { ScrubbingSerializer } from "../scrubbing-serializer.js";
import { NO_SCRUB, type SecretFilter } from "../stored-secrets.js";
import type { Store, StoreOps } from "../types.js";
import { type Clock, systemClock } from "../../clock.js";
import { PgAuditStore } from "./audit-store.js";
import { TollgatePostgresSaver } from "./checkpointer.js";
import { PgInterruptStore } from "./interrupt-store.js";
import { PgLedger } from "./ledger-store.js";
import { createPgPool } from "./pg-pool.js";
import { type Queryable, withTransaction } from "./queryable.js";
import { PgReplicaBus } from "./replica-bus.js";
import { PgReplicaStore } from "./replica-store.js";
import { PgRunStore } from "./run-store.js";
import { migrate } from "./schema.js";
import { PgThreadStore } from "./thread-store.js";
import { EnqueueSignal } from "../webhook-outbox.js";
import { PgWebhookOutboxStore } from "./webhook-outbox-store.js";

/** One PostgreSQL database (`DATABASE_URL`) shared by any number of tollgate replicas. */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  /** The pool every store runs on, for the demo tools' tables in the same database. */
  readonly pool: pg.Pool;
}

export interface PostgresStoreOptions {
  /** Most connections this replica opens (the listening connection comes on top). */
  poolMax?: number;
  /** Where what the store survives is reported: an idle connection's error, a lost listener. */
  onError?: (msg: string, err: unknown) => void;
  /**
   * The time rows are stamped with. Replica leases alone stay on the database's clock (see
   * `PgReplicaStore`): they are compared across machines.
   */
  clock?: Clock;
  /** Scrubs secrets from what is stored: checkpoints, checkpoint writes and blobs, ledger outcomes. */
  scrub?: SecretFilter;
}

/** How long `readable()` waits for `SELECT 1` before answering false. */
const READABLE_TIMEOUT_MS = 2_000;

/**
 * Opens the store on `url`: migrates (at start-up, under an advisory lock, see `migrate`), makes
 * the checkpointer, the replica bus and the stores. Rejects when the database cannot be reached
 * or migrated; nothing is left open then.
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const report = opts.onError;
  const clock = opts.clock ?? systemClock;
  const pool = createPgPool(url, { max: opts.poolMax, onError: report && ((err) => report("postgres: idle connection dropped", err)) });
  let bus: PgReplicaBus | undefined;
  try {
    await migrate(pool);
    const audit = await PgAuditStore.create(pool, clock);
    const scrub = opts.scrub ?? NO_SCRUB;
    const checkpointer = await TollgatePostgresSaver.create(pool, new ScrubbingSerializer(scrub));
    bus = await PgReplicaBus.open(pool, url, { onError: opts.onError });
    const replicas = new PgReplicaStore(pool);
    // Webhooks enqueued in a transaction are announced once it commits.
    const signal = new EnqueueSignal();
    // The stores a caller uses on `q`: the pool outside a transaction, its client inside one.
    const opsOn = (q: Queryable, enqueued: () => void = () => signal.fire()): StoreOps => ({
      threads: new PgThreadStore(q, replicas.id, clock),
      interrupts: new PgInterruptStore(q, (v) => audit.hash(v), clock),
      runs: new PgRunStore(q, clock),
      audit: audit.on(q),
      webhooks: new PgWebhookOutboxStore(q, signal, enqueued),
    });
    const openBus = bus;
    return {
      kind: "postgres",
      pool,
      ...opsOn(pool),
      ledger: new PgLedger(pool, { replicaId: replicas.id, clock, scrub }),
      checkpointer,
      replicas,
      bus: openBus,
      async transaction(fn) {
        let enqueued = false;
        const result = await withTransaction(pool, (client) => fn(opsOn(client, () => (enqueued = true))));
        if (enqueued) signal.fire();
        return result;
      },
      readable: () => readable(pool),
      async close() {
        await openBus.close();
        await pool.end();
      },
    };
  } catch (err) {
    await bus?.close();
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/** `SELECT 1` answered within `READABLE_TIMEOUT_MS`; false on any failure, never a rejection. */
async function readable(pool: pg.Pool): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READABLE_TIMEOUT_MS);
    timer.unref();
  });
  // A query still on its way when the timer wins settles later into nothing.
  const probe = pool.query("SELECT 1").then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}
