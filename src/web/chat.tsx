import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent, type Ref } from "react";
import type { TokenSource } from "../client/index.js";
import type { Me, PendingCall } from "../protocol/index.js";
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
  ref?: Ref<HTMLElement>;
}

/** One thread: the conversation, the approval cards of its open interrupt, and the composer. */
export function Chat({ threadId, me, token, onOpenThread, onActivity, ref }: ChatProps) {
  const t = useTollgate({ baseUrl: window.location.origin, threadId, token });
  const [draft, setDraft] = useState("");

  // Lists elsewhere change when a run starts or ends here.
  const status = t.status;
  const previous = useRef(status);
  useEffect(() => {
    if (previous.current !== status) onActivity();
    previous.current = status;
  }, [status, onActivity]);

  // What the server would refuse is not offered: a message needs the `user` role on one's own (or
  // a new) thread, or `admin`; a cancel needs the owner or an admin.
  const isAdmin = me.roles.includes("admin");
  const mayWrite = isAdmin || (me.roles.includes("user") && (t.owner === null || t.owner === me.sub));
  // A thread this page is creating (no owner read yet) is the writer's own.
  const mayCancel = isAdmin || t.owner === me.sub || (t.owner === null && mayWrite);

  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    const text = draft.trim();
    if (!text || status !== "idle") return;
    onOpenThread(threadId); // the hash names the thread from its first message on, for reloads
    setDraft("");
    // A refused message (busy, rate limited, offline) comes back to the box, not lost.
    if (!(await t.send(text))) setDraft((now) => now || text);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter while an input method composes a word picks the word; it does not send.
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) void send(e);
  };

  return (
    <main className="chat" aria-label="Chat" ref={ref}>
      <div className="chat-head" data-testid="thread-header">
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
              canDecide={t.canDecide && mayDecideCall(call, me, t.owner)}
              escalated={t.escalated}
              draft={t.drafts[call.call_id]}
              submitting={t.submitting}
              onApprove={() => t.approve(call.call_id)}
              onReject={(reason) => t.reject(call.call_id, reason)}
              onEdit={(args) => t.edit(call.call_id, args)}
            />
          ))}
          {mayCancel ? (
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
      {!mayWrite ? (
        <p className="composer muted" data-testid="read-only">
          {t.owner ? `This is ${t.owner}'s thread: you may read it${t.canDecide ? " and decide its calls" : ""}.` : "Your roles do not include writing messages."}
        </p>
      ) : (
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
        {status === "running" && mayCancel ? (
          <button type="button" className="stop" onClick={() => void t.stop()} disabled={t.stopping}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={status !== "idle" || !draft.trim()}>
            Send
          </button>
        )}
      </form>
      )}
    </main>
  );
}

/**
 * Whether this person may still decide this call, besides what the inbox says of the interrupt:
 * a quorum call needs its role, never its owner, and counts each person once.
 */
function mayDecideCall(call: PendingCall, me: Me, owner: string | null): boolean {
  if (call.policy !== "quorum") return true;
  if (me.sub === owner) return false;
  const role = call.requires?.role ?? "approver";
  return (me.roles.includes(role) || me.roles.includes("admin")) && !call.approvals?.some((a) => a.by === me.sub);
}
