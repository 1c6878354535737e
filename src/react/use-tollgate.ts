import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import type { TokenSource } from "../client/index.js";
import type { Decision } from "../protocol/index.js";
import { TollgateSession, type TollgateSnapshot } from "./tollgate-session.js";

export interface UseTollgateOptions {
  /** Server origin, e.g. `http://127.0.0.1:8787` (or `""`/`location.origin` for the same origin). */
  baseUrl: string;
  threadId: string;
  /** Bearer token, or a function giving the current one; read afresh on every request. */
  token?: TokenSource;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface UseTollgateResult extends TollgateSnapshot {
  /**
   * Sends a user message (the thread is created if it does not exist); resolves when its run ends,
   * with whether the server took it (false: refused, see `error`, or the thread was not idle).
   */
  send(text: string): Promise<boolean>;
  approve(callId: string): Promise<void>;
  reject(callId: string, reason?: string): Promise<void>;
  edit(callId: string, editedArgs: Record<string, unknown>): Promise<void>;
  /**
   * Sends these decisions at once; pending calls without one are rejected by the server. Resolves
   * with whether the server took them.
   */
  decide(decisions: Decision[]): Promise<boolean>;
  /** Cancels the running run (its partial answer ends marked stopped), or withdraws the waiting calls. */
  stop(): Promise<void>;
  /** Reads the thread again; says whether it could. */
  refresh(): Promise<boolean>;
  dismissError(): void;
  /**
   * The server's clock (from its `Date` header) for counting down to `expires_at`: the latest it
   * may read now, so a countdown never shows more time than is left.
   */
  serverNow(): number;
}

/**
 * One tollgate thread in a React component: its messages, the answer streaming now, tool cards,
 * the pending approval, and the actions on them. On mount it loads the thread and replays its
 * latest run, so a reload mid-stream continues the text and a reload while waiting brings the
 * approval card back. Runs it starts survive the page closing (`on_disconnect: "continue"`);
 * only `stop()` cancels them. A new `threadId` starts a new session.
 */
export function useTollgate(opts: UseTollgateOptions): UseTollgateResult {
  // The latest token prop, read at request time: a new token does not restart the session.
  const tokenRef = useRef(opts.token);
  tokenRef.current = opts.token;
  const optsRef = useRef(opts);
  optsRef.current = opts;
  const [state, setState] = useState(() => ({ session: createSession(opts, tokenRef) }));
  let session = state.session;
  if (session.threadId !== opts.threadId || session.baseUrl !== opts.baseUrl) {
    // From this render on, not one render later: the old thread's messages must not show under
    // the new id, nor an action reach the old session.
    session = createSession(opts, tokenRef);
    setState({ session });
  }

  useEffect(() => {
    if (sessionDisposed.has(session)) {
      // React ran this effect's cleanup and then the effect again (development mode): a
      // disposed session cannot restart, so the next render gets a fresh one.
      setState({ session: createSession(optsRef.current, tokenRef) });
      return;
    }
    void session.start();
    return () => {
      sessionDisposed.add(session);
      session.dispose();
    };
  }, [session]);

  const snapshot = useSyncExternalStore(session.subscribe, session.getSnapshot, session.getSnapshot);
  const actions = useMemo(
    () => ({
      send: (text: string) => session.send(text),
      approve: (callId: string) => session.approve(callId),
      reject: (callId: string, reason?: string) => session.reject(callId, reason),
      edit: (callId: string, args: Record<string, unknown>) => session.edit(callId, args),
      decide: (decisions: Decision[]) => session.decide(decisions),
      stop: () => session.stop(),
      refresh: () => session.refresh(),
      dismissError: () => session.dismissError(),
      serverNow: () => session.clock.latest(),
    }),
    [session],
  );
  return { ...snapshot, ...actions };
}

/** Sessions whose effect was cleaned up (React may run an effect twice in development). */
const sessionDisposed = new WeakSet<TollgateSession>();

function createSession(opts: UseTollgateOptions, tokenRef: { current: TokenSource | undefined }): TollgateSession {
  return new TollgateSession({
    baseUrl: opts.baseUrl,
    threadId: opts.threadId,
    fetch: opts.fetch,
    token: async () => {
      const t = tokenRef.current;
      return typeof t === "function" ? t() : t;
    },
  });
}
