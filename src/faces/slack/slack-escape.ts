/**
 * Text for a message's fallback `text`, which Slack reads as mrkdwn: `&`, `<` and `>` escaped as
 * Slack's docs ask, so no value makes a link, a mention (`<!channel>`, `<@U…>`) or a tag there.
 */
export function escapeSlackText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
