import type { Logger } from "../logger.js";
import type { ThreadView } from "../protocol/index.js";
import type { RunService } from "../runs/index.js";
import type { ThreadStore } from "../store/index.js";

/** What the HTTP layer needs; tests build it over a temp database. */
export interface AppDeps {
  runs: RunService;
  threads: ThreadStore;
  readThread(threadId: string): Promise<ThreadView>;
  log: Logger;
  /** Whether the database answers a read, for `/healthz`. */
  databaseReadable(): boolean;
  /** Comment frames on idle streams keep proxies from closing them (`HEARTBEAT_SECONDS`). */
  heartbeatMs: number;
}
