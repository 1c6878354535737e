import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, DeltaChannel, END, type Messages, messagesDeltaReducer, START, StateGraph } from "@langchain/langgraph";
import { BaseCheckpointSaver, isDeltaSnapshot, MemorySaver, TASKS } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { deltaChannelHistoryTests, specTest } from "@langchain/langgraph-checkpoint-validation";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { CHECKPOINTER_LOCK_KEY, TollgatePostgresSaver } from "../../../src/store/postgres/checkpointer.js";
import { createPgPool } from "../../../src/store/postgres/pg-pool.js";
import { assertPostgresAvailable, type PgCluster, postgresAvailable, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

const avail = postgresAvailable();
const skip = skipPostgresSuite("postgres-checkpointer", avail);

let cluster: PgCluster | undefined;
const pools: pg.Pool[] = [];
beforeAll(async () => {
  if (skip) return;
  assertPostgresAvailable(avail);
  cluster = await startPostgres();
});
afterAll(async () => {
  await Promise.all(pools.splice(0).map((p) => (p.ended ? undefined : p.end())));
  await cluster?.stop();
});

/** A pool on a fresh, empty database of the file's cluster (closed in afterAll). */
async function freshPool(): Promise<pg.Pool> {
  const pool = createPgPool(await cluster!.createDatabase());
  pools.push(pool);
  return pool;
}

/** Every call of the base walk, ours falling back included. */
const baseWalk = vi.spyOn(BaseCheckpointSaver.prototype, "getDeltaChannelHistory");

/**
 * Our history for `config` must be exactly what LangGraph's own ancestor walk returns: same
 * writes in the same order, same seed, same classes. Returns ours, and whether it took the fast
 * path (no call of the base walk) in how many queries.
 */
async function compare(saver: TollgatePostgresSaver, pool: pg.Pool, config: RunnableConfig, channels: string[]) {
  const walksBefore = baseWalk.mock.calls.length;
  const query = vi.spyOn(pool, "query");
  const ours = await saver.getDeltaChannelHistory({ config, channels });
  const queries = query.mock.calls.length;
  query.mockRestore();
  const fellBack = baseWalk.mock.calls.length > walksBefore;
  const base = await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, { config, channels });
  expect(JSON.stringify(ours)).toBe(JSON.stringify(base));
  expect(ours).toStrictEqual(base);
  for (const ch of Object.keys(base)) expect(isDeltaSnapshot(ours[ch]!.seed)).toBe(isDeltaSnapshot(base[ch]!.seed));
  return { ours, fellBack, queries };
}

/**
 * Two delta channels with different snapshot intervals (so walks end at snapshots as well as at
 * the root), a plain channel stored at every step, and two nodes writing in the same superstep
 * (their writes must come back in the saver's task order).
 */
function buildGraph(checkpointer: BaseCheckpointSaver, snapshotEvery = { messages: 4, notes: 3 }) {
  const State = Annotation.Root({
    messages: new DeltaChannel<BaseMessage[], Messages>(messagesDeltaReducer, { snapshotFrequency: snapshotEvery.messages }),
    notes: new DeltaChannel<string[], string>((state, writes) => [...state, ...writes], {
      snapshotFrequency: snapshotEvery.notes,
      initialValueFactory: () => [],
    }),
    count: Annotation<number>,
  });
  let n = 0;
  return new StateGraph(State)
    .addNode("reply", (s) => ({ messages: [new AIMessage({ id: `a${n}`, content: `reply ${n++}` })], count: (s.count ?? 0) + 1 }))
    .addNode("left", () => ({ messages: [new AIMessage({ id: `l${n}`, content: `left ${n++}` })], notes: `left ${n}` }))
    .addNode("right", () => ({ notes: `right ${n++}` }))
    .addNode("again", () => ({ messages: [new AIMessage({ id: `b${n}`, content: `again ${n++}` })] }))
    .addEdge(START, "reply")
    .addEdge("reply", "left")
    .addEdge("reply", "right")
    .addEdge(["left", "right"], "again")
    .addEdge("again", END)
    .compile({ checkpointer });
}

const hi = (i: number | string) => ({ messages: [new HumanMessage({ id: `h${i}`, content: `hi ${i}` })] });

async function allConfigs(saver: BaseCheckpointSaver, thread: string): Promise<RunnableConfig[]> {
  const configs: RunnableConfig[] = [];
  for await (const tuple of saver.list({ configurable: { thread_id: thread } })) configs.push(tuple.config);
  return configs;
}

describe.skipIf(skip)("TollgatePostgresSaver.getDeltaChannelHistory", () => {
  let pool: pg.Pool;
  let saver: TollgatePostgresSaver;
  beforeEach(async () => {
    pool = await freshPool();
    saver = await TollgatePostgresSaver.create(pool);
  });

  it("rebuilds delta channels exactly as LangGraph's own ancestor walk does, at every checkpoint of two forked threads", async () => {
    const graph = buildGraph(saver);
    const h = { configurable: { thread_id: "h" } };
    const k = { configurable: { thread_id: "k" } };
    // Two threads written in turn, so each walk must stay on its own thread's rows.
    for (let i = 0; i < 14; i++) {
      await graph.invoke(hi(i), h);
      await graph.invoke(hi(`k${i}`), k);
      if (i % 5 === 0) await graph.updateState(h, { messages: [new AIMessage({ id: `u${i}`, content: "edited in" })] }, "again");
    }
    // Forks: a new run from an old checkpoint, and an edit of an old one, each continued for a while.
    const old = await allConfigs(saver, "h");
    await graph.invoke(hi("fork-a"), old[20]!);
    for (let i = 0; i < 4; i++) await graph.invoke(hi(`after-a${i}`), h);
    await graph.updateState(old[45]!, { messages: [new AIMessage({ id: "fork-b", content: "edited in the past" })] }, "again");
    for (let i = 0; i < 3; i++) await graph.invoke(hi(`after-b${i}`), h);

    let checked = 0;
    let seeded = 0;
    let rooted = 0;
    for (const thread of ["h", "k"]) {
      const latest = { configurable: { thread_id: thread } };
      for (const channels of [["messages"], ["notes"], ["count"]]) expect((await compare(saver, pool, latest, channels)).fellBack).toBe(false);
      // All three channels in one call: each channel's walk ends at its own seed.
      for (const c of [latest, ...(await allConfigs(saver, thread))]) {
        const { ours, fellBack, queries } = await compare(saver, pool, c, ["messages", "notes", "count"]);
        expect(fellBack).toBe(false);
        expect(queries).toBe(1);
        checked++;
        if (ours.messages!.seed !== undefined) seeded++;
        else rooted++;
      }
    }
    expect(checked).toBeGreaterThan(150);
    expect(seeded).toBeGreaterThan(20); // walks that stopped at a snapshot
    expect(rooted).toBeGreaterThan(5); // and walks that reached the root
    // The state read back through the override is the conversation as written on the last branch.
    const state = await graph.getState(h);
    const ids = (state.values.messages as BaseMessage[]).map((m) => m.id);
    expect(ids.at(-1)).toMatch(/^b/);
    expect(ids).toContain("fork-b");
    expect(ids).not.toContain("h13"); // the fork left the later original turns behind
    expect(state.values.notes.length).toBeGreaterThan(0);
  });

  it("agrees with the base walk on the edges: unknown thread or checkpoint, no channels, repeated and unknown channels, a missing ancestor", async () => {
    // No snapshots: every walk goes to the root, or to the hole made below.
    const graph = buildGraph(saver, { messages: 10_000, notes: 10_000 });
    const t = { configurable: { thread_id: "t" } };
    for (let i = 0; i < 6; i++) await graph.invoke(hi(i), t);
    const configs = await allConfigs(saver, "t");

    for (const [config, channels] of [
      [{ configurable: { thread_id: "nobody" } }, ["messages"]],
      [{ configurable: { thread_id: "t", checkpoint_id: "1f000000-0000-6000-8000-000000000000" } }, ["messages"]],
      [{ configurable: { thread_id: "t", checkpoint_ns: "elsewhere" } }, ["messages"]],
      [t, []],
      [t, ["messages", "messages"]],
      [t, ["never-written"]],
      [configs.at(-1)!, ["messages"]], // the root: nothing before it
    ] as [RunnableConfig, string[]][]) {
      const { fellBack } = await compare(saver, pool, config, channels);
      expect(fellBack).toBe(false);
    }
    expect((await saver.getDeltaChannelHistory({ config: { configurable: { thread_id: "nobody" } }, channels: ["messages"] })).messages).toEqual({ writes: [] });

    // A checkpoint gone from the middle of the chain ends the walk there, as it ends the base walk.
    const tipHistory = await saver.getDeltaChannelHistory({ config: t, channels: ["messages"] });
    const gone = configs[6]!.configurable!.checkpoint_id as string;
    await pool.query("DELETE FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = $1", [gone]);
    const { ours, fellBack } = await compare(saver, pool, t, ["messages"]);
    expect(fellBack).toBe(false);
    expect(tipHistory.messages!.seed).toBeUndefined();
    expect(ours.messages!.seed).toBeUndefined();
    expect(ours.messages!.writes.length).toBeGreaterThan(0);
    expect(ours.messages!.writes.length).toBeLessThan(tipHistory.messages!.writes.length);
    expect(ours.messages!.writes).toEqual(tipHistory.messages!.writes.slice(-ours.messages!.writes.length)); // the newest ones
  });

  it("falls back to the base walk where the fast path cannot be sure: the tasks channel, values stored inline in the checkpoint", async () => {
    const graph = buildGraph(saver);
    const t = { configurable: { thread_id: "t" } };
    for (let i = 0; i < 3; i++) await graph.invoke(hi(i), t);
    expect((await compare(saver, pool, t, [TASKS, "messages"])).fellBack).toBe(true);

    // A layout with channel_values inside the checkpoint JSON (another writer, a later version):
    // this saver's getTuple ignores them, but the fast path does not presume so.
    const configs = await allConfigs(saver, "t");
    await pool.query(
      `UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{channel_values}', '{"messages": []}') WHERE thread_id = 't' AND checkpoint_id = $1`,
      [configs[2]!.configurable!.checkpoint_id],
    );
    expect((await compare(saver, pool, t, ["messages"])).fellBack).toBe(true);
    expect((await compare(saver, pool, configs[4]!, ["messages"])).fellBack).toBe(false); // its walk stops before that one
  });
});

describe.skipIf(skip)("TollgatePostgresSaver.getNextVersion", () => {
  it("mints increasing versions, unique per branch, whose text is the same in JSON and in checkpoint_blobs", async () => {
    const pool = await freshPool();
    const saver = await TollgatePostgresSaver.create(pool);
    let v: number | undefined;
    for (let i = 1; i <= 50; i++) {
      const next = saver.getNextVersion(v);
      expect(Math.floor(next)).toBe(i);
      if (v !== undefined) expect(next).toBeGreaterThan(v);
      // getTuple joins the checkpoint JSON's version (as PostgreSQL prints it) to the blob's
      // version column (as JS printed it): they must be the same text.
      const { rows } = await pool.query("SELECT ($1::jsonb -> 'channel_versions' ->> 'ch') AS text", [JSON.stringify({ channel_versions: { ch: next } })]);
      expect(rows[0].text).toBe(next.toString());
      v = next;
    }
    const siblings = new Set(Array.from({ length: 1000 }, () => saver.getNextVersion(7.5)));
    expect(siblings.size).toBe(1000);
    expect(saver.getNextVersion(2 ** 52)).toBe(2 ** 52 + 1); // no room left for a fraction: still correct
  });

  it("a fork keeps its own values, never its sibling's: the same states as LangGraph's MemorySaver", async () => {
    async function script(checkpointer: BaseCheckpointSaver) {
      const graph = buildGraph(checkpointer);
      const t = { configurable: { thread_id: "t" } };
      for (let i = 0; i < 5; i++) await graph.invoke(hi(i), t);
      const old = await allConfigs(checkpointer, "t");
      const states: unknown[] = [];
      const seen = async () => {
        const { messages, notes, count } = (await graph.getState(t)).values as { messages: BaseMessage[]; notes: string[]; count: number };
        // Notes as a set: PostgresSaver (like SqliteSaver) replays one step's parallel writes in
        // task-id order, not the task-path order they ran in, so "left"/"right" may swap.
        states.push({ messages: JSON.stringify(messages), notes: [...notes].sort(), count });
      };
      // An edit of an old checkpoint, continued: its versions equal those the original branch reached.
      await graph.updateState(old[9]!, { messages: [new AIMessage({ id: "edit", content: "edited" })], count: 100 }, "again");
      await graph.invoke(hi("after-edit"), t);
      await seen();
      // A second run from an even older checkpoint.
      await graph.invoke(hi("rerun"), old[14]!);
      await graph.invoke(hi("after-rerun"), t);
      await seen();
      return states;
    }
    const ours = await script(await TollgatePostgresSaver.create(await freshPool()));
    expect(JSON.stringify(ours)).toContain("edit");
    expect(ours).toEqual(await script(new MemorySaver()));
  });
});

describe.skipIf(skip)("TollgatePostgresSaver.create", () => {
  it("three replicas starting at once on one empty database all come up, and each migration runs once", async () => {
    const url = await cluster!.createDatabase();
    const replicaPools = [1, 2, 3].map(() => createPgPool(url, { max: 1 })); // max 1: setup must not need a second connection
    pools.push(...replicaPools);
    const savers = await Promise.all(replicaPools.map((p) => TollgatePostgresSaver.create(p)));
    expect(savers).toHaveLength(3);
    const { rows } = await replicaPools[0]!.query("SELECT v FROM checkpoint_migrations ORDER BY v");
    expect(rows.map((r) => r.v)).toEqual([0, 1, 2, 3, 4]);
    // each works, and sees the others' writes
    const graph = buildGraph(savers[0]!);
    await graph.invoke(hi(0), { configurable: { thread_id: "shared" } });
    const state = await buildGraph(savers[2]!).getState({ configurable: { thread_id: "shared" } });
    expect((state.values.messages as BaseMessage[]).map((m) => m.id)).toEqual(["h0", "a0", "l1", "b3"]);
    // and the lock is not left held
    const held = await replicaPools[1]!.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1", [CHECKPOINTER_LOCK_KEY]);
    expect(held.rows[0].n).toBe(0);
  });

  it("waits for a migration another process holds the lock for", async () => {
    const url = await cluster!.createDatabase();
    const [holder, waiter] = [createPgPool(url), createPgPool(url)];
    pools.push(holder, waiter);
    const lock = await holder.connect();
    await lock.query("SELECT pg_advisory_lock($1::bigint)", [CHECKPOINTER_LOCK_KEY]);
    let created = false;
    const creating = TollgatePostgresSaver.create(waiter).then(() => (created = true));
    // Once its lock request shows up waiting in pg_locks, the waiter is provably blocked on us.
    for (;;) {
      const { rows } = await holder.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      if (rows[0].n > 0) break;
    }
    expect(created).toBe(false);
    expect((await holder.query("SELECT to_regclass('checkpoints') AS t")).rows[0].t).toBeNull();
    await lock.query("SELECT pg_advisory_unlock($1::bigint)", [CHECKPOINTER_LOCK_KEY]);
    lock.release();
    await creating;
    expect((await holder.query("SELECT to_regclass('checkpoints') AS t")).rows[0].t).toBe("checkpoints");
  });
});

/**
 * LangGraph's own conformance suite for checkpointers (put, putWrites, getTuple, list,
 * deleteThread, and the opt-in getDeltaChannelHistory scenarios), on a fresh database per
 * checkpointer it asks for. It calls vitest's globals, which this project does not turn on.
 */
describe.skipIf(skip)("LangGraph checkpoint-validation spec", () => {
  Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });
  const initializer = {
    checkpointerName: "TollgatePostgresSaver",
    createCheckpointer: async () => TollgatePostgresSaver.create(await freshPool()),
    destroyCheckpointer: (saver: TollgatePostgresSaver) => saver.end(), // ends its pool
  };
  specTest(initializer);
  deltaChannelHistoryTests(initializer);
});

it("compares with the walk PostgresSaver really runs: the base class's, not an override", () => {
  expect(PostgresSaver.prototype.getDeltaChannelHistory).toBe(BaseCheckpointSaver.prototype.getDeltaChannelHistory);
});
