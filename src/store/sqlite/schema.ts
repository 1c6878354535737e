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
  -- the principal that created it ('anonymous' with auth off); only it (or admin) may write to it
  owner TEXT NOT NULL DEFAULT 'anonymous',
  -- the start of the first user message, for thread lists
  title TEXT,
  -- the graph that runs it, for life ('agent', the built-in one, on threads from before graphs)
  graph_id TEXT NOT NULL DEFAULT 'agent',
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
  outcome TEXT,
  -- a message run's user message (JSON): the graph checkpoints only at the run's end
  input TEXT
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
  decisions TEXT,
  -- who sent the message whose turn asked for these calls (four eyes binds them too)
  requester TEXT
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

-- One row per decision on one pending call. Append-only: the triggers refuse any change.
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  -- keyed hashes (HMAC-SHA256 under tollgate_meta.audit_key): a reader cannot confirm a guess
  args_hash TEXT NOT NULL,
  edited_args_hash TEXT,
  decision TEXT NOT NULL,
  by_sub TEXT,
  reason TEXT,
  -- the ledger's plain hash of the arguments the call would run with: joins its execution
  run_args_hash TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_thread ON audit(thread_id, id);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit rows are immutable'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit rows are immutable'); END;

-- Per-deployment values made once (the audit's hash key).
CREATE TABLE IF NOT EXISTS tollgate_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- Approval webhooks to send, written in the transaction of the change they report; sent in
-- seq order per thread. next_attempt_at: due time, retry time, or the end of a claim's lease.
CREATE TABLE IF NOT EXISTS webhook_outbox (
  id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  -- the exact JSON that is signed and sent
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  last_error TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (thread_id, seq)
);
CREATE INDEX IF NOT EXISTS webhook_outbox_pending ON webhook_outbox(status, thread_id, seq);
`;

/**
 * Columns added after a database was first made: `CREATE TABLE IF NOT EXISTS` leaves an older
 * table as it is, so each is added here when missing. Then the indexes that need them.
 */
export const ADDED_COLUMNS: ReadonlyArray<{ table: string; column: string; definition: string }> = [
  { table: "threads", column: "owner", definition: "TEXT NOT NULL DEFAULT 'anonymous'" },
  { table: "threads", column: "title", definition: "TEXT" },
  { table: "interrupts", column: "requester", definition: "TEXT" },
  // the replica holding a 'running' thread (SQLite: this process; PostgreSQL: one of many)
  { table: "threads", column: "replica_id", definition: "TEXT" },
  { table: "runs", column: "input", definition: "TEXT" },
  // threads made before a server could serve several graphs all ran the built-in agent
  { table: "threads", column: "graph_id", definition: "TEXT NOT NULL DEFAULT 'agent'" },
  // what a graph asked people with its own interrupt() (JSON), beside the gate's calls
  { table: "interrupts", column: "questions", definition: "TEXT" },
  // when people are told an interrupt still waits, and when they were (approval.escalated)
  { table: "interrupts", column: "escalate_at", definition: "INTEGER" },
  { table: "interrupts", column: "escalated_at", definition: "INTEGER" },
  // decisions on single calls while the interrupt waits (a quorum), and their compare-and-set count
  { table: "interrupts", column: "progress", definition: "TEXT" },
  { table: "interrupts", column: "progress_seq", definition: "INTEGER NOT NULL DEFAULT 0" },
  // keyed hash of the preview a person approved a call on (tools with a preview)
  { table: "audit", column: "preview_hash", definition: "TEXT" },
  // the call's version the decision was taken on (edits make new versions)
  { table: "audit", column: "version", definition: "INTEGER" },
  // how a person's decision came (api, langgraph, slack, email), and the channel's id of them (Slack user)
  { table: "audit", column: "via", definition: "TEXT" },
  { table: "audit", column: "channel_user", definition: "TEXT" },
  // a run's place on its thread (1, 2, …): the thread-centric protocol's seq counts across runs
  { table: "runs", column: "ordinal", definition: "INTEGER" },
  // channels' deliveries share the outbox in lanes of their own: a dead webhook holds no Slack message back
  { table: "webhook_outbox", column: "lane", definition: "TEXT NOT NULL DEFAULT 'webhook'" },
  // what a channel's delivery is about (its interrupt), and what the receiver answered (Slack's ts)
  { table: "webhook_outbox", column: "ref", definition: "TEXT" },
  { table: "webhook_outbox", column: "receipt", definition: "TEXT" },
];

export const LATE_INDEXES = `
CREATE INDEX IF NOT EXISTS threads_owner ON threads(owner, updated_at);
CREATE INDEX IF NOT EXISTS threads_updated ON threads(updated_at);
CREATE INDEX IF NOT EXISTS webhook_outbox_ref ON webhook_outbox(lane, ref);
`;
