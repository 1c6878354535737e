/**
 * The reference model of the gate: threads, their interrupts and calls, who approved which
 * version of a call having been shown which preview, and what the world (orders' refunded totals,
 * effects) should be. Pure: the commands ask it what the server must answer (`predictDecision`),
 * commit what it answered, and the invariants hold the server's store to it.
 *
 * It is written from the contract (API.md: "Identity and access", "Approval policies as teams run
 * them", "What an approval binds"), in the order the contract lists the checks.
 */
import { isDeepStrictEqual } from "node:util";
import { mayDecide, needed, owns, policyOf, type Policy, type Who } from "./principals.js";

/**
 * Whether the server enforces versions ("What an approval binds"): an approval or edit of a call
 * above version 1 must name the current version, else `409 call_changed`. Off: the model predicts
 * the pre-versions server (decisions name no version and are taken), and the invariants still
 * catch an approval riding on an edit its approver never saw.
 */
export const VERSIONS_ENFORCED = process.env.GATE_MODEL_VERSIONS !== "off";

/** Approval window, seconds (the server's APPROVAL_TTL_SECONDS). */
export const TTL_MS = 900_000;

export type Args = Record<string, unknown>;
/** What a refund's approver is shown of its order: the part the staleness check reads. */
export interface Preview {
  order_id: string;
  refunded_cents: number;
}

/** One version of a call: its arguments and the preview people were shown with them. */
export interface Version {
  args: Args;
  preview?: Preview;
}

/** An approval the server took: who, when, of which arguments, having been shown which preview. */
export interface Approval {
  by: Who;
  at: number;
  /** The version the approver was shown (for an edit: the card edited). */
  seen: number;
  /** The arguments this approval lets run (an edit's: the merged ones). */
  args: Args;
  preview?: Preview;
  edit: boolean;
}

export interface MCall {
  id: string;
  tool: "refund_order" | "send_email";
  versions: Version[];
  /** Approvals of the current version (an edit discards the ones before it). */
  counting: Approval[];
  closed?: "approved" | "rejected";
  /** Every approval the server accepted, edits included, oldest first. */
  log: Approval[];
}

export type InterruptState = "waiting" | "resumed" | "expired" | "cancelled";

export interface MInterrupt {
  id: string;
  /** LangGraph's `__interrupt__[].id`, for the map-shaped resume. */
  lgId: string;
  calls: MCall[];
  /** Holds a quorum call: decided call by call. */
  partial: boolean;
  expiresAt: number;
  state: InterruptState;
  /** Who the request was mailed to when it opened: those with an email who may decide it. */
  mailed: Who[];
}

export interface MThread {
  id: string;
  interrupts: MInterrupt[];
  /** Who has had a decision taken on this thread (keeps read access: `404` vs `403`). */
  deciders: Set<Who>;
}

/** What the server should have done to the world: refunds and emails, by call id. */
export interface Effect {
  tool: string;
  args: Args;
}

export interface Model {
  now: number;
  threads: MThread[];
  refunded: Map<string, number>;
  effects: Map<string, Effect>;
  /** Why a call closed without running, by call id (rejected, expired, cancelled, stale_preview). */
  endings: Map<string, string>;
}

/** A person's decision on one call, as a command generates it. */
export interface DecisionSpec {
  kind: "approve" | "reject" | "edit" | "skip";
  /** Acts on the card as first shown (version 1), not the call as it now stands. */
  blind: boolean;
  /** Whether a fresh decision names the version it saw (always, when the call is above version 1). */
  nameVersion: boolean;
  /** The new amount (refund) of an edit; an email's edit changes its subject. */
  amount: number;
}

/** A decision bound to a call, as every face sends it. */
export interface BoundDecision {
  call: MCall;
  kind: "approve" | "reject" | "edit";
  /** The version named, if any. */
  version?: number;
  /** The version the person was shown. */
  seen: number;
  /** Keys an edit replaces. */
  edited?: Args;
}

export type Prediction =
  | { kind: "refused"; status: number; code: string }
  | { kind: "waiting"; waitingOn: string[]; commit: () => void }
  | { kind: "run"; commit: () => void };

export const current = (c: MCall): Version => c.versions.at(-1)!;
export const policyOfCall = (c: MCall): Policy => policyOf(c.tool, current(c).args);
export const latest = (t: MThread): MInterrupt | undefined => t.interrupts.at(-1);
/** The thread's interrupt while it waits (past its deadline too, until the server closes it). */
export const openOf = (t: MThread): MInterrupt | undefined => (latest(t)?.state === "waiting" ? latest(t) : undefined);

export function newModel(now: number, refunded: Map<string, number>): Model {
  return { now, threads: [], refunded, effects: new Map(), endings: new Map() };
}

/** The preview a refund's approver is shown now. */
export const previewNow = (m: Model, tool: string, args: Args): Preview | undefined =>
  tool === "refund_order" ? { order_id: String(args.order_id), refunded_cents: m.refunded.get(String(args.order_id)) ?? 0 } : undefined;

/** Decided as a whole: `w` must be allowed every call; call by call: at least one. */
export function mayDecideWaiting(w: Who, i: MInterrupt): boolean {
  const ok = i.calls.map((c) => mayDecide(w, policyOfCall(c)));
  return i.partial ? ok.some(Boolean) : ok.every(Boolean);
}

/** Owner, admin, whoever may decide what it waits on, or whoever decided on it before. */
export function maySee(w: Who, t: MThread): boolean {
  const open = openOf(t);
  return owns(w) || (open !== undefined && mayDecideWaiting(w, open)) || t.deciders.has(w);
}

/** The specs bound to the open interrupt's calls (one spec per call, by position; extra ones dropped). */
export function bindSpecs(i: MInterrupt, specs: readonly DecisionSpec[]): BoundDecision[] {
  return i.calls.flatMap((call, n): BoundDecision[] => {
    const s = specs[n];
    if (!s || s.kind === "skip") return [];
    const seen = s.blind ? 1 : call.versions.length;
    if (s.kind === "reject") return [{ call, kind: "reject", seen }];
    // Blind: the card as first shown, naming its version only when versions are a thing to name.
    const version = s.blind ? (VERSIONS_ENFORCED && s.nameVersion ? 1 : undefined) : s.nameVersion || (VERSIONS_ENFORCED && seen > 1) ? seen : undefined;
    const edited = s.kind === "edit" ? (call.tool === "refund_order" ? { amount_cents: s.amount } : { subject: `Edited ${s.amount}` }) : undefined;
    // An edit to what the call is, or was as asked, is a plain approval on one face and a new
    // version on another ("back to the call as asked"): the model sends it as an approval.
    const [key, value] = Object.entries(edited ?? {})[0] ?? [];
    const noEdit = key !== undefined && (current(call).args[key] === value || call.versions[0]!.args[key] === value);
    const kind = noEdit ? "approve" : s.kind;
    return [{ call, kind, seen, ...(version !== undefined ? { version } : {}), ...(edited && !noEdit ? { edited } : {}) }];
  });
}

const refuse = (status: number, code: string): Prediction => ({ kind: "refused", status, code });

/**
 * What the server must answer `w`'s decisions on thread `t` (naming its latest interrupt), in the
 * contract's order: 404 (may not see), 403 (may not decide), 410 (window closed), 409
 * (not_waiting), 409 call_changed, then the calls one by one (403, 409 already_decided). Accepted,
 * `commit` applies them to the model.
 */
export function predictDecision(m: Model, t: MThread, w: Who, ds: readonly BoundDecision[]): Prediction {
  const intr = latest(t);
  const open = openOf(t);
  if (!maySee(w, t)) return refuse(404, "thread_not_found");
  if (open && !mayDecideWaiting(w, open)) return refuse(403, "forbidden");
  if (intr && (intr.state === "expired" || (intr.state === "waiting" && m.now >= intr.expiresAt))) return refuse(410, "approval_expired");
  if (!open) return refuse(409, "not_waiting");
  if (VERSIONS_ENFORCED) {
    for (const d of ds) {
      if (d.kind === "reject") continue;
      const v = d.call.versions.length;
      if (d.version === undefined ? v > 1 : d.version !== v) return refuse(409, "call_changed");
    }
  }
  return open.partial ? partial(m, t, open, w, ds) : whole(m, t, open, w, ds);
}

/** A whole decision: every call named approved (edits within its policy), the rest rejected. */
function whole(m: Model, t: MThread, open: MInterrupt, w: Who, ds: readonly BoundDecision[]): Prediction {
  for (const d of ds) {
    if (d.kind !== "edit") continue;
    const before = policyOfCall(d.call);
    const after = policyOf(d.call.tool, { ...current(d.call).args, ...d.edited });
    if (after.kind === before.kind) continue;
    if (after.kind === "quorum" || !mayDecide(w, after)) return refuse(403, "forbidden");
  }
  return {
    kind: "run",
    commit() {
      const byCall = new Map(ds.map((d) => [d.call.id, d]));
      for (const call of open.calls) {
        const d = byCall.get(call.id);
        if (!d || d.kind === "reject") {
          call.closed = "rejected";
          continue;
        }
        approve(m, call, w, d);
        call.closed = "approved";
      }
      t.deciders.add(w);
      finish(m, open);
    },
  };
}

/** Decisions call by call: each applied in order on a copy, all or nothing. */
function partial(m: Model, t: MThread, open: MInterrupt, w: Who, ds: readonly BoundDecision[]): Prediction {
  if (!ds.length) return refuse(400, "invalid_request");
  for (const d of ds) if (!mayDecide(w, policyOfCall(d.call))) return refuse(403, "forbidden");
  const calls = new Map(open.calls.map((c) => [c.id, structuredClone(c)]));
  for (const d of ds) {
    const call = calls.get(d.call.id)!;
    if (call.closed) return refuse(409, "already_decided");
    if (d.kind === "reject") {
      call.closed = "rejected";
      continue;
    }
    if (d.kind === "edit") {
      const args = { ...current(call).args, ...d.edited };
      if (!mayDecide(w, policyOf(call.tool, args))) return refuse(403, "forbidden");
      approve(m, call, w, d);
      if (call.counting.length >= needed(policyOfCall(call))) call.closed = "approved";
      continue;
    }
    if (call.counting.some((a) => a.by === w)) return refuse(409, "already_decided");
    approve(m, call, w, d);
    if (call.counting.length >= needed(policyOfCall(call))) call.closed = "approved";
  }
  const next = open.calls.map((c) => calls.get(c.id)!);
  const waitingOn = next.filter((c) => !c.closed).map((c) => c.id);
  const commit = () => {
    open.calls = next;
    t.deciders.add(w);
    if (!waitingOn.length) finish(m, open);
  };
  return waitingOn.length ? { kind: "waiting", waitingOn, commit } : { kind: "run", commit };
}

/**
 * `w`'s approval of `call` as `d` names it. An edit is a new version (its preview taken now) and
 * the editor's approval of it, bound to the preview on the card edited; plain approvals are of
 * the version their approver was shown.
 */
function approve(m: Model, call: MCall, w: Who, d: BoundDecision): void {
  const seen = call.versions[d.seen - 1]!;
  if (d.kind === "edit") {
    const args = { ...current(call).args, ...d.edited };
    const card = current(call).preview;
    call.versions.push({ args, preview: previewNow(m, call.tool, args) });
    const a: Approval = { by: w, at: m.now, seen: d.seen, args, edit: true, ...(card ? { preview: card } : {}) };
    call.counting = [a];
    call.log.push(a);
    return;
  }
  const a: Approval = { by: w, at: m.now, seen: d.seen, args: seen.args, edit: false, ...(seen.preview ? { preview: seen.preview } : {}) };
  call.counting.push(a);
  call.log.push(a);
}

/**
 * The interrupt is decided and its run goes: approved calls run in order, a refund only if the
 * preview its approval is bound to (the card its last editor edited, else the call's own) still
 * holds; then the model answers and the thread is idle.
 */
function finish(m: Model, i: MInterrupt): void {
  i.state = "resumed";
  for (const call of i.calls) {
    if (call.closed !== "approved") {
      m.endings.set(call.id, "rejected");
      continue;
    }
    const args = current(call).args;
    if (call.tool === "refund_order") {
      const bound = call.versions.length > 1 ? call.versions.at(-2)!.preview! : call.versions[0]!.preview!;
      const order = String(args.order_id);
      if (bound.order_id !== order || bound.refunded_cents !== (m.refunded.get(order) ?? 0)) {
        m.endings.set(call.id, "stale_preview");
        continue;
      }
      m.refunded.set(order, (m.refunded.get(order) ?? 0) + (args.amount_cents as number));
    }
    m.effects.set(call.id, { tool: call.tool, args });
    m.endings.set(call.id, "ok");
  }
}

/** Closes an open interrupt without running anything (expiry, cancel). */
export function closeWithout(m: Model, i: MInterrupt, how: "expired" | "cancelled"): void {
  i.state = how;
  for (const c of i.calls) m.endings.set(c.id, how);
}

/** The server's expiry sweep: every interrupt past its deadline is closed `expired`. */
export function sweep(m: Model): void {
  for (const t of m.threads) {
    const open = openOf(t);
    if (open && m.now >= open.expiresAt) closeWithout(m, open, "expired");
  }
}

/** Whether two argument objects are the same call. */
export const sameArgs = (a: Args, b: Args): boolean => isDeepStrictEqual(a, b);
