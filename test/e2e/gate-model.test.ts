/**
 * The gate, proved against a model (DESIGN.md practice 18): fast-check drives random sequences of
 * requests, decisions, edits, expiries, cancels and restarts, by random principals (the owner,
 * an approver, two of finance, an admin, a stranger) through random faces (tollgate's resume,
 * LangGraph's positional and map-shaped `command.resume`, the thread-centric protocol's
 * `input.respond`, a signed Slack click or reject modal, a mailed decide link), against a tollgate
 * in this process on a fake clock, with a Slack stand-in and an SMTP server. After every step: every call that ran had its policy met by distinct allowed
 * principals whose approvals were of the arguments that ran and of a preview still true, at most
 * once; a refusal is the same status and code on every face; never a 5xx; and the server agrees
 * with the model on every answer, effect and thread.
 *
 * GATE_MODEL_SEED / GATE_MODEL_PATH replay a failure; GATE_MODEL_RUNS sets how many sequences;
 * GATE_MODEL_VERSIONS=off models a server without call versions (see model.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Advance, Ask, Cancel, Decide, gateCommands, type ModelState, outcomeCounts, type RealState, Sweep } from "../helpers/gate-model/commands.js";
import { FACES } from "../helpers/gate-model/faces.js";
import { type DecisionSpec, newModel, VERSIONS_ENFORCED } from "../helpers/gate-model/model.js";
import type { Who } from "../helpers/gate-model/principals.js";
import { GateSystem } from "../helpers/gate-model/system.js";

const RUNS = Number(process.env.GATE_MODEL_RUNS ?? 150);
/** What the random part may take, whatever RUNS says: it fits `npm test` on 2 cores. */
const TIME_LIMIT_MS = Number(process.env.GATE_MODEL_TIME_LIMIT_MS ?? 40_000);
const MAX_COMMANDS = 40;

/** Runs one sequence on a fresh server (and data dir); every step checks the invariants itself. */
async function runSequence(cmds: Iterable<fc.AsyncCommand<ModelState, RealState>>): Promise<void> {
  const sys = await GateSystem.open();
  try {
    await fc.asyncModelRun(() => ({ model: { m: newModel(sys.clock.now(), new Map()), nextCall: 0 }, real: { sys } }), cmds);
  } finally {
    await sys.close();
  }
}

describe("the gate against its model", () => {
  it(`random sequences (${RUNS} of up to ${MAX_COMMANDS} steps; versions ${VERSIONS_ENFORCED ? "enforced" : "off"})`, async () => {
    const seed = process.env.GATE_MODEL_SEED ? Number(process.env.GATE_MODEL_SEED) : undefined;
    const path = process.env.GATE_MODEL_PATH;
    const replayPath = process.env.GATE_MODEL_REPLAY;
    const commands = fc.commands(gateCommands, { maxCommands: MAX_COMMANDS, size: "max", ...(replayPath ? { replayPath } : {}) });
    const result = await fc.check(
      fc.asyncProperty(commands, (cmds) => runSequence(cmds)),
      { numRuns: RUNS, ...(seed !== undefined ? { seed } : {}), ...(path ? { path } : {}), verbose: 0, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    // GATE_MODEL_STATS=1: what the decisions reached, to judge the generators by.
    if (process.env.GATE_MODEL_STATS) console.log(`${result.numRuns} runs; decisions answered:`, Object.fromEntries([...outcomeCounts].sort()));
    if (!result.failed) return;
    // fast-check's report names the seed, the path and the shrunk steps; the line to replay them leads.
    const report = fc.defaultReportMessage(result) ?? "failed";
    const replay = /replayPath="([^"]*)"/.exec(report)?.[1];
    const again = `GATE_MODEL_SEED=${result.seed} GATE_MODEL_PATH="${result.counterexamplePath}"${replay ? ` GATE_MODEL_REPLAY="${replay}"` : ""}`;
    const why = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(`${why}\nReplay with: ${again} npx vitest run --project sqlite test/e2e/gate-model.test.ts -t random\n${report}`);
  }, 90_000);
});

const approve = (o: Partial<DecisionSpec> = {}): DecisionSpec => ({ kind: "approve", blind: false, nameVersion: false, amount: 0, ...o });
const edit = (amount: number, o: Partial<DecisionSpec> = {}): DecisionSpec => ({ kind: "edit", blind: false, nameVersion: false, amount, ...o });
const skip: DecisionSpec = { kind: "skip", blind: false, nameVersion: false, amount: 0 };

describe("the holes the model must catch, as fixed sequences", () => {
  it("(a) a quorum call edited by one of finance is not run on the next one's approval of what was first shown", async () => {
    await runSequence([
      new Ask(0, [{ tool: "refund_order", order: "A-1003", amount: 60_000 }]),
      new Decide(0, "fin1", "tollgate", [edit(500_000), skip]),
      // fin2 was shown the $600 card: with versions, 409 call_changed; without, the invariants say so.
      new Decide(0, "fin2", "tollgate", [approve({ blind: true }), skip]),
      new Decide(0, "fin2", "lg-positional", [approve({ blind: true, nameVersion: true }), skip]),
      new Decide(0, "fin2", "lg-map", [approve(), skip]),
    ]);
  });

  it("(b) a refund approved with an edit on a preview gone stale ends stale_preview", async () => {
    await runSequence([
      new Ask(0, [{ tool: "refund_order", order: "A-1003", amount: 2000 }]),
      new Ask(1, [{ tool: "refund_order", order: "A-1003", amount: 2000 }]),
      new Decide(0, "ops", "tollgate", [approve(), skip]),
      new Decide(1, "ops", "tollgate", [edit(1999), skip]),
    ]);
  });

  it("expiry: a decision past the deadline is 410 before and after the sweep, on every face", async () => {
    await runSequence([
      new Ask(0, [{ tool: "refund_order", order: "A-1004", amount: 500 }, { tool: "send_email" }]),
      new Advance(901_000),
      new Decide(0, "ops", "lg-positional", [approve(), approve()]),
      new Sweep(),
      new Decide(0, "ops", "tollgate", [approve(), approve()]),
    ]);
  });
});

const reject: DecisionSpec = { kind: "reject", blind: false, nameVersion: false, amount: 0 };
/**
 * The same decision by `who` on each of the six faces, one after another; the mailed link first,
 * since it works once and a refusal elsewhere is also tried on every face that can say it.
 */
const onEveryFace = (k: number, who: Who, specs: DecisionSpec[]) => ["email" as const, ...FACES.filter((f) => f !== "email")].map((f) => new Decide(k, who, f, specs));
const answers = (ds: Decide[]) => Object.fromEntries(ds.map((d) => [d.face, d.answered ?? `unusable: ${d.unusable}`]));

describe("the same decision, the same answer on all six faces", () => {
  it("four eyes: the requester's approval is refused on every face; she gets no mail for a call she may not approve", async () => {
    const tries = onEveryFace(0, "alice", [approve(), approve()]);
    await runSequence([new Ask(0, [{ tool: "refund_order", order: "A-1004", amount: 500 }]), ...tries]);
    expect(answers(tries)).toEqual({
      tollgate: "403 forbidden",
      "lg-positional": "403 forbidden",
      "lg-map": "403 forbidden",
      "lg-respond": "forbidden",
      slack: "forbidden",
      email: expect.stringMatching(/^unusable: alice got no mail/),
    });
  });

  it("expired: a decision past the deadline is refused approval_expired on every face, before the sweep and after it", async () => {
    const before = onEveryFace(0, "ops", [approve(), approve()]);
    const after = onEveryFace(0, "admin", [approve(), approve()]);
    await runSequence([new Ask(0, [{ tool: "refund_order", order: "A-1004", amount: 500 }]), new Advance(901_000), ...before, new Sweep(), ...after]);
    const expired = { tollgate: "410 approval_expired", "lg-positional": "410 approval_expired", "lg-map": "410 approval_expired", "lg-respond": "approval_expired", slack: "approval_expired", email: "approval_expired" };
    expect([answers(before), answers(after)]).toEqual([expired, expired]);
  });

  it("cancelled after its deadline, before the sweep: not_waiting on every face, the mailed link's page too", async () => {
    const tries = onEveryFace(0, "admin", [approve(), approve()]);
    await runSequence([new Ask(0, [{ tool: "refund_order", order: "A-1004", amount: 500 }]), new Advance(901_000), new Cancel(0, "alice"), ...tries]);
    expect(Object.values(answers(tries)).map((a) => a.replace(/^409 /, ""))).toEqual(Array(FACES.length).fill("not_waiting"));
  });

  it("a stale version: approving the card as first shown, after an edit, is call_changed on every face (the old message's button, the old mail's link)", async () => {
    const tries = onEveryFace(0, "admin", [approve({ blind: true, nameVersion: true }), skip]);
    await runSequence([new Ask(0, [{ tool: "refund_order", order: "A-1003", amount: 60_000 }]), new Decide(0, "fin1", "tollgate", [edit(70_000), skip]), ...tries]);
    expect(Object.values(answers(tries)).map((a) => a.replace(/^409 /, ""))).toEqual(Array(FACES.length).fill("call_changed"));
  });

  it("a quorum from the channels: fin1 approves in Slack (waiting), admin by the mailed link (the refund runs once); fin1's reject then is not_waiting", async () => {
    const first = new Decide(0, "fin1", "slack", [approve()]);
    const second = new Decide(0, "admin", "email", [approve()]);
    const late = new Decide(0, "fin1", "slack", [reject]);
    await runSequence([new Ask(0, [{ tool: "refund_order", order: "A-1003", amount: 60_000 }]), first, second, late]);
    expect([first.answered, second.answered, late.answered]).toEqual(["waiting_human", "a run", "not_waiting"]);
  });
});
