import type { EventBody } from "../../protocol/index.js";
import type { LoggedEvent } from "../../store/index.js";
import type { ToolOutcome } from "../../tools/index.js";

/**
 * A thread whose holder (a run, or a closer of an interrupt) stopped without handing it back:
 * the process died, or the database refused the writes that end the run.
 */
export interface Orphan {
  threadId: string;
  /** Who holds the thread: a run id, or a closer's id (see `closerTarget`). */
  holderId: string;
  /** How calls that never ran are answered, unless the ledger knows better. */
  fallback: ToolOutcome;
  /** The terminal event listeners were already given; written with this seq. Else one is made. */
  terminal?: LoggedEvent;
  /** When the run is made up: the event that ends it. */
  closing?: EventBody;
  /** A resume that failed on storage before any approved call started: its decision stands unused. */
  reopen?: { interruptId: string; approved: string[] };
}
