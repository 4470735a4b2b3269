/** snappyjs ships no types: the one function the remote-write sender uses (raw Snappy block format). */
declare module "snappyjs" {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array): Uint8Array;
}
