/**
 * Vitest global setup of the "postgres" project: one throwaway PostgreSQL cluster for the whole
 * project run. Its maintenance URL goes to the workers in `TOLLGATE_TEST_PG_URL` (vitest forks
 * them after the global setups ran, with this process's env); with `TOLLGATE_TEST_BACKEND=postgres`
 * from the project's env, `startServer` and `openDb` then use a database of the cluster per data
 * dir (test/helpers/pg-test-db.ts). Without PostgreSQL this throws the reason: vitest.config.ts
 * leaves the project out then, except under CI=true, where the run must fail.
 */
import { assertPostgresAvailable, startPostgres } from "../helpers/postgres.js";

export default async function setup(): Promise<() => Promise<void>> {
  assertPostgresAvailable();
  const cluster = await startPostgres();
  process.env.TOLLGATE_TEST_PG_URL = cluster.url;
  return async () => {
    delete process.env.TOLLGATE_TEST_PG_URL;
    await cluster.stop();
  };
}
