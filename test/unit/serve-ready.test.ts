/**
 * The `ready` line serveTollgate logs once bound names what actually serves: the model in use
 * (a team's own, not `MODEL`'s default) and the store in use (the SQLite data dir, or the
 * PostgreSQL database without its password).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "../../src/config.js";
import { jsonLogger } from "../../src/logger.js";
import { type ServedTollgate, serveTollgate } from "../../src/serve.js";
import { createTollgate, type TollgateOptions } from "../../src/index.js";
import { assertPostgresAvailable, type PgCluster, postgresAvailable, skipPostgresSuite, startPostgres } from "../helpers/postgres.js";

let served: ServedTollgate | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
});

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "tollgate-ready-"));

/** Serves a tollgate on a free port and returns every line it logged up to `ready`, as text and parsed. */
async function serveAndRead(config: Config, opts: Omit<TollgateOptions, "config" | "log"> = {}) {
  let text = "";
  const log = jsonLogger({ level: "info", destination: { write: (line: string) => (text += line) } });
  const tollgate = await createTollgate({ ...opts, config, log, processMetrics: false });
  served = await serveTollgate(tollgate, config, { handleSignals: false });
  const lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const ready = lines.filter((l) => l.msg === "ready");
  expect(ready).toHaveLength(1);
  return { text, ready: ready[0]! };
}

describe("the ready line on SQLite", () => {
  it("names the team's own model and the data dir, not MODEL's default", async () => {
    const dataDir = tempDir();
    const model = new ChatOpenAI({ model: "team-model", apiKey: "sk-not-used-0001", useResponsesApi: false });
    const { ready } = await serveAndRead(loadConfig({ DATA_DIR: dataDir, PORT: "0" }), { model });
    expect(ready).toMatchObject({ url: served!.url, model: "team-model", store: "sqlite", data_dir: dataDir });
    expect(ready).not.toHaveProperty("database");
  });

  it("names the model MODEL chose when no model is passed", async () => {
    const { ready } = await serveAndRead(loadConfig({ DATA_DIR: tempDir(), PORT: "0" }));
    expect(ready).toMatchObject({ model: "demo", store: "sqlite" });
  });
});

const avail = postgresAvailable();
const skip = skipPostgresSuite("serve-ready", avail);

describe.skipIf(skip)("the ready line on PostgreSQL", () => {
  const PASSWORD = "secretpw-ready-0001";
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    assertPostgresAvailable(avail);
    cluster = await startPostgres();
  });
  afterAll(() => cluster?.stop());

  it("names the database with its user, host and name, never its password, with nothing to scrub it", async () => {
    // The test cluster trusts local connections: a password in the URL is sent to no one, but
    // it is in the configuration, as a real one would be.
    const url = new URL(await cluster!.createDatabase("ready_line"));
    url.password = PASSWORD;
    url.search = `?application_name=tollgate&password=${PASSWORD}`;
    // No secrets listed: the line must hold no password of itself, not thanks to the scrubber.
    const config = { ...loadConfig({ DATA_DIR: tempDir(), PORT: "0", DATABASE_URL: url.href }), secrets: [] };
    const { text, ready } = await serveAndRead(config);
    expect(ready).toMatchObject({ model: "demo", store: "postgres", database: `postgres://postgres@127.0.0.1:${cluster!.port}/ready_line` });
    expect(ready).not.toHaveProperty("data_dir");
    expect(text).not.toContain(PASSWORD);
  });
});
