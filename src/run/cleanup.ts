import { existsSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { RateBudget, ServiceClient } from "../client/index.js";
import { LIST_LIMITS, type Permission, STATUS_OF_CODE } from "../contract/index.js";
import type { CheckResult } from "../report/index.js";
import { runIdStartedAt } from "../report/write.js";
import { HARNESS_NAME_PREFIX, type HarnessTarget, RUN_NAME_PATTERN } from "../target/harness-target.js";
import { KEY_ROLE_NAMES, KEY_ROLES, keysOfRole } from "../target/key-roles.js";

/** A list page read leniently: `data` an array of anything, `totalPages` when it is a number. */
const lenientPage = z.object({
  data: z.array(z.unknown()),
  pagination: z.object({ totalPages: z.unknown() }).partial().optional().catch(undefined),
});
const namedAgent = z.object({ id: z.string(), name: z.string() });

/**
 * Every agent of the account, walking all pages (PROFILE §5 List). Read leniently: a page whose
 * shape is wrong (a finding of the run) still names its agents, and the walk ends on an empty
 * page or the last one, whatever `hasMore` claims. A page of agents none of which has an id and a
 * name (another identifier field than the client's) is an error: read as empty, it would say no
 * agent is left.
 */
async function listAll(client: ServiceClient): Promise<{ id: string; name: string }[]> {
  const all: { id: string; name: string }[] = [];
  for (let page = 1; page <= 10_000; page++) {
    const res = await client.listAgents({ page, limit: LIST_LIMITS.limit.max, sortBy: "createdAt", order: "asc" });
    const body = lenientPage.safeParse(res.body).data;
    if (res.status !== 200 || !body) throw new Error(`listing agents answered ${res.status} ${res.error?.code ?? ""}`);
    const rows = body.data.flatMap((a) => namedAgent.safeParse(a).data ?? []);
    if (body.data.length && !rows.length)
      throw new Error(
        `listing agents: page ${page} holds ${body.data.length} agent(s), none with a string ${client.idField} and name: is the record's identifier field another? (--id-field)`,
      );
    all.push(...rows);
    const totalPages = typeof body.pagination?.totalPages === "number" ? body.pagination.totalPages : page;
    if (rows.length === 0 || page >= totalPages) break;
  }
  return all;
}

function ledgerIds(file: string): string[] {
  if (!existsSync(file)) return [];
  const created = new Set<string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const entry: unknown = JSON.parse(line);
    if (typeof entry !== "object" || entry === null) continue;
    if ("created" in entry && typeof entry.created === "string") created.add(entry.created);
    if ("deleted" in entry && typeof entry.deleted === "string") created.delete(entry.deleted);
  }
  return [...created];
}

/**
 * Delete every agent the ledger says this run created and did not delete (a deployment keeps no litter), then
 * assert none with the run's prefix is left. Reported as a check of its own.
 *
 * Agents are made in several accounts (each parallel worker's main account, the property suites'
 * account, the isolation and quota checks' accounts). Each account's list names the leftovers it holds, so
 * every leftover is deleted once, by its own account: a DELETE of another account's agent is a 404 that
 * still counts in the Delete bucket (PROFILE §7), and trying every leftover on every account multiplied a
 * sweep by the number of accounts (minutes after a property run that shrank hundreds of cases). A leftover
 * no account lists (a list that hides agents is a finding of the run) is still tried by id on each.
 */
export async function sweepLedger(target: HarnessTarget, ledgerFile: string): Promise<CheckResult> {
  const started = performance.now();
  const base = { id: "run.cleanup", title: "every agent the run created is deleted", suite: "run", clauseIds: [], sections: [] };
  const leftovers = new Set(ledgerIds(ledgerFile));
  const accounts = sweepKeys(target).map((keys) => keys.map((key) => sweepClient(target, key)));
  let deleted = 0;
  let strays = 0;
  try {
    const results: CheckResult[] = [];
    for (const swept of await sweepAccounts(accounts, target.runPrefix, leftovers)) {
      deleted += swept.deleted;
      strays += swept.strays;
      if (swept.result) results.push({ ...base, ...swept.result, durationMs: Math.round(performance.now() - started) });
    }
    for (const id of leftovers)
      for (const [client] of accounts) {
        const res = await client!.deleteAgent(id);
        if (res.status === 200) {
          deleted++;
          break;
        }
        if (res.status !== 404) throw new Error(`DELETE ${id} answered ${res.status} ${res.error?.code ?? ""}`);
      }
    const durationMs = Math.round(performance.now() - started);
    if (results[0]) return results[0];
    return {
      ...base,
      status: "passed",
      durationMs,
      ...(deleted || strays
        ? { message: `deleted ${deleted} leftover agent(s)${strays ? ` and ${strays} the ledger did not know` : ""}` }
        : {}),
    };
  } catch (err) {
    return {
      ...base,
      status: "error",
      durationMs: Math.round(performance.now() - started),
      message: `cleanup failed: ${err instanceof Error ? err.message : String(err)}`,
    };
  } finally {
    await Promise.all(accounts.flat().map((c) => c.close()));
  }
}

/**
 * The keys of each account a run may make agents in: every role whose key may list and delete
 * (PROFILE §6), grouped by account within each key set, each key once (on a deployment one key may
 * play several roles). An account's keys share its deletes: the Delete bucket is per key (PROFILE §7).
 */
function sweepKeys(target: HarnessTarget): string[][] {
  const seen = new Set<string>();
  const accounts: string[][] = [];
  for (const set of target.keyPool ?? [target.keys]) {
    const byAccount = new Map<string, string[]>();
    for (const role of KEY_ROLE_NAMES) {
      const { permissions, account }: { permissions: readonly Permission[]; account: string } = KEY_ROLES[role];
      if (!permissions.includes("agents:read") || !permissions.includes("agents:delete")) continue;
      const keys = keysOfRole(set, role).filter((key) => !seen.has(key));
      for (const key of keys) seen.add(key);
      if (keys.length) byAccount.set(account, [...(byAccount.get(account) ?? []), ...keys]);
    }
    accounts.push(...byAccount.values());
  }
  return accounts;
}

function sweepClient(target: HarnessTarget, mainKey: string): ServiceClient {
  return new ServiceClient({
    baseUrl: target.baseUrl,
    apiKey: mainKey,
    idField: target.idField,
    pacing: new RateBudget({ windowSeconds: target.windowSeconds }),
    // a fresh budget does not know what the checks left in the buckets: honour their 429s
    retry: { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: (target.windowSeconds + 1) * 1000 },
  });
}

/**
 * Accounts swept at once: each has its own keys and buckets (PROFILE §7), so one's sweep never
 * spends another's. One after the other, a run of six workers swept 36 accounts in 14.7 s at
 * 300 ms a round trip, a list or more each.
 */
const ACCOUNTS_AT_ONCE = 8;

/** Every account's part of the sweep, in the order given, `ACCOUNTS_AT_ONCE` at a time; throws the first failure once all have ended. */
async function sweepAccounts(accounts: ServiceClient[][], runPrefix: string, leftovers: Set<string>) {
  const swept: Awaited<ReturnType<typeof sweepAccount>>[] = [];
  let next = 0;
  const ends = await Promise.allSettled(
    Array.from({ length: Math.min(ACCOUNTS_AT_ONCE, accounts.length) }, async () => {
      while (next < accounts.length) {
        const i = next++;
        swept[i] = await sweepAccount(accounts[i]!, runPrefix, leftovers);
      }
    }),
  );
  const failed = ends.find((end) => end.status === "rejected");
  if (failed) throw failed.reason;
  return swept;
}

/**
 * One account's part of the sweep: the leftovers it lists (taken out of `leftovers`) and any agent
 * with the run's prefix the ledger does not know — made by a request the target should have refused,
 * a finding of the run — are deleted; then nothing with the prefix may be listed. Throws when a
 * request fails; `result` is set when something is left.
 */
async function sweepAccount(
  clients: ServiceClient[],
  runPrefix: string,
  leftovers: Set<string>,
): Promise<{
  deleted: number;
  strays: number;
  result?: Pick<CheckResult, "status" | "message"> & Partial<Pick<CheckResult, "clauseIds" | "sections">>;
}> {
  const client = clients[0]!;
  const listed = await listAll(client);
  const known = listed.filter((agent) => leftovers.delete(agent.id));
  const doomed = listed.filter((agent) => known.includes(agent) || agent.name.startsWith(runPrefix));
  const deleted = known.length;
  const strays = doomed.length - deleted;
  // the account's keys take turns: each deletes every n-th agent, all at once
  await Promise.all(
    clients.map(async (each, i) => {
      for (let j = i; j < doomed.length; j += clients.length) {
        const res = await each.deleteAgent(doomed[j]!.id);
        if (res.status !== 200 && res.status !== 404)
          throw new Error(`DELETE ${doomed[j]!.id} answered ${res.status} ${res.error?.code ?? ""}`);
      }
    }),
  );
  const remaining = deleted || strays ? (await listAll(client)).filter((a) => a.name.startsWith(runPrefix)) : [];
  if (!remaining.length) return { deleted, strays };
  // listed, yet unknown to Get: the target lists deleted agents (PROFILE §5 delete.gone), not a harness fault
  const gone = [];
  for (const agent of remaining) if ((await client.getAgent(agent.id)).status === 404) gone.push(agent.id);
  if (gone.length === remaining.length)
    return {
      deleted,
      strays,
      result: {
        clauseIds: ["delete.gone"],
        sections: ["§5"],
        status: "failed",
        message: `GET /agents: expected no deleted agent in the list (PROFILE §5 delete.gone); received ${gone.length} that Get answers 404: ${gone.join(", ")}`,
      },
    };
  return {
    deleted,
    strays,
    result: { status: "error", message: `agents of this run still exist: ${remaining.map((a) => a.id).join(", ")}` },
  };
}

/** A DELETE the service is right to refuse this key: no later delete of the sweep would fare better. */
const REFUSALS_OF_A_KEY = new Set<number>([
  STATUS_OF_CODE.UNAUTHORIZED,
  STATUS_OF_CODE.FORBIDDEN,
  STATUS_OF_CODE.RATE_LIMIT_EXCEEDED,
]);

/** 3600 → "1h", 90 → "90s": as --older-than takes it. */
const spanOf = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600}h` : seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;

/**
 * `agent-harness cleanup`: every agent named `prefix…` by an earlier run (killed before its own
 * sweep) is deleted, or listed with `dryRun`. Exit 1 when a delete failed, 2 when the account
 * cannot be listed or the key may not delete there (401, 403, or a 429 that outlasted the retries:
 * no verdict on the service, whose refusal is right). The agents of runs that started less than
 * `olderThanSeconds` ago are kept: a run may still be using them (another pipeline's, on the
 * same account), and deleting them would turn its reads into false findings.
 */
export async function deleteByPrefix(
  options: {
    baseUrl: string;
    apiKey: string;
    prefix: string;
    windowSeconds: number;
    dryRun: boolean;
    idField?: string;
    olderThanSeconds?: number;
  },
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { baseUrl, apiKey, prefix, windowSeconds: window, dryRun } = options;
  const client = new ServiceClient({
    baseUrl,
    apiKey,
    ...(options.idField ? { idField: options.idField } : {}),
    pacing: new RateBudget({ windowSeconds: window }),
    retry: { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: (window + 1) * 1000 },
  });
  try {
    const named = (await listAll(client)).filter((a) => a.name.startsWith(prefix) && RUN_NAME_PATTERN.test(a.name));
    const since = Date.now() - (options.olderThanSeconds ?? 0) * 1000;
    const matches = named.filter((a) => (runIdStartedAt(a.name.slice(HARNESS_NAME_PREFIX.length)) ?? 0) <= since);
    const kept = named.length - matches.length;
    out.write(
      `${matches.length} agent(s) named ${prefix}…${kept ? `; ${kept} more of runs started in the last ${spanOf(options.olderThanSeconds ?? 0)} kept (a run may still be using them; --older-than 0 takes them too)` : ""}\n`,
    );
    let failed = 0;
    let deleted = 0;
    for (const a of matches) {
      if (dryRun) {
        out.write(`would delete ${a.id} ${a.name}\n`);
        continue;
      }
      const res = await client.deleteAgent(a.id);
      if (REFUSALS_OF_A_KEY.has(res.status)) {
        // the key's refusal, or the limit's: the service is right, and no later delete would fare better
        err.write(
          `agent-harness cleanup: DELETE ${a.id} answered ${res.status} ${res.error?.code ?? ""}: ${
            res.status === STATUS_OF_CODE.RATE_LIMIT_EXCEEDED
              ? "still rate-limited after the retries; run it again later"
              : "this key may not delete here (it needs agents:delete)"
          }; ${matches.length - deleted} agent(s) left\n`,
        );
        return 2;
      }
      const ok = res.status === 200 || res.status === 404;
      if (ok) deleted++;
      else failed++;
      out.write(`${ok ? "deleted" : `FAILED (${res.status})`} ${a.id} ${a.name}\n`);
    }
    return failed ? 1 : 0;
  } catch (e) {
    err.write(`agent-harness cleanup: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  } finally {
    await client.close();
  }
}
