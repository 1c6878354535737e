import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { ThreadMessage } from "../../src/protocol/index.js";
import { TollgateSession, type TollgateSessionOptions, type TollgateSnapshot } from "../../src/react/tollgate-session.js";
import type { TimelineItem, ToolCard } from "../../src/react/timeline.js";
import { startServer, type ServerProcess } from "../helpers/server-process.js";
import { openDb } from "../helpers/sqlite.js";
import { startStack, threadId, type Stack } from "./support.js";

// TollgateSession (what the web page's hook runs on) against real tollgate processes: the
// built-in demo model for the flows, the fake OpenAI server for model failures. Every wait is
// on the session's own snapshots; nothing sleeps.

const TOKENS = {
  "tok-alice-0001": { sub: "alice", roles: ["user"] },
  "tok-ops-000001": { sub: "ops", roles: ["approver"] },
  "tok-fin1-00001": { sub: "fin1", roles: ["finance"] },
  "tok-fin2-00001": { sub: "fin2", roles: ["finance"] },
};

let demo: ServerProcess; // slow tokens, so a run can be stopped or joined mid-stream
let shortTtl: ServerProcess; // approvals expire in 1.5 s
let auth: ServerProcess; // alice (user), ops (approver), fin1 and fin2 (finance: a refund above $500 needs both)
let fake: Stack; // a scripted OpenAI-compatible model

beforeAll(async () => {
  [demo, shortTtl, auth, fake] = await Promise.all([
    startServer({ DEMO_TOKEN_DELAY_MS: "30" }),
    startServer({ DEMO_TOKEN_DELAY_MS: "0", APPROVAL_TTL_SECONDS: "1.5", EXPIRY_SWEEP_MS: "50" }),
    startServer({ DEMO_TOKEN_DELAY_MS: "0", AUTH_ROLES: "finance", AUTH_TOKENS: JSON.stringify(TOKENS) }),
    startStack({ MAX_ROUNDS: "1" }),
  ]);
}, 60_000);

const sessions: TollgateSession[] = [];
afterAll(async () => {
  for (const s of sessions) s.dispose();
  await Promise.all([demo?.kill(), shortTtl?.kill(), auth?.kill(), fake?.stop()]);
});

function session(server: { url: string }, threadIdValue: string, opts: Partial<TollgateSessionOptions> = {}): TollgateSession {
  const s = new TollgateSession({ baseUrl: server.url, threadId: threadIdValue, ...opts });
  sessions.push(s);
  return s;
}

/** The timeline as a person reads it. */
function read(items: readonly TimelineItem[]): string[] {
  return items.map((it) => {
    switch (it.kind) {
      case "user": return `user: ${it.text}`;
      case "assistant": return `assistant(${it.state}): ${it.text}`;
      case "tool": return `tool ${it.card.name}: ${it.card.status}${it.card.edited ? " (edited)" : ""}`;
      case "notice": return `notice(${it.tone}/${it.code}): ${it.text}`;
    }
  });
}

function describeSnapshot(s: TollgateSnapshot): string {
  return JSON.stringify(
    {
      status: s.status,
      streamingText: s.streamingText,
      pending: s.pending && { interrupt_id: s.pending.interrupt_id, calls: s.pending.calls.map((c) => c.name), expires_at: s.pending.expires_at },
      canDecide: s.canDecide,
      lastOutcome: s.lastOutcome,
      error: s.error,
      stopping: s.stopping,
      submitting: s.submitting,
      timeline: read(s.messages),
    },
    null,
    2,
  );
}

/** Resolves with the first snapshot (the current one included) that matches; fails with the last one seen. */
function waitFor(s: TollgateSession, what: string, predicate: (snap: TollgateSnapshot) => boolean, timeoutMs = 10_000): Promise<TollgateSnapshot> {
  return new Promise((resolve, reject) => {
    let unsubscribe = () => {};
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}\nlast snapshot: ${describeSnapshot(s.getSnapshot())}`));
    }, timeoutMs);
    const check = () => {
      const snap = s.getSnapshot();
      if (!predicate(snap)) return false;
      clearTimeout(timer);
      unsubscribe();
      resolve(snap);
      return true;
    };
    if (!check()) unsubscribe = s.subscribe(check);
  });
}

/** Every snapshot the session publishes from now on. */
function record(s: TollgateSession): TollgateSnapshot[] {
  const seen: TollgateSnapshot[] = [];
  s.subscribe(() => seen.push(s.getSnapshot()));
  return seen;
}

const card = (snap: TollgateSnapshot, name: string): ToolCard | undefined => snap.toolCards.find((c) => c.name === name);
const answers = (snap: TollgateSnapshot) => snap.messages.filter((m): m is Extract<TimelineItem, { kind: "assistant" }> => m.kind === "assistant");
const lastAssistant = (messages: readonly ThreadMessage[]) => messages.filter((m) => m.role === "assistant").at(-1)!;

// The demo model's answer to a message without an order id (src/model/demo-intent.ts).
const HELP =
  "I'm the tollgate demo agent. I can look up orders A-1001 to A-1005, refund them and email " +
  'customers. Try "where is A-1001", "refund order A-1002 5 dollars" or "email the customer of ' +
  'A-1003 that it ships tomorrow".';
const REFUND = "refund order A-1002 5 dollars";

/** A session on a new thread with a refund waiting at the gate. */
async function refundWaiting(server: { url: string }, label: string, opts: Partial<TollgateSessionOptions> = {}) {
  const id = threadId(label);
  const s = session(server, id, opts);
  await s.start();
  await s.send(REFUND);
  const snap = s.getSnapshot();
  expect(snap.status, describeSnapshot(snap)).toBe("waiting_human");
  const callId = snap.pending!.calls[0]!.call_id;
  return { id, s, callId };
}

describe("send", () => {
  it("streams the answer while running, then shows it done, equal to the thread's final message", async () => {
    const id = threadId("send");
    const s = session(demo, id);
    await s.start();
    expect(s.getSnapshot()).toMatchObject({ status: "idle", messages: [], pending: null, owner: null, error: null });

    const sending = s.send("where is A-1001");
    const first = await waitFor(s, "some streamed text", (x) => x.status === "running" && x.streamingText.length > 0);
    const grown = await waitFor(s, "more streamed text", (x) => x.streamingText.length > first.streamingText.length);
    expect(grown.streamingText.startsWith(first.streamingText)).toBe(true);
    expect(grown.status).toBe("running");
    await sending;

    const end = s.getSnapshot();
    const view = await new TollgateClient({ baseUrl: demo.url }).getThread(id);
    const final = lastAssistant(view.messages).content;
    expect(final).toMatch(/^Order A-1001 is /);
    expect(end).toMatchObject({ status: "idle", streamingText: "", lastOutcome: "completed", owner: "anonymous", error: null, pending: null });
    expect(read(end.messages)).toEqual([
      "user: where is A-1001",
      "assistant(done): Let me check order A-1001.",
      "tool lookup_order: ok",
      `assistant(done): ${final}`,
    ]);
  });
});

describe("decisions at the gate", () => {
  it("approve: the refund card ends ok, the refund row exists, the answer says so", async () => {
    const { id, s, callId } = await refundWaiting(demo, "approve");
    const waiting = s.getSnapshot();
    expect(card(waiting, "refund_order")).toMatchObject({ call_id: callId, status: "waiting", needs_approval: true, args: { order_id: "A-1002", amount_cents: 500 } });
    expect(card(waiting, "lookup_order")?.status).toBe("ok");
    expect(waiting.canDecide).toBe(true); // no auth: the local user decides everything
    expect(waiting.pending).toMatchObject({ thread_id: id, calls: [{ name: "refund_order", policy: "approver", editable: true }] });

    const seen = record(s);
    await s.approve(callId);
    expect(seen.some((x) => x.submitting && x.drafts[callId]?.approved === true)).toBe(true);
    const end = s.getSnapshot();
    expect(end).toMatchObject({ status: "idle", pending: null, submitting: false, drafts: {}, lastOutcome: "completed", error: null });
    expect(card(end, "refund_order")).toMatchObject({ status: "ok" });
    expect(answers(end).at(-1)).toMatchObject({ text: "Done: refunded $5.00 on A-1002.", state: "done" });
    expect(read(end.messages).filter((l) => l.startsWith("user:"))).toEqual([`user: ${REFUND}`]);

    const db = openDb(demo.dataDir);
    try {
      expect(db.rows("refunds", "call_id = ?", callId)).toMatchObject([{ order_id: "A-1002", amount_cents: 500 }]);
    } finally {
      db.close();
    }
  });

  it("reject with a reason: the card is rejected, the model is told 'Rejected: <reason>', nothing is refunded", async () => {
    const { id, s, callId } = await refundWaiting(demo, "reject");
    await s.reject(callId, "customer changed their mind");
    const end = s.getSnapshot();
    expect(card(end, "refund_order")).toMatchObject({ status: "rejected", error: "Rejected: customer changed their mind" });
    expect(answers(end).at(-1)?.text).toBe("I did not refund A-1002. Rejected: customer changed their mind");

    const view = await new TollgateClient({ baseUrl: demo.url }).getThread(id);
    expect(view.messages.find((m) => m.role === "tool" && m.tool_call_id === callId)).toMatchObject({
      status: "rejected",
      content: "Rejected: customer changed their mind",
    });
    const db = openDb(demo.dataDir);
    try {
      expect(db.rows("refunds", "call_id = ?", callId)).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("edit: the refund runs with the edited amount and its card says edited", async () => {
    const { s, callId } = await refundWaiting(demo, "edit");
    await s.edit(callId, { amount_cents: 250 });
    const end = s.getSnapshot();
    expect(card(end, "refund_order")).toMatchObject({ status: "ok", edited: true });
    expect(answers(end).at(-1)?.text).toBe("Done: refunded $2.50 on A-1002.");
    const db = openDb(demo.dataDir);
    try {
      expect(db.rows("refunds", "call_id = ?", callId)).toMatchObject([{ amount_cents: 250 }]);
    } finally {
      db.close();
    }
  });

  it("a call that is not pending is no decision: nothing is sent", async () => {
    const { s, callId } = await refundWaiting(demo, "unknown-call");
    await s.approve("call_not_pending");
    expect(s.getSnapshot()).toMatchObject({ status: "waiting_human", submitting: false, drafts: {}, error: null });
    expect(s.getSnapshot().pending?.calls[0]?.call_id).toBe(callId);
    await s.reject(callId); // leave the thread idle
    expect(card(s.getSnapshot(), "refund_order")).toMatchObject({ status: "rejected", error: "Rejected: User denied" });
  });
});

describe("stop", () => {
  it("mid-stream: the partial answer is marked stopped with a stopped notice; the thread's last outcome is cancelled", async () => {
    const id = threadId("stop");
    const s = session(demo, id);
    await s.start();
    const sending = s.send("hello there");
    const streaming = await waitFor(s, "the help text streaming", (x) => x.streamingText.length > 0);
    expect(streaming.status).toBe("running");
    await s.stop();
    await sending;

    const end = s.getSnapshot();
    expect(end).toMatchObject({ status: "idle", streamingText: "", stopping: false, lastOutcome: "cancelled", error: null });
    const [u, a, notice, ...rest] = end.messages;
    expect(rest).toEqual([]);
    expect(u).toMatchObject({ kind: "user", text: "hello there" });
    expect(a).toMatchObject({ kind: "assistant", state: "stopped" });
    const partial = (a as { text: string }).text;
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(HELP.length); // it was cut
    expect(HELP.startsWith(partial)).toBe(true);
    expect(notice).toMatchObject({ kind: "notice", tone: "stopped", code: "api" });

    const view = await new TollgateClient({ baseUrl: demo.url }).getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    expect(view.messages.map((m) => m.role)).toEqual(["user"]); // the partial answer is not kept
  });

  it("Stop pressed while the message is still on its way stops the run the server then starts", async () => {
    // The run's POST is held at the network until Stop has been pressed: the cancel must not
    // overtake it and find nothing to stop.
    let releasePost = () => {};
    const postHeld = new Promise<void>((resolve) => (releasePost = resolve));
    let cancelSent = false;
    const net: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (init?.method === "POST" && url.endsWith("/runs")) await postHeld;
      if (url.endsWith("/cancel")) cancelSent = true;
      return fetch(input, init);
    };
    const id = threadId("stop-early");
    const s = session(demo, id, { fetch: net });
    await s.start();
    const sending = s.send("hello there");
    expect(s.getSnapshot().status).toBe("running");
    const stopping = s.stop();
    await waitFor(s, "stopping shown", (x) => x.stopping);
    releasePost();
    await stopping;
    await sending;
    expect(cancelSent).toBe(true);
    expect(s.getSnapshot()).toMatchObject({ status: "idle", lastOutcome: "cancelled", error: null });
    const view = await new TollgateClient({ baseUrl: demo.url }).getThread(id);
    expect(view).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    expect(view.messages.map((m) => m.role)).toEqual(["user"]);
  });
});

describe("reload", () => {
  it("mid-stream: a second session shows what was streamed so far, follows to the end, duplicates nothing", async () => {
    const id = threadId("reload-stream");
    const a = session(demo, id);
    await a.start();
    const sending = a.send("hello there");
    const before = await waitFor(a, "a few tokens", (x) => x.streamingText.split(" ").length >= 3);

    const b = session(demo, id);
    const seen = record(b);
    const starting = b.start();
    // B catches up with everything A had shown, while A's run is still streaming.
    const caughtUp = await waitFor(b, "the text A had shown", (x) => x.streamingText.length >= before.streamingText.length);
    expect(caughtUp.status).toBe("running");
    expect(a.getSnapshot().status).toBe("running");
    await Promise.all([starting, sending]);

    const endA = a.getSnapshot();
    const endB = b.getSnapshot();
    const final = answers(endA).at(-1)!.text;
    expect(final).toBe(HELP);
    expect(read(endB.messages)).toEqual(["user: hello there", `assistant(done): ${final}`]);
    expect(read(endA.messages)).toEqual(read(endB.messages));
    expect(lastAssistant((await new TollgateClient({ baseUrl: demo.url }).getThread(id)).messages).content).toBe(final);
    // At no point did B show the text twice, or more than one answer.
    for (const snap of seen) {
      expect(answers(snap).length).toBeLessThanOrEqual(1);
      expect(snap.messages.filter((m) => m.kind === "user")).toHaveLength(1);
      expect(final.startsWith(snap.streamingText)).toBe(true);
    }
    expect(endB).toMatchObject({ status: "idle", lastOutcome: "completed", streamingText: "" });
  });

  it("while waiting: a fresh session has the pending call, its card waiting, and may decide", async () => {
    const { id, s, callId } = await refundWaiting(demo, "reload-wait");
    const b = session(demo, id);
    await b.start();
    const snap = b.getSnapshot();
    expect(snap).toMatchObject({ status: "waiting_human", canDecide: true, error: null });
    expect(snap.pending).toMatchObject({ interrupt_id: s.getSnapshot().pending!.interrupt_id, calls: [{ call_id: callId }] });
    expect(card(snap, "refund_order")).toMatchObject({ status: "waiting", needs_approval: true });
    expect(card(snap, "lookup_order")?.status).toBe("ok");
    // The first session's view, rebuilt from the server alone.
    expect(read(snap.messages)).toEqual(read(s.getSnapshot().messages));

    await b.approve(callId);
    expect(card(b.getSnapshot(), "refund_order")?.status).toBe("ok");
    expect(answers(b.getSnapshot()).at(-1)?.text).toBe("Done: refunded $5.00 on A-1002.");
  });
});

describe("reload of a thread at rest", () => {
  it("a finished run's replay is not shown as a run: never running, never streaming, no Stop to press", async () => {
    const id = threadId("reload-done");
    await new TollgateClient({ baseUrl: demo.url }).run(id, "where is A-1001").collect();
    const s = session(demo, id);
    const seen = record(s);
    await s.start();
    const flashes = seen.filter((x) => x.status === "running" || x.streamingText !== "");
    expect(flashes.map(describeSnapshot)).toEqual([]);
    expect(s.getSnapshot()).toMatchObject({ status: "idle", lastOutcome: "completed" });
    expect(read(s.getSnapshot().messages)).toHaveLength(4);
  });
});

describe("expiry", () => {
  it("with nobody acting, the card becomes expired and nothing is pending any more", async () => {
    const { s, callId } = await refundWaiting(shortTtl, "expiry");
    const deadline = Date.parse(s.getSnapshot().pending!.expires_at);
    // No refresh, no decision: the session checks again by itself after the deadline.
    const end = await waitFor(s, "the refund card expired", (x) => card(x, "refund_order")?.status === "expired" && x.pending === null, 6_000);
    expect(s.clock.now()).toBeGreaterThanOrEqual(deadline);
    expect(end).toMatchObject({ status: "idle", lastOutcome: "expired", canDecide: false });
    expect(card(end, "refund_order")).toMatchObject({ call_id: callId, error: "Expired: approval window closed; not executed" });
    expect(card(end, "lookup_order")?.status).toBe("ok"); // read-only results stay

    // A reload now: the replayed run ends at its (closed) interrupt, which must not come back.
    const again = session(shortTtl, end.threadId);
    const seen = record(again);
    await again.start();
    expect(seen.filter((x) => x.pending !== null || x.status !== "idle").map(describeSnapshot)).toEqual([]);
    expect(card(again.getSnapshot(), "refund_order")?.status).toBe("expired");
  });
});

describe("four eyes (AUTH_TOKENS)", () => {
  it("the owner of a refund may not decide it; an approver's session may, and approves it", async () => {
    const { id, s: alice, callId } = await refundWaiting(auth, "four-eyes", { token: "tok-alice-0001" });
    expect(alice.getSnapshot()).toMatchObject({ owner: "alice", canDecide: false });

    // Alice tries anyway (the page hides the buttons): refused, nothing decided, she sees why.
    await alice.approve(callId);
    expect(alice.getSnapshot()).toMatchObject({ status: "waiting_human", submitting: false, drafts: {}, error: { code: "forbidden", status: 403 } });
    expect(alice.getSnapshot().pending?.calls[0]?.call_id).toBe(callId);

    const ops = session(auth, id, { token: () => "tok-ops-000001" });
    await ops.start();
    expect(ops.getSnapshot()).toMatchObject({ status: "waiting_human", canDecide: true, owner: "alice", error: null });
    expect(card(ops.getSnapshot(), "refund_order")?.status).toBe("waiting");
    await ops.approve(callId);
    const end = ops.getSnapshot();
    expect(end).toMatchObject({ status: "idle", pending: null, error: null });
    expect(card(end, "refund_order")?.status).toBe("ok");
    const db = openDb(auth.dataDir);
    try {
      expect(db.rows("audit", "thread_id = ?", id)).toMatchObject([{ decision: "approved", by_sub: "ops" }]);
    } finally {
      db.close();
    }

    // Alice only waited: her session learns of the decision by itself and shows the continuation
    // someone else started — the result and the answer, once — with no reload.
    const seen = await waitFor(alice, "alice sees the approved refund and the answer", (x) => x.status === "idle" && answers(x).some((a) => a.text.startsWith("Done: refunded")));
    expect(seen).toMatchObject({ pending: null, lastOutcome: "completed" });
    expect(card(seen, "refund_order")?.status).toBe("ok");
    expect(read(seen.messages).filter((l) => l.startsWith("user:"))).toEqual([`user: ${REFUND}`]);
    expect(answers(seen).filter((a) => a.text.startsWith("Done: refunded"))).toHaveLength(1);
  });

  it("the owner may withdraw a request nobody has decided: every call ends cancelled", async () => {
    const { id, s: alice, callId } = await refundWaiting(auth, "withdraw", { token: "tok-alice-0001" });
    await alice.stop();
    const end = await waitFor(alice, "withdrawn", (x) => x.status === "idle" && x.pending === null);
    expect(end).toMatchObject({ lastOutcome: "cancelled", error: null, stopping: false });
    expect(card(end, "refund_order")?.status).toBe("cancelled");
    const db = openDb(auth.dataDir);
    try {
      expect(db.rows("audit", "thread_id = ?", id)).toMatchObject([{ decision: "cancelled", by_sub: "alice" }]);
      expect(db.rows("refunds", "call_id = ?", callId)).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("an email is the owner's to decide: the owner's session may", async () => {
    const id = threadId("owner-policy");
    const alice = session(auth, id, { token: "tok-alice-0001" });
    await alice.start();
    await alice.send("email the customer of A-1003 that it ships tomorrow");
    const snap = alice.getSnapshot();
    expect(snap.pending?.calls[0]).toMatchObject({ name: "send_email", policy: "owner", args: { to: "***", body: "***" } });
    expect(snap.canDecide).toBe(true);
    await alice.approve(snap.pending!.calls[0]!.call_id);
    expect(card(alice.getSnapshot(), "send_email")?.status).toBe("ok");
  });
});

describe("request errors", () => {
  it("send while another session's run is running: thread_busy, and no extra user message", async () => {
    const id = threadId("busy");
    const a = session(demo, id);
    const b = session(demo, id);
    await Promise.all([a.start(), b.start()]);
    const sending = a.send("hello there");
    await waitFor(a, "A streaming", (x) => x.streamingText.length > 0);

    await b.send("a second message");
    const snap = b.getSnapshot();
    expect(snap.error).toMatchObject({ code: "thread_busy", status: 409 });
    expect(read(snap.messages).some((l) => l.includes("a second message"))).toBe(false);
    expect(snap.messages.filter((m) => m.kind === "user")).toHaveLength(1); // A's, from the server
    b.dismissError();
    expect(b.getSnapshot().error).toBeNull();

    await sending;
    const view = await new TollgateClient({ baseUrl: demo.url }).getThread(id);
    expect(view.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["hello there"]);

    // B was refused, not stuck: it follows A's run to its end and shows it like A does.
    const followed = await waitFor(b, "B shows A's run to its end", (x) => x.status === "idle" && answers(x).some((m) => m.state === "done"));
    expect(read(followed.messages)).toEqual(read(a.getSnapshot().messages));
    expect(answers(followed).map((m) => m.text)).toEqual([HELP]);
  });

  it("a server that cannot be reached is a request error, not a hang", async () => {
    const s = session({ url: "http://127.0.0.1:1" }, threadId("unreachable"));
    await s.start();
    expect(s.getSnapshot()).toMatchObject({ status: "idle", error: { code: "network_error", status: 0 } });
  });

  it("offline for several watch ticks while waiting: back online, it still learns that someone else approved", async () => {
    let offline = false;
    const net: typeof fetch = async (input, init) => {
      if (offline) throw new TypeError("fetch failed: network is down");
      return fetch(input, init);
    };
    const { id, s, callId } = await refundWaiting(demo, "offline-wait", { fetch: net });
    offline = true;
    // Two failed reads (a tick is 2 s): each must arm the next one.
    await waitFor(s, "a failed read", (x) => x.error?.code === "network_error");
    const failedOnce = s.getSnapshot();
    await waitFor(s, "a second failed read", (x) => x !== failedOnce && x.error?.code === "network_error", 5_000);
    offline = false;
    const other = new TollgateClient({ baseUrl: demo.url });
    const view = await other.getThread(id);
    await other.resume(id, view.pending!.interrupt_id, { decisions: [{ call_id: callId, approved: true }] }).collect();
    const end = await waitFor(s, "the approval seen", (x) => x.status === "idle" && card(x, "refund_order")?.status === "ok", 15_000);
    expect(answers(end).at(-1)?.text).toBe("Done: refunded $5.00 on A-1002.");
  });

  it("Approve pressed while the load's replay is still reading is sent once the replay is in", async () => {
    // The load replays the finished run that ended at the gate; its stream answers slowly.
    const net: typeof fetch = async (input, init) => {
      if (new URL(String(input)).pathname.endsWith("/stream")) await new Promise((r) => setTimeout(r, 300));
      return fetch(input, init);
    };
    const { id, callId } = await refundWaiting(demo, "early-approve");
    const s = session(demo, id, { fetch: net });
    const loading = s.start();
    await waitFor(s, "the card from the thread's view", (x) => x.pending !== null && x.canDecide);
    await s.approve(callId);
    await loading;
    const end = await waitFor(s, "approved", (x) => x.status === "idle" && card(x, "refund_order")?.status === "ok");
    expect(end.drafts).toEqual({});
    const db = openDb(demo.dataDir);
    try {
      expect(db.rows("refunds", "call_id = ?", callId)).toHaveLength(1);
    } finally {
      db.close();
    }
  });

  it("Approve on a quorum card pressed while the load's replay is still reading is sent once the replay is in, and closes the quorum", async () => {
    // fin1 has approved a $600 refund; fin2 opens the thread and approves as soon as the card
    // shows (from the thread's view), while the load's replay of the run is still on its way.
    const id = threadId("quorum-early-approve");
    const alice = session(auth, id, { token: "tok-alice-0001" });
    await alice.start();
    await alice.send("refund order A-1003 600 dollars");
    const callId = alice.getSnapshot().pending!.calls[0]!.call_id;
    const fin1 = new TollgateClient({ baseUrl: auth.url, token: "tok-fin1-00001" });
    const { pending } = await fin1.getThread(id);
    expect(pending?.calls[0]).toMatchObject({ call_id: callId, policy: "quorum" });
    expect(await fin1.resumeDetached(id, pending!.interrupt_id, { decisions: [{ call_id: callId, approved: true }] })).toMatchObject({ run_id: null });
    // The load's replay (the first GET …/stream) is held until Approve has been pressed.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let replaying!: () => void;
    const replayAsked = new Promise<void>((r) => (replaying = r));
    let streams = 0;
    const net: typeof fetch = async (input, init) => {
      if (new URL(String(input)).pathname.endsWith("/stream") && ++streams === 1) {
        replaying();
        await held;
      }
      return fetch(input, init);
    };
    const s = session(auth, id, { token: "tok-fin2-00001", fetch: net });
    const loading = s.start();
    await waitFor(s, "the card from the thread's view", (x) => x.pending !== null && x.canDecide);
    await replayAsked;
    const approving = s.approve(callId);
    const whileReplaying = s.getSnapshot();
    release();
    await loading;
    await approving;
    const end = await waitFor(s, "approved by the second of finance", (x) => x.status === "idle" && card(x, "refund_order")?.status === "ok");
    expect(end).toMatchObject({ pending: null, error: null, submitting: false, drafts: {} });
    // The click was taken at once: the card said so while it waited for the replay.
    expect(whileReplaying).toMatchObject({ status: "waiting_human", submitting: true });
    const db = openDb(auth.dataDir);
    try {
      expect(db.rows("refunds", "call_id = ?", callId)).toHaveLength(1);
      expect(db.rows("audit", "thread_id = ?", id)).toMatchObject([
        { decision: "approved", by_sub: "fin1" },
        { decision: "approved", by_sub: "fin2" },
      ]);
    } finally {
      db.close();
    }
  });

  it("another client's run that begins just as ours ends shows once, in its place", async () => {
    const id = threadId("race");
    const other = new TollgateClient({ baseUrl: demo.url });
    let reads = 0;
    let theirs: Promise<unknown> | undefined;
    // Right before this page reads the thread after its run, another client's message is committed.
    const net: typeof fetch = async (input, init) => {
      if ((init?.method ?? "GET") === "GET" && new URL(String(input)).pathname === `/threads/${id}` && ++reads === 2) {
        const stream = other.run(id, "their question", { on_disconnect: "continue" });
        const it = stream[Symbol.asyncIterator]();
        await it.next(); // its first token: the user message is in the thread
        theirs = (async () => { while (!(await it.next()).done); })();
      }
      return fetch(input, init);
    };
    const s = session(demo, id, { fetch: net });
    await s.start();
    await s.send("my question");
    await theirs;
    const end = await waitFor(s, "their run shown to its end", (x) => x.status === "idle" && answers(x).length === 2 && answers(x).every((a) => a.state === "done"), 15_000);
    const fresh = session(demo, id);
    await fresh.start();
    expect(read(end.messages)).toEqual(read(fresh.getSnapshot().messages));
    expect(read(end.messages).filter((l) => l.startsWith("user:"))).toEqual(["user: my question", "user: their question"]);
  });

  it("offline for longer than the reconnect budget mid-answer: back online, the session shows the whole answer by itself", async () => {
    // A network that can be cut: the run's stream breaks and every request fails until it is back.
    let offline = false;
    let breakStream: (() => void) | undefined;
    const net: typeof fetch = async (input, init) => {
      if (offline) throw new TypeError("fetch failed: network is down");
      const res = await fetch(input, init);
      if (!String(input).endsWith("/runs") || !res.body) return res;
      const reader = res.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          breakStream = () => controller.error(new TypeError("network is down"));
        },
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const id = threadId("offline");
    const s = session(demo, id, { fetch: net });
    await s.start();
    const sending = s.send("hello there");
    await waitFor(s, "a few tokens", (x) => x.streamingText.length > 10);
    offline = true;
    breakStream!();
    // Reconnects give up (about 3 s of backoff): the session says so, and keeps trying by itself.
    await waitFor(s, "the loss reported", (x) => x.error?.code === "network_error");
    expect(await sending, "the message was taken before the cut").toBe(true);
    offline = false;
    const end = await waitFor(s, "back online: the whole answer", (x) => x.status === "idle" && answers(x).some((a) => a.state === "done"), 15_000);
    expect(answers(end).map((a) => `${a.state}: ${a.text}`)).toEqual([`done: ${HELP}`]);
    expect(end.stopping).toBe(false);
  });
});

describe("an interrupt with two calls", () => {
  it("a decision on one call is a draft; the resume goes when the last call has one, with both", async () => {
    const id = threadId("two-calls");
    const s = session(fake.server, id);
    await s.start();
    fake.model.push({
      text: "Refund and email.",
      toolCalls: [
        { id: "tc-refund", name: "refund_order", args: { order_id: "A-1005", amount_cents: 100, reason: "late" } },
        { id: "tc-email", name: "send_email", args: { to: "someone@example.com", subject: "Refund", body: "Sorry" } },
      ],
    });
    await s.send("refund A-1005 and tell them");
    expect(s.getSnapshot().pending?.calls.map((c) => c.call_id)).toEqual(["tc-refund", "tc-email"]);

    await s.approve("tc-refund");
    const draft = s.getSnapshot();
    expect(draft).toMatchObject({ status: "waiting_human", submitting: false, drafts: { "tc-refund": { call_id: "tc-refund", approved: true } } });
    expect(draft.toolCards.map((c) => c.status)).toEqual(["waiting", "waiting"]);
    expect((await new TollgateClient({ baseUrl: fake.server.url }).getThread(id)).status).toBe("waiting_human"); // nothing sent yet

    fake.model.push({ text: "Refunded; the email was not sent." });
    await s.reject("tc-email", "wrong address");
    const end = s.getSnapshot();
    expect(end).toMatchObject({ status: "idle", pending: null, drafts: {}, error: null });
    expect(end.toolCards.map((c) => [c.call_id, c.status])).toEqual([["tc-refund", "ok"], ["tc-email", "rejected"]]);
    expect(fake.db.rows("refunds", "call_id = ?", "tc-refund")).toHaveLength(1);
    expect(fake.db.rows("outbox", "call_id = ?", "tc-email")).toEqual([]);
    expect(fake.db.rows("audit", "thread_id = ?", id).map((r: any) => [r.call_id, r.decision, r.reason])).toEqual([
      ["tc-refund", "approved", null],
      ["tc-email", "rejected", "wrong address"],
    ]);
    expect(answers(end).map((a) => a.text)).toEqual(["Refund and email.", "Refunded; the email was not sent."]);
    // The model was told both outcomes.
    const told = fake.model.requests.at(-1)!.messages.filter((m: { role: string }) => m.role === "tool").map((m: { content: unknown }) => String(m.content));
    expect(told).toEqual([expect.stringContaining("refund"), "Rejected: wrong address"]);
  });
});

describe("run failures from the model", () => {
  it("an error event is a failed answer and an error notice, not a request error", async () => {
    const id = threadId("model-error");
    const s = session(fake.server, id);
    await s.start();
    fake.model.push({ truncated: true, text: "Half an answer" });
    await s.send("hello");
    const end = s.getSnapshot();
    expect(end).toMatchObject({ status: "idle", error: null, lastOutcome: "error", streamingText: "" });
    expect(end.messages).toEqual([
      expect.objectContaining({ kind: "user", text: "hello" }),
      expect.objectContaining({ kind: "assistant", text: "Half an answer", state: "failed" }),
      expect.objectContaining({ kind: "notice", tone: "error", code: "model_error" }),
    ]);
  });

  it("max_rounds right after a tool: the answer that came with the call shows once, live and after a reload", async () => {
    const id = threadId("max-rounds");
    const s = session(fake.server, id);
    await s.start();
    fake.model.push({ text: "Let me look that up.", toolCalls: [{ name: "lookup_order", args: { order_id: "A-1001" } }] });
    await s.send("where is A-1001");
    const expected = ["user: where is A-1001", "assistant(done): Let me look that up.", "tool lookup_order: ok"];
    expect(s.getSnapshot().lastOutcome).toBe("max_rounds");
    expect(read(s.getSnapshot().messages)).toEqual(expected);
    const reloaded = session(fake.server, id);
    await reloaded.start();
    expect(read(reloaded.getSnapshot().messages)).toEqual(expected);
  });
});
