import { AppError, threadNotFound } from "./errors.js";

/*
 * Every refusal a person or a client reads, in one place: one message per situation, whichever
 * face asked. The gate, the run engine and the faces throw these and never word their own (a unit
 * test holds src/ to it).
 */

/** What a thread id may be, in words: the path's and every body's that names one. */
export const THREAD_ID_RULE = "thread_id must match [A-Za-z0-9_-]{1,128}";

/** Ids from a request are echoed at most this long. */
export const clip = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** A shorter echo, for names a client made up (a checkpoint, a run). */
const echo = (s: string): string => s.slice(0, 64);

/** A call's policy in the words of a refusal: `it needs …`. */
export interface PolicyInWords {
  policy: string;
  requires?: { role?: string; approvers: number };
}

/** Who a call's policy lets decide it, in words. */
export function whoMay(call: PolicyInWords): string {
  if (call.policy === "quorum") return `it needs ${call.requires?.approvers ?? 1} of role '${call.requires?.role ?? "approver"}', none of them its owner or requester`;
  return call.policy === "approver" ? "it needs an approver other than its owner or requester" : "it needs its owner or an approver";
}

/** Why an edit does not apply to a call: the detail of `refusals.badEdit`, and of a call that ends unrun. */
export const editRefusals = {
  notEditable: (tool: string) => `Tool '${tool}' is not editable`,
  notAnObject: () => "edited_args must be an object",
  reservedName: (key: string) => `edited_args: '${key}' can never be an argument name`,
  notAnArgument: (key: string, tool: string) => `edited_args: '${key.slice(0, 64)}' is not an argument of ${tool}`,
  theMask: (key: string, mask: string) => `edited_args: '${key}' is the mask "${mask}", not a value`,
} as const;

export const refusals = {
  // The interrupt and the thread: whether a decision may be taken at all.
  /** `expiresAt` when the interrupt is at hand (a face that names none reads only the thread). */
  expired: (expiresAt?: number) => new AppError("approval_expired", `Approval window closed${expiresAt === undefined ? "" : ` at ${new Date(expiresAt).toISOString()}`}`),
  threadBusy: () => new AppError("thread_busy", "A run is already in flight on this thread"),
  awaitingApproval: () => new AppError("awaiting_approval", "This thread is waiting for approval: resume or cancel it first"),
  notWaiting: () => new AppError("not_waiting", "This thread has no open interrupt"),
  alreadyClosed: () => new AppError("not_waiting", "This interrupt was already decided"),
  // Never echo the open interrupt's id: the stale one's owner can read it from GET if allowed.
  staleInterrupt: () => new AppError("stale_interrupt", "interrupt_id is not this thread's open interrupt"),
  threadNotFound: (threadId: string) => threadNotFound(threadId),

  // The decisions a resume carries.
  unknownCall: (callId: string) => new AppError("unknown_call", `Call ${clip(callId)} is not pending in this interrupt`),
  twoDecisions: (callId: string) => new AppError("invalid_request", `Two decisions name call ${clip(callId)}`),
  decisionsRequired: () => new AppError("invalid_request", "decisions is required: this interrupt holds calls to decide"),
  noCallNamed: () => new AppError("invalid_request", "Name at least one call: this interrupt is decided call by call"),
  /** A resume that does not fit `POST …/resume`'s schema, whichever face it came through: `detail` says where. */
  /** A face's decision that names no call it showed. */
  nothingShown: () => new AppError("invalid_request", "The decision names no call: it decides the calls it was shown"),
  badResume: (detail: string) => new AppError("invalid_request", detail),
  /** A face hands the door either the calls it decides or the calls it showed with one choice. */
  callsOrShown: () => new AppError("invalid_request", "A decision names its calls, or the calls it was shown: not both"),
  /** An edit the tool's schema or editability refuses: `detail` says why. */
  badEdit: (detail: string) => new AppError("invalid_request", detail),
  answersTooEarly: () => new AppError("invalid_request", "Answers go with the decision that closes the interrupt's last open call"),
  questionNotAsked: (id: string) => new AppError("invalid_request", `Question ${clip(id)} is not asked in this interrupt`),
  questionUnanswered: (id: string) => new AppError("invalid_request", `Question ${clip(id)} needs an answer (answers: [{question_id, value}])`),
  middlewareAllows: (callId: string, allowed: readonly string[]) =>
    new AppError("invalid_request", `Call ${clip(callId)}: the graph's middleware allows only ${allowed.join(", ")}`),

  // LangGraph's resume shapes, read against the open interrupt.
  hitlNeedsDecisions: () => new AppError("invalid_request", "The approval interrupt is resumed with {decisions: [...]}"),
  hitlUnreadable: () => new AppError("invalid_request", "command.resume must be {decisions: [...]}, a map keyed by __interrupt__ ids, or {interrupt_id, decisions}"),
  hitlTooMany: (decisions: number, requests: number) => new AppError("invalid_request", `${decisions} decisions for ${requests} action requests`),
  hitlNotObject: (i: number) => new AppError("invalid_request", `Decision ${i} is not an object`),
  hitlEditShape: (i: number) => new AppError("invalid_request", `Decision ${i}: edit needs edited_action {name, args}`),
  hitlEditTool: (i: number, tool: string) => new AppError("invalid_request", `Decision ${i}: an edit cannot change the tool (${tool})`),
  hitlType: (i: number) => new AppError("invalid_request", `Decision ${i}: type must be approve, edit or reject`),

  // Who may decide.
  onlyOwnerAnswers: () => new AppError("forbidden", "Only the thread's owner may answer the questions of this interrupt"),
  undecidableCall: (callId: string, policy: PolicyInWords) => new AppError("forbidden", `You may not decide call ${clip(callId)}: ${whoMay(policy)}`),
  fourEyes: () => new AppError("forbidden", "Four eyes: a call here needs an approver other than the one who asked for it; the owner may cancel"),
  notEveryCall: () => new AppError("forbidden", "You may not decide every call of this interrupt"),
  /** The editor would not be allowed to decide the call as the edit makes it. */
  forbiddenAfterEdit: (callId: string, edited: PolicyInWords) =>
    new AppError("forbidden", `With these edits call ${clip(callId)} ${whoMay(edited).replace(/^it needs/, "would need")}: you may not decide it then`),
  /** In an interrupt decided as a whole, an edit that would change who may decide, past what the editor may. */
  editPastPolicy: (callId: string, edited: PolicyInWords) => new AppError("forbidden", `With these edits call ${clip(callId)} ${whoMay(edited).replace(/^it needs/, "would need")}`),
  /** In an interrupt decided as a whole, an edit that would need a quorum: it is decided call by call. */
  editNeedsQuorum: (callId: string, quorum: { role?: string; approvers: number }) =>
    new AppError("forbidden", `With these edits call ${clip(callId)} would need ${quorum.approvers} of ${quorum.role ?? "approver"}: reject it, and ask for it again`),
  /** A Slack user or an address that no directory entry names: it maps to no principal, so it can decide nothing. */
  unknownChannelUser: () => new AppError("forbidden", "You are not in tollgate's directory of principals, so you can decide nothing here"),

  // Decided already, or changed since it was shown.
  alreadyDecided: (callId: string, how: string) => new AppError("already_decided", `Call ${clip(callId)} was already ${how}`),
  alreadyApproved: (callId: string) => new AppError("already_decided", `You already approved call ${clip(callId)}`),
  /** Every call a face showed is closed, or was approved by this principal: nothing of it is left to decide. */
  nothingLeftToDecide: () => new AppError("already_decided", "Every call shown here is already decided, or already approved by you"),
  /**
   * An approval or edit that names no version, or another one, of a call edited since: it would
   * ride on what its approver never saw. `shown` is the call as it now stands (masked).
   */
  callChanged: ({ callId, version, named, shown }: { callId: string; version: number; named: number | undefined; shown: unknown }) =>
    new AppError(
      "call_changed",
      named === undefined
        ? `Call ${clip(callId)} was edited since it was asked (now version ${version}): look at it again, and name the version you approve`
        : `Call ${clip(callId)} is at version ${version}, not ${named}: look at it again`,
      { call: shown },
    ),

  // Races: take the request again.
  /** The interrupt changed between the edit's check and the gate's transaction. */
  editCheckedElsewhere: () => new AppError("thread_busy", "The interrupt changed while the edit was checked; try again"),
  racing: () => new AppError("thread_busy", "Other decisions on this interrupt keep landing at the same time; try again"),

  // Runs and threads.
  startNeedsUser: () => new AppError("forbidden", "Starting runs needs the role 'user'"),
  createNeedsUser: () => new AppError("forbidden", "Creating threads needs the role 'user'"),
  copyNeedsUser: () => new AppError("forbidden", "Copying threads needs the role 'user'"),
  onlyOwnerCancels: () => new AppError("forbidden", "Only the thread's owner may cancel; an approver refuses with a resume that rejects"),
  onlyOwnerCopies: () => new AppError("forbidden", "Only the thread's owner may copy it"),
  threadExists: (threadId: string) => new AppError("thread_exists", `Thread ${threadId} already exists`),
  noCheckpoint: (checkpointId: string) => new AppError("not_found", `No checkpoint ${echo(checkpointId)} on this thread`),
  noRun: (runId: string) => new AppError("not_found", `No run ${echo(runId)} on this thread`),
  badCursor: () => new AppError("invalid_request", "cursor is not one this server gave out"),
  forkAtOpenCalls: () => new AppError("unsupported", "The graph waited on tool calls at this checkpoint: a run cannot start from there"),
  forkBeforeApprovals: () =>
    new AppError("unsupported", "Runs can start only from a checkpoint that holds every call approved on this thread; this one is older than one of them"),

  // Graphs and assistants: which graph a request runs on.
  unknownGraph: (graphId: string) => new AppError("invalid_request", `Unknown graph_id '${echo(graphId)}'; GET /graphs lists the graphs served here`),
  nameAGraph: () => new AppError("invalid_request", "This server serves several graphs: name one with graph_id (GET /graphs lists them)"),
  graphMismatch: (graphId: string) => new AppError("graph_mismatch", `This thread runs graph '${graphId}'; a thread keeps its graph for life`),
  graphNotServed: (graphId: string) => new AppError("graph_mismatch", `This thread's graph '${graphId}' is not served here`),
  noAssistant: (assistantId: string) => new AppError("not_found", `No assistant '${echo(assistantId)}'`),

  // LangGraph's run requests: what could open the gate around it, and what this server does not do.
  stateUpdateRefused: () => new AppError("invalid_request", "command.update is refused: state is written only by the graph"),
  gotoRefused: () => new AppError("invalid_request", "command.goto is refused: a run cannot jump past the gate"),
  breakpointsRefused: () => new AppError("invalid_request", "interrupt_before and interrupt_after are the server's: the gate decides where a run stops"),
  /** `field` is the strategy's name as the face spells it (`multitask_strategy`, `multitaskStrategy`). */
  onlyRejectStrategy: (field: string) => new AppError("unsupported", `Only ${field} 'reject' is supported: one run at a time per thread`),
  runNeedsInput: () => new AppError("invalid_request", "input.messages with one user message, or command.resume, is required"),
  inputNotObject: () => new AppError("invalid_request", "input must be an object with messages"),
  inputOnlyMessages: (keys: readonly string[]) => new AppError("invalid_request", `input may carry only messages (got ${keys.slice(0, 3).join(", ")})`),
  inputCarriesTools: () => new AppError("invalid_request", "input cannot carry tool calls or tool results: only the graph calls tools, through the gate"),
  inputOnlyUser: () => new AppError("invalid_request", "input.messages may hold only a user message"),
  inputOneMessage: () => new AppError("invalid_request", "input.messages must hold exactly one user message"),
  emptyMessage: () => new AppError("invalid_request", "The user message is empty"),
  messageTooLong: () => new AppError("invalid_request", "The user message is longer than 32 KiB"),
  textOnly: () => new AppError("invalid_request", "Only text content is supported in a user message"),
  messageNeedsContent: () => new AppError("invalid_request", "A user message needs content"),
  checkpointIdNotString: () => new AppError("invalid_request", "checkpoint_id must be a string"),
  checkpointIdLength: () => new AppError("invalid_request", "checkpoint_id must be 1 to 200 characters"),
  badStreamMode: (modes: readonly string[]) => new AppError("invalid_request", `stream_mode must be among ${modes.join(", ")}`),
  resumeAtHead: () => new AppError("unsupported", "A resume goes on from the thread's head: it cannot name an earlier checkpoint"),
  threadsNotDeleted: () => new AppError("unsupported", "Threads are not deleted here: their audit trail is kept"),
  stateLocked: () => new AppError("state_locked", "State is written only by the graph: a state write could open the gate around it"),
  // The thread-centric protocol's commands and sockets.
  resumeByRespond: () => new AppError("awaiting_approval", "A waiting thread is resumed only by input.respond"),
  /** A command other than `input.respond` whose resume decided single calls of a quorum interrupt. */
  notADecision: (command: string) => new AppError("invalid_request", `${command} cannot decide an approval: use input.respond`),
  upgradeOnly: () => new AppError("invalid_request", "GET …/stream/events is a WebSocket upgrade; for SSE, POST it"),
  tooManySubscriptions: (max: number) => new AppError("limit_exceeded", `A socket holds at most ${max} subscriptions: unsubscribe one first`),

  // Who is asking: credentials, and the metrics that need a role.
  bearerRequired: () => new AppError("unauthorized", "A bearer token is required (Authorization: Bearer <token>)"),
  unknownToken: () => new AppError("unauthorized", "Unknown bearer token"),
  tokenNotValid: () => new AppError("unauthorized", "Token is not valid"),
  tokenExpired: () => new AppError("unauthorized", "Token expired"),
  tokenNotYetValid: () => new AppError("unauthorized", "Token is not yet valid"),
  tokenNeverExpires: () => new AppError("unauthorized", "Token has no expiry"),
  tokenIssuer: () => new AppError("unauthorized", "Token issuer is not accepted"),
  tokenAudience: () => new AppError("unauthorized", "Token audience is not accepted"),
  tokenNoSubject: () => new AppError("unauthorized", "Token has no subject"),
  tokenAnonymous: () => new AppError("unauthorized", "Token subject 'anonymous' is reserved"),
  keysUnreachable: () => new AppError("unauthorized", "Could not verify the token: the identity provider's keys are unreachable"),
  slackSignature: () => new AppError("unauthorized", "Slack signature is missing, wrong or stale"),
  metricsNeedRole: () => new AppError("forbidden", "Reading /metrics needs the role 'metrics' (or 'admin')"),
  /** An Approve click on an interrupt too long for a Slack message: the page shows every call whole. */
  notShownWhole: () => new AppError("forbidden", "This request is too long to show whole in Slack, so it can be approved only on the page, where every call is shown whole"),

  // The request at the edge: its host, origin, media type, body, path and query.
  wrongHost: () => new AppError("invalid_host", "This server does not answer for that Host"),
  crossSite: () => new AppError("forbidden_origin", "Cross-site requests from this origin are not allowed"),
  notJson: () => new AppError("unsupported_media_type", "A POST body must be application/json"),
  bodyTooLarge: () => new AppError("invalid_request", "Request body is too large"),
  /** The client went away mid-upload: nobody reads it, but the answer is still a well-formed one. */
  bodyUnreadable: () => new AppError("invalid_request", "The request body could not be read"),
  bodyNotJson: () => new AppError("invalid_request", "Body is not valid JSON"),
  /** A request the HTTP adapter could not turn into one at all (a path that is not a URL). */
  requestUnreadable: () => new AppError("invalid_request", "The request could not be read"),
  bodyRequired: () => new AppError("invalid_request", "A JSON body is required"),
  bodyTooDeep: (levels: number) => new AppError("invalid_request", `Body is nested deeper than ${levels} levels`),
  /** A body that does not fit its route's schema: `detail` says where. */
  badBody: (detail: string) => new AppError("invalid_request", detail),
  badThreadId: () => new AppError("invalid_request", THREAD_ID_RULE),
  badThreadsPage: () => new AppError("invalid_request", "limit must be an integer from 1 to 200; cursor as given by the last page"),
  badRunsPage: (min: number, max: number) => new AppError("invalid_request", `limit and offset must be integers from ${min} to ${max}`),
  badHistoryQuery: () => new AppError("invalid_request", "limit must be an integer from 1 to 1000, before a checkpoint id"),
  noSuchEndpoint: () => new AppError("not_found", "No such endpoint"),
  noSuchFile: () => new AppError("not_found", "No such file"),
  pageNotBuilt: () => new AppError("not_found", "The web page is not built: run `npm run build:web` (npm start does it)"),
  /** What a client reads of a failure that is not one of the contract's: nothing of its cause. */
  internal: () => new AppError("internal_error", "Internal server error"),

  // The server's state: nothing was applied, a retry is safe.
  shuttingDown: () => new AppError("shutting_down", "The server is shutting down; try again shortly"),
  overloaded: (inFlight: number) => new AppError("overloaded", `${inFlight} runs are in flight; try again shortly`, { retryAfterSeconds: 1 }),
  rateLimited: (perMinute: number, waitSeconds: number) =>
    new AppError("rate_limited", `More than ${perMinute} runs a minute; try again in ${waitSeconds} s`, { retryAfterSeconds: waitSeconds }),
  storageUnavailable: () => new AppError("storage_unavailable", "The database is unavailable (locked, full or failing); nothing was applied, try again"),
} as const;

/** Sealed edits with no `SEALING_KEY` (see src/ops/sealer.ts): nothing is sealed, so nothing needing it is stored in clear. */
export const sealingRefusals = {
  noKeyToSeal: () => new AppError("unsupported", "Editing a sensitive argument of a call decided call by call needs SEALING_KEY on every replica"),
  noKeyToOpen: () => new AppError("unsupported", "A sealed edit cannot be opened without SEALING_KEY"),
} as const;
