/**
 * Which thread events a stream or subscription gets, as langgraph-api decides it: the channels
 * asked for, then namespace prefixes (a bare node name matching its tasks) and depth below them.
 */
import { describe, expect, it } from "vitest";
import type { ProtocolEvent, StreamGap } from "../../../../../src/faces/langgraph/protocol/protocol-event.js";
import { filterOf, wants } from "../../../../../src/faces/langgraph/protocol/stream-filter.js";

const event = (method: ProtocolEvent["method"], namespace: string[] = []): ProtocolEvent => ({
  type: "event",
  event_id: "1",
  seq: 1,
  method,
  params: { namespace, timestamp: 0, data: {} },
});
const gap: StreamGap = { type: "error", id: null, error: "no_such_run", message: "gone", tollgate: { code: "events_pruned", from_seq: 1, to_seq: 2 } };

describe("a stream's filter", () => {
  it("lets through the channels asked for, the input channel's two methods under input", () => {
    const f = filterOf({ channels: ["tasks", "input"] });
    expect(wants(f, event("tasks"))).toBe(true);
    expect(wants(f, event("input.requested"))).toBe(true);
    expect(wants(f, event("input.answered"))).toBe(true);
    expect(wants(f, event("custom"))).toBe(false);
    expect(wants(f, event("values"))).toBe(false);
  });

  it("without prefixes takes every namespace, whatever the depth", () => {
    const f = filterOf({ channels: ["tasks"], depth: 0 });
    expect(wants(f, event("tasks", ["desk:1", "inner:2"]))).toBe(true);
  });

  it("with prefixes takes what lies under one, a bare node name matching its tasks, at most depth below", () => {
    const desk = filterOf({ channels: ["tasks"], namespaces: [["desk"]] });
    expect(wants(desk, event("tasks", ["desk:9f"]))).toBe(true);
    expect(wants(desk, event("tasks", ["desk:9f", "agent:1"]))).toBe(true);
    expect(wants(desk, event("tasks", []))).toBe(false);
    expect(wants(desk, event("tasks", ["intake:3"]))).toBe(false);
    // A prefix with its task id matches that task only.
    expect(wants(filterOf({ channels: ["tasks"], namespaces: [["desk:9f"]] }), event("tasks", ["desk:00"]))).toBe(false);
    const rootOnly = filterOf({ channels: ["tasks"], namespaces: [[]], depth: 0 });
    expect(wants(rootOnly, event("tasks", []))).toBe(true);
    expect(wants(rootOnly, event("tasks", ["desk:9f"]))).toBe(false);
    const oneDown = filterOf({ channels: ["tasks"], namespaces: [["desk"]], depth: 1 });
    expect(wants(oneDown, event("tasks", ["desk:9f", "agent:1"]))).toBe(true);
    expect(wants(oneDown, event("tasks", ["desk:9f", "agent:1", "x:2"]))).toBe(false);
  });

  it("always lets a gap in the kept log through: it is said, never skipped", () => {
    expect(wants(filterOf({ channels: ["values"], namespaces: [["desk"]] }), gap)).toBe(true);
  });

  it("reads what a subscribe command holds, ignoring what is not a filter", () => {
    expect(filterOf({ channels: ["values"], namespaces: "desk", depth: -1 })).toEqual({ channels: new Set(["values"]) });
  });
});
