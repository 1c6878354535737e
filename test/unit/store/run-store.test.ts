import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { openSqliteStore, type Store } from "../../../src/store/index.js";

let store: Store | undefined;
afterAll(async () => store?.close());

it("keeps a run's events in batches and reads any suffix back, gaps included", async () => {
  store = await openSqliteStore(fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-runs-")));
  const ev = (seq: number, type = "token") => ({ seq, type: type as "token", data: JSON.stringify({ run_id: "r", text: `t${seq}\ttab\nnl` }) });
  await store.runs.append("r", [ev(0), ev(1), ev(2)]);
  await store.runs.append("r", [ev(3), ev(4), ev(300, "error")]); // recovery numbers past a gap
  expect((await store.runs.read("r", -1)).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 300]);
  expect((await store.runs.read("r", 1)).map((e) => e.seq)).toEqual([2, 3, 4, 300]);
  expect((await store.runs.read("r", 4))).toEqual([ev(300, "error")]);
  expect((await store.runs.read("r", 300))).toEqual([]);
  expect((await store.runs.read("r", -1))[1]).toEqual(ev(1));
  expect((await store.runs.maxSeq("r"))).toBe(300);
  expect((await store.runs.maxSeq("other"))).toBe(-1);
});
