import { useCallback, useEffect, useState } from "react";

/**
 * The open thread lives in the URL hash (`#thread=<id>`), so a reload, a bookmark or an inbox link
 * opens the same thread. Without one, the page starts a new chat under a fresh id.
 */
export function useHashThread(): [threadId: string, open: (id: string) => void, fresh: () => void] {
  const [threadId, setThreadId] = useState(() => fromHash() ?? newThreadId());
  useEffect(() => {
    const onHash = () => setThreadId(fromHash() ?? newThreadId());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const open = useCallback((id: string) => {
    if (fromHash() !== id) window.location.hash = `thread=${encodeURIComponent(id)}`;
    setThreadId(id);
  }, []);
  const fresh = useCallback(() => {
    history.replaceState(null, "", window.location.pathname + window.location.search);
    setThreadId(newThreadId());
  }, []);
  return [threadId, open, fresh];
}

/** The thread named in the hash, if it is a valid thread id; anything else opens a new chat. */
function fromHash(): string | undefined {
  const m = /^#thread=([^&]+)$/.exec(window.location.hash);
  if (!m) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    return undefined; // a mangled link (`%E0%A4%A`) must not blank the page
  }
  return /^[A-Za-z0-9_-]{1,128}$/.test(id) ? id : undefined;
}

/** Thread ids are `[A-Za-z0-9_-]{1,128}`; 16 random bytes in base36 chunks fit. */
function newThreadId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `web-${Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("")}`;
}
