// Preloaded (--import) into a server started with TOLLGATE_KILL_AT set, for crash tests: SIGKILLs
// the process at a chosen write of its database, so a test can stop it exactly between two writes
// a run makes (the checkpoint, a step's pending writes, the ledger, the terminal event, the thread
// release) instead of at a random time. Production code knows nothing of it: it patches
// better-sqlite3's Statement.run, through which every write goes (LangGraph's checkpointer too).
//
//   TOLLGATE_KILL_AT=<point>:<before|after>   e.g. ledger-claim:after, writes:after
//   TOLLGATE_KILL_NTH=<n>                     the n-th time the point is reached (default 1)
//
// "before" kills before the statement runs; "after" once the transaction around it has committed
// (right away when there is none), so what it wrote is durable and nothing after it is.
import Database from "better-sqlite3";

const TERMINAL = /(^|\n)(interrupt|done|error|cancelled)\t/;

/** Which statements each point stands for: (sql, params) => boolean. */
const POINTS = {
  checkpoint: (sql) => /INTO checkpoints/i.test(sql),
  // A step's task output, written before its checkpoint (special channels alone do not count).
  writes: (sql, params) => /INTO writes/i.test(sql) && params[5] === "messages",
  "ledger-claim": (sql) => /INTO ledger/i.test(sql),
  "ledger-settle": (sql) => /UPDATE ledger SET status = 'settled'/i.test(sql),
  interrupt: (sql) => /INTO interrupts/i.test(sql),
  terminal: (sql, params) => /INTO run_event_batches/i.test(sql) && TERMINAL.test(String(params[3] ?? "")),
  release: (sql) => /UPDATE threads SET status = \?, holder_id = NULL/i.test(sql),
  // Any write of the event log: tokens included.
  events: (sql) => /INTO run_event_batches/i.test(sql),
};

const spec = process.env.TOLLGATE_KILL_AT;
if (spec) {
  const [name, when = "after"] = spec.split(":");
  const matches = POINTS[name];
  if (!matches || !["before", "after"].includes(when)) throw new Error(`kill-point: unknown TOLLGATE_KILL_AT=${spec}`);
  let remaining = Number(process.env.TOLLGATE_KILL_NTH ?? "1");
  let armed = false; // matched inside a transaction: die when it commits
  const die = () => process.kill(process.pid, "SIGKILL");

  const probe = new Database(":memory:");
  const Statement = Object.getPrototypeOf(probe.prepare("SELECT 1"));
  probe.close();
  const run = Statement.run;
  Statement.run = function patchedRun(...params) {
    const sql = this.source;
    if (matches(sql, params) && --remaining === 0) {
      if (when === "before") die();
      else armed = true;
    }
    const result = run.apply(this, params);
    if (armed && (sql === "COMMIT" || !this.database.inTransaction)) die();
    return result;
  };
}
