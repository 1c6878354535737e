import pg from "pg";
import type { NoticeChannel, ReplicaBus } from "../types.js";

type Listener = (key: string, payload: string) => void;

const CHANNELS: readonly NoticeChannel[] = ["cancel", "run_events", "thread"];
const PREFIX = "tollgate_";

/** The PostgreSQL channel a notice channel travels on: `tollgate_cancel`, `tollgate_run_events`. */
export function pgChannel(channel: NoticeChannel): string {
  return PREFIX + channel;
}

/** A notice's NOTIFY payload: the key, a tab, the payload (keys never hold a tab: ids). */
export function encodeNotice(key: string, payload: string): string {
  return `${key}\t${payload}`;
}

function decodeNotice(text: string): { key: string; payload: string } {
  const tab = text.indexOf("\t");
  return tab < 0 ? { key: text, payload: "" } : { key: text.slice(0, tab), payload: text.slice(tab + 1) };
}

export interface PgReplicaBusOptions {
  /** Where the bus reports what it survives (a lost connection, a failed listener); it never throws. */
  onError?: (msg: string, err: unknown) => void;
  /** How often the listening connection is checked with a `SELECT 1` (a dead peer sends no FIN). */
  pingMs?: number;
  /** The longest wait between two reconnection attempts. */
  maxBackoffMs?: number;
}

const FIRST_BACKOFF_MS = 100;

/**
 * Notices between replicas over LISTEN/NOTIFY. One dedicated connection (not from the pool: a
 * pooled one would be handed to others, and LISTEN belongs to a session) listens on every
 * channel; publishing is a `pg_notify` on the pool, so a notice sent inside a transaction is
 * delivered when it commits. Every replica's listener gets every notice, this one's included.
 *
 * While the listening connection is down, notices are lost: `connected` is false from the moment
 * that is known until the connection is back and listening again, and callers poll meanwhile.
 */
export class PgReplicaBus implements ReplicaBus {
  private readonly listeners = new Map<NoticeChannel, Set<Listener>>();
  private client: pg.Client | undefined;
  private live = false;
  private closed = false;
  private backoffMs = FIRST_BACKOFF_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly onError: (msg: string, err: unknown) => void;
  private readonly pingMs: number;
  private readonly maxBackoffMs: number;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
    opts: PgReplicaBusOptions,
  ) {
    this.onError = opts.onError ?? (() => undefined);
    this.pingMs = opts.pingMs ?? 10_000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 5_000;
  }

  /**
   * The bus, listening once its first connection is up. Never rejects: when that first attempt
   * fails, it comes back not `connected` and keeps trying in the background.
   */
  static async open(pool: pg.Pool, connection: string | pg.ClientConfig, opts: PgReplicaBusOptions = {}): Promise<PgReplicaBus> {
    const config = typeof connection === "string" ? { connectionString: connection } : connection;
    // keepAlive: the kernel notices a vanished peer sooner; a connect timeout: an unreachable host
    // is retried, not waited on for minutes; application_name: visible in pg_stat_activity.
    const defaults = { application_name: "tollgate-bus", keepAlive: true, connectionTimeoutMillis: 10_000 };
    const bus = new PgReplicaBus(pool, { ...defaults, ...config }, opts);
    await bus.connect();
    return bus;
  }

  get connected(): boolean {
    return this.live;
  }

  async publish(channel: NoticeChannel, key: string, payload = ""): Promise<void> {
    await this.pool.query("SELECT pg_notify($1, $2)", [pgChannel(channel), encodeNotice(key, payload)]);
  }

  subscribe(channel: NoticeChannel, listener: Listener): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pingTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.clientConfig);
    this.client = client;
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client, new Error("the listening connection ended")));
    client.on("notification", (msg) => this.dispatch(msg));
    try {
      await client.connect();
      for (const channel of CHANNELS) await client.query(`LISTEN ${pgChannel(channel)}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.client !== client) return; // lost (or closed) meanwhile: its successor is on its way
    this.live = true;
    this.backoffMs = FIRST_BACKOFF_MS;
    this.pingTimer = setInterval(() => void this.ping(client), this.pingMs);
    this.pingTimer.unref();
  }

  /** A connection that stopped answering is dropped (and replaced), not waited on. */
  private async ping(client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the listening connection did not answer within ${this.pingMs} ms`)), this.pingMs);
      timer.unref();
    });
    try {
      await Promise.race([client.query("SELECT 1"), timeout]);
    } catch (err) {
      this.lost(client, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The listening connection is gone (or never came up): notices may be lost until the next one listens. */
  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return; // already replaced: its 'error' and 'end' both land here
    this.client = undefined;
    this.live = false;
    clearInterval(this.pingTimer);
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.onError(`replica bus: listening connection lost, reconnecting in ${this.backoffMs} ms`, err);
    this.reconnectTimer = setTimeout(() => void this.connect(), this.backoffMs);
    this.reconnectTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
  }

  private dispatch(msg: pg.Notification): void {
    if (!msg.channel.startsWith(PREFIX)) return;
    const channel = msg.channel.slice(PREFIX.length) as NoticeChannel;
    const { key, payload } = decodeNotice(msg.payload ?? "");
    for (const listener of this.listeners.get(channel) ?? []) {
      try {
        listener(key, payload);
      } catch (err) {
        this.onError(`replica bus: a ${channel} listener failed`, err);
      }
    }
  }
}
