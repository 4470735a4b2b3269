/** A binary min-heap on `score`: the capacity drive takes from it the arrival stream due next. */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly score: (item: T) => number) {}
  peek(): T | undefined {
    return this.items[0];
  }
  push(item: T): void {
    const xs = this.items;
    xs.push(item);
    let i = xs.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.score(xs[parent]!) <= this.score(xs[i]!)) break;
      [xs[parent], xs[i]] = [xs[i]!, xs[parent]!];
      i = parent;
    }
  }
  pop(): T | undefined {
    const xs = this.items;
    const top = xs[0];
    const last = xs.pop();
    if (xs.length && last !== undefined) {
      xs[0] = last;
      let i = 0;
      for (;;) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let m = i;
        if (l < xs.length && this.score(xs[l]!) < this.score(xs[m]!)) m = l;
        if (r < xs.length && this.score(xs[r]!) < this.score(xs[m]!)) m = r;
        if (m === i) break;
        [xs[m], xs[i]] = [xs[i]!, xs[m]!];
        i = m;
      }
    }
    return top;
  }
}
