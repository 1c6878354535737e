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
    types: TOLLGATE_TYPES,
  });
  const onError = opts.onError ?? ((err: Error) => console.warn(`postgres: idle connection dropped: ${err.message}`));
  pool.on("error", (err) => onError(err));
  pool.on("connect", (client) => {
    client.on("error", () => {
      // See above: the holder learns of it from its next query; the pool reports idle ones.
    });
  });
  return pool;
}

/** Node socket and DNS errors: the server could not be reached, or the connection broke. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) after which the
 * transaction was rolled back and the same work may succeed if tried again.
 */
const SQLSTATE_CLASSES = ["08", "53"]; // connection exception; insufficient resources (53100 disk full, 53300 too many connections)
const SQLSTATES = new Set([
  "57P01", // admin_shutdown: the server is shutting down (or an admin terminated the backend)
  "57P02", // crash_shutdown: another backend crashed, the server is resetting
  "57P03", // cannot_connect_now: the server is starting up or in recovery
  "40001", // serialization_failure
  "40P01", // deadlock_detected: PostgreSQL rolled back this transaction to break it
  "55P03", // lock_not_available (lock_timeout, NOWAIT)
  "25006", // read_only_sql_transaction: a standby, or a primary that was just demoted
]);
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** pg's own connection errors carry no code, only these messages. */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable)/;

function isFaultItself(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    if (SOCKET_CODES.has(code)) return true;
    if (SQLSTATE.test(code) && (SQLSTATES.has(code) || SQLSTATE_CLASSES.includes(code.slice(0, 2)))) return true;
  }
  const message = (e as { message?: unknown }).message;
  return typeof message === "string" && PG_CONNECTION_MESSAGES.test(message);
}

/**
 * Whether `err` (or an error it wraps, up to 5 levels of `.cause`: LangGraph wraps some) means the
 * database is unreachable or refused the work for now: nothing was applied, retry later. The
 * PostgreSQL counterpart of `isStorageFault` (SQLite).
 *
 * One caveat the codes cannot tell apart: a connection lost while COMMIT was in flight may have
 * committed. Work retried after a fault must be idempotent (or check what it wrote), as it must
 * for SQLite's I/O errors.
 *
 * An `AggregateError` (Node's connect to a host with several addresses) counts when any of its
 * errors does.
 */
export function pgStorageFault(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isFaultItself(e)) return true;
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.some((x) => x && isFaultItself(x))) return true;
  }
  return false;
}
