import { type Db, openDatabase } from "./database.js";
import { AuditStore } from "./audit-store.js";
import { InterruptStore } from "./interrupt-store.js";
import { TollgateSaver } from "./checkpointer.js";
import { SqliteLedger } from "./ledger-store.js";
import { RunStore } from "./run-store.js";
import { ThreadStore } from "./thread-store.js";

export { openDatabase } from "./database.js";
export type { Db } from "./database.js";
export { ThreadStore } from "./thread-store.js";
export type { ThreadRow, ThreadStatus, LastOutcome } from "./thread-store.js";
export { InterruptStore, interruptPayload } from "./interrupt-store.js";
export type { InterruptRecord, InterruptCall, InterruptStatus, OpenInterrupt } from "./interrupt-store.js";
export { AuditStore, callRow } from "./audit-store.js";
export type { AuditRecord } from "./audit-store.js";
export { RunStore } from "./run-store.js";
export type { LoggedEvent, RunKind } from "./run-store.js";
export { SqliteLedger } from "./ledger-store.js";
export { isStorageFault, storageUnavailable } from "./storage-fault.js";

/** Everything tollgate keeps, in one SQLite file. */
export interface Store {
  db: Db;
  threads: ThreadStore;
  interrupts: InterruptStore;
  runs: RunStore;
  ledger: SqliteLedger;
  audit: AuditStore;
  checkpointer: TollgateSaver;
  /** Whether the database answers a trivial read right now. */
  readable(): boolean;
  close(): void;
}

export function openStore(dataDir: string): Store {
  const db = openDatabase(dataDir);
  const probe = db.prepare("SELECT count(*) FROM threads");
  const audit = new AuditStore(db);
  return {
    db,
    threads: new ThreadStore(db),
    interrupts: new InterruptStore(db, (v) => audit.hash(v)),
    runs: new RunStore(db),
    ledger: new SqliteLedger(db),
    audit,
    // Same connection: checkpoints and tollgate's tables share the file and its WAL.
    checkpointer: new TollgateSaver(db),
    readable: () => {
      try {
        probe.get();
        return true;
      } catch {
        return false; // what failed is the answer; /healthz reports it
      }
    },
    close: () => db.close(),
  };
}
