/**
 * A tiny seeded PRNG, in a module of its own: the delaying proxy and `load compare` draw from it
 * too, and importing it must not load json-schema-faker into the CLI's start.
 *
 * mulberry32: [0, 1) numbers from a 32-bit seed.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
