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
/** Turns of the loop that stream work has checked in on, so far. */
let turns = 0;

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
  turns++;
  const r = resume;
  turnStart = undefined;
  pause = undefined;
  resume = undefined;
  r?.();
}

/**
 * Tokens a stream relays in a turn before the budget may pause it. Pausing every stream at its
 * first token once the turn is over budget left each one a token per turn under load, each with
 * its own write and wake-ups (200 streams: a third less throughput); a few per stream keep the
 * writes batched while one stream's burst still cannot hold the loop.
 */
export const TOKENS_PER_TURN = 8;

/** One stream's share of a turn: `next()` before relaying each token, as `turnOverBudget`. */
export class StreamTurns {
  private turn = -1;
  private relayed = 0;

  next(): Promise<void> | undefined {
    if (this.turn !== turns) {
      this.turn = turns;
      this.relayed = 0;
    }
    this.relayed++;
    const pause = turnOverBudget();
    return pause && this.relayed >= TOKENS_PER_TURN ? pause : undefined;
  }
}
