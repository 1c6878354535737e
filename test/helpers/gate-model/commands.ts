/**
 * The steps of the gate model as fast-check commands, and their arbitraries: alice asks for calls;
 * someone decides (approve, reject, edit; fresh or on the card as first shown) through some face;
 * the clock moves; the server sweeps expired interrupts; someone cancels; the server restarts.
 * Each step predicts the server's answer from the model, compares, commits, then checks the
 * invariants against the server's store.
 */
import fc from "fast-check";
import { CHANNEL_FACES, channelIntent, FACES, type Face, prepareDecision } from "./faces.js";
import { describeOutcome, matches, type Outcome, outcomeKey, outcomeOfPrediction } from "./outcome.js";
import { checkAgreement, checkSafety, InvariantBroken } from "./invariants.js";
import {
  bindSpecs,
  closeWithout,
  type DecisionSpec,
  latest,
  type MCall,
  type MInterrupt,
  type Model,
  type MThread,
  mayDecideWaiting,
  maySee,
  openOf,
  policyOfCall,
  predictDecision,
  previewNow,
  sweep,
  TTL_MS,
} from "./model.js";
import { EMAIL, mayDecide, owns, WHO, type Who } from "./principals.js";
import { type GateSystem, messageFor, type PlannedCall } from "./system.js";

/** The model and a counter for call ids (unique within one run). */
export interface ModelState {
  m: Model;
  nextCall: number;
}

export interface RealState {
  sys: GateSystem;
}

type GateCommand = fc.AsyncCommand<ModelState, RealState>;

/** How decisions were answered across a test file's runs, by face ("slack call_changed", …): what the random steps reached. */
export const outcomeCounts = new Map<string, number>();
const count = (face: Face, o: Outcome | string) => {
  const key = `${face} ${typeof o === "string" ? o : outcomeKey(o)}`;
  outcomeCounts.set(key, (outcomeCounts.get(key) ?? 0) + 1);
};

/** A call alice's message asks for. */
export type CallSpec = { tool: "refund_order"; order: string; amount: number } | { tool: "send_email" };

const threadName = (k: number) => `t${k}`;
const threadOf = (s: ModelState, k: number): MThread | undefined => s.m.threads.find((t) => t.id === threadName(k));

/** After every step: safety from the store, then agreement with the model. */
async function checkAll(s: ModelState, r: RealState): Promise<void> {
  checkSafety(s.m, r.sys);
  await checkAgreement(s.m, r.sys);
}

/** alice asks, on thread k, for these calls; the run stops at the gate with them. */
export class Ask implements GateCommand {
  constructor(
    readonly k: number,
    readonly calls: readonly CallSpec[],
  ) {}
  check(s: Readonly<ModelState>): boolean {
    const t = threadOf(s as ModelState, this.k);
    return !t || !openOf(t);
  }
  async run(s: ModelState, r: RealState): Promise<void> {
    const planned: PlannedCall[] = this.calls.map((c) => {
      const id = `c${++s.nextCall}`;
      return c.tool === "refund_order"
        ? { id, name: c.tool, args: { order_id: c.order, amount_cents: c.amount, reason: "damaged" } }
        : { id, name: c.tool, args: { to: "carol@example.com", subject: `Refund ${id}`, body: "on its way" } };
    });
    const id = threadName(this.k);
    const res = await r.sys.request("alice", "POST", `/threads/${id}/runs`, { message: messageFor(planned) }, "text/event-stream");
    if (res.status !== 200) throw new InvariantBroken(`alice's message on ${id} answered ${res.status} ${res.text.slice(0, 300)}`);
    const intr = /event: interrupt\ndata: (.+)\n/.exec(res.text);
    if (!intr) throw new InvariantBroken(`alice's message on ${id} did not stop at the gate: ${res.text.slice(-300)}`);
    const payload = JSON.parse(intr[1]!) as { interrupt_id: string; calls: Array<{ call_id: string; version?: number; policy: string; preview?: { refunded_cents: number } }> };
    // Slack's message and the mails go out at once, before time can move past their deadline.
    await r.sys.drained(id);
    const state = await r.sys.request("alice", "GET", `/langgraph/threads/${id}/state`);
    const lgId = String(state.json?.tasks?.[0]?.interrupts?.[0]?.id ?? payload.interrupt_id);
    let t = threadOf(s, this.k);
    if (!t) s.m.threads.push((t = { id, interrupts: [], deciders: new Set() }));
    const calls: MCall[] = planned.map((p) => ({
      id: p.id,
      tool: p.name as MCall["tool"],
      versions: [{ args: p.args, preview: previewNow(s.m, p.name, p.args) }],
      counting: [],
      log: [],
    }));
    const opened: MInterrupt = { id: payload.interrupt_id, lgId, calls, partial: calls.some((c) => policyOfCall(c).kind === "quorum"), expiresAt: s.m.now + TTL_MS, state: "waiting", mailed: [] };
    opened.mailed = WHO.filter((w) => EMAIL[w] !== undefined && mayDecideWaiting(w, opened));
    t.interrupts.push(opened);
    // What the interrupt shows is what the model holds: the calls, their policies and versions, the previews.
    for (const c of calls) {
      const shown = payload.calls.find((x) => x.call_id === c.id);
      const where = `the interrupt of ${id} shows call ${c.id}`;
      if (!shown) throw new InvariantBroken(`${where}: missing`);
      if (shown.policy !== policyOfCall(c).kind) throw new InvariantBroken(`${where} with policy ${shown.policy}; the model: ${policyOfCall(c).kind}`);
      if (shown.version !== undefined && shown.version !== 1) throw new InvariantBroken(`${where} at version ${shown.version}; it just opened`);
      const want = c.versions[0]!.preview?.refunded_cents;
      if (want !== undefined && shown.preview?.refunded_cents !== want) throw new InvariantBroken(`${where} with ${shown.preview?.refunded_cents} cents refunded; the model: ${want}`);
    }
    await checkAll(s, r);
  }
  toString(): string {
    return `Ask(t${this.k}, ${this.calls.map((c) => (c.tool === "refund_order" ? `refund ${c.order} ${c.amount}` : "email")).join(" + ")})`;
  }
}

/** `who` decides thread k's latest interrupt through `face`; a refusal is asked again on every face. */
export class Decide implements GateCommand {
  /**
   * @param who a principal, or `{allowed: n}`: the n-th (cyclically) of those the model lets decide
   *   the open interrupt at that point, so that decisions are taken more often than refused.
   */
  constructor(
    readonly k: number,
    public who: Who | { allowed: number },
    readonly face: Face,
    readonly specs: readonly DecisionSpec[],
  ) {}
  private resolved: Who | undefined;
  check(s: Readonly<ModelState>): boolean {
    const t = threadOf(s as ModelState, this.k);
    return t !== undefined && latest(t) !== undefined;
  }
  /** Why the face could not say it (no Slack user, no live link): the step then changes nothing. */
  unusable: string | undefined;
  /** What the face answered, as `describeOutcome` words it. */
  answered: string | undefined;
  async run(s: ModelState, r: RealState): Promise<void> {
    const t = threadOf(s, this.k)!;
    const intr = latest(t)!;
    const w = (this.resolved = whoDecides(s.m, t, this.who));
    const p = await prepareDecision(r.sys, this.face, s.m, w, t, intr, { specs: this.specs });
    if (!p.usable) {
      this.unusable = p.why;
      count(this.face, "unusable");
      await checkAll(s, r);
      return;
    }
    const want = p.before ?? predictDecision(s.m, t, w, p.ds);
    const got = await p.send();
    this.answered = describeOutcome(got);
    count(this.face, got);
    const wanted = outcomeOfPrediction(want);
    if (!matches(got, wanted)) throw new InvariantBroken(`${this} answered ${describeOutcome(got)}; the contract says ${describeOutcome(wanted)}`);
    if (got.kind === "refused") {
      // Nothing was applied. The gate's refusal: the same decision is the same refusal on every face that can say it.
      if (!p.before) {
        for (const face of FACES.filter((f) => f !== this.face)) {
          const q = await prepareDecision(r.sys, face, s.m, w, t, intr, { ds: p.ds });
          if (!q.usable) continue;
          const again = outcomeOfPrediction(q.before ?? predictDecision(s.m, t, w, q.ds));
          if (again.kind !== "refused") continue;
          const answered = await q.send();
          count(face, answered);
          if (!matches(answered, again)) {
            throw new InvariantBroken(`${this}: refused ${describeOutcome(got)} on ${this.face}, but ${describeOutcome(answered)} on ${face} (the contract says ${describeOutcome(again)})`);
          }
        }
      }
    } else if (want.kind !== "refused") want.commit();
    await checkAll(s, r);
  }
  toString(): string {
    const spec = (d: DecisionSpec) => (d.kind === "skip" ? "skip" : `${d.kind}${d.kind === "edit" ? `→${d.amount}` : ""}${d.blind ? " blind" : ""}${d.nameVersion ? " v" : ""}`);
    const who = typeof this.who === "string" ? this.who : `allowed#${this.who.allowed}${this.resolved ? `=${this.resolved}` : ""}`;
    const channel = (CHANNEL_FACES as readonly Face[]).includes(this.face) ? channelIntent(this.specs) : undefined;
    const what = channel ? `${channel.action} all${channel.blind ? " blind" : ""}` : `[${this.specs.map(spec).join(", ")}]`;
    return `Decide(t${this.k}, ${who}, ${this.face}, ${what})${this.unusable ? ` (unusable: ${this.unusable})` : ""}`;
  }
}

/** The principal a Decide names, or the n-th of those allowed to decide something of the thread's open interrupt. */
function whoDecides(m: Model, t: MThread, who: Who | { allowed: number }): Who {
  if (typeof who === "string") return who;
  const open = openOf(t);
  const allowed = open ? WHO.filter((w) => open.calls.some((c) => mayDecide(w, policyOfCall(c)))) : [];
  return allowed.length ? allowed[who.allowed % allowed.length]! : "admin";
}

/** Time passes (the fake clock): interrupts past their deadline refuse decisions (410) before any sweep. */
export class Advance implements GateCommand {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(s: ModelState, r: RealState): Promise<void> {
    // What the last step owes Slack and mail is delivered at the time it happened.
    for (const t of s.m.threads) await r.sys.drained(t.id);
    s.m.now += this.ms;
    r.sys.clock.advance(this.ms);
  }
  toString(): string {
    return `Advance(${this.ms / 1000} s)`;
  }
}

/** The server's expiry sweep closes every interrupt past its deadline. */
export class Sweep implements GateCommand {
  check(): boolean {
    return true;
  }
  async run(s: ModelState, r: RealState): Promise<void> {
    await r.sys.sweep();
    sweep(s.m);
    await checkAll(s, r);
  }
  toString(): string {
    return "Sweep";
  }
}

/** `who` cancels thread k: its owner (or an admin) closes the open interrupt; anyone else is refused. */
export class Cancel implements GateCommand {
  constructor(
    readonly k: number,
    readonly who: Who,
  ) {}
  check(s: Readonly<ModelState>): boolean {
    return threadOf(s as ModelState, this.k) !== undefined;
  }
  async run(s: ModelState, r: RealState): Promise<void> {
    const t = threadOf(s, this.k)!;
    const want = !maySee(this.who, t) ? "404 thread_not_found" : !owns(this.who) ? "403 forbidden" : "200";
    const res = await r.sys.request(this.who, "POST", `/threads/${t.id}/cancel`, {});
    const got = res.status === 200 ? "200" : `${res.status} ${res.json?.error?.code}`;
    if (got !== want) throw new InvariantBroken(`${this} answered ${got}; the contract says ${want}`);
    const open = openOf(t);
    if (got === "200" && open) closeWithout(s.m, open, "cancelled");
    await checkAll(s, r);
  }
  toString(): string {
    return `Cancel(t${this.k}, ${this.who})`;
  }
}

/** The server closes and another opens on the same data dir (its start-up sweep included). */
export class Restart implements GateCommand {
  check(): boolean {
    return true;
  }
  async run(s: ModelState, r: RealState): Promise<void> {
    // A delivery cut off mid-flight waits out its lease, which a fake clock that hardly moves never does.
    for (const t of s.m.threads) await r.sys.drained(t.id);
    await r.sys.restart();
    sweep(s.m);
    await checkAll(s, r);
  }
  toString(): string {
    return "Restart";
  }
}

/** How many threads a run uses: few, so decisions meet each other on the same threads and orders. */
const THREADS = 2;
const thread = fc.integer({ min: 0, max: THREADS - 1 });

/** Mostly A-1003 ($25.50): refunds on one order make previews go stale. */
const callSpec: fc.Arbitrary<CallSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ tool: fc.constant("refund_order" as const), order: fc.constantFrom("A-1003", "A-1003", "A-1004"), amount: fc.constantFrom(2000, 1999, 60_000, 60_000) }) },
  { weight: 1, arbitrary: fc.constant({ tool: "send_email" as const }) },
);

const decisionSpec: fc.Arbitrary<DecisionSpec> = fc.record({
  kind: fc.oneof({ weight: 5, arbitrary: fc.constant("approve" as const) }, { weight: 3, arbitrary: fc.constant("edit" as const) }, { weight: 1, arbitrary: fc.constant("reject" as const) }, { weight: 1, arbitrary: fc.constant("skip" as const) }),
  // One decision in three on the card as first shown, not the call as it now stands.
  blind: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
  nameVersion: fc.boolean(),
  // Across the quorum threshold both ways ($50,000), and the two amounts of hole (b).
  amount: fc.constantFrom(1999, 500, 5_000, 70_000, 500_000),
});

const ask = fc.tuple(thread, fc.array(callSpec, { minLength: 1, maxLength: 2 })).map(([k, calls]) => new Ask(k, calls));
const decisions = fc.array(decisionSpec, { minLength: 2, maxLength: 2 });
/** Anyone at all decides, a stranger and the owner included. */
const decideByAnyone = fc.tuple(thread, fc.constantFrom(...WHO), fc.constantFrom(...FACES), decisions).map(([k, w, f, d]) => new Decide(k, w, f, d));
/** Someone who may decide something decides. */
const decideByDecider = fc.tuple(thread, fc.constantFrom<Who>("ops", "fin1", "fin2", "admin"), fc.constantFrom(...FACES), decisions).map(([k, w, f, d]) => new Decide(k, w, f, d));

/** One of those who may decide something of the open interrupt decides. */
const decideByAllowed = fc.tuple(thread, fc.nat(5), fc.constantFrom(...FACES), decisions).map(([k, n, f, d]) => new Decide(k, { allowed: n }, f, d));

/** Every step; fast-check picks among them evenly, so asking and deciding appear several times. */
export const gateCommands: Array<fc.Arbitrary<GateCommand>> = [
  ask,
  ask,
  decideByAnyone,
  decideByDecider,
  decideByAllowed,
  decideByAllowed,
  fc.constantFrom(60_000, 300_000, 901_000).map((ms) => new Advance(ms)),
  fc.constant(new Sweep()),
  fc.tuple(thread, fc.constantFrom<Who>("alice", "alice", "admin", "bob", "fin1")).map(([k, w]) => new Cancel(k, w)),
  fc.constant(new Restart()),
];
