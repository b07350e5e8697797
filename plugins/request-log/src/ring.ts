/** A bounded FIFO: O(1) push and shift; pushing into a full ring drops the oldest item. */
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private head = 0;
  private length = 0;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error('ring capacity must be at least 1');
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.length;
  }

  /** Returns true when the oldest item was dropped to make room. */
  push(item: T): boolean {
    const dropped = this.length === this.capacity;
    if (dropped) this.shiftOne();
    this.items[(this.head + this.length) % this.capacity] = item;
    this.length++;
    return dropped;
  }

  /** Removes and returns up to `n` of the oldest items. */
  take(n: number): T[] {
    const out: T[] = [];
    while (out.length < n && this.length > 0) out.push(this.shiftOne());
    return out;
  }

  private shiftOne(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.length--;
    return item;
  }
}
