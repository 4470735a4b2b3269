/**
 * A set of secret strings (the run's API keys, the platform tokens it sent) and one question about
 * a text: does it hold any of them? Every answer is asked, of its body and each header: testing
 * each secret with `includes` made the token-leak check and the redaction of the key pool (135
 * keys on the embedded reference) the costliest code a worker ran (answers × secrets). Here the
 * secrets are grouped by their first characters; a text is searched once per distinct opening
 * (generated tokens share one, as do keys of one scheme), and only where one occurs are the
 * secrets of that opening, by length, looked up in a set. The answer is exactly `includes` over
 * every member.
 */

/** Strings shorter than this are tested one by one (few and rare). */
const OPENING = 3;

export interface LiteralSearch {
  readonly size: number;
  /** Does `text` contain one of the set's strings? */
  foundIn(text: string): boolean;
}

export class LiteralSet implements LiteralSearch {
  private readonly members = new Set<string>();
  private readonly short: string[] = [];
  /** opening → length → the members of that opening and length */
  private readonly byOpening = new Map<string, Map<number, Set<string>>>();

  constructor(initial: Iterable<string> = []) {
    for (const s of initial) this.add(s);
  }

  get size(): number {
    return this.members.size;
  }

  add(literal: string): void {
    if (literal === "" || this.members.has(literal)) return;
    this.members.add(literal);
    if (literal.length < OPENING) {
      this.short.push(literal);
      return;
    }
    const opening = literal.slice(0, OPENING);
    const byLength = this.byOpening.get(opening) ?? new Map<number, Set<string>>();
    this.byOpening.set(opening, byLength);
    const same = byLength.get(literal.length) ?? new Set<string>();
    byLength.set(literal.length, same);
    same.add(literal);
  }

  foundIn(text: string): boolean {
    for (const s of this.short) if (text.includes(s)) return true;
    for (const [opening, byLength] of this.byOpening)
      for (let at = text.indexOf(opening); at !== -1; at = text.indexOf(opening, at + 1))
        for (const [length, same] of byLength) if (same.has(text.slice(at, at + length))) return true;
    return false;
  }
}

/** No strings at all: what a run that sent no token asks with. */
export const NO_LITERALS: LiteralSearch = { size: 0, foundIn: () => false };

const OF_LIST = new WeakMap<readonly string[], LiteralSet>();
/** The set of a fixed list, made once per list (the list must not change afterwards). */
export function literalsOf(list: readonly string[]): LiteralSearch {
  let set = OF_LIST.get(list);
  if (!set) {
    set = new LiteralSet(list);
    OF_LIST.set(list, set);
  }
  return set;
}
