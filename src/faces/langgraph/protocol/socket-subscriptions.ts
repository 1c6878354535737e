import { type StreamItem } from "./protocol-event.js";
import { type StreamFilter, wants } from "./stream-filter.js";

/** A subscription on a socket: what it asked for, the seq it began after, and the seq through which it has passed every event. */
interface Subscription {
  filter: StreamFilter;
  from: number;
  after: number;
}

/**
 * The subscriptions of one socket, and which of the thread's items the socket carries for them:
 * each item once, when a subscription wants it and none carried it already. A new subscription
 * so costs only what it adds: what an existing one that began no later and asked for at least as
 * much already carried is not sent again.
 */
export class SocketSubscriptions {
  private readonly subs = new Map<string, Subscription>();

  get size(): number {
    return this.subs.size;
  }

  /**
   * Adds a subscription to items after `from`. Answers whether the reader must go back for it:
   * false when an existing subscription covers it, having carried everything it wants since `from`.
   */
  add(id: string, filter: StreamFilter, from: number): boolean {
    const cover = [...this.subs.values()].find((s) => s.from <= from && covers(s.filter, filter));
    this.subs.set(id, { filter, from, after: cover ? Math.max(from, cover.after) : from });
    return !cover;
  }

  delete(id: string): boolean {
    return this.subs.delete(id);
  }

  clear(): void {
    this.subs.clear();
  }

  /** The seq after which the reader must read for every subscription to have what it needs. */
  earliest(): number {
    return Math.min(...[...this.subs.values()].map((s) => s.after));
  }

  wantsChannel(channel: string): boolean {
    return [...this.subs.values()].some((s) => s.filter.channels.has(channel));
  }

  /** Passes an item through every subscription; whether the socket sends it now. */
  pass(e: StreamItem): boolean {
    const seq = e.type === "event" ? e.seq : e.tollgate.to_seq;
    let wanted = false;
    let carried = false;
    for (const s of this.subs.values()) {
      if (seq <= s.after) {
        carried ||= seq > s.from && wants(s.filter, e);
        continue;
      }
      s.after = seq;
      wanted ||= wants(s.filter, e);
    }
    return wanted && !carried;
  }
}

/** Whether every item `b` lets through, `a` lets through too. */
function covers(a: StreamFilter, b: StreamFilter): boolean {
  if (![...b.channels].every((c) => a.channels.has(c))) return false;
  if (!a.namespaces && a.depth === undefined) return true;
  return JSON.stringify([a.namespaces, a.depth]) === JSON.stringify([b.namespaces, b.depth]);
}
