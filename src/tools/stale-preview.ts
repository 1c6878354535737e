import { STALE_PREVIEW } from "../protocol/index.js";

/**
 * Thrown by a tool that finds the world changed since the person approved its call (its preview
 * no longer holds): nothing was done, the call ends `error` (`stale_preview: …`), and the model
 * is told. Check before committing, with what `toolContext(config).preview` says was approved.
 */
export class StalePreview extends Error {
  constructor(message = STALE_PREVIEW) {
    super(message);
    this.name = "StalePreview";
  }
}

/** The error text of a call its tool refused as stale: a code the model and clients can read. */
export { stalePreviewText as stalePreviewError } from "../protocol/index.js";
