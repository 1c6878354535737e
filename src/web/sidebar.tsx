import { useEffect, useState } from "react";
import type { TollgateClient } from "../client/index.js";
import type { ApprovalItem, Me, ThreadSummary } from "../protocol/index.js";

/** An approver's inbox is read again this often while the page is open (no push channel yet). */
const INBOX_POLL_MS = 5_000;

interface SidebarProps {
  client: TollgateClient;
  me: Me;
  activeThreadId: string;
  /** Changes when a run ends: time to read the lists again. */
  activity: number;
  onNewChat(): void;
}

/** The caller's threads and, for approvers, the open interrupts they may decide. */
export function Sidebar({ client, me, activeThreadId, activity, onNewChat }: SidebarProps) {
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
  const [inbox, setInbox] = useState<ApprovalItem[]>([]);
  // Approvers, admins, and roles a quorum may require (AUTH_ROLES): any role but a plain user's or metrics'.
  const isApprover = me.roles.some((r) => r !== "user" && r !== "metrics");

  useEffect(() => {
    let live = true;
    client.listThreads({ limit: 50 }).then(
      (list) => live && setThreads(list.items),
      () => undefined, // the list is a convenience; the chat shows real errors
    );
    return () => {
      live = false;
    };
  }, [client, activity, activeThreadId]);

  useEffect(() => {
    if (!isApprover) return;
    let live = true;
    const read = () =>
      client.approvals().then(
        (list) => live && setInbox(list.items),
        () => undefined,
      );
    void read();
    const timer = setInterval(read, INBOX_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [client, isApprover, activity, activeThreadId]);

  return (
    <aside className="sidebar">
      {isApprover ? (
        <section aria-label="Approvals inbox" className="inbox">
          <h2>Approvals inbox</h2>
          {inbox.length === 0 ? <p className="muted">Nothing waits for you.</p> : null}
          <ul>
            {inbox.map((item) => (
              <li key={item.interrupt_id}>
                <a href={`#thread=${encodeURIComponent(item.thread_id)}`} data-testid="inbox-item" data-thread-id={item.thread_id}>
                  {item.calls.map((c) => c.name).join(", ")} <span className="muted">for {item.requested_by}</span>
                  {item.escalated ? (
                    <span className="badge escalated" data-testid="escalated">
                      escalated
                    </span>
                  ) : null}
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <nav aria-label="Threads" className="threads">
        <h2>Threads</h2>
        <button type="button" onClick={onNewChat}>
          New chat
        </button>
        <ul>
          {threads.map((t) => (
            <li key={t.thread_id}>
              <a
                href={`#thread=${encodeURIComponent(t.thread_id)}`}
                data-testid="thread-link"
                data-thread-id={t.thread_id}
                aria-current={t.thread_id === activeThreadId ? "page" : undefined}
              >
                <span className="title">{t.title ?? t.thread_id}</span>
                <span className={`badge status-${t.status}`}>{t.status === "waiting_human" ? "waiting" : t.status}</span>
              </a>
            </li>
          ))}
        </ul>
      </nav>
    </aside>
  );
}
