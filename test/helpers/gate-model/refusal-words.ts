/**
 * Slack and the decide pages tell a refusal in the gate's words, with no code beside them (an
 * ephemeral "Not applied: <message>", a modal's error, a page). These read the code back from the
 * words (the server's `refusals` catalogue words each situation one way), so a refusal compares
 * across faces. A message matched by none reads `unworded: …` and fails the comparison, naming it.
 */

const WORDS: Array<[RegExp, string]> = [
  [/^Approval window closed/, "approval_expired"],
  [/^This thread has no open interrupt|^This interrupt was already decided/, "not_waiting"],
  [/^interrupt_id is not this thread's open interrupt/, "stale_interrupt"],
  [/is at version \d+, not \d+|was edited since it was asked/, "call_changed"],
  [/^Call .* was already |^You already approved call|^Every call shown here is already decided/, "already_decided"],
  [/^You may not decide|^With these edits|directory of principals|^Only the thread's owner|^Four eyes/, "forbidden"],
  [/^Thread .* not found/, "thread_not_found"],
  [/in flight on this thread|try again$/, "thread_busy"],
  [/^Name at least one call|^decisions is required|^The decision names no call/, "invalid_request"],
  [/is not pending in this interrupt/, "unknown_call"],
];

/** A dead link's 410 page, by its words: why it is dead, as a code (a link's own, or the gate's). */
const GONE_WORDS: Array<[RegExp, string]> = [
  [/used already/, "link_used"],
  [/deadline has passed/, "approval_expired"],
  [/changed since this mail/, "call_changed"],
  [/already decided, or already approved by you/, "already_decided"],
  [/no longer waiting/, "not_waiting"],
];

/** The code a dead link's page words, or `unworded: <text>`. */
export function codeOfGonePage(text: string): string {
  return GONE_WORDS.find(([re]) => re.test(text))?.[1] ?? `unworded: ${text.slice(0, 160)}`;
}

/** The code a refusal's message words, or `unworded: <message>`. */
export function codeOfWords(message: string): string {
  const m = message.trim();
  return WORDS.find(([re]) => re.test(m))?.[1] ?? `unworded: ${m.slice(0, 160)}`;
}

/** A decide page's text: what is between its tags, entities decoded. */
export function pageText(html: string): string {
  return html
    .replace(/<title>[\s\S]*?<\/title>/, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}
