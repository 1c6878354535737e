/** A value as indented JSON, for arguments and previews (masked before they get here). */
export function shownJson(v: unknown): string {
  return JSON.stringify(v, null, 2) ?? String(v);
}
