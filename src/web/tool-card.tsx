import type { ToolCard } from "../react/index.js";
import { ArgsList } from "./args-list.js";

const STATUS_TEXT: Record<ToolCard["status"], string> = {
  running: "running",
  waiting: "waiting for approval",
  ok: "done",
  error: "failed",
  invalid_args: "invalid arguments",
  rejected: "rejected",
  expired: "expired",
  cancelled: "cancelled",
};

/** A tool call: what was asked (masked), then how it ended. */
export function ToolCardView({ card }: { card: ToolCard }) {
  return (
    <article className={`tool-card status-${card.status}`} data-testid="tool-card" data-call-id={card.call_id} data-status={card.status} aria-label={`Tool ${card.name}: ${STATUS_TEXT[card.status]}`}>
      <header>
        <span className="tool-name">{card.name}</span>
        {card.needs_approval ? <span className="badge gate">gated</span> : null}
        <span className={`badge status-${card.status}`}>{STATUS_TEXT[card.status]}</span>
        {card.edited ? <span className="badge edited">edited</span> : null}
      </header>
      <ArgsList args={card.args} />
      {card.output !== undefined ? <pre className="output">{card.output}</pre> : null}
      {card.error !== undefined ? <pre className="output error">{card.error}</pre> : null}
    </article>
  );
}
