import { defineConfig } from "vitest/config";
import { postgresAvailable } from "./test/helpers/postgres.js";

// Projects, named after the backend (and graph) the servers run on:
// - "sqlite": every test, as always (each server's data dir holds its SQLite file).
// - "postgres": the end-to-end files that do not care which store is behind the API, again, with
//   TOLLGATE_TEST_BACKEND=postgres: one throwaway cluster for the project (postgres-setup.ts),
//   and each server a database of its own on it (test/helpers/pg-test-db.ts).

/** Options both projects share. */
const common = {
  // Real servers and child processes: give them room, never rely on timing for correctness.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: "forks",
  // Fails a test on a deprecation warning from a server it started or from the test process.
  setupFiles: "./test/support/no-deprecations-setup.ts",
} as const;

/** The e2e files the "postgres" project runs again on PostgreSQL. */
const ON_POSTGRES = [
  "access-matrix",
  "approval-binds",
  "api-errors",
  "api-faces",
  "cancel",
  "core-flow",
  "demo-flow",
  "email-approvals",
  "four-eyes",
  "gate-model",
  "graph-smoke",
  "hostile-edge",
  "identity",
  "langgraph-sdk",
  "langgraph-use-stream",
  "logs",
  "metrics",
  "model-faults",
  "not-found-equivalence",
  "previews",
  "protocol-bounds",
  "quorum",
  "react-hook",
  "react-session",
  "reconnect",
  "secrets",
  "slack-approvals",
  "thread-stream",
  "webhooks",
  "your-graphs",
].map((name) => `test/e2e/${name}.test.ts`);

/**
 * The guarantee suites the graph projects run again with the demo agent served as a team's graph
 * is (TOLLGATE_TEST_GRAPH): "graph-nested" — built with the kit, inside a parent graph's node, so
 * the gate pauses one level down (SQLite); "graph-kit" — the kit's graph itself, on PostgreSQL.
 */
const ON_GRAPHS = [
  "api-faces",
  "approval-binds",
  "cancel",
  "core-flow",
  "demo-flow",
  "email-approvals",
  "durability",
  "four-eyes",
  "kill-points",
  "logs",
  "masking",
  "model-faults",
  "previews",
  "quorum",
  "reconnect",
  "secrets",
  "storage-faults",
  "webhooks",
].map((name) => `test/e2e/${name}.test.ts`);

// Not on PostgreSQL, and why:
// - storage-faults: it locks the SQLite file under the server.
// - kill-points: kill-point.mjs kills the server at a write by patching better-sqlite3.
// - masking: its crash test kills the server with kill-point.mjs (better-sqlite3 only).
// - durability: it asserts right after a kill -9 and restart that the dead run is closed; on
//   PostgreSQL the restarted replica first holds its own lease a full lease (1 s) before it may
//   take over a dead one's runs, so the thread is still 'running' then.
// - studio: LangGraph Studio reads the SQLite file.
// - readme-walkthrough: the README's walkthroughs (and the docs') are the SQLite ones.
// - web-page, browser-hostile: Chromium suites, slow, and the page does not care about the backend.
// - fuzz, torture, chaos: long; they run on SQLite.
// - replicas: PostgreSQL already (its own cluster, several servers on one database).

const pg = postgresAvailable();
const withPostgres = pg.ok || process.env.CI === "true";
if (!withPostgres) console.log(`[postgres] e2e project left out: no PostgreSQL: ${pg.why}`);

export default defineConfig({
  test: {
    // The page the servers serve, built once for the whole run (the root's global setup runs once).
    globalSetup: ["./test/support/build-web-setup.ts"],
    reporters: ["default", "./test/support/summary-line-reporter.ts"],
    projects: [
      {
        test: {
          ...common,
          name: "sqlite",
          include: ["test/**/*.test.ts"],
        },
      },
      {
        test: { ...common, name: "graph-nested", include: ON_GRAPHS, env: { TOLLGATE_TEST_GRAPH: "nested" } },
      },
      ...(withPostgres
        ? [
            {
              test: {
                ...common,
                name: "postgres",
                include: ON_POSTGRES,
                env: { TOLLGATE_TEST_BACKEND: "postgres" },
                // Under CI=true without PostgreSQL it throws the reason, and the run fails.
                globalSetup: ["./test/support/postgres-setup.ts"],
              },
            },
            {
              test: {
                ...common,
                name: "graph-kit",
                include: ON_POSTGRES.filter((f) => ON_GRAPHS.includes(f)),
                env: { TOLLGATE_TEST_BACKEND: "postgres", TOLLGATE_TEST_GRAPH: "kit" },
                globalSetup: ["./test/support/postgres-setup.ts"],
              },
            },
          ]
        : []),
    ],
  },
});
