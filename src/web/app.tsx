import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { TollgateClient, TollgateError } from "../client/index.js";
import type { Me } from "../protocol/index.js";
import { Chat } from "./chat.js";
import { SignIn } from "./sign-in.js";
import { Sidebar } from "./sidebar.js";
import { readToken, writeToken } from "./token-store.js";
import { useHashThread } from "./use-hash-thread.js";

type Identity =
  | { kind: "checking" }
  | { kind: "signed-in"; me: Me }
  | { kind: "needs-token"; rejected: boolean }
  | { kind: "unreachable"; message: string };

/** The page: who you are, your threads and inbox, and the open chat. */
export function App() {
  const [token, setToken] = useState(readToken);
  const tokenRef = useRef(token);
  tokenRef.current = token;
  // One client for the page's own reads; the chat's hook has its own (with the server clock).
  const client = useMemo(() => new TollgateClient({ baseUrl: window.location.origin, token: () => tokenRef.current }), []);
  const [identity, setIdentity] = useState<Identity>({ kind: "checking" });
  const [threadId, openThread, newChat] = useHashThread();
  // Bumped when a run ends, so the thread list and the inbox are read again.
  const [activity, setActivity] = useState(0);
  const onActivity = useCallback(() => setActivity((n) => n + 1), []);
  // On a narrow screen the chat lies below the thread list: bring it into view when a person opens
  // a thread or a new chat. On a wide one it is always in view, and this does nothing.
  const chatRef = useRef<HTMLElement>(null);
  const shownThread = useRef(threadId);
  useEffect(() => {
    if (shownThread.current === threadId) return;
    shownThread.current = threadId;
    chatRef.current?.scrollIntoView({ block: "nearest" });
  }, [threadId]);

  useEffect(() => {
    let live = true;
    setIdentity({ kind: "checking" });
    client.me().then(
      (me) => live && setIdentity({ kind: "signed-in", me }),
      (err: unknown) => {
        if (!live) return;
        if (err instanceof TollgateError && err.status === 401) setIdentity({ kind: "needs-token", rejected: Boolean(token) });
        else setIdentity({ kind: "unreachable", message: err instanceof Error ? err.message : String(err) });
      },
    );
    return () => {
      live = false;
    };
  }, [client, token]);

  const signIn = (t: string) => {
    writeToken(t);
    setToken(t);
  };
  const signOut = () => {
    writeToken(undefined);
    setToken(undefined);
  };

  if (identity.kind === "checking") return <p className="splash">Connecting…</p>;
  if (identity.kind === "needs-token") return <SignIn rejected={identity.rejected} onSignIn={signIn} />;
  if (identity.kind === "unreachable") {
    return (
      <p className="splash" role="alert" data-testid="request-error">
        The server cannot be reached: {identity.message}
      </p>
    );
  }
  const { me } = identity;
  return (
    <div className="app">
      <header className="topbar">
        <h1>tollgate</h1>
        <span data-testid="whoami" className="whoami">
          {me.sub} <span className="roles">({me.roles.join(", ")})</span>
        </span>
        {token ? (
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        ) : null}
      </header>
      <Sidebar client={client} me={me} activeThreadId={threadId} activity={activity} onNewChat={newChat} />
      <Chat key={threadId} ref={chatRef} threadId={threadId} me={me} token={() => tokenRef.current} onOpenThread={openThread} onActivity={onActivity} />
    </div>
  );
}
