import { appendFileSync } from "node:fs";
import { afterAll, test as base, expect, inject, type TestContext } from "vitest";
import { runChecks } from "../../src/checks/run.js";
import {
  type ApiResult,
  clockReading,
  type Exchange,
  type Layer,
  RateBudget,
  ServiceClient,
  type ServiceClientOptions,
  TransportError,
} from "../../src/client/index.js";
import {
  type Agent,
  CLAUSE_BY_ID,
  type ClauseId,
  type CreateAgentBody,
  type ErrorCode,
  isCountedInBuckets,
  type MockModel,
  matchEndpoint,
  STATUS_OF_CODE,
} from "../../src/contract/index.js";
import { appendFootprint, keyIndexFor } from "../../src/plan/footprint.js";
import {
  Blocked,
  ConformanceFailure,
  classify,
  type Evidence,
  endpointLabel,
  evidenceOf,
  findingKey,
  type Observation,
  observationMessage,
} from "../../src/report/index.js";
import { type FlaggedRole, KEY_ROLES, keyVariable, needsKey, roleOfKey } from "../../src/target/key-roles.js";

// the suites throw these; the report reads them back (src/report/verdict.ts)
export { Blocked, ConformanceFailure, HarnessError } from "../../src/report/index.js";

import { type HarnessTarget, keysOf, workerTarget } from "../../src/target/harness-target.js";
import { claimDirFor, claimKeySet } from "../../src/target/key-set-claim.js";

declare module "vitest" {
  export interface ProvidedContext {
    target: HarnessTarget;
    /** `verify` collects findings from the tests' observations; a plain vitest run has nothing that would */
    findingsCollected?: boolean;
  }
}

/**
 * This worker's key set: one no other live worker holds, claimed by PID for the run
 * (src/target/key-set-claim.ts); VITEST_POOL_ID repeats across projects of one vitest run.
 */
// mutation mode (`npm run mutation`) starts the server in this worker: suites/support/worker-target.ts
const provided = globalThis.agentHarnessWorkerTarget ?? inject("target");
export const target: HarnessTarget = workerTarget(
  provided,
  (provided.keyPool?.length ?? 0) > 1 ? claimKeySet(claimDirFor(provided.ledgerFile), provided.keyPool!.length) : 1,
);
const FINDINGS_COLLECTED = inject("findingsCollected") === true;

/**
 * The service's clock (PROFILE §4, §7 times are on it): its offset from this runner's as `verify`
 * estimated it from the Date header, and the difference tolerated; without an estimate none is
 * tolerated for a server on this very machine, 2 s for a deployment.
 */
export const SERVICE_CLOCK = clockReading(target.serviceClock, target.kind === "external" ? 2 : 0);
const ALL_KEYS = [...new Set((target.keyPool ?? [target.keys]).flatMap(keysOf))];

/** Platform tokens the run sent: none may ever come back (PROFILE §4). */
const sentTokens = new Set<string>();

/** Everything one test exchanged, and what the response-level checks found in it. */
class ExchangeLog {
  readonly exchanges: Exchange[] = [];
  /** one per (check, what is wrong): a finding is made of these across the run (STYLE §10) */
  readonly observations = new Map<string, Observation>();
  /** the create that made each agent of the test: a replay runs it before the failing call */
  private readonly creates = new Map<string, Evidence>();

  record(ex: Exchange, authenticated: boolean): void {
    this.exchanges.push(ex);
    const endpoint = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl })?.spec;
    const found = runChecks(ex, {
      endpoint,
      authenticated,
      keys: ALL_KEYS,
      tokens: [...sentTokens],
      windowSeconds: target.windowSeconds,
      receivedAt: ex.receivedAt,
      sentAt: ex.sentAt,
      clockSkewSeconds: SERVICE_CLOCK.toleranceSeconds,
      clockOffsetSeconds: SERVICE_CLOCK.offsetSeconds,
      idField: target.idField,
    });
    const id = createdId(ex);
    if (id !== undefined) this.creates.set(id, evidenceOf(ex));
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

/** The agent a 201 create made, as the target names its identifier (PROFILE §11). */
function createdId(ex: Exchange): string | undefined {
  const data = (ex.response.json as { data?: Record<string, unknown> } | undefined)?.data;
  const id = data?.[target.idField] ?? data?.id;
  const endpoint = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl })?.spec.id;
  return typeof id === "string" && ex.response.status === 201 && endpoint === "createAgent" ? id : undefined;
}

/**
 * Every create and delete of the run, inside a check or not (an afterAll deleting a shared agent):
 * the run's sweep deletes what the ledger says is left, so a delete it missed costs a request.
 */
function recordInLedger(ex: Exchange): void {
  const created = createdId(ex);
  if (created !== undefined) {
    ledger({ created });
    return;
  }
  const deleted = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl });
  if (deleted?.spec.id === "deleteAgent" && ex.response.status === 200 && deleted.agentId) ledger({ deleted: deleted.agentId });
}

let currentLog: ExchangeLog | undefined;

/** One budget per worker: every client of the run takes turns in the target's buckets, so no check trips a limit by accident. */
export const budget = new RateBudget({
  windowSeconds: target.windowSeconds,
  serviceOffsetMs: SERVICE_CLOCK.offsetSeconds * 1000,
});

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
  const id = `${key}|${account}|${JSON.stringify(options)}`;
  let client = clients.get(id);
  if (!client) {
    client = new ServiceClient({
      baseUrl: target.baseUrl,
      apiKey: key,
      idField: target.idField,
      pacing: budget,
      account,
      ...(account === "main" && target.tierLimit ? { tierLimit: target.tierLimit } : {}),
      secrets: ALL_KEYS,
      // a replay reads each key from its role's variable, so it sends the key the check sent
      keyVariable: keyVariable(roleOfKey(target.keys, key) ?? "main"),
      timeoutMs: (target.messageTimeoutSeconds + ANSWER_SLACK_SECONDS) * 1000,
      layers: [unansweredMessage],
      // STYLE §12: a burst sent at once (a bucket emptied, a tier's worth of 429s) leaves in a few
      // round trips, not twenty: far from the service, sixteen connections stretch it past a window
      connections: BURST_CONNECTIONS,
      onExchange: (ex) => {
        const auth = ex.request.headers.authorization ?? "";
        recordInLedger(ex);
        currentLog?.record(ex, /^bearer \*\*\*$/i.test(auth));
        if (target.footprintFile) recordFootprint(ex, key, account);
        for (const observe of observers) observe(ex, key);
      },
      ...options,
    });
    clients.set(id, client);
  }
  return client;
}

/** Agents made by a test: named with the run prefix, recorded in the ledger, deleted after the test. */
export class AgentFactory {
  private readonly made: string[] = [];
  private seq = 0;

  constructor(
    private readonly api: ServiceClient,
    private readonly label: string,
  ) {}

  name(suffix = ""): string {
    return `${target.runPrefix}${this.label}-${++this.seq}${suffix}`;
  }

  /** Create an agent that must succeed; the test fails with the target's answer otherwise. */
  async create(body: Partial<CreateAgentBody> = {}): Promise<Agent> {
    for (const p of Object.values(body.platforms ?? {})) if (p?.token) sentTokens.add(p.token);
    const send = () => this.api.createAgent({ name: this.name(), ...body } as CreateAgentBody);
    let res = await send();
    // a 429 the pacing did not expect: wait for the refill PROFILE §7 guarantees and try once more,
    // rather than let a wrong header cascade into every later check (the 429 itself is a finding)
    if (res.status === 429 && res.error?.code === "RATE_LIMIT_EXCEEDED") {
      await budget.afterExhaustion(res.exchange);
      res = await send();
    }
    let agent: Agent;
    try {
      agent = expectOk(res, 201);
      this.made.push(agent.id);
    } catch (err) {
      // the check's setup, not its subject: a defect here blocks the check (STYLE §10)
      throw new Blocked(`setup: could not create an agent: ${(err as Error).message.split("\n", 1)[0]}`, "create.created");
    }
    // an agent that is not what the check asked for (another status, another mock model) cannot
    // set up what the check judges: blocked by the create's own finding, not a defect of its own
    const wanted = { status: body.status ?? "active", model: body.modelSettings?.model ?? agent.modelSettings.model };
    if (agent.status !== wanted.status)
      throw new Blocked(
        `setup: POST /agents with status ${wanted.status} made an agent of status ${agent.status}`,
        "create.status",
      );
    if (agent.modelSettings.model !== wanted.model)
      throw new Blocked(
        `setup: POST /agents with model ${wanted.model} made an agent of model ${agent.modelSettings.model}`,
        "create.created",
      );
    return agent;
  }

  /**
   * An agent of a PROFILE §10 mock model. A target that is not reference-compatible would answer
   * that model like any other: there the check is skipped, naming the flag.
   */
  async withMockModel(model: MockModel, skip: (note: string) => never): Promise<Agent> {
    if (!target.referenceFaults) skip(`needs --reference-faults (${model})`);
    return this.create({ modelSettings: { model } });
  }

  track(id: string): void {
    this.made.push(id);
  }

  /** The test deleted this agent itself. */
  forget(id: string): void {
    const i = this.made.indexOf(id);
    if (i !== -1) this.made.splice(i, 1);
  }

  async cleanup(): Promise<void> {
    for (const id of this.made.splice(0)) {
      const res = await this.api.deleteAgent(id);
      if (res.status !== 200 && res.status !== 404)
        throw new Error(`cleanup: DELETE ${id} answered ${res.status} ${res.error?.code ?? ""}`);
    }
  }
}

/**
 * One agent for the checks of a file that leave it as they found it: made on first use (inside a
 * check, so its exchange is judged too) and deleted after the file — a Create and a Delete saved
 * per check (Create is 10 a window). Call at the top of a file or describe.
 */
export function sharedAgent(label: string, body: Partial<CreateAgentBody> = {}): () => Promise<Agent> {
  const factory = new AgentFactory(clientFor(target.keys.main, "main"), label);
  let agent: Promise<Agent> | undefined;
  afterAll(() => factory.cleanup());
  return () => {
    agent ??= factory.create(body);
    return agent;
  };
}

/** Remember a platform token the test sends, so the leak check knows it. */
export function rememberToken(token: string): string {
  sentTokens.add(token);
  return token;
}

/** Each check takes one key of the main account, by its name: per-key buckets are spread over the keys. */
function mainKeyFor(checkName: string): string {
  const keys = target.keys.mainKeys?.length ? target.keys.mainKeys : [target.keys.main];
  return keys[keyIndexFor(checkName, keys.length)]!;
}

/** The check whose requests are being sent, for the footprint of a calibration run (src/plan). */
let currentCheck = "(setup)";

function keyRole(key: string): string {
  const main = target.keys.mainKeys ?? [target.keys.main];
  if (main.includes(key)) return `main#${main.indexOf(key)}`;
  return roleOfKey(target.keys, key) ?? "other";
}

function recordFootprint(ex: Exchange, key: string, account: string): void {
  const match = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl });
  const code = (ex.response.json as { error?: { code?: string } } | undefined)?.error?.code;
  const agent = match?.spec.id === "sendMessage" ? match.agentId : undefined;
  appendFootprint(target.footprintFile!, {
    check: currentCheck,
    key: keyRole(key),
    account,
    ...(match ? { endpoint: match.spec.id } : {}),
    ...(agent ? { agent } : {}),
    counted: isCountedInBuckets(ex.response.status, code),
  });
}

interface Fixtures {
  /** the response-level checks on every exchange of the test */
  conformance: ExchangeLog;
  api: ServiceClient;
  readOnlyApi: ServiceClient;
  otherApi: ServiceClient;
  quotaApi: ServiceClient;
  /** an account no check creates an agent in (a target the harness started); on a deployment, the other account */
  agentlessApi: ServiceClient;
  agents: AgentFactory;
}

const optionalClient =
  (role: FlaggedRole) =>
  async (
    { conformance: _c, skip }: { conformance: ExchangeLog; skip: (note?: string) => never },
    use: (c: ServiceClient) => Promise<void>,
  ) => {
    // a check that needs a key the run was not given is skipped, naming the flag that enables it
    const value = target.keys[role];
    if (!value) skip(needsKey(role));
    await use(clientFor(value!, KEY_ROLES[role].account));
  };

export const test = base.extend<Fixtures>({
  conformance: [
    async ({ task }, use) => {
      const log = new ExchangeLog();
      currentLog = log;
      currentCheck = `${task.file.name}::${task.fullTestName ?? task.name}`;
      await use(log);
      currentLog = undefined;
      currentCheck = `${task.file.name}::(setup)`;
      const errors = task.result?.errors ?? [];
      if (errors.length) task.meta.verdict = classify(errors);
      if (task.result?.state === "fail" || errors.length) task.meta.evidence = log.evidence();
      // a response-level violation is a finding of its own check, not this test's failure (STYLE §10)
      if (log.observations.size) task.meta.observations = [...log.observations.values()];
      // without verify's reporter nothing would report it: fail the test rather than pass in silence
      if (log.observations.size && !FINDINGS_COLLECTED)
        throw new ConformanceFailure(
          `response-level checks found:\n${[...log.observations.values()].map(observationMessage).join("\n")}`,
        );
    },
    { auto: true },
  ],
  api: async ({ conformance: _c, task }, use) => use(clientFor(mainKeyFor(task.fullTestName ?? task.name), "main")),
  readOnlyApi: optionalClient("readOnly"),
  otherApi: optionalClient("otherAccount"),
  quotaApi: optionalClient("quota"),
  agentlessApi: async ({ conformance: _c, skip }, use) => {
    const stand = KEY_ROLES.agentless.standsIn;
    const role = target.keys.agentless ? "agentless" : stand;
    const key = target.keys[role];
    if (!key) skip(needsKey(stand));
    await use(clientFor(key!, KEY_ROLES[role].account));
  },
  agents: async ({ api, task }, use) => {
    const factory = new AgentFactory(api, task.id.replace(/[^A-Za-z0-9]/g, "").slice(-8));
    await use(factory);
    currentLog?.endBody();
    await factory.cleanup();
  },
});

/** A check: a vitest test citing the PROFILE clauses it verifies (STYLE §3). */
export function check(
  clauses: ClauseId | ClauseId[],
  title: string,
  fn: (ctx: Fixtures & TestContext) => Promise<void> | void,
  tags: string[] = [],
) {
  const clauseIds = Array.isArray(clauses) ? clauses : [clauses];
  for (const id of clauseIds) if (!CLAUSE_BY_ID.has(id)) throw new Error(`unknown clause ${id}`);
  const sections = [...new Set(clauseIds.map((id) => CLAUSE_BY_ID.get(id)!.section))].join(" ");
  return test(`${sections} ${title}`, { meta: { clauseIds }, ...(tags.length ? { tags } : {}) }, fn as never);
}

/** A check of `--profile smoke` too: an endpoint's main success or error path, the per-deploy gate. */
export function smoke(clauses: ClauseId | ClauseId[], title: string, fn: (ctx: Fixtures & TestContext) => Promise<void> | void) {
  return check(clauses, title, fn, ["smoke"]);
}

const requestLabel = (ex: Exchange) => endpointLabel(ex.request.method, ex.request.url);
const answerOf = (res: { status: number; error?: { code: string; details?: { field: string }[] } | undefined }) =>
  `${res.status}${res.error ? ` ${res.error.code}` : res.status >= 400 ? " with no readable error code" : ""}${res.error?.details?.length ? ` (details: ${res.error.details.map((d) => d.field).join(", ")})` : ""}`;

/** Fail in words, not matcher text: `GET /agents/{agentId}: expected 200; received 404 AGENT_NOT_FOUND`. */
function assertThat(ok: boolean, message: () => string): void {
  if (!ok) throw new ConformanceFailure(message());
  expect(ok).toBe(true);
}

/**
 * Assert a success status and a body that parses with the endpoint's schema; return the data.
 * A body that breaks the schema is the success-schema check's finding: the check is blocked by it.
 */
export function expectOk<T>(res: ApiResult<T>, status = 200): T {
  assertThat(res.status === status, () => `${requestLabel(res.exchange)}: expected ${status}; received ${answerOf(res)}`);
  if (res.parseIssues.length)
    throw new Blocked(
      `${requestLabel(res.exchange)}: the ${status} body breaks its schema (${res.parseIssues
        .slice(0, 2)
        .map((i) => `${i.path || "body"}: ${i.message}`)
        .join("; ")})`,
    );
  return res.data as T;
}

/** Assert an error answer: its status, its code, and (optionally) a details entry naming `field`. */
export function expectError(
  res: { status: number; error?: { code: string; details?: { field: string }[] } | undefined; exchange: Exchange },
  code: ErrorCode | ErrorCode[],
  field?: string,
): void {
  const codes = Array.isArray(code) ? code : [code];
  const wanted = codes.map((c) => `${STATUS_OF_CODE[c]} ${c}`).join(" or ");
  const label = requestLabel(res.exchange);
  // the right status with no code to read: the envelope check's finding says why; this check cannot judge
  if (res.error === undefined && codes.some((c) => STATUS_OF_CODE[c] === res.status))
    throw new Blocked(`${label}: expected ${wanted}; the ${res.status} body has no readable error code (PROFILE §2 envelope)`);
  assertThat(
    codes.some((c) => STATUS_OF_CODE[c] === res.status && res.error?.code === c),
    () => `${label}: expected ${wanted}; received ${answerOf(res)}`,
  );
  if (field !== undefined) {
    const named = res.error?.details?.map((d) => d.field) ?? [];
    assertThat(
      named.includes(field),
      () => `${label}: expected details[].field to name ${field} (PROFILE §2); received ${JSON.stringify(named)}`,
    );
  }
}

/** A 400 INVALID_REQUEST whose details[].field names one of `fields` (a fault may be named at the item or its list). */
export function expectInvalid(res: Parameters<typeof expectError>[0], fields: string[]): void {
  expectError(res, "INVALID_REQUEST");
  const named = res.error?.details?.map((d) => d.field) ?? [];
  assertThat(
    named.some((f) => fields.includes(f)),
    () =>
      `${requestLabel(res.exchange)}: expected details[].field to name one of ${fields.join(", ")} (PROFILE §2); received ${JSON.stringify(named)}`,
  );
}

export { expect };
