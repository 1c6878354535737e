import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { LinkedAbortController } from "../../../src/lib/index.js";
import { collected } from "../../helpers/collected.js";

describe("LinkedAbortController", () => {
  it("aborts with the reason of whichever source aborts first", () => {
    const [a, b] = [new AbortController(), new AbortController()];
    const link = new LinkedAbortController([a.signal, undefined, b.signal]);
    expect(link.signal.aborted).toBe(false);
    b.abort("b went");
    a.abort("a went");
    expect(link.signal.reason).toBe("b went");
  });

  it("is aborted at once when a source already is", () => {
    const a = new AbortController();
    a.abort("early");
    expect(new LinkedAbortController([new AbortController().signal, a.signal]).signal.reason).toBe("early");
  });

  it("once unlinked, leaves no listener on its sources and no longer follows them", () => {
    const a = new AbortController();
    const link = new LinkedAbortController([a.signal]);
    link.unlink();
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
    a.abort("late");
    expect(link.signal.aborted).toBe(false);
  });

  it("is let go once unlinked, even with a listener of its own on a source that lives on", async () => {
    const source = new AbortController();
    const ref = (() => {
      const link = new LinkedAbortController([source.signal]);
      link.signal.addEventListener("abort", () => {}); // as a request library does, and does not remove
      link.unlink();
      return new WeakRef(link.signal);
    })();
    expect(await collected(ref)).toBe(true);
    expect(source.signal.aborted).toBe(false); // the source was still alive all along
  });
});
