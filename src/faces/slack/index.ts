export { createSlackFace, type SlackFace } from "./slack-face.js";
export { signSlack, verifySlackSignature } from "./slack-signature.js";
export { slackMessage, APPROVE_ACTION, REJECT_ACTION, REJECT_VIEW, type ButtonValue } from "./slack-message.js";
export { SLACK_LANE } from "./slack-sender.js";
