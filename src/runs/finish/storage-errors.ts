import { type AppError, refusals } from "../../protocol/index.js";
import { isStorageFault } from "../../store/index.js";

/** What a client is told: the database is unreachable, full or locked; nothing applied, retry. */
export function storageUnavailable(): AppError {
  return refusals.storageUnavailable();
}

/**
 * `storage_unavailable` when `err` is a storage fault (the store classifies its drivers' errors,
 * wherever they surfaced: a route, a run, LangGraph's checkpointer), else undefined. What the
 * server maps to 503, without knowing which database is behind the store.
 */
export function storageFaultError(err: unknown): AppError | undefined {
  return isStorageFault(err) ? storageUnavailable() : undefined;
}
