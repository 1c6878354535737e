import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { ProtocolEvent } from "../../src/protocol/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../helpers/fake-openai.js";
import { checkInvariants } from "../helpers/invariants.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { orderScript } from "../helpers/order-script.js";
import { openDb } from "../helpers/sqlite.js";
import { call, expectNoStackTraces, expectOneTerminal } from "./support.js";

// Real storage faults on a real server: another process holding the database's write lock, and a
// full disk (a small tmpfs). The server stays up and answers, nothing is lost or used up, and it
// recovers by itself once the lock or the space comes back.

const WORDS = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

let model: FakeOpenAI;
beforeAll(async () => {
  model = await startFakeOpenAI({
    delayMs: 10,
    script: (req) => (String(req.messages.at(-1)?.content).startsWith("talk") ? { text: WORDS } : orderScript(req)),
  });
});
afterAll(() => model.close());

const env = () => ({ MODEL: "fake", OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url });

/** Takes the database's write lock from another connection, as a backup tool or a second process would. */
function holdWriteLock(dataDir: string) {
  const db = new Database(path.join(dataDir, "tollgate.db"), { timeout: 5000 });
  db.exec("BEGIN IMMEDIATE");
  return () => {
    db.exec("ROLLBACK");
    db.close();
  };
}

/** Reads a stream until its first token, then hands back the rest of it. */
async function afterFirstToken(stream: AsyncIterable<ProtocolEvent>) {
  const it = stream[Symbol.asyncIterator]();
  const first = await it.next();
  expect(first.value).toMatchObject({ type: "token" });
  return async () => {
    const rest: ProtocolEvent[] = [first.value];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
    return rest;
  };
}

/** Cancel settles a thread whose end the database refused; 503 until it takes writes again. */
async function settle(base: string, thread: string) {
  for (;;) {
    const r = await call(base, "POST", `/threads/${thread}/cancel`);
    if (r.status !== 503) return r;
    expect(r.json.error.code).toBe("storage_unavailable");
  }
}

async function expectHealthy(server: ServerProcess, dataDir: string) {
  expect(server.child.exitCode).toBeNull();
  const db = openDb(dataDir);
  try {
    expect(await checkInvariants(server.url, db, model)).toEqual([]);
  } finally {
    db.close();
  }
  expectNoStackTraces(server);
}

describe("another process holds the write lock", () => {
  it("a resume gets 503 with Retry-After and the approval stays open; after the lock, it runs once", async () => {
    const server = await startServer(env());
    const client = new TollgateClient({ baseUrl: server.url });
    try {
      const intr = (await client.run("locked", "refund A-1001 5 cents").collect()).at(-1)!;
      expect(intr.type).toBe("interrupt");
      const { interrupt_id, calls } = intr as Extract<ProtocolEvent, { type: "interrupt" }>;
      const decisions = calls.map((c) => ({ call_id: c.call_id, approved: true }));
      const release = holdWriteLock(server.dataDir);
      let r;
      try {
        r = await call(server.url, "POST", "/threads/locked/resume", { interrupt_id, decisions });
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
        expect((await client.getThread("locked")).pending?.interrupt_id).toBe(interrupt_id); // reads still work
      } finally {
        release();
      }
      expect([r.status, r.json.error.code]).toEqual([503, "storage_unavailable"]);
      const done = await client.resume("locked", interrupt_id, { decisions }).collect();
      expect(expectOneTerminal(done).type).toBe("done");
      const db = openDb(server.dataDir);
      expect(db.countRows("refunds")).toBe(1);
      db.close();
      await expectHealthy(server, server.dataDir);
    } finally {
      await server.kill();
    }
  });

  it("a lock across a run's end: the stream ends once, the log keeps every token, the thread settles after", async () => {
    const server = await startServer(env());
    const client = new TollgateClient({ baseUrl: server.url });
    try {
      const rest = await afterFirstToken(client.run("locked-end", "talk to me", { on_disconnect: "continue" }));
      const release = holdWriteLock(server.dataDir);
      let live: ProtocolEvent[];
      try {
        live = await rest(); // the model finishes while the lock is held: its end cannot be written
      } finally {
        release();
      }
      const end = expectOneTerminal(live);
      expect(end).toMatchObject({ type: "error", code: "storage_unavailable" });
      expect((await settle(server.url, "locked-end")).json).toMatchObject({ status: "idle" });
      expect(await client.stream("locked-end").collect()).toEqual(live);
      await expectHealthy(server, server.dataDir);
    } finally {
      await server.kill();
    }
  });
});

/** A small tmpfs for DATA_DIR; needs root. Undefined (and why) where it cannot be had. */
function smallDisk(): { dir: string; unmount: () => void } | string {
  if (process.getuid?.() !== 0) return "needs root to mount a tmpfs";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    return `mount failed: ${(err as Error).message.split("\n")[0]}`;
  }
  return { dir, unmount: () => execFileSync("umount", [dir]) };
}

/** Fills the filesystem of `dir` to the last byte; returns how to give the space back. */
function fillDisk(dir: string): () => void {
  const filler = path.join(dir, "filler");
  const fd = fs.openSync(filler, "w");
  for (let size = 1 << 20; size >= 1; size >>= 1) {
    const chunk = Buffer.alloc(size);
    try {
      for (;;) fs.writeSync(fd, chunk);
    } catch {
      // ENOSPC at this size: try smaller pieces
    }
  }
  fs.closeSync(fd);
  return () => fs.rmSync(filler);
}

describe("the disk fills up", () => {
  const disk = smallDisk();
  const why = typeof disk === "string" ? disk : "";
  if (why && process.env.CI !== "true") console.warn(`skipping the full-disk test: ${why}`);

  it.runIf(!why || process.env.CI === "true")(
    "mid-run and between runs: no crash, 503 or one error event, nothing lost; it recovers when space comes back",
    async () => {
      if (typeof disk === "string") throw new Error(`full-disk test cannot run under CI: ${disk}`);
      const dataDir = path.join(disk.dir, "data");
      const server = await startServer(env(), { dataDir });
      const client = new TollgateClient({ baseUrl: server.url });
      try {
        const rest = await afterFirstToken(client.run("full", "talk to me", { on_disconnect: "continue" }));
        const free = fillDisk(disk.dir);
        let live: ProtocolEvent[];
        let refused;
        try {
          live = await rest();
          refused = await call(server.url, "POST", "/threads/full-2/runs", { message: "talk again" });
        } finally {
          free();
        }
        expect(expectOneTerminal(live)).toMatchObject({ type: "error", code: "storage_unavailable" });
        expect([refused.status, refused.json.error?.code]).toEqual([503, "storage_unavailable"]);
        expect((await settle(server.url, "full")).json).toMatchObject({ status: "idle" });
        expect(await client.stream("full").collect()).toEqual(live);
        await expectHealthy(server, dataDir);
      } finally {
        await server.kill();
        disk.unmount();
      }
    },
  );
});
