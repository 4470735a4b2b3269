import { type ApiResult, ServiceClient, TransportError } from "../client/index.js";
import { ENDPOINTS, type EndpointId, endpointPath } from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { FLAGGED_ROLES, flagOf, KEY_ROLES, keysOfRole, type FlaggedRole as Role } from "../target/key-roles.js";
import { UsageError } from "./usage-error.js";

/** One request of the key check, counted; a target that does not answer is a usage error. */
type Send = <R extends ApiResult<unknown>>(call: () => Promise<R>) => Promise<R>;

/** No agent has this id (PROFILE §4 id pattern): a request on it can change nothing. */
const NO_SUCH_AGENT = "agt_key_check_missing";

export interface KeyCheck {
  /** what was found, one line each, for the terminal */
  lines: string[];
  /** requests sent (the Date-header probes of the service clock are not among them) */
  requests: number;
}

/**
 * Before the first check (and in `--dry-run`): each key the run was given authenticates and holds
 * the permissions of its role, the other account is another account, and the declared tier is
 * not contradicted by X-RateLimit-Limit. A wrong key is a UsageError of one line naming its flag
 * (exit 2), so a run never reports a misconfigured key as a target's defects.
 *
 * Side effects: none but one agent made and deleted, only when list totals cannot tell the two
 * accounts apart. Permissions are probed with requests that cannot succeed (a create without a
 * name, a delete and a message to an agent that does not exist). PROFILE §3: after 401 and 429
 * any applicable error is conformant, so such a probe proves a permission *missing* when it
 * answers 403 (nothing else answers 403 there), and proves nothing when the body's or the
 * path's fault answers first (400 or 404): that is said, not guessed.
 */
export async function checkKeys(target: HarnessTarget, options: { timeoutMs?: number } = {}): Promise<KeyCheck> {
  const lines: string[] = [];
  let requests = 0;
  // a wrong key is named by the flag that gave it
  const roles = FLAGGED_ROLES.filter((r) => target.keys[r] !== undefined);
  assertDistinctKeys(target);

  const clients = new Map<string, ServiceClient>();
  const clientOf = (key: string) => {
    let c = clients.get(key);
    if (!c) {
      c = new ServiceClient({
        baseUrl: target.baseUrl,
        apiKey: key,
        idField: target.idField,
        timeoutMs: options.timeoutMs ?? 15_000,
      });
      clients.set(key, c);
    }
    return c;
  };
  const send: Send = async (call) => {
    requests++;
    try {
      return await call();
    } catch (err) {
      if (err instanceof TransportError) throw new UsageError(`target unreachable at ${target.baseUrl}: ${err.message}`);
      throw err;
    }
  };
  try {
    const totals = new Map<Role, number>();
    const mainAccountAnswers: ApiResult<unknown>[] = [];
    // each key authenticates and can read (every role lists agents)
    for (const role of roles)
      for (const key of keysOfRole(target.keys, role)) {
        const flag = flagOf(role);
        const res = await send(() => clientOf(key).listAgents({ limit: 1 }));
        if (res.status === 401) throw new UsageError(`${flag}: the target refused this key (401 UNAUTHORIZED)`);
        if (res.status === 403) throw new UsageError(`${flag}: this key cannot list agents (403): ${roleNeeds(role)}`);
        if (res.status !== 200) {
          lines.push(`keys: ${flag} answered ${res.status} to a list; its permissions are judged by the checks`);
          continue;
        }
        if (res.pagination && key === target.keys[role]) totals.set(role, res.pagination.total);
        if (role === "main" || role === "readOnly") mainAccountAnswers.push(res);
      }

    // PROFILE §6: the main key holds all four permissions; a probe that cannot succeed shows a missing one
    const main = clientOf(target.keys.main);
    const missing: string[] = [];
    const probes: [EndpointId, () => Promise<ApiResult<unknown>>][] = [
      ["createAgent", () => main.call("createAgent", { body: {} })],
      ["deleteAgent", () => main.call("deleteAgent", { agentId: NO_SUCH_AGENT })],
      ["sendMessage", () => main.call("sendMessage", { agentId: NO_SUCH_AGENT, body: {} })],
    ];
    for (const [endpoint, probe] of probes) {
      const res = await send(probe);
      if (res.status === 403) missing.push(ENDPOINTS[endpoint].permission);
      if (res.status === 201) await deleteMade(res, main, () => requests++);
    }
    if (missing.length)
      throw new UsageError(
        `${flagOf("main")}: this key lacks ${missing.join(", ")} (403 to a request that could not succeed): ${roleNeeds("main")}`,
      );
    lines.push(`keys: ${flagOf("main")} authenticates; no permission found missing (a 403 would show one)`);

    if (target.keys.readOnly) lines.push(await readOnlyLine(target.keys.readOnly, clientOf, main, send, () => requests++));

    if (target.keys.otherAccount) lines.push(await otherAccountLine(target, totals, clientOf, send, () => requests++));

    lines.push(tierLine(target, mainAccountAnswers));
    return { lines, requests };
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
}

/** A key given for two roles is wrong before any request (the load keys may share the main account's). */
function assertDistinctKeys(target: HarnessTarget): void {
  for (const [a, b] of [
    ["main", "readOnly"],
    ["main", "otherAccount"],
    ["readOnly", "otherAccount"],
  ] as const)
    if (target.keys[a] !== undefined && target.keys[a] === target.keys[b])
      throw new UsageError(`${flagOf(b)}: the same key as ${flagOf(a)} (${roleNeeds(b)})`);
}

/**
 * PROFILE §6: the read-only key may not write. A create without a name cannot succeed: a 403
 * shows the permission missing, as it must be; a 201 (deleted again) shows a key that writes.
 */
async function readOnlyLine(
  readOnly: string,
  clientOf: (key: string) => ServiceClient,
  main: ServiceClient,
  send: Send,
  count: () => void,
): Promise<string> {
  const res = await send(() => clientOf(readOnly).call("createAgent", { body: {} }));
  if (res.status === 201) {
    await deleteMade(res, main, count);
    throw new UsageError(`${flagOf("readOnly")}: this key created an agent (201): ${roleNeeds("readOnly")}`);
  }
  return res.status === 403
    ? `keys: ${flagOf("readOnly")} reads and may not write (403 to a create)`
    : `keys: ${flagOf("readOnly")} reads; that it may not write is not shown: a create without a name answered ${res.status} (PROFILE §3 lets the body's fault answer before the permission's)`;
}

/** What a key of `role` must be, as the key-role table says (PROFILE §6 permissions). */
function roleNeeds(role: Role): string {
  const { permissions, account } = KEY_ROLES[role];
  if (role === "main") return `the main key needs every permission (${permissions.join(", ")})`;
  if (account === KEY_ROLES.main.account) return `it must be a key of the main account with ${permissions.join(", ")} only`;
  // the key check tells only the other account apart from the main one (otherAccountLine)
  if (role === "otherAccount") return "it must be a key of another account";
  return `it needs ${ENDPOINTS.listAgents.permission} at least`;
}

/** An agent a probe made after all (a target that accepted what it should refuse): gone again. */
async function deleteMade(res: ApiResult<unknown>, main: ServiceClient, count: () => void): Promise<void> {
  const id = res.data && typeof res.data === "object" && "id" in res.data ? res.data.id : undefined;
  if (typeof id !== "string") return;
  count();
  await main.deleteAgent(id);
}

/**
 * PROFILE §5 List: only the calling account's agents are listed, so two totals that differ are
 * two accounts. Equal totals (two empty accounts) tell nothing: then one agent the main key makes
 * must be invisible to the other key (§6: 404 on every path), and is deleted at once.
 */
async function otherAccountLine(
  target: HarnessTarget,
  totals: ReadonlyMap<Role, number>,
  clientOf: (key: string) => ServiceClient,
  send: Send,
  count: () => void,
): Promise<string> {
  const [mine, theirs] = [totals.get("main"), totals.get("otherAccount")];
  if (mine !== undefined && theirs !== undefined && mine !== theirs)
    return `keys: ${flagOf("otherAccount")} is another account (it lists ${theirs} agents, the main account ${mine})`;
  const main = clientOf(target.keys.main);
  const made = await send(() => main.createAgent({ name: `${target.runPrefix}key-check` }));
  if (made.status !== 201 || !made.data)
    return `keys: ${flagOf("otherAccount")}: not told apart from the main account (the probe agent's create answered ${made.status})`;
  const seen = await send(() => clientOf(target.keys.otherAccount!).getAgent(made.data!.id));
  count();
  const gone = await main.deleteAgent(made.data.id);
  const left =
    gone.status === 200
      ? ""
      : ` (deleting the probe agent answered ${gone.status}: agent-harness cleanup deletes it by its name)`;
  if (seen.status === 200)
    throw new UsageError(
      `${flagOf("otherAccount")}: this key reads an agent the ${flagOf("main")} made: it belongs to the same account (${roleNeeds("otherAccount")})`,
    );
  return `keys: ${flagOf("otherAccount")} is another account (an agent the main key made answers it ${seen.status}; made and deleted)${left}`;
}

/**
 * PROFILE §7: the headers describe the tightest of the request's buckets, so a List answer shows
 * the List bucket or the tier. A size that is neither, or more left than the declared tier holds,
 * contradicts `--tier`; without `--tier` the answers may show the tier, which is then said.
 */
function tierLine(target: HarnessTarget, answers: readonly ApiResult<unknown>[]): string {
  const listSize = ENDPOINTS.listAgents.bucket.size;
  const tier = target.tierLimit;
  for (const res of answers) {
    const { limit, remaining } = res.exchange.rate ?? {};
    if (limit === undefined || remaining === undefined) continue;
    if (tier !== undefined && ((limit !== listSize && limit !== tier) || remaining > tier))
      throw new UsageError(
        `--tier: the target's X-RateLimit-Limit contradicts a tier of ${tier} per window: a list answered limit ${limit}, remaining ${remaining} (${endpointPath(ENDPOINTS.listAgents)})`,
      );
    if (tier === undefined && limit !== listSize)
      return `keys: the tier looks like ${limit} per window (X-RateLimit-Limit of a list): give --tier ${limit} to plan with it`;
  }
  return tier === undefined
    ? "keys: tier not given (--tier) and not shown by the headers so far"
    : `keys: a tier of ${tier} per window is not contradicted by X-RateLimit-Limit`;
}
