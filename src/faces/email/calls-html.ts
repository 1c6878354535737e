import { type CallCard, type CardPart, callParts, partsText } from "../../gate/index.js";
import { escapeHtml } from "./html-escape.js";

/** Inline styles only: mail clients drop <style>, and the page's CSP allows inline styles alone. */
const PRE = "background:#f5f5f5;border:1px solid #ddd;padding:8px;white-space:pre-wrap;word-break:break-word;font-size:13px";

/** One call of the gate's card in HTML, part by part, every value escaped. */
export function callHtml(c: CallCard): string {
  return `<section>${callParts(c).map(partHtml).join("")}</section>`;
}

function partHtml(p: CardPart): string {
  const text = escapeHtml(p.text);
  if (p.kind === "title") return `<h3 style="margin:16px 0 4px">${text}</h3>`;
  if (p.kind === "label") return `<div>${text}</div>`;
  if (p.kind === "code") return `<pre style="${PRE}">${text}</pre>`;
  return `<p style="margin:4px 0">${text}</p>`;
}

/** One call of the card in plain text, for the text part of the mail. */
export function callText(c: CallCard): string {
  return partsText(callParts(c), { indent: true });
}
