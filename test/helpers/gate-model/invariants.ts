/**
 * What must hold after every step of the gate model, read from the server's own store and views.
 *
 * Safety, from the store alone and the approvals the server took (whatever the model predicted):
 * a call ran only if its policy was met by distinct allowed principals whose approvals, given
 * before its deadline, were of the very arguments that ran and of a preview still true when it ran;
 * and at most once. Agreement: the effects, and each thread as its owner reads it, are what the
 * model says.
 */
import type { MCall, Model, MThread } from "./model.js";
import { current, latest, openOf, sameArgs } from "./model.js";
import { mayDecide, needed, policyOf } from "./principals.js";
import type { GateSystem } from "./system.js";

/** A broken invariant: the message says which, on what call, with what the server did. */
export class InvariantBroken extends Error {
  override readonly name = "InvariantBroken";
}

const fail = (msg: string): never => {
  throw new InvariantBroken(msg);
};

/** Every call of the model, with the thread and interrupt that hold it. */
function callsOf(m: Model): Map<string, { t: MThread; call: MCall; expiresAt: number }> {
  const out = new Map<string, { t: MThread; call: MCall; expiresAt: number }>();
  for (const t of m.threads) for (const i of t.interrupts) for (const call of i.calls) out.set(call.id, { t, call, expiresAt: i.expiresAt });
  return out;
}

/** The part of a refund's or email's arguments its effect row keeps. */
const ranArgs = (tool: string, args: Record<string, unknown>) =>
  tool === "refund_order" ? { order_id: args.order_id, amount_cents: args.amount_cents } : { subject: args.subject };

/** Safety: every effect is of a call whose policy was met by approvals bound to what ran, once. */
export function checkSafety(m: Model, sys: GateSystem): void {
  const { refunds, outbox, ledger } = sys.effects();
  const calls = callsOf(m);
  const seen = new Set<string>();
  for (const r of ledger) {
    if (seen.has(r.call_id)) fail(`call ${r.call_id} has two ledger rows: it ran twice`);
    seen.add(r.call_id);
  }
  const ran = new Set<string>();
  const refundedBefore = new Map<string, number>();
  const rows = [
    ...refunds.map((r) => ({ call_id: r.call_id, tool: "refund_order", args: { order_id: r.order_id, amount_cents: r.amount_cents }, order: r.order_id, cents: r.amount_cents })),
    ...outbox.map((r) => ({ call_id: r.call_id, tool: "send_email", args: { subject: r.subject }, order: undefined, cents: 0 })),
  ];
  for (const row of rows) {
    if (ran.has(row.call_id)) fail(`call ${row.call_id} ran twice (two ${row.tool} rows)`);
    ran.add(row.call_id);
    const at = calls.get(row.call_id) ?? fail(`a ${row.tool} row for call ${row.call_id}, which nobody asked for`);
    const { call, expiresAt } = at;
    // The approvals that count: from the last edit (itself the editor's approval) on.
    const lastEdit = call.log.map((a) => a.edit).lastIndexOf(true);
    const window = call.log.slice(Math.max(0, lastEdit));
    if (!window.length) fail(`call ${row.call_id} ran (${JSON.stringify(row.args)}) without any approval the server took`);
    const ranFull = { ...current(call).args, ...row.args };
    const policy = policyOf(call.tool, ranFull);
    for (const a of window) {
      if (!sameArgs(ranArgs(call.tool, a.args), row.args)) {
        fail(`call ${row.call_id} ran with ${JSON.stringify(row.args)}, but ${a.by} approved ${JSON.stringify(ranArgs(call.tool, a.args))} (version ${a.seen}, the version ${a.by} was shown)`);
      }
      if (a.at >= expiresAt) fail(`call ${row.call_id} ran on ${a.by}'s approval given after its deadline`);
      if (!mayDecide(a.by, policy)) fail(`call ${row.call_id} ran on an approval by ${a.by}, who may not decide a call of policy ${JSON.stringify(policy)}`);
      if (row.order !== undefined) {
        const before = refundedBefore.get(row.order) ?? 0;
        if (a.preview?.order_id !== row.order || a.preview.refunded_cents !== before) {
          fail(
            `refund ${row.call_id} ran although the preview ${a.by} approved it on had gone stale: it showed ${JSON.stringify(a.preview)}, ` +
              `but ${before} cents of ${row.order} had been refunded when it ran`,
          );
        }
      }
    }
    const by = new Set(window.map((a) => a.by));
    if (by.size < needed(policy)) fail(`call ${row.call_id} ran on ${by.size} distinct approval(s) (${[...by].join(", ")}); its policy ${JSON.stringify(policy)} needs ${needed(policy)}`);
    if (row.order !== undefined) refundedBefore.set(row.order, (refundedBefore.get(row.order) ?? 0) + row.cents);
  }
}

/** Agreement: the server did what the model did, and shows each thread as the model has it. */
export async function checkAgreement(m: Model, sys: GateSystem): Promise<void> {
  const { refunds, outbox } = sys.effects();
  const actual = new Map([...refunds.map((r) => [r.call_id, "refund_order"] as const), ...outbox.map((r) => [r.call_id, "send_email"] as const)]);
  for (const [id] of actual) if (!m.effects.has(id)) fail(`call ${id} ran; the model says it must not (it ended ${m.endings.get(id) ?? "undecided"})`);
  for (const [id, e] of m.effects) if (!actual.has(id)) fail(`call ${id} (${e.tool} ${JSON.stringify(e.args)}) did not run; the model says it must have`);
  for (const r of refunds) {
    const want = m.effects.get(r.call_id)!.args;
    if (r.amount_cents !== want.amount_cents || r.order_id !== want.order_id) fail(`refund ${r.call_id} ran as ${r.order_id} ${r.amount_cents}; the model: ${JSON.stringify(want)}`);
  }
  for (const t of m.threads) {
    const view = await sys.settled(t.id);
    const open = openOf(t);
    const last = latest(t);
    const where = `thread ${t.id} as alice reads it`;
    if ((view.status === "waiting_human") !== (open !== undefined)) fail(`${where} is ${view.status}; the model: ${open ? "waiting_human" : "idle"}`);
    if (!open && last) {
      const want = last.state === "resumed" ? "completed" : last.state;
      if (view.last_outcome !== want) fail(`${where} has last_outcome ${view.last_outcome}; the model: ${want}`);
    }
    if (!open) continue;
    for (const c of open.calls) {
      const shown = (view.pending?.calls as Array<Record<string, any>> | undefined)?.find((x) => x.call_id === c.id);
      if (!shown) fail(`${where} does not show call ${c.id} pending`);
      const version = c.versions.length;
      if (shown!.version !== undefined && shown!.version !== version) fail(`${where} shows call ${c.id} at version ${shown!.version}; the model: ${version}`);
      if (c.tool === "refund_order" && shown!.args.amount_cents !== current(c).args.amount_cents) {
        fail(`${where} shows call ${c.id} for ${shown!.args.amount_cents} cents; the model: ${current(c).args.amount_cents}`);
      }
    }
  }
}
