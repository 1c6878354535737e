import { afterEach, describe, expect, it, vi } from "vitest";
import { DeadlineError, within } from "../../helpers/within.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("within", () => {
  it("passes a value or a rejection through when it comes first", async () => {
    await expect(within(Promise.resolve(7), { ms: 1_000, failure: "x" })).resolves.toBe(7);
    await expect(within(Promise.reject(new Error("own")), { ms: 1_000, failure: "x" })).rejects.toThrow("own");
  });

  it("fails saying what did not happen, how long was waited and since what", async () => {
    vi.useFakeTimers();
    const never = new Promise<never>(() => {});
    const waited = within(never, { ms: 5_000, failure: "the model's HTTP request was not aborted", since: "the cancel" });
    const bare = within(never, { ms: 1_500, failure: "the stream did not end" });
    // Both expectations attached before the timers fire: neither rejection goes unhandled meanwhile.
    const checks = [
      expect(waited).rejects.toThrow(new DeadlineError("the model's HTTP request was not aborted within 5 s of the cancel")),
      expect(bare).rejects.toThrow("the stream did not end within 1.5 s"),
    ];
    vi.advanceTimersByTime(5_000);
    await Promise.all(checks);
  });
});
