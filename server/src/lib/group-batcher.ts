/**
 * Leader/follower batching of work that many requests ask for at once, each with its own item and its own
 * answer: the audit group commit (runtime/audit-batcher.ts) and the coalesced PostgreSQL reads
 * (db/hot-query.ts). When fewer than `maxInFlight` batches are running, the items of one event-loop turn
 * (the requests parsed together) are sent at the end of that turn, so the database's work overlaps the work
 * on the requests that arrive next; items that arrive while `maxInFlight` batches are running wait and go
 * together in the next one. (Gathering every turn's items regardless of running batches made all
 * connections move in lock-step: the CPU idled during each commit and the database during the CPU work.)
 *
 * A failed batch is retried item by item, so one bad item (a row whose project was deleted a moment
 * earlier, an argument the database refuses) fails only its own request.
 */
export class GroupBatcher<I, O> {
  private queue: { item: I; resolve: (out: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly settled = new Set<() => void>();

  constructor(
    /** One answer per item, in the items' order. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  add(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (this.inFlight < this.maxInFlight && this.queue.length > 0) this.flush();
        });
      }
    });
  }

  private flush(): void {
    this.start(this.queue.splice(0, this.maxBatch));
  }

  private start(batch: GroupBatcher<I, O>['queue']): void {
    this.inFlight++;
    this.run(batch.map((p) => p.item)).then(
      (outs) => this.done(batch, outs, null),
      (e: unknown) => this.done(batch, null, e),
    );
  }

  private done(batch: GroupBatcher<I, O>['queue'], outs: O[] | null, error: unknown): void {
    this.inFlight--;
    // Hand the next batch to the database before answering this one, so that it is never idle.
    if (this.queue.length > 0) this.flush();
    if (outs) for (const [i, p] of batch.entries()) p.resolve(outs[i]!);
    else if (batch.length === 1) batch[0]!.reject(error);
    else for (const p of batch) this.start([p]);
    if (this.inFlight === 0) for (const wake of this.settled) wake();
  }

  /** Waits until every added item is answered (graceful shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight > 0 || this.queue.length > 0) {
      await new Promise<void>((wake) => {
        const once = () => {
          this.settled.delete(once);
          wake();
        };
        this.settled.add(once);
      });
    }
  }
}
