import fc from "fast-check";

/**
 * Strings bounded in Unicode code points (PROFILE rules of reading: an emoji is 1), drawn from
 * every plane and the classes implementations get wrong: emoji, combining marks, CJK, RTL,
 * zero-width joiners, and whitespace other than ASCII; lone surrogates (JSON escapes them) only
 * where asked for: RFC 8259 §8.2 leaves what a receiver makes of one unpredictable (one replaces
 * it with U+FFFD, another refuses the body), so a value that must be stored as sent never has one,
 * while a value that must be refused anyway (one past a bound) may.
 * Each unit below is exactly one code point, so a string of n units is n code points long.
 */
const CLASSES: Record<string, fc.Arbitrary<string>> = {
  ascii: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCodePoint(c)),
  space: fc.constantFrom(" ", "\t", "\u00a0", "\u3000"),
  latin: fc.integer({ min: 0xc0, max: 0x24f }).map((c) => String.fromCodePoint(c)),
  combining: fc.integer({ min: 0x300, max: 0x36f }).map((c) => String.fromCodePoint(c)),
  rtl: fc
    .oneof(fc.integer({ min: 0x5d0, max: 0x5ea }), fc.integer({ min: 0x627, max: 0x64a }))
    .map((c) => String.fromCodePoint(c)),
  cjk: fc.integer({ min: 0x4e00, max: 0x9fff }).map((c) => String.fromCodePoint(c)),
  emoji: fc.integer({ min: 0x1f300, max: 0x1faff }).map((c) => String.fromCodePoint(c)),
  supplementary: fc.integer({ min: 0x20000, max: 0x2fa1f }).map((c) => String.fromCodePoint(c)),
  joiner: fc.constantFrom("\u200d", "\u200b", "\u200c", "\ufe0f"),
  // low surrogates only: a high one before a low one would pair into one code point
  loneSurrogate: fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c)),
};

const CHARACTER_CLASSES = Object.keys(CLASSES);

export interface CodePointStringOptions {
  /** whitespace-only strings are left out (PROFILE §4 name, §5 text) */
  notBlank?: boolean;
  /** lone surrogates among the units: only in a value the service must refuse for another reason */
  loneSurrogates?: boolean;
  /** the classes to draw from (default all) */
  classes?: readonly string[];
}

const unitOf = (opts: CodePointStringOptions) => {
  const names = (opts.classes ?? CHARACTER_CLASSES).filter((c) => opts.loneSurrogates || c !== "loneSurrogate");
  // ASCII dominates so that shrinking lands on readable strings
  return fc.oneof(
    { weight: 6, arbitrary: CLASSES.ascii! },
    ...names.filter((n) => n !== "ascii").map((n) => ({ weight: n === "loneSurrogate" ? 1 : 2, arbitrary: CLASSES[n]! })),
  );
};

/** A string of min…max code points; the exact bounds come up often (edges are where bugs live). */
export function codePointString(min: number, max: number, opts: CodePointStringOptions = {}): fc.Arbitrary<string> {
  const unit = unitOf(opts);
  const small = Math.min(max, min + 12);
  // cross shrinking lets a failing length (say the exact maximum) shrink toward the minimum
  const length = fc.oneof(
    { withCrossShrink: true },
    { weight: 1, arbitrary: fc.constant(min) },
    { weight: 1, arbitrary: fc.constant(max) },
    { weight: 4, arbitrary: fc.integer({ min, max: small }) },
    { weight: 1, arbitrary: fc.integer({ min, max }) },
  );
  // the length shrinks (toward the lower bound); the characters do not: one request per shrink step is dear
  const arb = length.chain((n) => fc.noShrink(fc.array(unit, { minLength: n, maxLength: n })).map((units) => units.join("")));
  return opts.notBlank ? arb.filter((s) => s.trim() !== "") : arb;
}

/** Exactly n code points, not blank: the "one past the bound" of a field is codePointString(max + 1). */
export function exactCodePoints(n: number, opts: CodePointStringOptions = {}): fc.Arbitrary<string> {
  const unit = unitOf(opts);
  return fc
    .noShrink(fc.array(unit, { minLength: n, maxLength: n }))
    .map((units) => units.join(""))
    .filter((s) => n === 0 || s.trim() !== "");
}

/** A whitespace-only string of 1…max code points: blank (PROFILE §4, §5). */
export function blankString(max: number): fc.Arbitrary<string> {
  return fc.array(CLASSES.space!, { minLength: 1, maxLength: Math.min(max, 8) }).map((s) => s.join(""));
}
