import type { Principal } from "../../../auth/index.js";
import { AppError } from "../../../protocol/index.js";
import type { ThreadFeed } from "../../../runs/index.js";

/**
 * Whether `p` may follow the thread now: false both for an id with no thread yet and for a thread
 * `p` may not see, which streams and subscriptions treat alike (accepted, silent until there is a
 * thread `p` may see), so that nothing they answer tells the two apart.
 */
export async function mayFollow(feed: ThreadFeed, p: Principal, threadId: string): Promise<boolean> {
  try {
    return await feed.exists(p, threadId);
  } catch (err) {
    if (err instanceof AppError && err.code === "thread_not_found") return false;
    throw err;
  }
}
