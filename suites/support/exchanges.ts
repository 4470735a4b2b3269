import { appendFileSync, existsSync, readFileSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import { runChecks } from "../../src/checks/run.js";
import {
  type Exchange,
  type Layer,
  parseRateHeaders,
  RateBudget,
  ServiceClient,
  type ServiceClientOptions,
  TransportError,
} from "../../src/client/index.js";
import { LiteralSet } from "../../src/client/literals.js";
import { type EndpointMatch, isCountedInBuckets, matchEndpoint } from "../../src/contract/index.js";
import { appendFootprint } from "../../src/plan/footprint.js";
// the report's modules one by one: its index would load the report writers (HTML, JUnit) into every test worker
import { endpointLabel, evidenceOf, findingKey, MASKING_CHECKS, type Observation } from "../../src/report/findings.js";
import type { Evidence } from "../../src/report/model.js";
import { REFUSALS_FILE } from "../../src/report/refusals.js";
import { ConformanceFailure, HarnessError } from "../../src/report/verdict.js";
import { keyVariable, roleOfKey } from "../../src/target/key-roles.js";
import { ALL_KEYS, SERVICE_CLOCK, target } from "./target.js";

/**
 * Every exchange of a check goes through here: the client layers record it, every response-level
 * check (src/checks) judges it, the ledger keeps what it created, and a calibration run counts it.
 */

/** Platform tokens the run sent: none may ever come back (PROFILE §4). */
const sentTokens = new LiteralSet();

/** Everything one test exchanged, and what the response-level checks found in it. */
export class ExchangeLog {
  readonly exchanges: Exchange[] = [];
  /** one per (check, what is wrong): a finding is made of these across the run (STYLE §10) */
  readonly observations = new Map<string, Observation>();
  /** the create that made each agent of the test: a replay runs it before the failing call */
  private readonly creates = new Map<string, Evidence>();

  /** `match`: the endpoint the exchange addressed (exchangeEndpoint), matched once for all its readers */
  record(ex: Exchange, authenticated: boolean, match: EndpointMatch | undefined): void {
    this.exchanges.push(ex);
    const endpoint = match?.spec;
    const found = runChecks(ex, {
      endpoint,
      authenticated,
      keys: ALL_KEYS,
      tokens: sentTokens,
      windowSeconds: target.windowSeconds,
      receivedAt: ex.receivedAt,
      sentAt: ex.sentAt,
      clockSkewSeconds: SERVICE_CLOCK.toleranceSeconds,
      clockOffsetSeconds: SERVICE_CLOCK.offsetSeconds,
      idField: target.idField,
    });
    const id = createdId(ex, match);
    if (id !== undefined) this.creates.set(id, evidenceOf(ex));
    if (found.some((v) => MASKING_CHECKS.has(v.check))) masked.add(ex);
    for (const v of found) {
      const key = findingKey(v);
      const seen = this.observations.get(key);
      if (seen) {
        seen.count += 1;
        continue;
      }
      // the create that made the agent this request addressed (not the create itself)
      const made =
        endpoint?.id === "createAgent"
          ? undefined
          : [...this.creates.entries()].find(([agentId]) => ex.request.url.includes(`/${agentId}`));
      this.observations.set(key, {
        ...v,
        endpoint: endpointLabel(ex.request.method, ex.request.url),
        count: 1,
        evidence: evidenceOf(ex),
        ...(made ? { setup: { evidence: made[1], agentId: made[0] } } : {}),
      });
    }
  }

  /** exchanges before this index were made by the test's body; after it, by the cleanup of its fixtures */
  private bodyEnd: number | undefined;

  /** The test's body is over: what follows (deleting its agents) is no evidence of its failure. */
  endBody(): void {
    this.bodyEnd ??= this.exchanges.length;
  }

  evidence(): Evidence[] {
    // the last exchanges the test's body made: what its own assertions judged
    return this.exchanges.slice(0, this.bodyEnd).slice(-3).map(evidenceOf);
  }
}

function ledger(entry: { created: string } | { deleted: string }): void {
  appendFileSync(target.ledgerFile, `${JSON.stringify(entry)}\n`);
}

/** The endpoint an exchange addressed, if any (two URLs parsed: once an exchange, not once a reader). */
const exchangeEndpoint = (ex: Exchange): EndpointMatch | undefined =>
  matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl });

/** The agent a 201 create made, as the target names its identifier (PROFILE §11). */
function createdId(ex: Exchange, match: EndpointMatch | undefined): string | undefined {
  const data = (ex.response.json as { data?: Record<string, unknown> } | undefined)?.data;
  const id = data?.[target.idField] ?? data?.id;
  return typeof id === "string" && ex.response.status === 201 && match?.spec.id === "createAgent" ? id : undefined;
}

/**
 * Every create and delete of the run, inside a check or not (an afterAll deleting a shared agent):
 * the run's sweep deletes what the ledger says is left, so a delete it missed costs a request.
 */
function recordInLedger(ex: Exchange, match: EndpointMatch | undefined): void {
  const created = createdId(ex, match);
  if (created !== undefined) {
    ledger({ created });
    return;
  }
  if (match?.spec.id === "deleteAgent" && ex.response.status === 200 && match.agentId) ledger({ deleted: match.agentId });
}

/** Exchanges whose answer a masking check faulted (a broken envelope, a mispaired status). */
const masked = new WeakSet<Exchange>();

/** The answer of this exchange cannot be read for its code or data: a check judging it is blocked, not failed. */
export const isMasked = (ex: Exchange): boolean => masked.has(ex);

let currentLog: ExchangeLog | undefined;
/** The check whose requests are being sent, for the footprint of a calibration run (src/plan). */
let currentCheck = "(setup)";

/** A check begins: its exchanges are logged and judged under its name. */
export function beginCheck(name: string): ExchangeLog {
  currentLog = new ExchangeLog();
  currentCheck = name;
  return currentLog;
}

/** The check ended: what follows is its file's setup. */
export function endCheck(file: string): void {
  currentLog = undefined;
  currentCheck = `${file}::(setup)`;
}

/** The log of the check running now, if any. */
export const currentExchangeLog = (): ExchangeLog | undefined => currentLog;

/** One budget per worker: every client of the run takes turns in the target's buckets, so no check trips a limit by accident. */
export const budget = new RateBudget({
  windowSeconds: target.windowSeconds,
  serviceOffsetMs: SERVICE_CLOCK.offsetSeconds * 1000,
  // an account another lane uses too: this lane keeps to its share of its buckets (src/plan/lanes.ts)
  ...(target.accountShares ? { shares: target.accountShares } : {}),
  // a 429 the pacing did not expect that proved nothing: the run counts each wait for its Retry-After, per bucket
  onRefusalWait: (wait) => appendFileSync(join(dirname(target.ledgerFile), REFUSALS_FILE), `${JSON.stringify(wait)}\n`),
});

/**
 * The main lane's last files wait here until the quota lane has ended (src/plan/lanes.ts): then
 * they are the quota account's only user, and from a window after its last request on, the
 * main lane's share of that account no longer binds. No wait without a quota lane.
 */
export async function afterQuotaLane(timeoutMs: number): Promise<void> {
  const file = target.afterQuotaLane;
  if (file === undefined) return;
  // the run writes the file when the lane ends, however it ended (a failure, Ctrl-C, the run's
  // bound): its appearing in the folder is the event waited for, not a time; the deadline only
  // turns a lane that never ends into an error naming it
  const deadline = AbortSignal.timeout(timeoutMs);
  await new Promise<void>((resolve, reject) => {
    const watcher = watch(dirname(file), () => {
      if (existsSync(file)) ended();
    });
    const late = () => {
      watcher.close();
      reject(
        new HarnessError(`the quota lane had not ended ${Math.round(timeoutMs / 1000)} s after this lane's last files began`),
      );
    };
    const ended = () => {
      watcher.close();
      deadline.removeEventListener("abort", late);
      resolve();
    };
    deadline.addEventListener("abort", late, { once: true });
    // written before the watcher began: no event will come
    if (existsSync(file)) ended();
  });
  const endedAt = Number(readFileSync(file, "utf8"));
  for (const [account, share] of Object.entries(target.accountShares ?? {}))
    if (share.side === "guest") budget.endShare(account, Number.isFinite(endedAt) ? endedAt : Date.now());
}

/**
 * The quota lane sends no Send Message (src/plan/lanes.ts): the account's quota is the quota
 * check's, and once it is spent PROFILE §3 lets any message be answered 429 INSUFFICIENT_QUOTA.
 * A file that would has declared less than it does (declareFile): a mistake of the harness, not a
 * finding; it stops before the request leaves.
 */
const noMessagesInQuotaLane: Layer = (next) => async (request) => {
  const messages = request.method === "POST" && /\/messages\/?$/.test(request.path.split("?")[0]!);
  // an unauthenticated request reaches no account (PROFILE §3, §6: 401 beats everything)
  if (target.lane === "quota" && messages && request.headers.authorization !== undefined)
    throw new HarnessError(
      `${request.method} ${request.path}: the quota lane sends no message (a file that sends one declares sendsMessages)`,
    );
  return next(request);
};

/**
 * A check that exhausted a bucket on purpose waits for the refill its 429 announced
 * (Retry-After / X-RateLimit-Reset), never a guessed time. A 429 that announced nothing is the
 * retry-after check's finding; the wait then falls back to what PROFILE §7 guarantees (the window W).
 */
export async function waitForRefill(exchange: Exchange): Promise<void> {
  await budget.afterExhaustion(exchange);
}

const clients = new Map<string, ServiceClient>();
/** connections per client and origin (undici opens them only when requests wait) */
const BURST_CONNECTIONS = 100;

/** Who else sees every exchange (the property suites record a case's steps); returns the unsubscribe. */
const observers = new Set<(exchange: Exchange, key: string) => void>();
export function observeExchanges(observer: (exchange: Exchange, key: string) => void): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** How long past the message time budget (PROFILE §5) the client still waits for an answer. */
const ANSWER_SLACK_SECONDS = 15;

/**
 * PROFILE §5: a message is answered within the time budget. A Send Message the client gave up on
 * after the budget and the slack is the service's failure (a finding of message.budget), not the
 * harness's: the harness waited longer than the service promised.
 */
const unansweredMessage: Layer = (next) => async (request) => {
  try {
    return await next(request);
  } catch (err) {
    const waited = request.timeoutMs >= (target.messageTimeoutSeconds + ANSWER_SLACK_SECONDS) * 1000;
    if (err instanceof TransportError && err.kind === "timeout" && request.endpoint === "sendMessage" && waited)
      throw new ConformanceFailure(
        `${request.method} ${request.origin}${request.path}: no answer within the ${target.messageTimeoutSeconds} s time budget and ${ANSWER_SLACK_SECONDS} s more`,
        "message.budget",
      );
    throw err;
  }
};

/** A client for one of the run's keys; every response it sees goes through every check. */
export function clientFor(key: string, account: string, options: Partial<ServiceClientOptions> = {}): ServiceClient {
  // inside an account lane a check's "main" key may be another account's: pacing and footprint name the real one
  const label = target.keyLabels?.[key];
  const id = `${key}|${account}|${JSON.stringify(options)}`;
  let client = clients.get(id);
  if (!client) {
    client = new ServiceClient({
      baseUrl: target.baseUrl,
      apiKey: key,
      idField: target.idField,
      pacing: budget,
      account: label?.account ?? account,
      // a lane's main account is paced at the tier --tier gives (the plan assumes it of every account)
      ...(account === "main" && target.tierLimit ? { tierLimit: target.tierLimit } : {}),
      secrets: ALL_KEYS,
      // a replay reads each key from its role's variable, so it sends the key the check sent
      keyVariable: keyVariable(label?.role ?? roleOfKey(target.keys, key) ?? "main"),
      timeoutMs: (target.messageTimeoutSeconds + ANSWER_SLACK_SECONDS) * 1000,
      layers: [noMessagesInQuotaLane, unansweredMessage],
      // STYLE §12: a burst sent at once (a bucket emptied, a tier's worth of 429s) leaves in a few
      // round trips, not twenty: far from the service, sixteen connections stretch it past a window
      connections: BURST_CONNECTIONS,
      onExchange: (ex) => {
        const auth = ex.request.headers.authorization ?? "";
        const match = exchangeEndpoint(ex);
        recordInLedger(ex, match);
        currentLog?.record(ex, /^bearer \*\*\*$/i.test(auth), match);
        if (target.footprintFile) recordFootprint(ex, match, key, label?.account ?? account);
        for (const observe of observers) observe(ex, key);
      },
      ...options,
    });
    clients.set(id, client);
  }
  return client;
}

/** Remember a platform token the test sends, so the leak check knows it. */
export function rememberToken(token: string): string {
  sentTokens.add(token);
  return token;
}

function keyRole(key: string): string {
  const label = target.keyLabels?.[key];
  if (label) return label.footprint;
  const main = target.keys.mainKeys ?? [target.keys.main];
  if (main.includes(key)) return `main#${main.indexOf(key)}`;
  return roleOfKey(target.keys, key) ?? "other";
}

function recordFootprint(ex: Exchange, match: EndpointMatch | undefined, key: string, account: string): void {
  const code = (ex.response.json as { error?: { code?: string } } | undefined)?.error?.code;
  const agent = match?.spec.id === "sendMessage" ? match.agentId : undefined;
  const counted = isCountedInBuckets(ex.response.status, code);
  // a 429 from an empty bucket (PROFILE §7: Remaining 0, the Limit of that bucket); the cap on
  // messages in flight refuses with buckets that still have room
  const rate = ex.response.status === 429 && !counted ? parseRateHeaders(ex.response.headers) : undefined;
  appendFootprint(target.footprintFile!, {
    check: currentCheck,
    key: keyRole(key),
    account,
    ...(match ? { endpoint: match.spec.id } : {}),
    ...(agent ? { agent } : {}),
    ...(target.lane ? { lane: target.lane } : {}),
    counted,
    ...(rate?.remaining === 0 && rate.limit ? { emptied: rate.limit } : {}),
  });
}
