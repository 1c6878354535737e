import { describe, expect, it } from "vitest";
import type { LoggedEvent } from "../../../../src/protocol/index.js";
import type { GraphFrame } from "../../../../src/runs/stream/graph-frames.js";
import { RecentFrames, withFrames } from "../../../../src/runs/stream/recent-frames.js";

const frame = (after: number, n = 0): GraphFrame => ({ kind: "frame", mode: "tasks", namespace: [], data: `f${after}.${n}`, after, n });
const event = (seq: number): LoggedEvent => ({ seq, type: "tool_call", data: `e${seq}` });
const named = (x: LoggedEvent | GraphFrame) => x.data;

async function* stored(...batches: number[][]): AsyncGenerator<LoggedEvent[]> {
  for (const b of batches) yield b.map(event);
}

async function merged(batches: AsyncGenerator<LoggedEvent[]>, frames: GraphFrame[]): Promise<string[][]> {
  const out: string[][] = [];
  for await (const batch of withFrames(batches, frames)) out.push(batch.map(named));
  return out;
}

describe("a run's kept frames, replayed with its stored events", () => {
  it("each frame comes right after the event it followed, across batches; frames before the first event come first", async () => {
    const frames = [frame(-1), frame(0), frame(0, 1), frame(2)];
    expect(await merged(stored([0, 1], [2, 3]), frames)).toEqual([
      ["f-1.0", "e0", "f0.0", "f0.1", "e1"],
      ["e2", "f2.0", "e3"],
    ]);
  });

  it("frames after the last stored event come after it, as a live log sends them", async () => {
    expect(await merged(stored([0, 1]), [frame(1)])).toEqual([["e0", "e1"], ["f1.0"]]);
  });

  it("no frames: the stored batches as they are", async () => {
    expect(await merged(stored([0], [1]), [])).toEqual([["e0"], ["e1"]]);
  });
});

describe("RecentFrames", () => {
  it("keeps an ended run's frames for five minutes, not longer", () => {
    let now = 0;
    const recent = new RecentFrames({ now: () => now });
    recent.keep("r1", [frame(0)]);
    now = 5 * 60_000 - 1;
    expect(recent.of("r1")).toHaveLength(1);
    now = 5 * 60_000;
    expect(recent.of("r1")).toEqual([]);
  });

  it("keeps the latest 256 runs: the oldest goes first", () => {
    const recent = new RecentFrames({ now: () => 0 });
    for (let i = 0; i <= 256; i++) recent.keep(`r${i}`, [frame(i)]);
    expect(recent.of("r0")).toEqual([]);
    expect(recent.of("r1")).toHaveLength(1);
    expect(recent.of("r256")).toHaveLength(1);
  });

  it("keeps 20,000 frames in all: runs go oldest first until the rest fit", () => {
    const recent = new RecentFrames({ now: () => 0 });
    const many = (k: number) => Array.from({ length: k }, (_, i) => frame(i));
    recent.keep("a", many(5_000));
    recent.keep("b", many(10_000));
    recent.keep("c", many(5_000));
    expect([recent.of("a").length, recent.of("b").length, recent.of("c").length]).toEqual([5_000, 10_000, 5_000]);
    recent.keep("d", many(1));
    expect([recent.of("a").length, recent.of("b").length, recent.of("d").length]).toEqual([0, 10_000, 1]);
  });

  it("lets aged-out runs go when asked, not only when it keeps another", () => {
    let now = 0;
    const recent = new RecentFrames({ now: () => now });
    recent.keep("old", [frame(0)]);
    now = 5 * 60_000;
    expect(recent.of("other")).toEqual([]);
    now = 0; // a time at which it would still show, were it held
    expect(recent.of("old")).toEqual([]);
  });
});
