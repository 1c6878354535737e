/** Every element of Block Kit blocks that holds text, in order, with its type (`plain_text`, `mrkdwn`, a rich text `text` or `link`); buttons' values left out. */
export function slackTexts(blocks: unknown): Array<{ type: string; text: string }> {
  const out: Array<{ type: string; text: string }> = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!x || typeof x !== "object") return;
    const o = x as Record<string, unknown>;
    if (typeof o.text === "string") out.push({ type: String(o.type), text: o.text });
    for (const [k, v] of Object.entries(o)) if (k !== "value") walk(v);
  };
  walk(blocks);
  return out;
}
