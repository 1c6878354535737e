import { type AppError, refusals } from "../../protocol/index.js";
import type { IdleClaim } from "../../store/index.js";

/** The error a caller gets when the store refused to claim an idle thread for a new run. */
export function claimRefusal(threadId: string, reason: Extract<IdleClaim, { ok: false }>["reason"]): AppError {
  switch (reason) {
    case "not_found":
      return refusals.threadNotFound(threadId);
    case "awaiting_approval":
      return refusals.awaitingApproval();
    case "busy":
      return refusals.threadBusy();
  }
}
