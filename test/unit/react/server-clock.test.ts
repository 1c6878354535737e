import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerClock } from "../../../src/react/server-clock.js";

// The countdown to `expires_at` counts on the server's clock, told from `Date` headers: one
// second of resolution, written somewhere between sending and receiving.

const HOUR = 3_600_000;
const date = (ms: number) => new Date(ms).toUTCString();

/** A clock whose local time the test sets. */
function fakeLocal(start: number) {
  let now = start;
  return { now: () => now, set: (t: number) => (now = t), clock: new ServerClock(() => now) };
}

describe("ServerClock", () => {
  it("is the local clock (offset 0) until a response with a Date header was seen", () => {
    const { clock, set } = fakeLocal(1_000_000);
    expect(clock.offset()).toBe(0);
    clock.observe(null, 1_000_000, 1_000_100);
    clock.observe("not a date", 1_000_000, 1_000_100);
    expect(clock.offset()).toBe(0);
    set(5_000_000);
    expect(clock.now()).toBe(5_000_000);
  });

  it("one response bounds the offset to [Date - received, Date + 1 s - sent] and takes its middle", () => {
    const { clock } = fakeLocal(0);
    // Local and server agree; the server stamped 10 s (whole second) during a 200 ms request.
    clock.observe(date(10_000), 9_900, 10_100);
    // low = 10 000 - 10 100 = -100, high = 11 000 - 9 900 = 1 100 → middle 500
    expect(clock.offset()).toBe(500);
  });

  it("latest() is never earlier than the server's true time, so a countdown never shows more than is left", () => {
    for (const trueOffset of [-HOUR, -1234, 0, 250, 999, HOUR]) {
      const { clock, set } = fakeLocal(0);
      for (let sent = 50_000; sent < 60_000; sent += 777) {
        const stamped = sent + 35 + trueOffset; // written 35 ms into a 90 ms request
        clock.observe(date(Math.floor(stamped / 1000) * 1000), sent, sent + 90);
        set(sent + 90);
        expect(clock.latest(), `offset ${trueOffset}`).toBeGreaterThanOrEqual(sent + 90 + trueOffset);
        expect(clock.latest() - (sent + 90 + trueOffset), `offset ${trueOffset}`).toBeLessThanOrEqual(1_100);
      }
    }
  });

  it("intersects the bounds of every response: the estimate narrows to the true offset", () => {
    const trueOffset = 250; // the server is 250 ms ahead
    const { clock } = fakeLocal(0);
    const errors: number[] = [];
    // Requests of 20 ms at different phases of the server's second.
    for (let sent = 100_000; sent < 102_000; sent += 130) {
      const stamped = sent + 10 + trueOffset; // server time when it wrote the header
      clock.observe(date(Math.floor(stamped / 1000) * 1000), sent, sent + 20);
      errors.push(Math.abs(clock.offset() - trueOffset));
    }
    expect(errors[0]).toBeGreaterThan(100); // one response says little
    expect(errors.at(-1)).toBeLessThanOrEqual(20); // many, at different phases of the second, say much more
  });

  it("a server an hour ahead: now() is the server's time, not the local one", () => {
    const local = fakeLocal(50_000_000);
    for (let sent = 50_000_000; sent < 50_003_000; sent += 370) {
      const stamped = sent + 5 + HOUR;
      local.clock.observe(date(Math.floor(stamped / 1000) * 1000), sent, sent + 10);
    }
    local.set(50_010_000);
    expect(Math.abs(local.clock.now() - (50_010_000 + HOUR))).toBeLessThanOrEqual(50);
  });

  it("a response that contradicts what was known (a clock was set) replaces it", () => {
    const { clock } = fakeLocal(0);
    clock.observe(date(100_000), 99_990, 100_010); // offset ≈ 0
    expect(Math.abs(clock.offset())).toBeLessThan(1000);
    // Now the server is an hour behind: disjoint from [−10, 1 010].
    clock.observe(date(200_000 - HOUR), 199_990, 200_010);
    expect(clock.offset()).toBe(-HOUR + 500); // [−1 h − 10, −1 h + 1 010] alone
    // And it narrows from there: [−1 h + 490, −1 h + 1 500] ∩ [−1 h − 10, −1 h + 1 010].
    clock.observe(date(300_000 - HOUR), 299_500, 299_510);
    expect(clock.offset()).toBe(-HOUR + 750);
  });
});

describe("ServerClock.wrapFetch against a real HTTP server", () => {
  let server: http.Server;
  let base: string;
  /** The Date header the server sends next; null = none. */
  let nextDate: string | null = null;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.sendDate = false; // node:http would add its own
      if (nextDate !== null) res.setHeader("date", nextDate);
      res.setHeader("content-type", "text/plain");
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("feeds the clock from each response and hands the response through untouched", async () => {
    const clock = new ServerClock();
    const wrapped = clock.wrapFetch(fetch);
    const serverNow = Date.now() + HOUR;
    nextDate = date(serverNow);
    const res = await wrapped(`${base}/x`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
    // Within a second (the header's resolution) plus the round trip of the server's time.
    expect(Math.abs(clock.now() - serverNow)).toBeLessThan(1500);
    expect(Math.abs(clock.offset() - HOUR)).toBeLessThan(1500);
  });

  it("a response without Date leaves the clock as it was", async () => {
    const clock = new ServerClock();
    nextDate = null;
    await clock.wrapFetch(fetch)(`${base}/x`);
    expect(clock.offset()).toBe(0);
  });

  it("passes the request's init (method, headers) to the inner fetch", async () => {
    const seen: RequestInit[] = [];
    const clock = new ServerClock();
    const inner: typeof fetch = (input, init) => {
      seen.push(init ?? {});
      return fetch(input, init);
    };
    nextDate = date(Date.now());
    await clock.wrapFetch(inner)(`${base}/x`, { method: "POST", headers: { "x-a": "1" }, body: "{}" });
    expect(seen).toEqual([expect.objectContaining({ method: "POST", headers: { "x-a": "1" } })]);
  });
});
