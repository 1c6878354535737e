/**
 * tollgate's own tables. The checkpointer creates its tables itself, in the same file, so one
 * SQLite file holds threads, checkpoints, interrupts, run events and the execution ledger.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS threads (
  thread_id TEXT PRIMARY KEY,
  status TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'waiting_human')),
  last_outcome TEXT,
  latest_run_id TEXT,
  -- who holds the thread while it is 'running': a run id, or a closer's id
  holder_id TEXT,
  open_interrupt_id TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS threads_status ON threads(status);

CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  outcome TEXT
);
CREATE INDEX IF NOT EXISTS runs_thread ON runs(thread_id, started_at);

-- One row per flush of a run's event log: events first_seq..last_seq, one "type<TAB>data" line
-- each. A row per event cost an INSERT per token, the log's largest cost under load.
CREATE TABLE IF NOT EXISTS run_event_batches (
  run_id TEXT NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  frames TEXT NOT NULL,
  PRIMARY KEY (run_id, first_seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS interrupts (
  interrupt_id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  calls TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('waiting_human', 'resumed', 'rejected', 'expired', 'cancelled')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  decisions TEXT
);
CREATE INDEX IF NOT EXISTS interrupts_waiting ON interrupts(status, expires_at);
CREATE INDEX IF NOT EXISTS interrupts_thread ON interrupts(thread_id);

CREATE TABLE IF NOT EXISTS ledger (
  key TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  args_hash TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('executing', 'settled')),
  outcome TEXT,
  started_at INTEGER NOT NULL,
  settled_at INTEGER
);
`;
