/**
 * An AbortController that aborts, with the same reason, as soon as any of `sources` does, until
 * `unlink()` takes its listeners off them. Not `AbortSignal.any`: on Node 20 a combined signal
 * that has ever had an abort listener is kept for the life of the process unless it aborts, and
 * with it whatever its listeners hold; one per waiting thread added up to hundreds of megabytes.
 * Browser-safe: no Node imports here.
 */
export class LinkedAbortController extends AbortController {
  private readonly unlinks: Array<() => void> = [];

  constructor(sources: ReadonlyArray<AbortSignal | undefined>) {
    super();
    for (const source of sources) {
      if (!source) continue;
      if (source.aborted) {
        this.abort(source.reason);
        break;
      }
      const onAbort = () => this.abort(source.reason);
      source.addEventListener("abort", onAbort, { once: true });
      this.unlinks.push(() => source.removeEventListener("abort", onAbort));
    }
  }

  /** Stops following the sources: call it once the work this signal guards is over. */
  unlink(): void {
    for (const off of this.unlinks.splice(0)) off();
  }
}
