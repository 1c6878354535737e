import { describe, expect, it } from "vitest";
import type { EventOf, InterruptPayload, ProtocolEvent, ThreadMessage, ToolStatus } from "../../../src/protocol/index.js";
import { appendEvent, blockStart, buildTimeline, type RunBlock, type TimelineItem } from "../../../src/react/timeline.js";

// The merge rules of the chat view, without a server: history comes from `GET /threads/:id`
// messages, watched runs from their events, and where the two overlap each thing shows once.

const RUN = "run-1";
const tok = (text: string): ProtocolEvent => ({ type: "token", run_id: RUN, text });
const toolCall = (call_id: string, name: string, args: Record<string, unknown>, needs_approval = false): ProtocolEvent => ({
  type: "tool_call", run_id: RUN, call_id, name, args, needs_approval,
});
const toolResult = (call_id: string, name: string, status: ToolStatus, extra: { output?: string; error?: string; edited?: boolean } = {}): ProtocolEvent => ({
  type: "tool_result", run_id: RUN, call_id, name, status, ...extra,
});
const interrupt = (...callIds: string[]): ProtocolEvent => ({
  type: "interrupt",
  run_id: RUN,
  thread_id: "t",
  interrupt_id: "intr-1",
  calls: callIds.map((call_id) => ({ call_id, name: "refund_order", args: {}, policy: "approver", editable: true, args_schema: {} })),
  questions: [],
  expires_at: "2030-01-01T00:00:00.000Z",
  resume_url: "/threads/t/resume",
} satisfies EventOf<"interrupt"> & InterruptPayload);
const done = (message: string): ProtocolEvent => ({ type: "done", run_id: RUN, outcome: "completed", message });
const cancelled = (reason: "api" | "client" | "shutdown" = "api"): ProtocolEvent => ({ type: "cancelled", run_id: RUN, reason });
const failure = (code: "model_error" | "model_timeout", message: string): ProtocolEvent => ({ type: "error", run_id: RUN, code, message });

const user = (content: string): ThreadMessage => ({ role: "user", content });
const assistant = (content: string, calls: Array<[id: string, name: string, args?: Record<string, unknown>]> = []): ThreadMessage => ({
  role: "assistant",
  content,
  ...(calls.length ? { tool_calls: calls.map(([id, name, args]) => ({ id, name, args: args ?? {} })) } : {}),
});
const tool = (tool_call_id: string, name: string, content: string, status?: ToolStatus, edited?: boolean): ThreadMessage => ({
  role: "tool", content, tool_call_id, name, ...(status ? { status } : {}), ...(edited ? { edited } : {}),
});

/** A block as the session builds it: events appended one by one (tokens merge). */
function block(events: ProtocolEvent[], extra: Omit<RunBlock, "events"> = {}): RunBlock {
  const b: RunBlock = { ...extra, events: [] };
  for (const e of events) appendEvent(b, e);
  return b;
}

/** The timeline as a person reads it: kind, text or card state, in order. */
function read(items: readonly TimelineItem[]): string[] {
  return items.map((it) => {
    switch (it.kind) {
      case "user": return `user: ${it.text}`;
      case "assistant": return `assistant(${it.state}): ${it.text}`;
      case "tool": return `tool ${it.card.name} ${it.card.call_id}: ${it.card.status}`;
      case "notice": return `notice(${it.tone}/${it.code}): ${it.text}`;
    }
  });
}
const cards = (items: readonly TimelineItem[]) => items.flatMap((it) => (it.kind === "tool" ? [it.card] : []));
const keys = (items: readonly TimelineItem[]) => items.map((it) => it.key);

// One refund conversation as the server stores it, step by step.
const ASK = user("refund order A-1002 5 dollars");
const PLAN = assistant("I'll check A-1002 and refund $5.00.", [
  ["c-look", "lookup_order", { order_id: "A-1002" }],
  ["c-ref", "refund_order", { order_id: "A-1002", amount_cents: 500 }],
]);
const LOOKED = tool("c-look", "lookup_order", '{"status":"shipped"}', "ok");
const REFUNDED = tool("c-ref", "refund_order", '{"refund_id":7}', "ok");
const FINAL = assistant("Done: refunded $5.00 on A-1002.");

describe("history from messages", () => {
  it("shows user and assistant text, and a card per tool call settled by its tool message", () => {
    const items = buildTimeline({
      messages: [ASK, PLAN, LOOKED, tool("c-ref", "refund_order", "Rejected: too much", "rejected"), FINAL],
      loadedMessages: [],
      blocks: [],
    });
    expect(read(items)).toEqual([
      "user: refund order A-1002 5 dollars",
      "assistant(done): I'll check A-1002 and refund $5.00.",
      "tool lookup_order c-look: ok",
      "tool refund_order c-ref: rejected",
      "assistant(done): Done: refunded $5.00 on A-1002.",
    ]);
    const [look, ref] = cards(items);
    expect(look).toMatchObject({ output: '{"status":"shipped"}', args: { order_id: "A-1002" } });
    expect(look!.error).toBeUndefined();
    expect(ref).toMatchObject({ error: "Rejected: too much" });
    expect(ref!.output).toBeUndefined();
  });

  it("an assistant message with only tool calls adds cards and no empty bubble; a call without a result stays running", () => {
    const items = buildTimeline({ messages: [ASK, assistant("", [["c1", "lookup_order"]])], loadedMessages: [], blocks: [] });
    expect(read(items)).toEqual(["user: refund order A-1002 5 dollars", "tool lookup_order c1: running"]);
  });

  it("an edited call's tool message marks its card edited", () => {
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED, tool("c-ref", "refund_order", "Approved with edits: amount_cents", "ok", true)], loadedMessages: [], blocks: [] });
    expect(cards(items)[1]).toMatchObject({ status: "ok", edited: true });
  });
});

describe("a run this page sent", () => {
  const before = [user("hi"), assistant("Hello.")];

  it("shows its user text and streams its answer after the history, once", () => {
    const b = block([tok("Let"), tok(" me"), tok(" check")], { userText: "where is A-1001", messagesBefore: 2 });
    const items = buildTimeline({ messages: before, loadedMessages: before, blocks: [b] });
    expect(read(items)).toEqual(["user: hi", "assistant(done): Hello.", "user: where is A-1001", "assistant(streaming): Let me check"]);
  });

  it("does not show its messages twice once the server has committed them", () => {
    const b = block(
      [tok("Let me check."), toolCall("c1", "lookup_order", { order_id: "A-1001" }), toolResult("c1", "lookup_order", "ok", { output: "{}" }), tok("It shipped."), done("It shipped.")],
      { userText: "where is A-1001", messagesBefore: 2 },
    );
    const whileRunning = buildTimeline({ messages: before, loadedMessages: before, blocks: [b] });
    const after = [...before, user("where is A-1001"), assistant("Let me check.", [["c1", "lookup_order"]]), tool("c1", "lookup_order", "{}", "ok"), assistant("It shipped.")];
    const refreshed = buildTimeline({ messages: after, loadedMessages: before, blocks: [b] });
    const expected = [
      "user: hi",
      "assistant(done): Hello.",
      "user: where is A-1001",
      "assistant(done): Let me check.",
      "tool lookup_order c1: ok",
      "assistant(done): It shipped.",
    ];
    expect(read(whileRunning)).toEqual(expected);
    expect(read(refreshed)).toEqual(expected);
    // Same keys: React keeps the same rows, nothing remounts when the refresh lands.
    expect(keys(refreshed)).toEqual(keys(whileRunning));
  });

  it("a block with messagesBefore 0 on a new thread shows no history", () => {
    const b = block([tok("Hi")], { userText: "hello", messagesBefore: 0 });
    const items = buildTimeline({ messages: [user("hello")], loadedMessages: [], blocks: [b] });
    expect(read(items)).toEqual(["user: hello", "assistant(streaming): Hi"]);
  });
});

describe("a replayed first block is placed with blockStart", () => {
  it("a runs-run cuts after the last user message: what it already committed shows once, from its events", () => {
    // Reloaded mid-run: the lookup step is already committed, the answer still streaming.
    const loaded = [user("hi"), assistant("Hello."), ASK, PLAN, LOOKED];
    const replay = block([tok("I'll check A-1002"), tok(" and refund $5.00."), toolCall("c-look", "lookup_order", { order_id: "A-1002" }), toolCall("c-ref", "refund_order", {}, true), toolResult("c-look", "lookup_order", "ok", { output: "{}" }), tok("more")]);
    expect(blockStart(replay, { messages: loaded, from: 0, loaded })).toBe(3);
    const items = buildTimeline({ messages: loaded, loadedMessages: loaded, blocks: [replay] });
    expect(read(items)).toEqual([
      "user: hi",
      "assistant(done): Hello.",
      "user: refund order A-1002 5 dollars",
      "assistant(done): I'll check A-1002 and refund $5.00.",
      "tool lookup_order c-look: ok",
      "tool refund_order c-ref: running",
      "assistant(streaming): more",
    ]);
  });

  it("a resume-run's first event is a tool_result: it cuts before that tool message, so the plan and the lookup stay history", () => {
    const loaded = [ASK, PLAN, LOOKED, REFUNDED, FINAL];
    const replay = block([toolResult("c-ref", "refund_order", "ok", { output: '{"refund_id":7}' }), tok("Done: refunded"), tok(" $5.00 on A-1002."), done("Done: refunded $5.00 on A-1002.")]);
    expect(blockStart(replay, { messages: loaded, from: 0, loaded })).toBe(3);
    const items = buildTimeline({ messages: loaded, loadedMessages: loaded, blocks: [replay] });
    expect(read(items)).toEqual([
      "user: refund order A-1002 5 dollars",
      "assistant(done): I'll check A-1002 and refund $5.00.",
      "tool lookup_order c-look: ok",
      "tool refund_order c-ref: ok",
      "assistant(done): Done: refunded $5.00 on A-1002.",
    ]);
  });

  it("a resume whose tool message is not committed yet leaves all of the history in place", () => {
    const loaded = [ASK, PLAN, LOOKED];
    const replay = block([toolResult("c-ref", "refund_order", "ok", { output: "{}" })]);
    expect(blockStart(replay, { messages: loaded, from: 0, loaded })).toBe(3);
    expect(read(buildTimeline({ messages: loaded, loadedMessages: loaded, blocks: [replay] })).at(-1)).toBe("tool refund_order c-ref: ok");
  });

  it("with no events yet nothing is cut: the whole history shows", () => {
    const loaded = [ASK, PLAN, LOOKED, REFUNDED, FINAL];
    expect(blockStart({ events: [] }, { messages: loaded, from: 0, loaded })).toBe(loaded.length);
    const items = buildTimeline({ messages: loaded, loadedMessages: loaded, blocks: [{ events: [] }] });
    expect(items).toHaveLength(5);
    expect(read(items).at(-1)).toBe("assistant(done): Done: refunded $5.00 on A-1002.");
  });

  it("is placed against the messages at load time, not the ones read after it ended", () => {
    const loaded = [user("hi"), assistant("Hello."), user("hello again")];
    const replay = block([tok("Hi again."), done("Hi again.")]);
    // After the run, a refresh brought its answer; the cut must not move past it (no duplicate).
    const later = [...loaded, assistant("Hi again.")];
    const items = buildTimeline({ messages: later, loadedMessages: loaded, blocks: [replay] });
    expect(read(items)).toEqual(["user: hi", "assistant(done): Hello.", "user: hello again", "assistant(done): Hi again."]);
  });
});

describe("runs placed among messages they do not account for", () => {
  it("another client's exchange between two runs of this page shows as history between them, once", () => {
    const mine1 = block([tok("Hello."), done("Hello.")], { userText: "hi", messagesBefore: 0, messagesAfter: 2 });
    const mine2 = block([tok("Bye."), done("Bye.")], { userText: "bye", messagesBefore: 2 });
    // Between the two, another tab asked something; this page read the thread only after its own second run.
    const messages = [user("hi"), assistant("Hello."), user("from the other tab"), assistant("Answered there."), user("bye"), assistant("Bye.")];
    const items = buildTimeline({ messages, loadedMessages: [], blocks: [mine1, mine2] });
    expect(read(items)).toEqual([
      "user: hi",
      "assistant(done): Hello.",
      "user: from the other tab",
      "assistant(done): Answered there.",
      "user: bye",
      "assistant(done): Bye.",
    ]);
    expect(new Set(keys(items)).size).toBe(items.length);
  });

  it("until the thread is read again, a run this page started sits where the page knew the thread to end", () => {
    const mine = block([tok("Stre")], { userText: "bye", messagesBefore: 2 });
    const items = buildTimeline({ messages: [user("hi"), assistant("Hello.")], loadedMessages: [], blocks: [mine] });
    expect(read(items)).toEqual(["user: hi", "assistant(done): Hello.", "user: bye", "assistant(streaming): Stre"]);
  });

  it.each([
    ["messages after this page's last run that it does not account for show after it", 2],
    // The page read the thread after its run only once another client's whole exchange was in.
    ["a run's end read too late (another client's exchange already in) stops at the next user message", 4],
  ])("%s", (_, messagesAfter) => {
    const mine = block([tok("Hello."), done("Hello.")], { userText: "hi", messagesBefore: 0, messagesAfter });
    const messages = [user("hi"), assistant("Hello."), user("elsewhere"), assistant("There.")];
    expect(read(buildTimeline({ messages, loadedMessages: [], blocks: [mine] }))).toEqual([
      "user: hi",
      "assistant(done): Hello.",
      "user: elsewhere",
      "assistant(done): There.",
    ]);
  });

  it("a replayed run whose first event is its end added nothing: the history before it stays whole", () => {
    // A resume that failed before any result: its replay is a lone error event.
    const loaded = [ASK, PLAN, LOOKED];
    const replay = block([failure("model_error", "upstream 500")], { messagesAfter: 3 });
    expect(blockStart(replay, { messages: loaded, from: 0, loaded })).toBe(3);
    expect(read(buildTimeline({ messages: loaded, loadedMessages: loaded, blocks: [replay] }))).toEqual([
      "user: refund order A-1002 5 dollars",
      "assistant(done): I'll check A-1002 and refund $5.00.",
      "tool lookup_order c-look: ok",
      "tool refund_order c-ref: running",
      "notice(error/model_error): upstream 500",
    ]);
  });
});

describe("appendEvent", () => {
  it("merges consecutive tokens into one event and keeps other events apart", () => {
    const b = block([tok("a"), tok("b"), tok("c"), toolCall("c1", "lookup_order", {}), tok("d"), tok("e")]);
    expect(b.events.map((e) => (e.type === "token" ? `token:${e.text}` : e.type))).toEqual(["token:abc", "tool_call", "token:de"]);
  });

  it("does not mutate the token event it merged into (a snapshot that holds it stays as it was)", () => {
    const first = tok("a");
    const b: RunBlock = { events: [] };
    appendEvent(b, first);
    appendEvent(b, tok("b"));
    expect(first).toMatchObject({ text: "a" });
    expect(b.events).toEqual([{ type: "token", run_id: RUN, text: "ab" }]);
  });
});

describe("waiting cards", () => {
  it("an interrupt marks its calls waiting and needing approval; a read-only result stays ok; the text before it is done", () => {
    const b = block(
      [tok("I'll check."), toolCall("c-look", "lookup_order", {}), toolCall("c-ref", "refund_order", {}, true), toolResult("c-look", "lookup_order", "ok", { output: "{}" }), interrupt("c-ref")],
      { userText: "refund", messagesBefore: 0 },
    );
    const items = buildTimeline({ messages: [], loadedMessages: [], blocks: [b] });
    expect(read(items)).toEqual(["user: refund", "assistant(done): I'll check.", "tool lookup_order c-look: ok", "tool refund_order c-ref: waiting"]);
    expect(cards(items)[1]).toMatchObject({ needs_approval: true });
  });

  it("pendingCallIds marks history cards waiting (a reload while the gate is open)", () => {
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED], loadedMessages: [ASK, PLAN, LOOKED], blocks: [], pendingCallIds: ["c-ref"] });
    expect(read(items).slice(2)).toEqual(["tool lookup_order c-look: ok", "tool refund_order c-ref: waiting"]);
    expect(cards(items)[1]!.needs_approval).toBe(true);
  });

  it("pendingCallIds never reopens a settled card", () => {
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED, REFUNDED], loadedMessages: [], blocks: [], pendingCallIds: ["c-ref"] });
    expect(cards(items)[1]!.status).toBe("ok");
  });
});

describe("results nobody streamed", () => {
  const sent = () =>
    block([tok("I'll check."), toolCall("c-look", "lookup_order", {}), toolCall("c-ref", "refund_order", {}, true), toolResult("c-look", "lookup_order", "ok", { output: "{}" }), interrupt("c-ref")], {
      userText: ASK.content,
      messagesBefore: 0,
    });

  it("an expiry closed the gate while the page only waited: the tool message after the cut settles the card", () => {
    const expired = tool("c-ref", "refund_order", "Expired: approval window closed; not executed", "expired");
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED, expired], loadedMessages: [], blocks: [sent()] });
    expect(read(items)).toEqual([
      "user: refund order A-1002 5 dollars",
      "assistant(done): I'll check.",
      "tool lookup_order c-look: ok",
      "tool refund_order c-ref: expired",
    ]);
    expect(cards(items)[1]).toMatchObject({ error: "Expired: approval window closed; not executed" });
  });

  it("a result the stream already brought is not overwritten by its message", () => {
    const b = sent();
    appendEvent(b, toolResult("c-ref", "refund_order", "ok", { output: "from the stream", edited: true }));
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED, tool("c-ref", "refund_order", "from the message", "ok")], loadedMessages: [], blocks: [b] });
    expect(cards(items)[1]).toMatchObject({ status: "ok", output: "from the stream", edited: true });
  });

  it("the user and assistant messages after the cut are never shown again", () => {
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED], loadedMessages: [], blocks: [sent()] });
    expect(items.filter((i) => i.kind === "user")).toHaveLength(1);
    expect(items.filter((i) => i.kind === "assistant")).toHaveLength(1);
  });
});

describe("how a run ends", () => {
  it("cancelled: the partial answer is stopped and a stopped notice follows it", () => {
    const b = block([tok("I'm the tollgate"), tok(" demo"), cancelled("api")], { userText: "hello", messagesBefore: 0 });
    const items = buildTimeline({ messages: [user("hello")], loadedMessages: [], blocks: [b] });
    expect(read(items)).toEqual(["user: hello", "assistant(stopped): I'm the tollgate demo", "notice(stopped/api): Stopped. The answer above is incomplete."]);
  });

  it("cancelled because the client or the server went away says so", () => {
    for (const [reason, text] of [["client", /client went away/], ["shutdown", /server shut down/]] as const) {
      const items = buildTimeline({ messages: [], loadedMessages: [], blocks: [block([cancelled(reason)], { messagesBefore: 0 })] });
      expect(items).toEqual([expect.objectContaining({ kind: "notice", tone: "stopped", code: reason, text: expect.stringMatching(text) })]);
    }
  });

  it("error: the partial answer is failed and an error notice carries code and message", () => {
    const b = block([tok("Half an"), tok(" answer"), failure("model_error", "Model call failed: 502")], { userText: "hello", messagesBefore: 0 });
    const items = buildTimeline({ messages: [user("hello")], loadedMessages: [], blocks: [b] });
    expect(read(items)).toEqual(["user: hello", "assistant(failed): Half an answer", "notice(error/model_error): Model call failed: 502"]);
  });

  it("an error before any token adds only the notice", () => {
    const items = buildTimeline({ messages: [], loadedMessages: [], blocks: [block([failure("model_timeout", "Model timed out")], { userText: "x", messagesBefore: 0 })] });
    expect(read(items)).toEqual(["user: x", "notice(error/model_timeout): Model timed out"]);
  });

  it("done with a message and no tokens adds the answer once", () => {
    const b = block([done("Answer without tokens.")], { userText: "q", messagesBefore: 0 });
    const items = buildTimeline({ messages: [user("q"), assistant("Answer without tokens.")], loadedMessages: [], blocks: [b] });
    expect(read(items)).toEqual(["user: q", "assistant(done): Answer without tokens."]);
  });

  it("done after streamed tokens does not repeat the answer; an empty done message adds nothing", () => {
    const streamed = block([tok("Streamed"), tok(" answer."), done("Streamed answer.")], { userText: "q", messagesBefore: 0 });
    expect(read(buildTimeline({ messages: [], loadedMessages: [], blocks: [streamed] }))).toEqual(["user: q", "assistant(done): Streamed answer."]);
    const empty = block([toolCall("c1", "lookup_order", {}), toolResult("c1", "lookup_order", "ok"), done("")], { userText: "q", messagesBefore: 0 });
    expect(read(buildTimeline({ messages: [], loadedMessages: [], blocks: [empty] }))).toEqual(["user: q", "tool lookup_order c1: ok"]);
  });

  it("max_rounds: done repeats the text streamed before the last tool calls; it shows once", () => {
    // MAX_ROUNDS reached right after the tools ran: done.message is the last assistant text,
    // the one that came with the tool calls and already streamed.
    const maxed = (message: string): ProtocolEvent => ({ type: "done", run_id: RUN, outcome: "max_rounds", message });
    const b = block([tok("Let me check"), tok(" order A-1001."), toolCall("c1", "lookup_order", {}), toolResult("c1", "lookup_order", "ok"), maxed("Let me check order A-1001.")], {
      userText: "where is A-1001",
      messagesBefore: 0,
    });
    expect(read(buildTimeline({ messages: [], loadedMessages: [], blocks: [b] }))).toEqual([
      "user: where is A-1001",
      "assistant(done): Let me check order A-1001.",
      "tool lookup_order c1: ok",
    ]);
    // A resume that hits the limit names the plan of the run before it, which is history here.
    const resumed = block([toolResult("c-ref", "refund_order", "ok"), maxed(PLAN.content)]);
    const items = buildTimeline({ messages: [ASK, PLAN, LOOKED], loadedMessages: [ASK, PLAN, LOOKED], blocks: [resumed] });
    expect(items.filter((i) => i.kind === "assistant")).toHaveLength(1);
  });

  it("the same words asked again and answered without tokens are a new answer", () => {
    const items = buildTimeline({ messages: [user("hi"), assistant("Hello.")], loadedMessages: [], blocks: [block([done("Hello.")], { userText: "hi", messagesBefore: 2 })] });
    expect(read(items)).toEqual(["user: hi", "assistant(done): Hello.", "user: hi", "assistant(done): Hello."]);
  });

  it("a second run's answer is its own: the first one's done does not swallow it", () => {
    const first = block([tok("Same."), done("Same.")], { userText: "a", messagesBefore: 0 });
    const second = block([done("Other.")], { userText: "b" });
    const items = buildTimeline({ messages: [], loadedMessages: [], blocks: [first, second] });
    expect(read(items)).toEqual(["user: a", "assistant(done): Same.", "user: b", "assistant(done): Other."]);
  });
});
