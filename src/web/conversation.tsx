import { useEffect, useRef } from "react";
import type { TimelineItem } from "../react/index.js";
import { ToolCardView } from "./tool-card.js";

/** The messages, tool cards and run notices, following the newest while the reader is at the bottom. */
export function Conversation({ items }: { items: readonly TimelineItem[] }) {
  const log = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    const el = log.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <div
      className="conversation"
      role="log"
      aria-label="Conversation"
      ref={log}
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {items.length === 0 ? <p className="muted empty">Ask something, e.g. “refund order A-1002 5 dollars”.</p> : null}
      {items.map((item) => (
        <Item key={item.key} item={item} />
      ))}
    </div>
  );
}

function Item({ item }: { item: TimelineItem }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="msg user" data-testid="msg-user">
          {item.text}
        </div>
      );
    case "assistant":
      return (
        <div className={`msg assistant ${item.state}`} data-testid="msg-assistant" data-state={item.state} aria-busy={item.state === "streaming"}>
          {item.text}
          {item.state === "stopped" ? <span className="badge stopped">Stopped</span> : null}
          {item.state === "failed" ? <span className="badge failed">Failed</span> : null}
        </div>
      );
    case "tool":
      return <ToolCardView card={item.card} />;
    case "notice":
      return item.tone === "error" ? (
        <div className="notice error" role="alert" data-testid="run-error">
          Error ({item.code}): {item.text}
        </div>
      ) : (
        <div className="notice stopped" data-testid="run-stopped">
          {item.text}
        </div>
      );
  }
}
