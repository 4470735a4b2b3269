import type { KeysFile, KeysFileInput } from "../contract/index.js";

/** Start options of the reference server, the same for every way of starting it (in-process, container, `serve`). */
export interface ReferenceServerOptions {
  /** 0 or absent: a free port */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** accounts and keys; absent: one account, one all-permission key, made at start */
  keys?: KeysFileInput;
  /** rate-limit window W in seconds (default 60) */
  windowSeconds?: number;
  /** where a window starts: the bucket's first counted request (default), or the whole second it fell in */
  windowStart?: "first-request" | "whole-second";
  /** Send Message time budget in seconds (default 30) */
  messageTimeoutSeconds?: number;
  /** injected defects by name (see src/server/faults.ts); empty for a conformant server */
  faults?: string[];
  /** the server's clock this many seconds ahead of the machine's (behind when negative); default 0 */
  clockSkewSeconds?: number;
}

/** A running reference server, however it was started. */
export interface StartedReference {
  /** ends with /v1 */
  baseUrl: string;
  /** the accounts and keys it serves, with the plaintext keys */
  keys: KeysFile;
  close(): Promise<void>;
}

/**
 * The targets the harness starts itself (`--target`): the reference in this process, or in a
 * container. Either makes its own accounts; every other target is a deployment (`--base-url`).
 */
export const STARTED_TARGETS = ["embedded", "container"] as const;
export type StartedTargetKind = (typeof STARTED_TARGETS)[number];

/**
 * The tier of a reference server started without keys: high enough that the per-account
 * bucket never masks the bucket under test.
 */
export const REFERENCE_TIER = 1000;
