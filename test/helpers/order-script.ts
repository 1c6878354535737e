import type { Turn } from "./fake-openai.js";

/** An order-support model: refund → lookup + refund (the refund waits at the gate); tool results → a few words. */
export function orderScript(req: { messages: Array<{ role: string; content: unknown }> }): Turn {
  const last = req.messages.at(-1)!;
  if (last.role === "tool") return { text: "That is done now, as you asked." };
  const said = String(last.content);
  if (said.startsWith("refund")) {
    return {
      toolCalls: [
        { name: "lookup_order", args: { order_id: "A-1001" } },
        { name: "refund_order", args: { order_id: "A-1001", amount_cents: 5, reason: "kill test" } },
      ],
    };
  }
  if (said.startsWith("where")) return { toolCalls: [{ name: "lookup_order", args: { order_id: "A-1002" } }] };
  return { text: "ok" };
}
