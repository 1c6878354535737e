export { type ExecutionLedger, type LedgerClaim, type LedgerEntry, NOT_HOLDER, REUSED_CALL_ID } from "./execution-ledger.js";
export { MemoryLedger } from "./memory-ledger.js";
