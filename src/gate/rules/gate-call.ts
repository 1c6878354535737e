import type { PendingCall } from "../../protocol/index.js";

/**
 * A pending call as the gate's rules read it: as it now stands (an edit applied), with its
 * version, the hash that binds an approval, and the preview people were shown.
 */
export interface GateCall extends Pick<PendingCall, "call_id" | "name" | "policy" | "requires" | "preview" | "preview_error"> {
  version: number;
  /** Hash of the full arguments as the model asked for them. */
  args_hash: string;
  /** Keyed hash of the preview as shown. */
  preview_hash?: string;
}
