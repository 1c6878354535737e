import type { CallCard, CardPart, InterruptCard } from "./card-types.js";

/** The card's head as a face reads it: the thread, who asked, the deadline or how it closed. */
export function headParts(card: InterruptCard): CardPart[] {
  const asked = card.requested_by !== undefined ? ` · asked by ${card.requested_by}` : "";
  return [{ kind: "text", text: `Thread ${card.thread_id}${asked} · ${card.status}` }];
}

/** One call, whole, in reading order: which call at which version, its policy, arguments, preview. */
export function callParts(call: CallCard): CardPart[] {
  const parts: CardPart[] = [
    { kind: "title", text: `${call.name} · ${call.call_id} · version ${call.version}` },
    { kind: "text", text: call.policy },
    { kind: "label", text: "Arguments:" },
    { kind: "code", text: call.args },
  ];
  if (call.preview !== undefined) parts.push({ kind: "label", text: "Preview:" }, { kind: "code", text: call.preview });
  if (call.preview_error) parts.push({ kind: "text", text: `Preview unavailable: ${call.preview_error}` });
  return parts;
}

/** Parts as plain text, for faces that show text alone (a mail's text part, the HITL description). */
export function partsText(parts: readonly CardPart[], o: { indent?: boolean } = {}): string {
  const pad = (n: number, s: string) => (o.indent ? s.replace(/^/gm, " ".repeat(n)) : s);
  return parts.map((p) => (p.kind === "title" ? p.text : p.kind === "code" ? pad(4, p.text) : pad(2, p.text))).join("\n");
}
