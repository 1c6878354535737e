import { AppError, threadNotFound } from "../../protocol/index.js";
import type { IdleClaim } from "../../store/index.js";

/** The error a caller gets when the store refused to claim an idle thread for a new run. */
export function claimRefusal(threadId: string, reason: Extract<IdleClaim, { ok: false }>["reason"]): AppError {
  switch (reason) {
    case "not_found":
      return threadNotFound(threadId);
    case "awaiting_approval":
      return new AppError("awaiting_approval", "This thread is waiting for approval: resume or cancel it first");
    case "busy":
      return new AppError("thread_busy", "A run is already in flight on this thread");
  }
}
