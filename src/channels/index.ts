/** Faces that reach approvers where they are (Slack, email): adapters onto the gate's one entry. */
export { decideViaChannel, type ChannelDecision, type ChannelOutcome } from "./channel-decision.js";
