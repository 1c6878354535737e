import type { Child } from "./processes.js";
import type { Settings } from "./settings.js";
import type { Target, TargetName } from "./targets.js";

/** One line of the results table: a figure's value on each server that has it. */
export interface Row {
  group: string;
  figure: string;
  unit: string;
  /** Whether a smaller number is the better one (latency, memory) or a larger one (throughput). */
  better: "lower" | "higher";
  values: Partial<Record<TargetName, number>>;
  /** The target for this figure, if it has one. */
  target?: { text: string; met: boolean };
  /** A remark shown beside one server's value, e.g. a count it did not reach. */
  remark?: Partial<Record<TargetName, string>>;
  /** Samples, errors and anything else worth keeping in the JSON. */
  detail?: Record<string, unknown>;
}

/** What every suite gets. */
export interface BenchContext {
  settings: Settings;
  model: Child;
  targets: Record<TargetName, Target>;
  /** Continues `name` and stops (SIGSTOP) the other servers; null stops all three. */
  focus(name: TargetName | null): void;
  log(message: string): void;
}

/** The targets in a different order each repetition, so none always runs first or last. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
