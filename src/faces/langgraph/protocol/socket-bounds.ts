import { MAX_BODY_BYTES } from "../../../http/index.js";

/**
 * What one WebSocket of the thread-centric protocol may cost the server, whoever is at the other
 * end: a message no larger than an HTTP body, no more unsent data than a reader that reads would
 * leave, a bounded number of subscriptions.
 */

/**
 * The largest message a socket takes, in bytes: the HTTP body limit itself, because the contract
 * ties the two, so a command is bounded the same on both paths. Larger is refused with 1009
 * before it is buffered (`ws`'s `maxPayload`).
 */
export const MAX_SOCKET_MESSAGE_BYTES = MAX_BODY_BYTES;

/**
 * Unsent bytes a socket may hold. Past them the server sends nothing more and reads no more
 * commands until they have gone; a reader that lets none go for {@link STALLED_AFTER_MS} does not
 * read, and its socket is closed with {@link CLOSE_TRY_AGAIN_LATER}.
 */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

/** How long a socket past {@link MAX_UNSENT_BYTES} may send nothing before it is taken not to read. */
export const STALLED_AFTER_MS = 10_000;

/** Subscriptions one socket may hold at once; past that a subscribe is refused (`limit_exceeded`). */
export const MAX_SUBSCRIPTIONS = 64;

/** RFC 6455's "try again later": the client resumes with `since` on a new socket. */
export const CLOSE_TRY_AGAIN_LATER = 1013;
