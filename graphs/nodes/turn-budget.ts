/**
 * How long stream work may hold the event loop before it lets everything else in. A model that
 * sends a burst (a whole answer in a few socket reads) is parsed and relayed in microtasks, which
 * Node runs to the end before any timer, request or other socket: with many such streams one turn
 * of the loop took hundreds of milliseconds, and `/healthz` waited behind it.
 */
const TURN_BUDGET_MS = 4;

/** When stream work first checked in during this turn of the loop; undefined between turns. */
let turnStart: number | undefined;
let pause: Promise<void> | undefined;
let resume: (() => void) | undefined;

/**
 * Undefined while this turn of the loop is within budget (the caller goes on without an await);
 * else a promise that settles at the end of the turn (its check phase, after the I/O that was
 * waiting has been served). Every caller over budget shares that one pause; the work it resumes
 * starts the next turn's budget.
 */
export function turnOverBudget(): Promise<void> | undefined {
  if (pause) return pause;
  const now = performance.now();
  if (turnStart === undefined) {
    turnStart = now;
    setImmediate(endTurn);
    return undefined;
  }
  if (now - turnStart < TURN_BUDGET_MS) return undefined;
  pause = new Promise((r) => (resume = r));
  return pause;
}

function endTurn(): void {
  const r = resume;
  turnStart = undefined;
  pause = undefined;
  resume = undefined;
  r?.();
}
