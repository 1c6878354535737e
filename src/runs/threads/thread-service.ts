import { randomUUID } from "node:crypto";
import type { Principal } from "../../auth/index.js";
import {
  type ApprovalList,
  type GraphList,
  type AuditTrail,
  refusals,
  threadNotFound,
  type ThreadList,
  type ThreadView,
} from "../../protocol/index.js";
import type { RunRow, ThreadRow } from "../../store/index.js";
import { whyNotOpen } from "../../gate/index.js";
import type { GraphCatalog } from "../../graph/index.js";
import { auditEntry } from "./audit-entry.js";
import { interruptPayload } from "../decide/interrupt-payload.js";
import type { RunContext } from "../run-context.js";
import { takesPartialDecisions } from "../decide/partial-decisions.js";
import { seeThread } from "./thread-access.js";
import { copyCheckpoint, copyThread } from "./thread-copy.js";
import { type PastState, readThreadHistory, readThreadSnapshot, readThreadStateAt, readThreadView, type ThreadSnapshot } from "./thread-view.js";

/** How many threads a search reads at most, and per page. */
const SEARCH_SCAN = 10_000;
const SEARCH_PAGE = 200;

/** `POST /threads`. */
export interface NewThread {
  threadId?: string;
  metadata?: Record<string, unknown>;
  /** The graph it runs for life; default `agent` if served, else the only one. */
  graphId?: string;
}

/** Threads as a caller may see them: creating, reading, listing, their audit, the approvals inbox. */
export class ThreadService {
  constructor(private readonly ctx: RunContext) {}

  /**
   * `POST /threads`: a new thread owned by `p`. An id someone else owns is `thread_not_found` (as
   * if it did not exist); one `p` owns is `thread_exists`; `forbidden` without the `user` role.
   */
  async create(p: Principal, req: NewThread = {}): Promise<{ thread_id: string; graph_id: string; status: "idle" }> {
    const { threadId, metadata } = req;
    const id = threadId ?? randomUUID();
    const { access, store } = this.ctx;
    const graph = this.ctx.graphs.pick(req.graphId);
    const existing = await store.threads.get(id);
    if (existing && !access.owns(p, existing.owner)) throw threadNotFound(id);
    if (!access.mayStartRuns(p)) throw refusals.createNeedsUser();
    if (existing) throw refusals.threadExists(id);
    if (!(await store.threads.create(id, p.sub, { metadata, graphId: graph.id }))) {
      // Made by someone else since the read: theirs is not ours to admit exists.
      const now = await store.threads.get(id);
      if (now && !access.owns(p, now.owner)) throw threadNotFound(id);
      throw refusals.threadExists(id);
    }
    return { thread_id: id, graph_id: graph.id, status: "idle" as const };
  }

  /** `GET /graphs`: what this server serves; anyone who may call the API may read it. */
  graphs(): GraphList {
    return { items: this.ctx.graphs.list() };
  }

  /** `GET /threads/:id`. */
  /**
   * The gate's word for why an interrupt takes no decision now (`approval_expired`, its deadline
   * passed; `not_waiting`, closed otherwise), or undefined while it waits: for a face holding a
   * credential bound to that one interrupt (an emailed link), so it says why as the API would.
   */
  async closedAs(o: { threadId: string; interruptId: string }): Promise<"approval_expired" | "not_waiting" | undefined> {
    const r = await this.ctx.store.interrupts.get(o.interruptId);
    if (!r || r.thread_id !== o.threadId) return "not_waiting";
    const why = whyNotOpen(r, this.ctx.clock.now());
    if (!why) return undefined;
    return "code" in why && why.code === "approval_expired" ? "approval_expired" : "not_waiting";
  }

  async view(p: Principal, threadId: string): Promise<ThreadView> {
    await seeThread(this.ctx, p, threadId);
    return readThreadView(this.ctx, threadId);
  }

  /** The thread as LangGraph's API shows it: row, messages with their ids, open interrupt; masked. */
  async snapshot(p: Principal, threadId: string): Promise<ThreadSnapshot> {
    await seeThread(this.ctx, p, threadId);
    return readThreadSnapshot(this.ctx, threadId);
  }

  /**
   * The thread as it was before checkpoint `before` (LangGraph's history), newest first, masked;
   * at most `limit` states.
   */
  async history(p: Principal, threadId: string, o: { limit: number; before: string }): Promise<PastState[]> {
    const t = await seeThread(this.ctx, p, threadId);
    return readThreadHistory(this.ctx, t, o);
  }

  /** The thread at one of its checkpoints, masked; a checkpoint it does not have is `not_found`. */
  async stateAt(p: Principal, threadId: string, checkpointId: string): Promise<PastState> {
    const t = await seeThread(this.ctx, p, threadId);
    const state = await readThreadStateAt(this.ctx, t, checkpointId);
    if (!state) throw refusals.noCheckpoint(checkpointId);
    return state;
  }

  /** A copy of `p`'s idle thread, with what was settled on it; its new id. */
  async copy(p: Principal, threadId: string): Promise<string> {
    return copyThread(this.ctx, p, threadId);
  }

  /** Checkpoint `checkpointId` copied as the thread's newest ("re-run from here"), under the fork rule; the new checkpoint's config. */
  async copyCheckpoint(p: Principal, threadId: string, checkpointId: string): Promise<Record<string, unknown>> {
    return copyCheckpoint(this.ctx, p, { threadId, checkpointId });
  }

  /** One run of a thread `p` may see; a run of another thread is `not_found`. */
  async run(p: Principal, threadId: string, runId: string): Promise<RunRow> {
    await seeThread(this.ctx, p, threadId);
    const run = await this.ctx.store.runs.get(runId);
    if (!run || run.thread_id !== threadId) throw refusals.noRun(runId);
    return run;
  }

  /** The runs of a thread `p` may see, newest first. */
  async runs(p: Principal, threadId: string, page: { limit: number; offset: number }): Promise<RunRow[]> {
    await seeThread(this.ctx, p, threadId);
    return this.ctx.store.runs.listForThread(threadId, page.limit, page.offset);
  }

  /** The thread's record, if `p` may see it. */
  async row(p: Principal, threadId: string): Promise<ThreadRow> {
    return seeThread(this.ctx, p, threadId);
  }

  /** The graphs served, as objects (LangGraph's API draws them and names their assistants). */
  catalog(): GraphCatalog {
    return this.ctx.graphs;
  }

  /** The thread's latest run, for `GET …/stream`; null before its first. */
  async latestRun(p: Principal, threadId: string): Promise<string | null> {
    return (await seeThread(this.ctx, p, threadId)).latest_run_id;
  }

  /** `GET /threads`: `p`'s own threads (every thread for an admin), most recently active first. */
  async list(p: Principal, limit: number, cursor: string | undefined): Promise<ThreadList> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const owner = this.ctx.access.seesAll(p) ? null : p.sub;
    const rows = await this.ctx.store.threads.list(owner, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const { scrubber } = this.ctx.redactor;
    return {
      // The title is the user's words: scrubbed like the same text in the thread view.
      items: page.map((t) => ({ ...summary(t), title: t.title === null ? null : scrubber.scrub(t.title) })),
      next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  /**
   * `p`'s threads (every thread for an admin) that `match`, most recently active first, for
   * LangGraph's thread search: its filters are on metadata and status, which no index covers, so
   * it reads up to `SEARCH_SCAN` threads.
   */
  async search(p: Principal, o: { limit: number; offset: number; match: (t: ThreadRow) => boolean }): Promise<ThreadRow[]> {
    const owner = this.ctx.access.seesAll(p) ? null : p.sub;
    const out: ThreadRow[] = [];
    let after: { updatedAt: number; threadId: string } | undefined;
    for (let scanned = 0; scanned < SEARCH_SCAN && out.length < o.offset + o.limit; ) {
      const rows = await this.ctx.store.threads.list(owner, SEARCH_PAGE, after);
      for (const t of rows) if (o.match(t)) out.push(t);
      scanned += rows.length;
      const last = rows.at(-1);
      if (rows.length < SEARCH_PAGE || !last) break;
      after = { updatedAt: last.updated_at, threadId: last.thread_id };
    }
    return out.slice(o.offset, o.offset + o.limit);
  }

  /** `GET /threads/:id/audit`: readable by whoever may read the thread. */
  async audit(p: Principal, threadId: string): Promise<AuditTrail> {
    await seeThread(this.ctx, p, threadId);
    return { thread_id: threadId, entries: (await this.ctx.store.audit.list(threadId)).map(auditEntry) };
  }

  /** `GET /approvals`: every open interrupt `p` may decide as a whole, soonest deadline first. */
  async approvals(p: Principal): Promise<ApprovalList> {
    const { access, store } = this.ctx;
    const items = (await store.interrupts.listOpen(this.ctx.clock.now()))
      .filter((r) => access.mayDecideWaiting(p, { owner: r.owner, calls: r.calls, requester: r.requester, partial: takesPartialDecisions(r) }))
      .map((r) => {
        // Through the same exit as `pending`: masked and scrubbed.
        const { thread_id, interrupt_id, calls, expires_at } = this.ctx.redactor.interrupt(interruptPayload(r));
        return { thread_id, interrupt_id, calls, expires_at, requested_by: r.owner, escalated: r.escalated_at !== null };
      });
    return { items };
  }
}

function summary(t: ThreadRow) {
  return {
    thread_id: t.thread_id,
    graph_id: t.graph_id,
    status: t.status,
    last_outcome: t.last_outcome,
    created_at: new Date(t.created_at).toISOString(),
    updated_at: new Date(t.updated_at).toISOString(),
    title: t.title,
  };
}

function encodeCursor(t: ThreadRow): string {
  return Buffer.from(JSON.stringify([t.updated_at, t.thread_id])).toString("base64url");
}

function decodeCursor(cursor: string): { updatedAt: number; threadId: string } {
  try {
    const [updatedAt, threadId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (Number.isSafeInteger(updatedAt) && typeof threadId === "string") return { updatedAt: updatedAt as number, threadId };
  } catch {
    // falls through to the refusal below: a cursor is ours or it is invalid
  }
  throw refusals.badCursor();
}
