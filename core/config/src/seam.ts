/**
 * Seams set by gateways alive in this process (tests run several); the one set last is in force, and taking one out
 * (a gateway closing) puts back the latest one still set, whatever the order of closing. `onChange` runs on every
 * change (parsed configs depend on the seams, so their cache is cleared).
 */
export class Seam<T> {
  private readonly set: { value: T | undefined }[] = [];
  current: T | undefined;

  constructor(private readonly onChange: () => void) {}

  push(value: T | undefined): () => void {
    const entry = { value };
    this.set.push(entry);
    this.current = value;
    this.onChange();
    return () => {
      const i = this.set.indexOf(entry);
      if (i < 0) return;
      this.set.splice(i, 1);
      this.current = this.set.at(-1)?.value;
      this.onChange();
    };
  }
}
