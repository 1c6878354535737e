import type { Hono } from "hono";
import type { Access, Directory } from "../../auth/index.js";
import type { SlackSettings } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { DeliverySender, Metrics } from "../../ops/index.js";
import type { RunService, ThreadService } from "../../runs/index.js";
import { slackClient } from "./slack-client.js";
import { slackInteractivity } from "./slack-interactivity.js";
import { SLACK_LANE, slackSender } from "./slack-sender.js";

/** A Web API call made while Slack waits for our ack (3 s). */
const INTERACTIVE_TIMEOUT_MS = 2_500;

/** Slack as a face: the interactivity routes, and how its outbox lane sends (post, then update). */
export interface SlackFace {
  routes: Hono;
  lane: typeof SLACK_LANE;
  send: DeliverySender;
}

export function createSlackFace(o: {
  slack: SlackSettings;
  /** One Web API call's deadline. */
  timeoutMs: number;
  directory: Directory;
  runs: RunService;
  threads: ThreadService;
  access: Access;
  log: Logger;
  metrics: Metrics;
  now: () => number;
  /** Where the page is, for the message's link to the thread; none: no link. */
  pageUrl?: string;
}): SlackFace {
  const client = slackClient(o.slack, o.timeoutMs);
  // The modal opens before the click's ack, which Slack wants within 3 s: its call may take less.
  const interactive = slackClient(o.slack, Math.min(o.timeoutMs, INTERACTIVE_TIMEOUT_MS));
  const log = o.log.child({ channel: "slack" });
  const routes = slackInteractivity({
    runs: o.runs,
    threads: o.threads,
    access: o.access,
    client: interactive,
    signingSecret: o.slack.signingSecret,
    directory: o.directory,
    log,
    now: o.now,
    onForged: () => o.metrics.channelDelivery("slack", "forged"),
  });
  return { routes, lane: SLACK_LANE, send: slackSender({ client, channel: o.slack.channel, pageUrl: o.pageUrl }) };
}
