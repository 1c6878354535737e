import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import type { TokenSource } from "../client/index.js";
import type { Me } from "../protocol/index.js";
import { useTollgate } from "../react/index.js";
import { ApprovalCard } from "./approval-card.js";
import { Conversation } from "./conversation.js";

interface ChatProps {
  threadId: string;
  me: Me;
  token: TokenSource;
  onOpenThread(id: string): void;
  /** Called when a run ends, so lists elsewhere on the page are read again. */
  onActivity(): void;
}

/** One thread: the conversation, the approval cards of its open interrupt, and the composer. */
export function Chat({ threadId, me, token, onOpenThread, onActivity }: ChatProps) {
  const t = useTollgate({ baseUrl: window.location.origin, threadId, token });
  const [draft, setDraft] = useState("");

  // Lists elsewhere change when a run starts or ends here.
  const status = t.status;
  const previous = useRef(status);
  useEffect(() => {
    if (previous.current !== status) onActivity();
    previous.current = status;
  }, [status, onActivity]);

  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    const text = draft.trim();
    if (!text || status !== "idle") return;
    onOpenThread(threadId); // the hash names the thread from its first message on, for reloads
    setDraft("");
    await t.send(text);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey) void send(e);
  };

  return (
    <main className="chat" aria-label="Chat">
      <div className="chat-head">
        <h2 className="thread-id" title={threadId}>
          {threadId}
        </h2>
        <span className={`badge status-${status}`} data-testid="thread-status">
          {status}
        </span>
      </div>
      <Conversation items={t.messages} />
      {t.pending ? (
        <div className="approvals" aria-label="Pending approvals">
          {t.pending.calls.map((call) => (
            <ApprovalCard
              key={`${t.pending!.interrupt_id}:${call.call_id}`}
              call={call}
              expiresAt={t.pending!.expires_at}
              serverNow={t.serverNow}
              canDecide={t.canDecide}
              draft={t.drafts[call.call_id]}
              submitting={t.submitting}
              onApprove={() => t.approve(call.call_id)}
              onReject={(reason) => t.reject(call.call_id, reason)}
              onEdit={(args) => t.edit(call.call_id, args)}
            />
          ))}
          {t.owner === me.sub || me.roles.includes("admin") ? (
            // Only the owner (or an admin) may cancel: the one way out of a request nobody decides.
            <button type="button" className="withdraw" onClick={() => void t.stop()} disabled={t.stopping || t.submitting}>
              Withdraw request
            </button>
          ) : null}
        </div>
      ) : null}
      {t.error ? (
        <div className="request-error" role="alert" data-testid="request-error">
          <strong>{t.error.code}</strong>: {t.error.message}
          <button type="button" onClick={t.dismissError} aria-label="Dismiss error">
            ×
          </button>
        </div>
      ) : null}
      <form className="composer" onSubmit={send}>
        <label htmlFor="message" className="visually-hidden">
          Message
        </label>
        <textarea
          id="message"
          rows={2}
          value={draft}
          placeholder={status === "waiting_human" ? "Decide the pending calls first" : "Ask the agent…"}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKey}
        />
        {status === "running" ? (
          <button type="button" className="stop" onClick={() => void t.stop()} disabled={t.stopping}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={status !== "idle" || !draft.trim()}>
            Send
          </button>
        )}
      </form>
    </main>
  );
}
