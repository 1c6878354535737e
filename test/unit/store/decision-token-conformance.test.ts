/**
 * One suite for the three DecisionTokenStores: tokens stored only as hashes, used once (also when
 * many POSTs race), dead when the interrupt closes or its deadline passes, given back only by the
 * use that took them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DecisionTokenStore,
  hashDecisionToken,
  MemoryDecisionTokenStore,
  PgDecisionTokenStore,
  SqliteDecisionTokenStore,
} from "../../../src/store/index.js";
import { ConnectionLock } from "../../../src/store/sqlite/connection-lock.js";
import { type PgCluster, postgresAvailable, skipPostgresSuite, startPostgres } from "../../helpers/postgres.js";

const T0 = 1_800_000_000_000;
const grant = (over: Partial<Parameters<DecisionTokenStore["issue"]>[0]> = {}) => ({
  principalSub: "fin1",
  threadId: "thr_1",
  interruptId: "int_1",
  versions: { call_a: 1, call_b: 2 },
  expiresAt: T0 + 60_000,
  ...over,
});

/** What each backend gives the suite: a fresh store, and every stored text (to look for raw tokens). */
interface Backend {
  store: () => Promise<DecisionTokenStore>;
  storedText: () => Promise<string>;
}

function conformance(name: string, backend: () => Backend) {
  describe(`DecisionTokenStore: ${name}`, () => {
    let b: Backend;
    let s: DecisionTokenStore;
    beforeAll(async () => {
      b = backend();
    });
    const fresh = async () => (s = await b.store());

    it("mints 256-bit base64url tokens, keeps only their SHA-256, and finds them by the token", async () => {
      await fresh();
      const token = await s.issue(grant(), T0);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const r = await s.find(token);
      expect(r).toMatchObject({ tokenHash: hashDecisionToken(token), principalSub: "fin1", threadId: "thr_1", interruptId: "int_1", versions: { call_a: 1, call_b: 2 }, expiresAt: T0 + 60_000, createdAt: T0, usedAt: null, closedAt: null });
      expect(await s.find(token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"))).toBeUndefined();
      const stored = await b.storedText();
      expect(stored).toContain(hashDecisionToken(token));
      expect(stored).not.toContain(token);
    });

    it("is consumed once; a second consume says used", async () => {
      await fresh();
      const token = await s.issue(grant(), T0);
      const first = await s.consume(token, T0 + 1);
      expect(first.ok).toBe(true);
      const second = await s.consume(token, T0 + 2);
      expect(second).toMatchObject({ ok: false, reason: "used" });
      expect((await s.find(token))?.usedAt).toBe(T0 + 1);
    });

    it("of 25 concurrent consumes of one token, exactly one wins", async () => {
      await fresh();
      const token = await s.issue(grant(), T0);
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => s.consume(token, T0 + 1 + i)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "used")).toBe(true);
    });

    it("says unknown for a token it never issued", async () => {
      await fresh();
      expect(await s.consume("x".repeat(43), T0)).toEqual({ ok: false, reason: "unknown" });
    });

    it("is dead at its deadline", async () => {
      await fresh();
      const token = await s.issue(grant(), T0);
      expect(await s.consume(token, T0 + 60_000)).toMatchObject({ ok: false, reason: "expired" });
    });

    it("is dead once its interrupt closes; other interrupts' tokens live on", async () => {
      await fresh();
      const mine = await s.issue(grant(), T0);
      const other = await s.issue(grant({ interruptId: "int_2" }), T0);
      const used = await s.issue(grant(), T0);
      await s.consume(used, T0 + 1);
      expect(await s.closeInterrupt("int_1", T0 + 5)).toBe(1);
      expect(await s.consume(mine, T0 + 6)).toMatchObject({ ok: false, reason: "closed" });
      expect(await s.consume(used, T0 + 6)).toMatchObject({ ok: false, reason: "used" });
      expect((await s.consume(other, T0 + 6)).ok).toBe(true);
    });

    it("is given back only by the use that took it", async () => {
      await fresh();
      const token = await s.issue(grant(), T0);
      await s.consume(token, T0 + 1);
      await s.release(token, T0 + 999);
      expect(await s.consume(token, T0 + 2)).toMatchObject({ ok: false, reason: "used" });
      await s.release(token, T0 + 1);
      expect((await s.consume(token, T0 + 3)).ok).toBe(true);
    });

    it("forgets discarded tokens and prunes dead ones", async () => {
      await fresh();
      const gone = await s.issue(grant(), T0);
      await s.discard(gone);
      expect(await s.find(gone)).toBeUndefined();
      const used = await s.issue(grant(), T0);
      await s.consume(used, T0 + 1);
      const live = await s.issue(grant({ expiresAt: T0 + 10_000_000 }), T0);
      expect(await s.prune(T0 + 100)).toBe(1);
      expect(await s.find(used)).toBeUndefined();
      expect(await s.find(live)).toBeDefined();
    });
  });
}

conformance("memory", () => {
  let store: MemoryDecisionTokenStore;
  return {
    store: async () => (store = new MemoryDecisionTokenStore()),
    storedText: async () => JSON.stringify([...(store as unknown as { rows: Map<string, unknown> }).rows]),
  };
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

for (const locked of [false, true]) conformance(locked ? "sqlite, behind the server's connection lock" : "sqlite", () => {
  let file = "";
  return {
    store: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-email-tokens-"));
      dirs.push(dir);
      file = path.join(dir, "tokens.db");
      const lock = new ConnectionLock();
      const s = new SqliteDecisionTokenStore(new Database(file), locked ? (work) => lock.gate(work) : undefined);
      await s.init();
      await s.init(); // IF NOT EXISTS: a restart finds the table there
      return s;
    },
    storedText: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return JSON.stringify(db.prepare("SELECT * FROM email_decision_tokens").all());
      } finally {
        db.close();
      }
    },
  };
});

const pgOk = postgresAvailable();
describe.skipIf(skipPostgresSuite("email decision tokens", pgOk))("on PostgreSQL", () => {
  let cluster: PgCluster;
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await cluster?.stop();
  });
  conformance("postgres", () => {
    let pool: pg.Pool;
    return {
      store: async () => {
        // Many connections, so the concurrent consumes really race in the database.
        pool = new pg.Pool({ connectionString: await cluster.createDatabase(), max: 10 });
        pools.push(pool);
        const s = new PgDecisionTokenStore(pool);
        await s.init();
        await s.init();
        return s;
      },
      storedText: async () => JSON.stringify((await pool.query("SELECT * FROM email_decision_tokens")).rows),
    };
  });
});
