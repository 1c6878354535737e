import { useEffect, useState } from "react";

/**
 * Milliseconds left until `deadline` (ISO 8601) on the server's clock, updated four times a second
 * while positive; 0 once it has passed.
 */
export function useCountdown(deadline: string, serverNow: () => number): number {
  const end = Date.parse(deadline);
  const left = () => Math.max(0, end - serverNow());
  const [ms, setMs] = useState(left);
  useEffect(() => {
    setMs(left());
    const timer = setInterval(() => {
      const next = left();
      setMs(next);
      if (next === 0) clearInterval(timer);
    }, 250);
    return () => clearInterval(timer);
    // serverNow reads the session's clock, which only gets better; the deadline decides.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [end]);
  return ms;
}

/** `m:ss`, rounded up so "0:00" is only shown once it is over. */
export function formatLeft(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
