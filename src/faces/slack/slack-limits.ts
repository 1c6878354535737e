import { type FaceLimits, type InterruptCard, showsWhole } from "../../gate/index.js";

/** What Slack takes in a message: 50 blocks, 3,000 characters a text. */
export const SLACK_MAX_BLOCKS = 50;
export const SLACK_MAX_CHARS = 3_000;

/** Blocks of the message around the card: the header, the note that it is not whole, the buttons, the link. */
const FRAME_BLOCKS = 4;

/** What of a message is left for the card. */
export const SLACK_CARD_LIMITS: FaceLimits = { maxBlocks: SLACK_MAX_BLOCKS - FRAME_BLOCKS, maxChars: SLACK_MAX_CHARS };

/**
 * Whether Slack may offer Approve for this card: only when a message shows every call whole. The
 * message and the interactivity endpoint both ask this, of the card, so a click cannot approve
 * what Slack could not show, whichever message it came from.
 */
export const slackMayApprove = (card: InterruptCard): boolean => showsWhole(card, SLACK_CARD_LIMITS);
