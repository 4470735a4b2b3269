import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, test } from "vitest";

/**
 * The pipelined bursts patch three private members of autocannon's client and empty its queue
 * of pipelined requests (src/load/autocannon-client.ts). A release that changes what any of them does breaks load
 * unnoticed, so autocannon is pinned to one version, and each member's source is pinned here:
 * on an upgrade this fails, and the patch is read again against the new source before the
 * fingerprints are updated.
 */
const require = createRequire(import.meta.url);
const PINNED = {
  version: "8.0.0",
  members: {
    _doRequest: "5015d1a7c800c186",
    getRequestBuffer: "c524e7418b4cd17c",
    _connect: "f0263cbcb478ebbc",
  },
  /** emptied on each new connection: the requests still owed on the old one are lost */
  queue: {
    size: "bb8b68a0a78a9363",
    clear: "1f34acd34f91a521",
  },
} as const;

const fingerprint = (member: unknown) =>
  typeof member === "function" ? createHash("sha256").update(member.toString()).digest("hex").slice(0, 16) : "not a function";

describe("autocannon's private client members the bursts patch", () => {
  test("autocannon is pinned to the version whose members were read", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(manifest.dependencies.autocannon).toBe(PINNED.version);
    expect(require("autocannon/package.json").version).toBe(PINNED.version);
  });

  test.for(Object.entries(PINNED.members))("%s has the source the patch was written against", ([name, expected]) => {
    const { prototype } = require("autocannon/lib/httpClient.js");
    expect(fingerprint(prototype[name])).toBe(expected);
  });

  test.for(Object.entries(PINNED.queue))("the pipelined-requests queue's %s has the source the patch was written against", ([
    name,
    expected,
  ]) => {
    const { prototype } = require("autocannon/lib/pipelinedRequestsQueue.js");
    expect(fingerprint(prototype[name])).toBe(expected);
  });
});
