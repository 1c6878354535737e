import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PASS_TOKENS } from "../../../../src/ops/index.js";
import { EventPersister } from "../../../../src/runs/stream/event-persister.js";
import { RunLog } from "../../../../src/runs/stream/run-log.js";
import type { LoggedEvent, RunStore } from "../../../../src/store/index.js";
import { openSqliteStore, type SqliteStore } from "../../../../src/store/sqlite/index.js";

const token = (seq: number): LoggedEvent => ({ seq, type: "token", data: JSON.stringify({ text: `t${seq}` }) });
const seqs = (events: readonly LoggedEvent[]) => events.map((e) => e.seq);

/** A run store whose writes finish, or fail, when the test says: a write in flight, held open. */
function heldStore() {
  const writes: Array<{ batches: Map<string, LoggedEvent[]>; done: () => void; fail: (err: Error) => void }> = [];
  const runs = {
    appendBatches: (batches: ReadonlyMap<string, readonly LoggedEvent[]>) =>
      new Promise<void>((done, fail) => writes.push({ batches: new Map([...batches].map(([k, v]) => [k, [...v]])), done, fail })),
  } as unknown as RunStore;
  return { runs, writes };
}

describe("EventPersister", () => {
  let store: SqliteStore | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await store?.close();
    store = undefined;
  });

  it("with many runs streaming at once, tokens wait longer, so each row carries several of a run's tokens", async () => {
    vi.useFakeTimers();
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-persister-")));
    const persister = new EventPersister(store.runs, () => undefined);
    const runs = Array.from({ length: 100 }, (_, i) => `run-${i}`);
    const rows = () => store!.db.prepare<[], { n: number }>("SELECT count(*) AS n FROM run_event_batches").get()!.n;
    // A few runs: written after 20 ms.
    persister.enqueue(runs[0]!, token(0));
    await vi.advanceTimersByTimeAsync(20);
    expect(rows()).toBe(1);
    // A hundred runs, a token each every 20 ms: the first flush waits 20 ms and writes one row
    // per run; the next waits 100 ms (1 ms per run it wrote), five tokens a row.
    for (const r of runs.slice(1)) persister.enqueue(r, token(0));
    persister.enqueue(runs[0]!, token(1));
    await vi.advanceTimersByTimeAsync(20);
    expect(rows()).toBe(101);
    for (let t = 2; t < 7; t++) {
      for (const r of runs) persister.enqueue(r, token(r === runs[0] ? t : t - 1));
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(rows()).toBe(201);
    expect(persister.queued).toBe(0);
    expect(seqs(await store.runs.read(runs[1]!, -1))).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("a run's end takes only its own queue, after the write in flight that holds its earlier events", async () => {
    const { runs, writes } = heldStore();
    const persister = new EventPersister(runs, () => undefined);
    persister.enqueue("ending", token(0));
    persister.enqueue("other", token(0));
    void persister.flush(); // in flight: holds "ending"'s token 0
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    persister.enqueue("ending", token(1));
    persister.enqueue("other", token(1));
    let taken: LoggedEvent[] | undefined;
    void persister.take("ending").then((t) => (taken = t));
    await new Promise(setImmediate); // every microtask has run: still waiting for the write
    expect(taken).toBeUndefined(); // written after token 0, never before it
    writes[0]!.done();
    await vi.waitFor(() => expect(taken).toBeDefined());
    expect(seqs(taken!)).toEqual([1]);
    // "other"'s token 1 is left for a flush of its own.
    void persister.flush();
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    expect([...writes[1]!.batches]).toEqual([["other", [token(1)]]]);
  });

  it("a refused write in flight hands its events to the end that waited for it, in order", async () => {
    const { runs, writes } = heldStore();
    const persister = new EventPersister(runs, () => undefined);
    persister.enqueue("ending", token(0));
    void persister.flush();
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    persister.enqueue("ending", token(1));
    const taken = persister.take("ending");
    writes[0]!.fail(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }));
    expect(seqs(await taken)).toEqual([0, 1]);
  });

  it("an end the database refused gives its events back ahead of the queue, and the next flush writes them in order", async () => {
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-persister-")));
    const persister = new EventPersister(store.runs, () => undefined);
    persister.enqueue("r", token(0));
    persister.enqueue("r", token(1));
    const taken = await persister.take("r");
    persister.enqueue("r", token(2)); // a late one, queued meanwhile
    persister.giveBack("r", taken);
    expect(await persister.flush()).toBe(true);
    expect(seqs(await store.runs.read("r", -1))).toEqual([0, 1, 2]);
  });

  it("a run whose end the database refused keeps its queued tokens for the next write", async () => {
    store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-persister-")));
    const persister = new EventPersister(store.runs, () => undefined);
    const log = new RunLog("r", { persister, redactor: { event: (body) => body, tokenFilter: () => PASS_TOKENS } });
    log.append({ type: "token", text: "Hello" });
    log.append({ type: "token", text: " there" });
    const refused = log.end({ type: "done", outcome: "completed", message: "Hello there" }, () => Promise.reject(new Error("database or disk is full")));
    await expect(refused).rejects.toThrow("disk is full");
    expect(await persister.flush()).toBe(true);
    expect((await store.runs.read("r", -1)).map((e) => JSON.parse(e.data).text)).toEqual(["Hello", " there"]);
  });
});
