import { memo, useEffect, useRef } from "react";
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

/**
 * The timeline is rebuilt on every token, as new objects: an item whose content did not change
 * is not rendered again, so a long chat costs one re-render per token, not one per item.
 */
const Item = memo(ItemView, (a, b) => sameItem(a.item, b.item));

function sameItem(a: TimelineItem, b: TimelineItem): boolean {
  if (a.kind !== b.kind || a.key !== b.key) return false;
  if (a.kind === "tool" && b.kind === "tool") {
    const x = a.card;
    const y = b.card;
    return x.status === y.status && x.output === y.output && x.error === y.error && x.edited === y.edited && x.needs_approval === y.needs_approval && x.name === y.name && x.args === y.args;
  }
  return (
    (a as { text?: string }).text === (b as { text?: string }).text &&
    (a as { state?: string }).state === (b as { state?: string }).state &&
    (a as { code?: string }).code === (b as { code?: string }).code
  );
}

function ItemView({ item }: { item: TimelineItem }) {
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
