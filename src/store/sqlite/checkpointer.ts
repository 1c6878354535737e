import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  DeltaChannelHistory,
  PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { Statement } from "better-sqlite3";
import type { ConnectionLock } from "./connection-lock.js";
import type { Db } from "./database.js";
import type { SqliteConn } from "./sqlite-conn.js";

interface ChainRow {
  checkpoint_id: string;
  depth: number;
  has_seed: number;
}

interface WriteRow {
  checkpoint_id: string;
  task_id: string;
  channel: string;
  type: string | null;
  value: Buffer | string | null;
}

/**
 * SqliteSaver prepares its INSERT statements again on every `put`/`putWrites` (each step); this
 * hands it the same compiled statement each time. Only INSERTs: a cached SELECT could be asked to
 * iterate twice at once, which better-sqlite3 refuses.
 */
function withInsertCache(db: Db): Db {
  const cache = new Map<string, Statement>();
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          if (!/^\s*INSERT/i.test(sql)) return target.prepare(sql);
          let stmt = cache.get(sql);
          if (!stmt) cache.set(sql, (stmt = target.prepare(sql)));
          return stmt;
        };
      }
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * LangGraph's SQLite checkpointer on tollgate's own connection, with four changes (the third is
 * `withInsertCache` above; the fourth: each call holds the connection's lock, since it awaits
 * between its statements and a transaction opened meanwhile would take them in):
 * - its tables exist from start-up (SqliteSaver creates them at first use);
 * - rebuilding a DeltaChannel (the thread's messages) takes two queries instead of one `getTuple`
 *   per ancestor checkpoint: the base walk loaded and deserialized every ancestor in turn, the
 *   largest cost of a run on a long thread.
 */
export class TollgateSaver extends SqliteSaver {
  private readonly chainQuery: Statement<{ t: string; ns: string; start: string; path: string }, ChainRow>;
  private readonly writesQuery: Statement<{ t: string; ns: string; ch: string; ids: string }, WriteRow>;
  private readonly parentQuery: Statement<[string, string, string], { parent: string | null }>;
  private readonly latestParentQuery: Statement<[string, string], { parent: string | null }>;

  private readonly lock: ConnectionLock;

  /** `serde`: how values are stored (the store's scrubbing serializer); LangGraph's own by default. */
  constructor(conn: SqliteConn, serde?: SerializerProtocol) {
    const { db } = conn;
    super(withInsertCache(db), serde);
    this.lock = conn.lock;
    this.setup();
    // Walks parent links from `start`, stopping at the first checkpoint that stores the channel.
    this.chainQuery = db.prepare(`
      WITH RECURSIVE chain(checkpoint_id, parent_id, depth, has_seed) AS (
        SELECT checkpoint_id, parent_checkpoint_id, 0, json_type(CAST(checkpoint AS TEXT), @path) IS NOT NULL
        FROM checkpoints WHERE thread_id = @t AND checkpoint_ns = @ns AND checkpoint_id = @start AND type = 'json'
        UNION ALL
        SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, json_type(CAST(c.checkpoint AS TEXT), @path) IS NOT NULL
        FROM checkpoints c JOIN chain ON c.thread_id = @t AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.parent_id
        WHERE chain.has_seed = 0 AND c.type = 'json'
      )
      SELECT checkpoint_id, depth, has_seed FROM chain ORDER BY depth`);
    this.writesQuery = db.prepare(`
      SELECT checkpoint_id, task_id, channel, type, CAST(value AS TEXT) AS value FROM writes
      WHERE thread_id = @t AND checkpoint_ns = @ns AND channel = @ch
        AND checkpoint_id IN (SELECT value FROM json_each(@ids))
      ORDER BY checkpoint_id, task_id, idx`);
    this.parentQuery = db.prepare(
      "SELECT parent_checkpoint_id AS parent FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
    );
    this.latestParentQuery = db.prepare(
      "SELECT parent_checkpoint_id AS parent FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
    );
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.lock.hold(() => super.getTuple(config));
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    // Read whole under the lock: a consumer that awaits between items must not hold it.
    const all = await this.lock.hold(async () => {
      const out: CheckpointTuple[] = [];
      for await (const t of super.list(config, options)) out.push(t);
      return out;
    });
    yield* all;
  }

  override put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    return this.lock.hold(() => super.put(config, checkpoint, metadata));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    return this.lock.hold(() => super.putWrites(config, writes, taskId));
  }

  override deleteThread(threadId: string): Promise<void> {
    return this.lock.hold(() => super.deleteThread(threadId));
  }

  /** Same result as the base class's walk (a test holds it to that), in two queries per channel. */
  override getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Record<string, DeltaChannelHistory>> {
    return this.lock.hold(() => this.deltaChannelHistory(options));
  }

  private async deltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { thread_id: t, checkpoint_ns: ns = "", checkpoint_id: id } = (options.config.configurable ?? {}) as Record<string, string>;
    const parent = (id ? this.parentQuery.get(t!, ns, id) : this.latestParentQuery.get(t!, ns))?.parent;
    const result: Record<string, DeltaChannelHistory> = {};
    for (const ch of options.channels) {
      if (!parent) {
        result[ch] = { writes: [] };
        continue;
      }
      const chain = this.chainQuery.all({ t: t!, ns, start: parent, path: `$.channel_values.${JSON.stringify(ch)}` });
      // A chain that ends before the root without a seed means a checkpoint we cannot read here
      // (not stored as JSON): let the base class walk it.
      const last = chain.at(-1);
      if (!last) return super.getDeltaChannelHistory(options);
      if (!last.has_seed && this.parentQuery.get(t!, ns, last.checkpoint_id)?.parent) {
        return super.getDeltaChannelHistory(options);
      }
      const depthOf = new Map(chain.map((r) => [r.checkpoint_id, r.depth]));
      const rows = this.writesQuery.all({ t: t!, ns, ch, ids: JSON.stringify([...depthOf.keys()]) });
      // Oldest checkpoint first; within one, in stored order (task, idx), as the base walk gives.
      rows.sort((a, b) => depthOf.get(b.checkpoint_id)! - depthOf.get(a.checkpoint_id)!);
      const writes: CheckpointPendingWrite[] = [];
      for (const w of rows) writes.push([w.task_id, w.channel, await this.serde.loadsTyped(w.type ?? "json", w.value ?? "")]);
      const entry: DeltaChannelHistory = { writes };
      if (last.has_seed) {
        const seedTuple = await this.getTuple({ configurable: { thread_id: t, checkpoint_ns: ns, checkpoint_id: last.checkpoint_id } });
        entry.seed = seedTuple!.checkpoint.channel_values[ch];
      }
      result[ch] = entry;
    }
    return result;
  }
}
