import pg from "pg";

/** Text-format type OIDs (pg_type.oid) we parse ourselves. */
const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;

/**
 * BIGINT as a JS number. pg returns int8 as a string by default, because a 64-bit integer may not
 * fit a double; ours are millisecond timestamps, sequence numbers and counts, all far below 2^53.
 * A value that does not fit fails the query (pg rejects it with this error) rather than coming
 * back silently rounded.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`BIGINT ${text} does not fit a JS number exactly`);
  return n;
}

/** pg's parsers by plain OID (its typing lists only the builtin scalar types, not int8[]). */
const defaultParser = pg.types.getTypeParser as (oid: number, format?: string) => (text: string) => unknown;

const parseInt8Array = (() => {
  const parseTextArray = defaultParser(INT8_ARRAY_OID, "text") as (text: string) => (string | null)[];
  return (text: string) => parseTextArray(text).map((v) => (v === null ? null : parseInt8(v)));
})();

/**
 * The pool's own type parsers (`types` option), not `pg.types.setTypeParser`: that one is global
 * and would change what every other pg user in the process (PostgresSaver included) gets back.
 */
const TOLLGATE_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format !== "binary") {
      if (oid === INT8_OID) return parseInt8;
      if (oid === INT8_ARRAY_OID) return parseInt8Array;
    }
    return defaultParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

export interface PgPoolOptions {
  /** Most connections this pool opens (pg's default: 10). */
  max?: number;
  /** How long a query may wait for a connection, in ms (default 10 s; 0 waits forever). */
  connectionTimeoutMillis?: number;
  /**
   * Told of an error on a connection nobody is using (the server restarted, a network cut, an
   * admin terminated it). The pool has already dropped that connection; the next query opens a
   * new one. Default: one line on stderr.
   */
  onError?: (err: Error) => void;
}

/** Per-session limits on every pooled connection (migrations lift them for their own transaction). */
export const SESSION_TIMEOUTS = "SET statement_timeout = 15000; SET lock_timeout = 5000; SET idle_in_transaction_session_timeout = 30000";

/**
 * A pg pool for tollgate: BIGINT (and BIGINT[]) columns come back as JS numbers, and a dropped
 * connection never ends the process.
 *
 * pg emits 'error' on the pool for an idle connection that dies and on a client for a checked-out
 * connection that dies between queries; with no listener either is an uncaught exception. The pool
 * gets `onError`; every client gets a listener that only keeps the process alive: the holder's next
 * query fails ("not queryable"), and releasing that client drops it from the pool.
 */
export function createPgPool(url: string, opts: PgPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 10_000,
    // Notices a half-open TCP connection (peer gone without a FIN) instead of waiting on it forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // A query whose answer never comes (a half-open connection) fails as a storage fault.
    query_timeout: 20_000,
    types: TOLLGATE_TYPES,
    onConnect: prepareSession,
  });
  const onError = opts.onError ?? ((err: Error) => console.warn(`postgres: idle connection dropped: ${err.message}`));
  pool.on("error", (err) => onError(err));
  return pool;
}

/**
 * pg-pool awaits `onConnect` on a new connection before handing it to anyone. The 'connect' event
 * would not do: it fires synchronously as the client is handed out, so a SET sent from it is still
 * queued when the caller's first query arrives (pg deprecates two queued queries on one client, and
 * pg 9 refuses them), and a connection whose SET failed would be handed out without its limits.
 * Here a failed SET fails the checkout and the pool drops the connection.
 */
async function prepareSession(client: pg.ClientBase): Promise<void> {
  client.on("error", () => {
    // See createPgPool: the holder learns of it from its next query; the pool reports idle ones.
  });
  // Nothing waits on the database without end: a run whose statement hangs could never be
  // cancelled, and a claim blocked on another's row lock must become a 503, not a stuck request
  // (55P03 and 57014 are storage faults). Set per session, not as startup parameters (`options:
  // -c ...`), which PgBouncer and some proxies refuse.
  await client.query(SESSION_TIMEOUTS);
}
