/**
 * The largest request body a route takes, in bytes. The thread-centric socket bounds its messages
 * by the same number, so a command costs the same whichever way it comes.
 */
export const MAX_BODY_BYTES = 256 * 1024;
