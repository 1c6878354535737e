import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { latestTurn } from "./conversation-turn.js";

/** What the demo model will do next: say something, or call tools (and maybe say a line first). */
export type DemoStep =
  | { kind: "say"; text: string }
  | { kind: "call"; text: string; calls: Array<{ name: string; args: Record<string, unknown> }> };

const HELP =
  "I'm the tollgate demo agent. I can look up orders A-1001 to A-1005, refund them and email " +
  'customers. Try "where is A-1001", "refund order A-1002 5 dollars" or "email the customer of ' +
  'A-1003 that it ships tomorrow".';

/** The user's latest request and the results of the tools called since, by tool name. */
function currentTurn(messages: BaseMessage[]): { request: string; results: Map<string, ToolMessage> } {
  const { request, toolResults } = latestTurn(messages);
  return { request, results: new Map(toolResults.flatMap((m) => (m.name ? [[m.name, m] as const] : []))) };
}

function parseJson(m: ToolMessage | undefined): Record<string, unknown> | null {
  const text = String(m?.content);
  // An edited call's result comes after one header line naming the changed arguments.
  const edited = (m?.artifact as { edited?: unknown } | undefined)?.edited;
  try {
    const v: unknown = JSON.parse(edited ? text.slice(text.indexOf("\n") + 1) : text);
    return v && typeof v === "object" ? (v as Record<string, unknown>) : null;
  } catch {
    return null; // a rejection or error text, not a result
  }
}

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

function amountCents(text: string): number | null {
  const m = /\$\s*(\d+(?:\.\d{1,2})?)|(\d+(?:\.\d{1,2})?)\s*(?:dollars?|usd|\$)/i.exec(text);
  const n = m ? Number(m[1] ?? m[2]) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.round(n * 100) : null;
}

/**
 * The demo model's script: plain requests become tool calls, tool results become a summary.
 * Deterministic from the conversation, so a restarted server continues where it stopped. It never
 * repeats a sensitive value (the customer's email, an email's body) in its text: free text is not
 * masked, so a value the tools mask would leak through the tokens.
 */
export function nextDemoStep(messages: BaseMessage[]): DemoStep {
  const { request, results } = currentTurn(messages);
  const orderId = /\bA-\d{4}\b/i.exec(request)?.[0].toUpperCase();
  if (!orderId) return { kind: "say", text: HELP };
  const lookup = results.get("lookup_order");
  const amount = amountCents(request);
  if (!lookup && /refund/i.test(request) && amount) {
    // One mixed batch: the read-only lookup runs at once, the refund waits at the gate.
    return {
      kind: "call",
      text: `I'll check ${orderId} and refund ${dollars(amount)}; the refund needs your approval.`,
      calls: [
        { name: "lookup_order", args: { order_id: orderId } },
        { name: "refund_order", args: { order_id: orderId, amount_cents: amount, reason: "Customer request" } },
      ],
    };
  }
  if (!lookup) {
    return { kind: "call", text: `Let me check order ${orderId}.`, calls: [{ name: "lookup_order", args: { order_id: orderId } }] };
  }
  const order = parseJson(lookup);
  if (!order) return { kind: "say", text: `I couldn't look up ${orderId}: ${String(lookup.content)}` };

  if (/refund/i.test(request)) return refundStep({ request, orderId, order }, results.get("refund_order"));
  if (/e-?mail/i.test(request)) return emailStep({ request, orderId, order }, results.get("send_email"));
  return {
    kind: "say",
    text:
      `Order ${orderId} is ${String(order.status)}. Total ${dollars(Number(order.total_cents))}, ` +
      `refunded so far ${dollars(Number(order.refunded_cents))}. The customer's email address is on file.`,
  };
}

/** A request about one order, and the order as the lookup found it. */
interface OrderAsk {
  request: string;
  orderId: string;
  order: Record<string, unknown>;
}

/** `done`: the refund's result, once it ran (or was refused). */
function refundStep(ask: OrderAsk, done?: ToolMessage): DemoStep {
  const { request, orderId, order } = ask;
  if (!done) {
    const remaining = Number(order.total_cents) - Number(order.refunded_cents);
    const amount = amountCents(request) ?? remaining;
    return {
      kind: "call",
      text: `I'll refund ${dollars(amount)} on ${orderId}; that needs your approval.`,
      calls: [{ name: "refund_order", args: { order_id: orderId, amount_cents: amount, reason: "Customer request" } }],
    };
  }
  const result = parseJson(done);
  if (result) return { kind: "say", text: `Done: refunded ${dollars(Number(result.amount_cents))} on ${orderId}.` };
  return { kind: "say", text: `I did not refund ${orderId}. ${String(done.content)}` };
}

/** `done`: the email's result, once it was sent (or refused). */
function emailStep(ask: OrderAsk, done?: ToolMessage): DemoStep {
  const { request, orderId, order } = ask;
  if (!done) {
    const said = /\bthat\b\s+(.+)$/i.exec(request)?.[1] ?? `an update on your order ${orderId}.`;
    return {
      kind: "call",
      text: `I'll email the customer of ${orderId}; that needs your approval.`,
      calls: [{
        name: "send_email",
        args: { to: order.customer_email, subject: `About your order ${orderId}`, body: `Hello, ${said}` },
      }],
    };
  }
  const result = parseJson(done);
  if (result) return { kind: "say", text: `Sent: the email to the customer of ${orderId} is in the outbox.` };
  return { kind: "say", text: `I did not send the email. ${String(done.content)}` };
}
