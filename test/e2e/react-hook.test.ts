// @vitest-environment jsdom
import { act, cleanup, renderHook } from "@testing-library/react";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TollgateClient } from "../../src/client/index.js";
import type { TimelineItem } from "../../src/react/timeline.js";
import { useTollgate, type UseTollgateOptions, type UseTollgateResult } from "../../src/react/use-tollgate.js";
import { startServer, type ServerProcess } from "../helpers/server-process.js";
import { threadId } from "./support.js";

// useTollgate in React (jsdom) against a real tollgate process with the demo model. Waits are on
// the hook's own renders: each render is checked, nothing polls or sleeps.
//
// jsdom replaces AbortController/AbortSignal with its own; Node's fetch accepts those signals
// (and aborts on them: see the unmount test), so the hook runs on the global fetch as a page would.

let server: ServerProcess;
let client: TollgateClient;
beforeAll(async () => {
  server = await startServer({ DEMO_TOKEN_DELAY_MS: "25" });
  client = new TollgateClient({ baseUrl: server.url });
}, 30_000);
afterEach(() => cleanup());
afterAll(async () => {
  await server?.kill();
});

const HELP =
  "I'm the tollgate demo agent. I can look up orders A-1001 to A-1005, refund them and email " +
  'customers. Try "where is A-1001", "refund order A-1002 5 dollars" or "email the customer of ' +
  'A-1003 that it ships tomorrow".';

const answers = (r: UseTollgateResult) => r.messages.filter((m): m is Extract<TimelineItem, { kind: "assistant" }> => m.kind === "assistant");

/** renderHook with a way to await a render whose result matches. */
function mount(initial: UseTollgateOptions, opts: { reactStrictMode?: boolean } = {}) {
  const renders: UseTollgateResult[] = [];
  const waiters = new Set<() => void>();
  const hook = renderHook(
    (props: UseTollgateOptions) => {
      const result = useTollgate(props);
      renders.push(result);
      queueMicrotask(() => waiters.forEach((w) => w()));
      return result;
    },
    { initialProps: initial, ...opts },
  );
  /** The first render (the current one included) that matches. */
  const until = (what: string, predicate: (r: UseTollgateResult) => boolean, timeoutMs = 10_000) =>
    new Promise<UseTollgateResult>((resolve, reject) => {
      const check = () => {
        const r = hook.result.current;
        if (!predicate(r)) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        const r = hook.result.current;
        reject(new Error(`timed out waiting for: ${what}\nlast render: ${JSON.stringify({ threadId: r.threadId, status: r.status, error: r.error, pending: r.pending?.interrupt_id, messages: r.messages }, null, 2)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { ...hook, renders, until };
}

describe("useTollgate", () => {
  it("mounts, sends, renders the answer as it streams, then done; equal to the thread's final message", async () => {
    const id = threadId("hook-send");
    const h = mount({ baseUrl: server.url, threadId: id });
    expect(h.result.current).toMatchObject({ threadId: id, status: "loading", messages: [] });
    await h.until("loaded", (r) => r.status === "idle");

    let sending!: Promise<boolean>;
    act(() => {
      sending = h.result.current.send("hello there");
    });
    const streaming = await h.until("streaming text", (r) => r.status === "running" && r.streamingText.length > 0);
    expect(HELP.startsWith(streaming.streamingText)).toBe(true);
    expect(streaming.streamingText.length).toBeLessThan(HELP.length);
    await act(() => sending);
    expect(await sending, "the server took the message").toBe(true);
    const end = await h.until("done", (r) => r.status === "idle" && r.lastOutcome === "completed");

    expect(end.streamingText).toBe("");
    expect(end.messages.map((m) => m.kind)).toEqual(["user", "assistant"]);
    expect(answers(end)[0]).toMatchObject({ text: HELP, state: "done" });
    const view = await client.getThread(id);
    expect(view.messages.at(-1)).toMatchObject({ role: "assistant", content: HELP });
    // Renders in between showed the text growing, never shrinking or repeating.
    const texts = h.renders.map((r) => r.streamingText).filter(Boolean);
    expect(texts.length).toBeGreaterThan(1);
    for (const t of texts) expect(HELP.startsWith(t)).toBe(true);
  });

  it("approves through the hook: the card goes from waiting to ok", async () => {
    const id = threadId("hook-approve");
    const h = mount({ baseUrl: server.url, threadId: id });
    await h.until("loaded", (r) => r.status === "idle");
    await act(() => h.result.current.send("refund order A-1002 5 dollars"));
    const waiting = await h.until("the gate", (r) => r.status === "waiting_human" && r.canDecide);
    const pendingCall = waiting.pending!.calls[0]!;
    expect(pendingCall).toMatchObject({ name: "refund_order", args: { order_id: "A-1002", amount_cents: 500 } });
    expect(waiting.toolCards.find((c) => c.call_id === pendingCall.call_id)?.status).toBe("waiting");
    expect(waiting.serverNow()).toBeLessThan(Date.parse(waiting.pending!.expires_at));

    await act(() => h.result.current.approve(pendingCall.call_id));
    const end = await h.until("approved and answered", (r) => r.status === "idle" && r.lastOutcome === "completed");
    expect(end.pending).toBeNull();
    expect(end.toolCards.find((c) => c.call_id === pendingCall.call_id)?.status).toBe("ok");
    expect(answers(end).at(-1)?.text).toBe("Done: refunded $5.00 on A-1002.");
  });

  it("a new threadId starts a fresh session on that thread", async () => {
    const first = threadId("hook-first");
    const second = threadId("hook-second");
    await client.run(second, "where is A-1003").collect();
    const h = mount({ baseUrl: server.url, threadId: first });
    await h.until("loaded", (r) => r.status === "idle");
    await act(() => h.result.current.send("hello there"));
    await h.until("first answered", (r) => r.lastOutcome === "completed");

    h.rerender({ baseUrl: server.url, threadId: second });
    // From the very render that names the new thread: nothing of the first thread shows under it.
    expect(h.result.current).toMatchObject({ threadId: second, status: "loading", messages: [] });
    const other = await h.until("the second thread loaded", (r) => r.threadId === second && r.status === "idle" && r.lastOutcome === "completed" && r.messages.length > 0);
    expect(other.messages[0]).toMatchObject({ kind: "user", text: "where is A-1003" });
    expect(other.messages.some((m) => (m.kind === "user" || m.kind === "assistant") && m.text === HELP)).toBe(false);
    expect(answers(other).at(-1)?.text).toMatch(/^Order A-1003 is /);

    // And it acts on the second thread, not the first.
    await act(() => h.result.current.send("hello again"));
    await h.until("second answered", (r) => r.status === "idle" && answers(r).at(-1)?.text === HELP);
    expect((await client.getThread(second)).messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["where is A-1003", "hello again"]);
    expect((await client.getThread(first)).messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["hello there"]);
  });

  it("under StrictMode (effects run twice) it still loads, replays and decides", async () => {
    const id = threadId("hook-strict");
    await client.run(id, "refund order A-1004 3 dollars").collect();
    const h = mount({ baseUrl: server.url, threadId: id }, { reactStrictMode: true });
    const waiting = await h.until("the pending refund", (r) => r.status === "waiting_human" && r.canDecide);
    expect(waiting.toolCards.map((c) => `${c.name}:${c.status}`)).toEqual(["lookup_order:ok", "refund_order:waiting"]);
    await act(() => h.result.current.reject(waiting.pending!.calls[0]!.call_id, "not today"));
    const end = await h.until("rejected", (r) => r.status === "idle" && r.pending === null && r.toolCards.some((c) => c.status === "rejected"));
    expect(answers(end).at(-1)?.text).toBe("I did not refund A-1004. Rejected: not today");
  });

  it("unmount closes the stream but does not cancel the run: it completes on the server", async () => {
    const id = threadId("hook-unmount");
    const signals: AbortSignal[] = [];
    const spy: typeof fetch = (input, init) => {
      if (String(input).endsWith("/runs") && init?.signal) signals.push(init.signal);
      return fetch(input, init);
    };
    const h = mount({ baseUrl: server.url, threadId: id, fetch: spy });
    await h.until("loaded", (r) => r.status === "idle");
    act(() => {
      void h.result.current.send("hello there");
    });
    await h.until("streaming", (r) => r.streamingText.length > 0);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);

    h.unmount();
    expect(signals[0]!.aborted).toBe(true); // the page aborted its request: the connection is closed

    // The run goes on without anyone watching: replaying it shows its end.
    const events = await client.stream(id).collect();
    expect(events.at(-1)).toMatchObject({ type: "done", outcome: "completed", message: HELP });
    expect(await client.getThread(id)).toMatchObject({ status: "idle", last_outcome: "completed" });
  });
});
