import type { NoticeChannel, ReplicaBus } from "./types.js";

type Listener = (key: string, payload: string) => void;

/** The bus of a store only one process uses (SQLite): notices stay in the process. */
export class LocalBus implements ReplicaBus {
  readonly connected = true;
  private readonly listeners = new Map<NoticeChannel, Set<Listener>>();

  async publish(channel: NoticeChannel, key: string, payload = ""): Promise<void> {
    this.deliver(channel, key, payload);
  }

  subscribe(channel: NoticeChannel, listener: Listener): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Hands a notice to this process's listeners (a remote bus calls it for what arrives). */
  deliver(channel: NoticeChannel, key: string, payload: string): void {
    for (const l of this.listeners.get(channel) ?? []) l(key, payload);
  }
}
