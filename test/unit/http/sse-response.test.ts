import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/logger.js";
import type { LoggedEvent } from "../../../src/store/index.js";
import { sseResponse } from "../../../src/http/sse-response.js";

/** Events that never come: a run still going, watched until the stream's signal fires. */
async function* quietUntil(signal: AbortSignal): AsyncGenerator<LoggedEvent[]> {
  await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
}

describe("sseResponse and the client's going away", () => {
  it("a client gone before the response was built counts as gone: its run is told at once", () => {
    let gone = 0;
    sseResponse({
      runId: "r1",
      events: quietUntil,
      clientSignal: AbortSignal.abort(), // fired before anyone could listen
      onClientGone: () => gone++,
      heartbeatMs: 60_000,
      log: silentLogger,
    });
    expect(gone).toBe(1);
  });

  it("a client that leaves later is told once, however it leaves", async () => {
    let gone = 0;
    const client = new AbortController();
    const res = sseResponse({ runId: "r2", events: quietUntil, clientSignal: client.signal, onClientGone: () => gone++, heartbeatMs: 60_000, log: silentLogger });
    expect(gone).toBe(0);
    client.abort();
    await res.body!.cancel();
    expect(gone).toBe(1);
  });
});
