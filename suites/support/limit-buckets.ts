import { describe } from "vitest";
import { renameIdField, type ServiceClient } from "../../src/client/index.js";
import { type Agent, type ClauseId, RATE_LIMITS } from "../../src/contract/index.js";
import { needsKey } from "../../src/target/key-roles.js";
import {
  type AgentFactory,
  check,
  clientFor,
  expect,
  expectError,
  expectOk,
  HarnessError,
  target,
  waitForRefill,
} from "./harness.js";
import {
  drainBucket,
  expectEmptyBucket429,
  expectTierLimit,
  inBatches,
  MAX_DRAIN_ATTEMPTS,
  MESSAGE_BURST_WIDTH,
  MISSING_ID,
  type Probe,
  type Result,
  SIZES,
} from "./limits.js";

/**
 * PROFILE §7: each endpoint's bucket, one row each. The rows are checked in two files
 * (limits.test.ts, limits-buckets.test.ts) so they run in two parallel workers: every row waits
 * out a refill.
 */

/* ---------------------------------------------------------------- per endpoint */

export interface BucketCase {
  /** counted in the bucket whatever its outcome (a 400 or 404 costs no agent) */
  counted: Probe;
  /** the request the 429 must leave without effect; sent again after the refill */
  effect: Probe;
  noEffect?: () => Promise<void>;
  recovered: (res: Result) => Promise<void> | void;
  /** the agent whose bucket it is, and one more of the account (Send Message) */
  agent?: Agent;
  another?: Agent;
}

export interface BucketRow {
  name: string;
  size: number;
  clause: ClauseId;
  arrange: (fx: { api: ServiceClient; agents: AgentFactory }) => Promise<BucketCase>;
  /** requests of the emptying burst in flight together (default: all at once) */
  burstWidth?: number;
  /**
   * A check that needs this bucket empty too, merged into this row's check (two checks that can
   * share the drain spend one window of a deployment run, not two). Only when the run has what it needs
   * (`enabled`); otherwise it is a check of its own, which then says what it needs.
   */
  whileEmpty?: WhileEmpty[];
}

export interface WhileEmpty {
  enabled: boolean;
  /** what the run lacks when it is not enabled: the check is then reported skipped, saying so */
  needs: string;
  clauses: ClauseId[];
  title: string;
  /** runs with the bucket just emptied (`limited` its 429); returns the 429 whose refill the check then waits for */
  run: (fx: { api: ServiceClient; agents: AgentFactory; limited: Result; bucket: BucketCase }) => Promise<Result>;
  /** after the refill, before the row's own recovery */
  afterRefill?: (bucket: BucketCase) => Promise<void>;
}

/**
 * Evidence, not inference from a header: an answer that was not 429 carried a later Reset, but a
 * service that let a request bypass the empty bucket would show the same. A counted request
 * admitted now shows the window did roll over (try again); a 429 shows it did not (judge).
 */
async function windowRolledOver(bucket: BucketCase): Promise<boolean> {
  return (await bucket.counted(false)).status !== 429;
}

/** The read-only key's client (`--read-only-key`), for the parts merged only when it is given. */
const readOnlyApi = () => clientFor(target.keys.readOnly!, "main");
const HAS_READ_ONLY = target.keys.readOnly !== undefined;
/** PROFILE §7 limits.429-not-counted floods a tier's worth of 429s: a tier the run knows, small enough to flood. */
export const FLOODABLE_TIER = target.tierLimit !== undefined && target.tierLimit <= 1000;

const CREATE_VARIANTS = ["/agents/", "/AGENTS", "/Agents", "/%61gents"];

/** PROFILE §9: with Create emptied, path variants and spoofed client addresses get 404 or 429, never 201. */
const PATH_VARIANTS: WhileEmpty = {
  enabled: true,
  needs: "",
  clauses: ["routing.variants"],
  title: "path variants and spoofed client addresses get 404 or 429, never 201",
  run: async ({ api, agents, limited, bucket }) => {
    // a window may roll over between the bucket running dry and the variants: then empty it again
    for (let attempt = 1; ; attempt++) {
      // all at once: one round trip, so they meet the emptied window even far from the service
      const [answers, spoofed] = await Promise.all([
        Promise.all(
          CREATE_VARIANTS.map(async (path) => {
            const ex = await api.send({ method: "POST", path, body: { name: agents.name("-variant") }, pace: false });
            // the target's identifier field (PROFILE §11), as the client reads a record
            const made = (renameIdField(ex.response.json, target.idField) as { data?: { id?: string } } | undefined)?.data?.id;
            if (ex.response.status === 201 && made) agents.track(made);
            return { path, status: ex.response.status, reset: ex.rate?.reset ?? 0 };
          }),
        ),
        api.createAgent(
          { name: agents.name("-spoofed") },
          {
            pace: false,
            headers: { "x-forwarded-for": "203.0.113.7", "x-real-ip": "203.0.113.7", forwarded: "for=203.0.113.7" },
          },
        ),
      ]);
      if (spoofed.status === 201) agents.track((spoofed.data as Agent).id);
      const emptiedAt = limited.exchange.rate?.reset ?? Number.POSITIVE_INFINITY;
      const rolled =
        [...answers, { status: spoofed.status, reset: spoofed.exchange.rate?.reset ?? 0 }].some(
          (a) => a.status !== 429 && a.status !== 404 && a.reset > emptiedAt,
        ) && (await windowRolledOver(bucket));
      if (rolled && attempt < MAX_DRAIN_ATTEMPTS) {
        limited = await drainBucket(SIZES.createAgent, bucket.counted);
        continue;
      }
      if (rolled)
        throw new HarnessError(`the window rolled over before the variants in each of ${attempt} attempts: inconclusive`);
      for (const a of answers) expect([404, 429], `POST ${a.path}: 404, or the same empty bucket`).toContain(a.status);
      expectEmptyBucket429(spoofed, SIZES.createAgent);
      return spoofed;
    }
  },
};

/**
 * PROFILE §3 precedence: with the Update bucket empty, invalid updates get 429 RATE_LIMIT_EXCEEDED
 * (the limit is checked before the body and the agent), and a missing key still 401.
 */
const PRECEDENCE: WhileEmpty = {
  enabled: true,
  needs: "",
  clauses: ["status.precedence"],
  title: "with it empty, invalid updates get 429 (and a missing key still 401)",
  run: async ({ api, limited, bucket }) => {
    const id = bucket.agent!.id;
    const invalid: Array<{ title: string; send: () => Promise<Result> }> = [
      { title: "an invalid field", send: () => api.call("updateAgent", { agentId: id, body: { status: "error" }, pace: false }) },
      { title: "an unknown agent", send: () => api.updateAgent(MISSING_ID, {}, { pace: false }) },
      { title: "malformed JSON", send: () => api.call("updateAgent", { agentId: id, rawBody: '{"bio": ', pace: false }) },
      {
        title: "text/plain",
        send: () => api.call("updateAgent", { agentId: id, rawBody: "{}", contentType: "text/plain", pace: false }),
      },
    ];
    // a window may roll over between the bucket running dry and the invalid requests: then empty it again
    for (let attempt = 1; ; attempt++) {
      // all at once: one round trip, so they meet the emptied window even far from the service
      const [answers, unauthenticated] = await Promise.all([
        Promise.all(invalid.map(async (row) => ({ title: row.title, res: await row.send() }))),
        api.updateAgent(id, {}, { auth: "none" }),
      ]);
      const rolled =
        answers.some(
          ({ res }) => res.status !== 429 && (res.exchange.rate?.reset ?? 0) > (limited.exchange.rate?.reset ?? Infinity),
        ) && (await windowRolledOver(bucket));
      if (rolled && attempt < MAX_DRAIN_ATTEMPTS) {
        limited = await drainBucket(SIZES.updateAgent, bucket.counted);
        continue;
      }
      if (rolled)
        throw new HarnessError(`the window rolled over before the invalid updates in each of ${attempt} attempts: inconclusive`);
      for (const { title, res } of answers) {
        expect(res.status, `${title}: status`).toBe(429);
        expectError(res, "RATE_LIMIT_EXCEEDED");
      }
      expectError(unauthenticated, "UNAUTHORIZED");
      return answers.at(-1)!.res;
    }
  },
};

/** PROFILE §7: endpoint buckets are per key — merged into the Create row when there is a read-only key. */
export const PER_KEY: WhileEmpty = {
  enabled: HAS_READ_ONLY,
  needs: needsKey("readOnly"),
  clauses: ["limits.endpoint-bucket"],
  title: "another key of the account still gets through",
  run: async ({ agents, limited }) => {
    // 429 beats 403 (PROFILE §3): a 403 shows this key's Create bucket is not the drained one
    const other = await readOnlyApi().createAgent({ name: agents.name("-ro") }, { pace: false });
    if (other.status === 201) agents.track((other.data as Agent).id);
    expectError(other, "FORBIDDEN");
    return limited;
  },
};

/** PROFILE §7: the message bucket is the agent's, shared by the account's keys; §3 429 beats 403. */
export const SHARED_BY_KEYS: WhileEmpty = {
  enabled: HAS_READ_ONLY,
  needs: needsKey("readOnly"),
  clauses: ["limits.agent-bucket", "status.precedence"],
  title: "the bucket is shared by the account's keys (429 beats 403), another agent's is its own",
  run: async ({ api, bucket, limited }) => {
    // a key without messages:send reaches the same empty bucket: 429, not 403 — unless the window
    // rolled over first (far from the service the burst may end late in it): then empty it again
    let readOnly = await readOnlyApi().sendMessage(bucket.agent!.id, { text: "hello" }, { pace: false });
    for (let attempt = 1; readOnly.status !== 429; attempt++) {
      const later = (readOnly.exchange.rate?.reset ?? 0) > (limited.exchange.rate?.reset ?? Infinity);
      if (!later || !(await windowRolledOver(bucket))) break;
      if (attempt === MAX_DRAIN_ATTEMPTS)
        throw new HarnessError(
          `the window rolled over before the read-only key's message in each of ${attempt} attempts: inconclusive`,
        );
      limited = await drainBucket(RATE_LIMITS.perAgentMessages, bucket.counted, { width: MESSAGE_BURST_WIDTH });
      readOnly = await readOnlyApi().sendMessage(bucket.agent!.id, { text: "hello" }, { pace: false });
    }
    expectEmptyBucket429(readOnly, RATE_LIMITS.perAgentMessages);
    // another agent's bucket is its own (unless the tier itself ran out)
    const elsewhere = await api.sendMessage(bucket.another!.id, { text: "hello" }, { pace: false });
    if (elsewhere.status === 429) expectTierLimit(elsewhere);
    else expectOk(elsewhere);
    return readOnly;
  },
  afterRefill: async (bucket) => {
    expectError(await readOnlyApi().sendMessage(bucket.agent!.id, { text: "hello" }), "FORBIDDEN");
  },
};

/**
 * PROFILE §7: a 429 counts in no bucket — a tier's worth of them, sent at the emptied Delete bucket.
 *
 * The account's tier has a window of its own (it started at the account's first counted request),
 * so it may refill in the middle of a flood; a service that counted the flood's 429s would then
 * still admit the request after it, and one flood and one request prove nothing. So the check
 * sends segments (a flood, then one List) until two in a row have answered inside one window by the
 * runner's clock: the tier can have refilled inside at most one of them, and a service counting
 * 429s would have refused the other's List. Under a starved runner whose segments are slower than
 * that, it says it could not judge, never that the tier held.
 */
export const NOT_COUNTED: WhileEmpty = {
  enabled: FLOODABLE_TIER,
  needs: target.tierLimit === undefined ? "needs --tier" : `a tier of ${target.tierLimit} is too large to flood`,
  clauses: ["limits.429-not-counted"],
  title: "a tier's worth of 429s leaves the tier intact",
  run: async ({ api, bucket }) => {
    const tier = target.tierLimit!;
    // refills come a window apart; a service whose windows start on whole seconds brings a refill
    // up to a second early where the window is no whole number of seconds
    const windowMs = target.windowSeconds * 1000 - (Number.isInteger(target.windowSeconds) ? 0 : 1000);
    /** when each segment since the Delete bucket was last emptied started and ended, on this runner's clock */
    let segments: { start: number; end: number }[] = [];
    const spans: number[] = [];
    /** the longest flood yet, ms: what a drain keeps room for in its window */
    let longest = 0;
    for (let refills = 0, sent = 0; sent < MAX_NOT_COUNTED_SEGMENTS; sent++) {
      const start = performance.now();
      // were 429s counted in the account's tier, these alone would empty it; all at once, so the
      // flood fits in what is left of the window even on a short window and a busy machine
      const flood = await inBatches(
        tier,
        tier,
        () => bucket.counted(false),
        () => false,
      );
      if (!flood.every((r) => r.status === 429)) {
        // the Delete bucket's window ended mid-flood: empty it again where what is left of its
        // window holds two segments as long as this one took (a fresh window when it does not,
        // waited for by its Reset), and count segments afresh
        longest = Math.max(longest, performance.now() - start);
        if (++refills === MAX_DRAIN_ATTEMPTS)
          throw new HarnessError(
            `the Delete bucket refilled during the flood ${refills} times (a flood took up to ${Math.round(longest)} ms): inconclusive`,
          );
        const reserveMs = Math.min(2 * longest, 0.75 * windowMs);
        expectEmptyBucket429(await drainBucket(SIZES.deleteAgent, bucket.counted, { reserveMs }), SIZES.deleteAgent);
        segments = [];
        continue;
      }
      const list = await api.listAgents({ limit: 1 }, { pace: false });
      expect(list.status, `after ${tier} answers 429 the tier (${tier}) still admits a request`).not.toBe(429);
      expectOk(list);
      segments.push({ start, end: performance.now() });
      longest = Math.max(longest, segments.at(-1)!.end - start);
      const [before, last] = segments.slice(-2);
      if (before && last) {
        spans.push(Math.round(last.end - before.start));
        if (last.end - before.start < windowMs) return flood.at(-1)!;
      }
    }
    throw new HarnessError(
      `no two floods of ${tier} and their List fitted in one window of ${target.windowSeconds} s ` +
        `(two in a row took ${spans.join(", ")} ms): inconclusive, the runner is too slow for this window`,
    );
  },
};

/** Segments (a flood and its List) the tier check sends at most before it says it cannot judge. */
const MAX_NOT_COUNTED_SEGMENTS = 6;

export const BUCKETS: BucketRow[] = [
  {
    name: "Create",
    size: SIZES.createAgent,
    clause: "limits.endpoint-bucket",
    whileEmpty: [PATH_VARIANTS, PER_KEY],
    arrange: async ({ api, agents }) => {
      const name = agents.name("-limited");
      const before = await api.listAgents({ limit: 100 });
      expectOk(before);
      return {
        counted: (pace) => api.call("createAgent", { body: { name: "" }, pace }),
        effect: (pace) => api.createAgent({ name }, { pace }),
        noEffect: async () => {
          const after = await api.listAgents({ limit: 100 });
          const made = expectOk(after).find((a) => a.name === name);
          if (made) agents.track(made.id);
          expect(made, "the 429 create made no agent").toBeUndefined();
          expect(after.pagination?.total, "list total unchanged").toBe(before.pagination?.total);
        },
        recovered: (res) => {
          if (res.status === 201) agents.track((res.data as Agent).id);
          expectOk(res, 201);
        },
      };
    },
  },
  {
    name: "List",
    size: SIZES.listAgents,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api }) => {
      const list: Probe = (pace) => api.listAgents({ limit: 1 }, { pace });
      return { counted: list, effect: list, recovered: (res) => void expectOk(res) };
    },
  },
  {
    name: "Get",
    size: SIZES.getAgent,
    clause: "limits.endpoint-bucket",
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      const get: Probe = (pace) => api.getAgent(agent.id, { pace });
      return { counted: get, effect: get, recovered: (res) => void expect(expectOk(res)).toMatchObject({ id: agent.id }) };
    },
  },
  {
    name: "Update",
    size: SIZES.updateAgent,
    clause: "limits.endpoint-bucket",
    whileEmpty: [PRECEDENCE],
    arrange: async ({ api, agents }) => {
      const agent = await agents.create({ bio: "before" });
      return {
        agent,
        counted: (pace) => api.updateAgent(agent.id, {}, { pace }),
        effect: (pace) => api.updateAgent(agent.id, { bio: "after" }, { pace }),
        noEffect: async () => {
          const now = expectOk(await api.getAgent(agent.id));
          expect({ bio: now.bio, updatedAt: now.updatedAt }, "the 429 update changed nothing").toEqual({
            bio: "before",
            updatedAt: agent.updatedAt,
          });
        },
        recovered: (res) => void expect((expectOk(res) as Agent).bio).toBe("after"),
      };
    },
  },
  {
    name: "Delete",
    size: SIZES.deleteAgent,
    clause: "limits.endpoint-bucket",
    whileEmpty: [NOT_COUNTED],
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      return {
        // PROFILE §7: counted "whatever its outcome", so 404s empty the bucket without agents to spare
        counted: (pace) => api.deleteAgent(MISSING_ID, { pace }),
        effect: (pace) => api.deleteAgent(agent.id, { pace }),
        noEffect: async () => void expectOk(await api.getAgent(agent.id)),
        recovered: (res) => void expect(expectOk(res)).toEqual({ id: agent.id, deleted: true }),
      };
    },
  },
  {
    name: "Send Message (per agent)",
    size: RATE_LIMITS.perAgentMessages,
    burstWidth: MESSAGE_BURST_WIDTH,
    clause: "limits.agent-bucket",
    whileEmpty: [SHARED_BY_KEYS],
    arrange: async ({ api, agents }) => {
      const agent = await agents.create();
      const another = SHARED_BY_KEYS.enabled ? await agents.create() : undefined;
      return {
        agent,
        ...(another ? { another } : {}),
        counted: (pace) => api.call("sendMessage", { agentId: agent.id, body: { text: "" }, pace }),
        effect: (pace) => api.sendMessage(agent.id, { text: "hello", userId: "u-limited" }, { pace }),
        // the 429 took no turn: the first message that gets through opens the conversation
        recovered: (res) => void expect(expectOk(res)).toMatchObject({ turn: 1, userId: "u-limited" }),
      };
    },
  },
];

/**
 * Rows drained together in one check: the Create and Delete buckets (10 each, per key) fit in one
 * window of any tier with room to spare, and each alone would leave most of its window unused
 * while it waits for its refill. The other rows need most of a window each.
 */
const BY_NAME = new Map(BUCKETS.map((row) => [row.name, row]));
export const BUCKET_GROUPS: BucketRow[][] = [
  ["Delete", "Create"],
  ["List"],
  ["Get"],
  ["Update"],
  ["Send Message (per agent)"],
].map((names) => names.map((name) => BY_NAME.get(name)!));

/**
 * One check per group: each bucket empties at its size, the 429 has no effect, the reset refills
 * it. `part` of `of` files takes every `of`-th group, so together they check every row.
 */
export function bucketChecks({ part, of }: { part: number; of: number }): void {
  describe("PROFILE §7 buckets, one 429 each", () => {
    for (const rows of BUCKET_GROUPS.filter((_, i) => i % of === part)) {
      const alsoOf = (row: BucketRow) => (row.whileEmpty ?? []).filter((w) => w.enabled);
      const clauses = rows.flatMap((row) => [row.clause, ...alsoOf(row).flatMap((w) => w.clauses)]);
      // the Create row's list total is taken after every arrangement (the Delete row creates an agent): Create last
      const title = [...rows]
        .reverse()
        .map(
          (row) =>
            `${row.name}: ${row.size} per window${alsoOf(row)
              .map((w) => `; ${w.title}`)
              .join("")}`,
        )
        .join("; ");
      check(
        [...new Set<ClauseId>([...clauses, "limits.429", "limits.recovery"])],
        `${title}; one more → 429 RATE_LIMIT_EXCEEDED with no effect; after the reset it succeeds`,
        async ({ api, agents }) => {
          const buckets: BucketCase[] = [];
          for (const row of rows) buckets.push(await row.arrange({ api, agents }));
          // emptied at the same time: each in its own bucket, all of them in one window of the tier
          const limited = await Promise.all(
            rows.map((row, i) =>
              drainBucket(row.size, buckets[i]!.counted, { final: buckets[i]!.effect, width: row.burstWidth }),
            ),
          );
          // row by row, the Delete flood first (it needs most of what is left of the window); a part
          // that finds its window rolled over empties its bucket again
          for (const [i, row] of rows.entries()) {
            expectEmptyBucket429(limited[i]!, row.size);
            await buckets[i]!.noEffect?.();
            for (const w of alsoOf(row)) limited[i] = await w.run({ api, agents, limited: limited[i]!, bucket: buckets[i]! });
          }
          for (const res of limited) await waitForRefill(res.exchange);
          for (const [i, row] of rows.entries()) {
            for (const w of alsoOf(row)) await w.afterRefill?.(buckets[i]!);
            await buckets[i]!.recovered(await buckets[i]!.effect(true));
          }
        },
      );
      // merged into a row when the run has what it needs; otherwise reported skipped, saying what
      for (const row of rows)
        for (const w of (row.whileEmpty ?? []).filter((w) => !w.enabled))
          check(w.clauses, `${row.name} emptied: ${w.title}`, ({ skip }) => skip(w.needs));
    }
  });
}
