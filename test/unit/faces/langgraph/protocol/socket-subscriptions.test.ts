/**
 * What one WebSocket carries for its subscriptions: each event once, in the order the reader
 * passes them, and for a new subscription only what the socket has not carried already, so that
 * subscribing again costs nothing and subscribing to more costs only the more.
 */
import { describe, expect, it } from "vitest";
import type { ProtocolEvent, StreamGap } from "../../../../../src/faces/langgraph/protocol/protocol-event.js";
import { SocketSubscriptions } from "../../../../../src/faces/langgraph/protocol/socket-subscriptions.js";
import { filterOf } from "../../../../../src/faces/langgraph/protocol/stream-filter.js";

const event = (seq: number, method: ProtocolEvent["method"], namespace: string[] = []): ProtocolEvent => ({
  type: "event",
  event_id: String(seq),
  seq,
  method,
  params: { namespace, timestamp: 0, data: {} },
});
/** A run's log: lifecycle, messages and tools interleaved. */
const LOG = [event(1, "lifecycle"), event(2, "messages"), event(3, "tools"), event(4, "messages"), event(5, "tools"), event(6, "lifecycle")];

/** What the socket sends of `items` as the reader passes them. */
const carried = (subs: SocketSubscriptions, items = LOG) => items.filter((e) => subs.pass(e)).map((e) => e.seq);

describe("a socket's subscriptions", () => {
  it("carry each event once, however many subscriptions want it", () => {
    const subs = new SocketSubscriptions();
    expect(subs.add("a", filterOf({ channels: ["lifecycle", "tools"] }), 0)).toBe(true);
    expect(subs.add("b", filterOf({ channels: ["tools", "messages"] }), 0)).toBe(true);
    expect(carried(subs)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a second identical subscription needs no reader and is carried nothing again; it follows what comes next", () => {
    const subs = new SocketSubscriptions();
    subs.add("a", filterOf({ channels: ["lifecycle", "messages"] }), 0);
    expect(carried(subs)).toEqual([1, 2, 4, 6]);
    expect(subs.add("b", filterOf({ channels: ["lifecycle", "messages"] }), 0)).toBe(false);
    // The reader, started again anyway, passes the log once more: nothing goes out twice.
    expect(carried(subs)).toEqual([]);
    expect(carried(subs, [event(7, "messages")])).toEqual([7]);
    // The first one gone, the second still gets what comes.
    subs.delete("a");
    expect(carried(subs, [event(8, "lifecycle")])).toEqual([8]);
  });

  it("a wider subscription is carried only what it adds", () => {
    const subs = new SocketSubscriptions();
    subs.add("a", filterOf({ channels: ["lifecycle", "messages"] }), 0);
    expect(carried(subs)).toEqual([1, 2, 4, 6]);
    expect(subs.add("b", filterOf({ channels: ["lifecycle", "messages", "tools"] }), 0)).toBe(true);
    expect(subs.earliest()).toBe(0);
    expect(carried(subs)).toEqual([3, 5]);
  });

  it("a subscription from earlier than the others is carried the events before them", () => {
    const subs = new SocketSubscriptions();
    subs.add("a", filterOf({ channels: ["lifecycle"] }), 3);
    expect(carried(subs)).toEqual([6]);
    // Not covered: `a` began later.
    expect(subs.add("b", filterOf({ channels: ["lifecycle"] }), 0)).toBe(true);
    expect(carried(subs)).toEqual([1]);
  });

  it("a namespaced subscription does not cover one for every namespace", () => {
    const subs = new SocketSubscriptions();
    subs.add("a", filterOf({ channels: ["tools"], namespaces: [["desk"]] }), 0);
    const items = [event(1, "tools", ["desk:1"]), event(2, "tools", [])];
    expect(carried(subs, items)).toEqual([1]);
    expect(subs.add("b", filterOf({ channels: ["tools"] }), 0)).toBe(true);
    expect(carried(subs, items)).toEqual([2]);
    // The other way round it covers.
    expect(subs.add("c", filterOf({ channels: ["tools"], namespaces: [["desk"]] }), 0)).toBe(false);
  });

  it("a gap in the kept log goes out once", () => {
    const subs = new SocketSubscriptions();
    const gap: StreamGap = { type: "error", id: null, error: "no_such_run", message: "gone", tollgate: { code: "events_pruned", from_seq: 1, to_seq: 4 } };
    subs.add("a", filterOf({ channels: ["lifecycle"] }), 0);
    expect(subs.pass(gap)).toBe(true);
    subs.add("b", filterOf({ channels: ["tools"] }), 0);
    expect(subs.pass(gap)).toBe(false);
  });
});
