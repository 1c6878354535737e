import { randomInt } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type CheckpointPendingWrite, type DeltaChannelHistory, type SerializerProtocol, TASKS } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";

/** The advisory lock key that serialises the checkpointer's migrations (ASCII "tgck"; tollgate's own tables use "tgsc"). */
export const CHECKPOINTER_LOCK_KEY = 0x7467636b;

/** PostgresSaver's tables live in its default schema; its SQL names them schema-qualified, so does ours. */
const T = {
  checkpoints: `"public".checkpoints`,
  blobs: `"public".checkpoint_blobs`,
  writes: `"public".checkpoint_writes`,
};

/**
 * Where the walk starts: the parent of the asked-for checkpoint, or of the thread's latest one
 * when none is named (PostgresSaver.getTuple's choice, same ORDER BY).
 */
const START_BY_ID = `SELECT parent_checkpoint_id AS id FROM ${T.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $4`;
const START_LATEST = `SELECT parent_checkpoint_id AS id FROM ${T.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1`;

/**
 * Does checkpoint `c` store channel `chain.ch`? PostgresSaver keeps no values in the checkpoint's
 * JSON: getTuple loads `channel_values` from checkpoint_blobs, one row per channel at the version
 * in `channel_versions`, and skips rows of type 'empty' (a channel that had no value then). A
 * DeltaChannel writes such an 'empty' row at every version between two snapshots, and a checkpoint
 * that did not bump the channel points at an older row, written by an ancestor: what counts is the
 * row at the checkpoint's version, whoever wrote it.
 */
const STORES = (c: string, ch: string) => `EXISTS (
  SELECT 1 FROM ${T.blobs} b WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = ${ch}
    AND b.version = ${c}.checkpoint -> 'channel_versions' ->> ${ch} AND b.type <> 'empty')`;

/**
 * One round trip for all channels. `chain` walks parent links from the start, per channel, and
 * stops at the first checkpoint that stores it (the seed) or that carries inline `channel_values`
 * (another layout than this saver writes: the caller falls back to the base walk). A missing
 * parent ends the chain, as it ends the base walk. Then every write to the channel on the chain,
 * oldest checkpoint first and within one by (task_id, idx) — the ORDER BY getTuple's
 * `pending_writes` uses, in the same collation — and for the chain's end its seed blob.
 */
const historyQuery = (start: string) => `
WITH RECURSIVE start AS (${start}),
chain(ch, checkpoint_id, parent_id, depth, version, inline, has_seed) AS (
  SELECT chs.ch, c.checkpoint_id, c.parent_checkpoint_id, 0, c.checkpoint -> 'channel_versions' ->> chs.ch,
         c.checkpoint ? 'channel_values', ${STORES("c", "chs.ch")}
  FROM start
  JOIN ${T.checkpoints} c ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = start.id
  CROSS JOIN unnest($3::text[]) AS chs(ch)
  UNION ALL
  SELECT chain.ch, c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, c.checkpoint -> 'channel_versions' ->> chain.ch,
         c.checkpoint ? 'channel_values', ${STORES("c", "chain.ch")}
  FROM chain
  JOIN ${T.checkpoints} c ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = chain.parent_id
  WHERE NOT chain.has_seed AND NOT chain.inline
)
SELECT chain.ch, chain.depth, 'write' AS kind, cw.task_id, cw.idx, cw.type, cw.blob
FROM chain
JOIN ${T.writes} cw ON cw.thread_id = $1 AND cw.checkpoint_ns = $2 AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = chain.ch
UNION ALL
SELECT chain.ch, chain.depth, CASE WHEN chain.inline THEN 'inline' ELSE 'seed' END, NULL, NULL, b.type, b.blob
FROM chain
LEFT JOIN ${T.blobs} b ON NOT chain.inline AND b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = chain.ch AND b.version = chain.version
WHERE chain.has_seed OR chain.inline
ORDER BY depth DESC, task_id, idx`;
const HISTORY_BY_ID = historyQuery(START_BY_ID);
const HISTORY_LATEST = historyQuery(START_LATEST);

interface HistoryRow {
  ch: string;
  depth: number;
  kind: "write" | "seed" | "inline";
  task_id: string | null;
  idx: number | null;
  type: string | null;
  blob: Buffer | null;
}

/**
 * LangGraph's PostgreSQL checkpointer with three changes:
 * - `create()` migrates under an advisory lock, so replicas starting together on one database do
 *   not run PostgresSaver's (not concurrency-safe) migrations at the same time;
 * - rebuilding a DeltaChannel (the thread's messages) takes one query instead of one `getTuple`
 *   per ancestor checkpoint, each loading and deserializing every channel of that checkpoint;
 * - channel versions are unique per branch, so a fork (an edit of an old checkpoint, a run from
 *   one) keeps its own values instead of reading its sibling's (see `getNextVersion`).
 */
export class TollgatePostgresSaver extends PostgresSaver {
  private readonly db: pg.Pool;

  /** Use `create()`: the tables must exist before the first call. */
  private constructor(pool: pg.Pool, serde?: SerializerProtocol) {
    super(pool, serde);
    this.db = pool;
  }

  /**
   * A saver on `pool` with its tables created or migrated (safe with other processes doing the
   * same). `serde`: how values are stored (the store's scrubbing serializer); LangGraph's own by default.
   */
  static async create(pool: pg.Pool, serde?: SerializerProtocol): Promise<TollgatePostgresSaver> {
    const saver = new TollgatePostgresSaver(pool, serde);
    await saver.setup();
    return saver;
  }

  /**
   * PostgresSaver.setup under `pg_advisory_lock(CHECKPOINTER_LOCK_KEY)`. Its migrations check the
   * version, then CREATE and INSERT: two processes at once both see "not migrated", and one fails
   * on a duplicate (catalog row or migration number). The lock is held on a connection of its own,
   * outside the pool, so setup's own connection never waits for it, whatever the pool's size.
   */
  override async setup(): Promise<void> {
    const lock = new pg.Client(this.db.options);
    lock.on("error", () => {}); // a dropped lock connection fails the query below, or frees the lock harmlessly
    await lock.connect();
    try {
      await lock.query("SELECT pg_advisory_lock($1::bigint)", [CHECKPOINTER_LOCK_KEY]);
      await super.setup();
    } finally {
      await lock.end().catch(() => {}); // ending the session releases the lock
    }
  }

  /**
   * Channel versions unique to their branch: the next whole number plus a random binary fraction
   * (6 → 7.3291015625). PostgresSaver (1.0.5) keeps the base class's 1, 2, 3…, and keys
   * checkpoint_blobs by (thread, ns, channel, version) with ON CONFLICT DO NOTHING: two branches
   * forked from one checkpoint reach the same version, the second branch's value is dropped, and
   * it then reads its sibling's (langgraphjs issue #1812; Python's saver mints unique versions).
   * Still a number, as LangGraph and callers type it, still increasing along a branch (floor + 1).
   * A dyadic fraction is exact in a double, and a number in [1, 2^53) prints without an exponent:
   * the version's text in the checkpoint JSON and in checkpoint_blobs is the same string.
   */
  override getNextVersion(current: number | undefined): number {
    const next = Math.floor(current ?? 0) + 1;
    // 53 bits of mantissa: whatever the whole part leaves, at most 30 bits of randomness.
    const bits = Math.max(0, Math.min(30, 52 - Math.ceil(Math.log2(next + 1))));
    return bits === 0 ? next : next + randomInt(1, 2 ** bits) / 2 ** bits;
  }

  /** Same result as the base class's walk (a test holds it to that), in one query. */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { channels } = options;
    if (channels.length === 0) return {};
    // getTuple rewrites the tasks channel of pre-v4 checkpoints (pending sends); only the walk knows.
    if (channels.includes(TASKS)) return super.getDeltaChannelHistory(options);
    const { thread_id, checkpoint_ns = "", checkpoint_id } = (options.config.configurable ?? {}) as Record<string, string | undefined>;
    const sql = checkpoint_id ? HISTORY_BY_ID : HISTORY_LATEST;
    // $4 only when the start names it: PostgreSQL refuses a parameter it cannot type (unused).
    const params = [thread_id, checkpoint_ns, [...new Set(channels)], ...(checkpoint_id ? [checkpoint_id] : [])];
    const { rows } = await this.db.query<HistoryRow>(sql, params);
    const writesByCh = new Map<string, HistoryRow[]>();
    const seedByCh = new Map<string, HistoryRow>();
    for (const row of rows) {
      // Values this saver's getTuple would read differently (inline) or fail on (no type): let it.
      if (row.kind === "inline" || row.type === null) return super.getDeltaChannelHistory(options);
      if (row.kind === "seed") seedByCh.set(row.ch, row);
      else (writesByCh.get(row.ch) ?? writesByCh.set(row.ch, []).get(row.ch)!).push(row);
    }
    const result: Record<string, DeltaChannelHistory> = {};
    for (const ch of channels) {
      const writes: CheckpointPendingWrite[] = [];
      for (const w of writesByCh.get(ch) ?? []) writes.push([w.task_id!, ch, await this.serde.loadsTyped(w.type!, w.blob!)]);
      const entry: DeltaChannelHistory = { writes };
      const seed = seedByCh.get(ch);
      if (seed) entry.seed = await this.serde.loadsTyped(seed.type!, seed.blob!);
      result[ch] = entry;
    }
    return result;
  }
}
