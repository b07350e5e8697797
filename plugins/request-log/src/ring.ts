/**
 * A FIFO with O(1) push and shift over a circular buffer that doubles when full. Unbounded by count: the queue
 * bounds it by bytes (LOG_QUEUE_MAX_BYTES), spilling to the journal or dropping the oldest past that.
 */
export class Ring<T> {
  private items: (T | undefined)[];
  private head = 0;
  private length = 0;

  constructor(initialCapacity = 1024) {
    this.items = new Array<T | undefined>(Math.max(1, initialCapacity));
  }

  get size(): number {
    return this.length;
  }

  push(item: T): void {
    if (this.length === this.items.length) this.grow();
    this.items[(this.head + this.length) % this.items.length] = item;
    this.length++;
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.length--;
    return item;
  }

  /** Removes and returns up to `n` of the oldest items. */
  take(n: number): T[] {
    const out: T[] = [];
    while (out.length < n && this.length > 0) out.push(this.shift() as T);
    return out;
  }

  private grow(): void {
    const next = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.length; i++) next[i] = this.items[(this.head + i) % this.items.length];
    this.items = next;
    this.head = 0;
  }
}
