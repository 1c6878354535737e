import { type PendingCall, policyLine } from "../../protocol/index.js";
import { escapeHtml } from "./html-escape.js";
import { shownJson } from "./shown-json.js";

/** Inline styles only: mail clients drop <style>, and the page's CSP allows inline styles alone. */
const PRE = "background:#f5f5f5;border:1px solid #ddd;padding:8px;white-space:pre-wrap;word-break:break-word;font-size:13px";

/** One call in HTML: name, id, version, policy, masked arguments, preview. Every value escaped. */
export function callHtml(c: PendingCall): string {
  const parts = [
    `<h3 style="margin:16px 0 4px">${escapeHtml(c.name)} <small style="color:#666">${escapeHtml(c.call_id)} · version ${escapeHtml(c.version ?? 1)}</small></h3>`,
    `<p style="margin:4px 0">${escapeHtml(policyLine(c))}</p>`,
    `<div>Arguments:</div><pre style="${PRE}">${escapeHtml(shownJson(c.args))}</pre>`,
  ];
  if (c.preview !== undefined) parts.push(`<div>Preview:</div><pre style="${PRE}">${escapeHtml(shownJson(c.preview))}</pre>`);
  if (c.preview_error) parts.push(`<p>Preview unavailable: ${escapeHtml(c.preview_error)}</p>`);
  return `<section>${parts.join("")}</section>`;
}

/** One call in plain text, for the text part of the mail. */
export function callText(c: PendingCall): string {
  const lines = [`${c.name} (${c.call_id}, version ${c.version ?? 1})`, `  ${policyLine(c)}`, "  Arguments:", indent(shownJson(c.args))];
  if (c.preview !== undefined) lines.push("  Preview:", indent(shownJson(c.preview)));
  if (c.preview_error) lines.push(`  Preview unavailable: ${c.preview_error}`);
  return lines.join("\n");
}

const indent = (s: string): string =>
  s
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");
