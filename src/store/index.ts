import type { Clock } from "../clock.js";
import type { Store } from "./types.js";
import type { SecretFilter } from "./stored-secrets.js";
import { openSqliteStore, type SqliteStore } from "./sqlite/index.js";
import type { PostgresStore } from "./postgres/index.js";

export type * from "./types.js";
export { callRow } from "./audit-records.js";
export { isStorageFault } from "./storage-fault.js";
export { WEBHOOK_LANE } from "./webhook-outbox.js";
export { type DecisionTokenGrant, hashDecisionToken, looksLikeDecisionToken, mintDecisionToken } from "./decision-token.js";
export {
  type ConsumeResult,
  DEAD_TOKEN_REASONS,
  type DeadTokenReason,
  deadReason,
  type DecisionTokenRecord,
  type DecisionTokenStore,
  MemoryDecisionTokenStore,
} from "./decision-token-store.js";
export { SqliteDecisionTokenStore } from "./sqlite/decision-token-store.js";
export { PgDecisionTokenStore } from "./postgres/decision-token-store.js";
export { NO_SCRUB, type SecretFilter } from "./stored-secrets.js";
export { openSqliteStore, openDatabase, type Db, type SqliteStore } from "./sqlite/index.js";
export type { PostgresStore } from "./postgres/index.js";
export { databaseWithoutSecrets, storeLocation, type StoreLocation } from "./store-location.js";

/** Either backend; `kind` tells which (only the wiring and the demo tools need to). */
export type AnyStore = SqliteStore | PostgresStore;

export interface StoreSettings {
  dataDir: string;
  /** `postgres://…`: one database shared by every replica; unset: SQLite in `dataDir`. */
  databaseUrl?: string;
  /** Connections per replica (PostgreSQL). */
  poolMax?: number;
  onError?: (msg: string, err: unknown) => void;
  /** Where "now" comes from for the rows' timestamps; the system clock when not given. */
  clock?: Clock;
  /** Scrubs secrets from what is stored (checkpoints and their writes, ledger outcomes). */
  scrub?: SecretFilter;
}

/** Opens the store the settings name, migrated and ready. */
export async function openStore(s: StoreSettings): Promise<AnyStore> {
  if (!s.databaseUrl) return openSqliteStore(s.dataDir, { clock: s.clock, scrub: s.scrub });
  // Loaded only when asked for: a SQLite deployment never loads the PostgreSQL driver.
  const { openPostgresStore } = await import("./postgres/index.js");
  return openPostgresStore(s.databaseUrl, { poolMax: s.poolMax, onError: s.onError, clock: s.clock, scrub: s.scrub });
}

export type { Store };
