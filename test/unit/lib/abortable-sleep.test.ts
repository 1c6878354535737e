import { describe, expect, it } from "vitest";
import { abortableSleep } from "../../../src/lib/index.js";

describe("abortableSleep", () => {
  it("resolves after its time when nothing aborts it", async () => {
    const controller = new AbortController();
    let done = false;
    const waiting = abortableSleep(20, controller.signal).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false); // a real wait, not an immediate resolve
    await waiting;
    expect(done).toBe(true);
    await abortableSleep(1); // no signal at all
  });

  it("rejects with the signal's reason as soon as it aborts, so a stopped wait does not linger", async () => {
    const controller = new AbortController();
    const waiting = abortableSleep(60_000, controller.signal);
    const reason = new Error("stopped");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason); // would time the test out if the abort were ignored
  });

  it("rejects at once for a signal already aborted, even for a zero wait", async () => {
    const controller = new AbortController();
    controller.abort("gone");
    await expect(abortableSleep(60_000, controller.signal)).rejects.toBe("gone");
    await expect(abortableSleep(0, controller.signal)).rejects.toBe("gone");
  });

  it("leaves no listener behind on a signal that outlives many waits", async () => {
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
    controller.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (listeners--, remove(...a))) as typeof remove;
    for (let i = 0; i < 5; i++) await abortableSleep(1, controller.signal);
    expect(listeners).toBe(0);
  });
});
