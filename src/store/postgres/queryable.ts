import pg from "pg";

/**
 * What the PostgreSQL stores run their SQL on: the pool (each statement on its own, autocommitted)
 * or the client of an open transaction (statements join it). One store class serves both.
 */
export interface Queryable {
  query: pg.Pool["query"];
}

/**
 * Runs `fn` in one transaction on a client checked out of `pool`: BEGIN, `fn`, COMMIT, or ROLLBACK
 * when it throws. The client goes back to the pool always, destroyed (`release(err)`) when its
 * connection broke, so a dead socket is never handed to the next caller.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // pg emits 'error' on a client whose socket dies; the pool listens only while it is idle, and an
  // unheard 'error' would end the process. The failed query rejects on its own: just remember it.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken ??= err);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch((rollbackErr: Error) => (broken ??= rollbackErr));
    throw err;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}

/**
 * `fn` in one transaction: a new one on a client of its own when `q` is the pool, or the caller's
 * (just the statements) when `q` is already a transaction's client.
 */
export function inTransaction<T>(q: Queryable, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return q instanceof pg.Pool ? withTransaction(q, fn) : fn(q);
}

/** Whether the statement changed exactly one row: the winner of a compare-and-set. */
export function changedOne(r: pg.QueryResult): boolean {
  return r.rowCount === 1;
}
