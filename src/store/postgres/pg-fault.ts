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
  "57014", // query_canceled: statement_timeout ran out (the database is too slow or blocked right now)
  "40001", // serialization_failure
  "40P01", // deadlock_detected: PostgreSQL rolled back this transaction to break it
  "55P03", // lock_not_available (lock_timeout, NOWAIT)
  "25006", // read_only_sql_transaction: a standby, or a primary that was just demoted
]);
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** pg's own connection errors carry no code, only these messages. */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Query read timeout)/;

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
