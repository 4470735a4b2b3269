import { appendFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { checkFollowingCases } from "../../src/arbitraries/followed-check.js";
import {
  EventStreamCollector,
  type Exchange,
  RateLimitBreach,
  RefusedAgain,
  type ServiceClient,
  summarizeStream,
  TransportError,
} from "../../src/client/index.js";
import { budgetEndedWords, endedByTheBudget, isRecord, RATE_LIMITS } from "../../src/contract/index.js";
import { RunHistory, type SeenRecord } from "../../src/model/history.js";
import { type TransitionFrom, type TransitionTo, transitionKey } from "../../src/model/transitions.js";
import { deploymentPropertyRequests, type PropertyReplay } from "../../src/target/harness-target.js";
import {
  ConformanceFailure,
  clientFor,
  expect,
  HarnessError,
  Inconclusive,
  MODEL_FAILED,
  observeExchanges,
  rememberToken,
  target,
} from "../support/harness.js";

/**
 * The property suites' runner: seeds from the run (`--seed`), budgets (`--max-requests`), and a
 * failure a person can replay (§4): the shrunk case as numbered curl steps, a replay script
 * and a `--replay` file in the report folder.
 */

/** The report folder of the run (where the ledger is). */
export const reportDir = dirname(target.ledgerFile);

/** Keys the suites take turns with: the property account's on reference targets, else the main key. */
const PROPERTY_KEYS = target.keys.propertyKeys ?? [];
const KEYS = PROPERTY_KEYS.length ? PROPERTY_KEYS : [target.keys.main];
const ACCOUNT = PROPERTY_KEYS.length ? "property" : "main";
export const KEY_ROLE = PROPERTY_KEYS.length
  ? "a key of the property account (all four permissions)"
  : "the main key (all four permissions)";

let turn = 0;
/**
 * The next client, round robin over the keys, so per-key buckets share the load. Once another
 * client's activity kept a case of the running property from being judged, the property is
 * inconclusive whatever else it sees: its later cases are skipped here, before they send anything.
 */
export function nextClient(): ServiceClient {
  if (unjudged.length > 0 && currentGenerators !== undefined) fc.pre(false);
  const key = KEYS[turn++ % KEYS.length]!;
  return clientFor(key, ACCOUNT);
}
/** One client for reads that must see the whole account (any key of it will do). */
export const firstClient = () => clientFor(KEYS[0]!, ACCOUNT);

/* ------------------------------------------------------------------ budget */

/** Requests the property clients made in this run. */
let requests = 0;
observeExchanges((_ex, key) => {
  if (KEYS.includes(key)) requests++;
});
export const requestsMade = () => requests;

/* ----------------------------------------------------------------- history */

/**
 * Every answer the property clients get, across all cases and sequences of the run, feeds one
 * history (src/model/history.ts): invariants over the whole run, not only the answer in hand.
 * The property clients never send two requests about one agent at once, so the order answers
 * arrive in is the order the service handled them.
 */
const history = new RunHistory();

function seenRecord(v: unknown): SeenRecord | undefined {
  if (!isRecord(v)) return undefined;
  const { status, createdAt, updatedAt } = v;
  const id = v[target.idField];
  return typeof id === "string" && typeof status === "string" && typeof createdAt === "string" && typeof updatedAt === "string"
    ? { id, status, createdAt, updatedAt }
    : undefined;
}

function feedHistory(ex: Exchange): void {
  const status = ex.response.status;
  const at = `${ex.request.method} ${new URL(ex.request.url).pathname} → ${status}${ex.requestId ? ` (request id ${ex.requestId})` : ""}`;
  const json = ex.response.json;
  const data = isRecord(json) ? json.data : undefined;
  const records = (Array.isArray(data) ? data : [data]).map(seenRecord).filter((r) => r !== undefined);
  switch (ex.endpoint) {
    case "createAgent":
      if (status === 201) for (const r of records) history.created(r, at);
      return;
    case "getAgent":
    case "updateAgent":
    case "listAgents":
      if (status === 200) for (const r of records) history.read(r, at);
      return;
    case "deleteAgent":
      if (status === 200 && ex.agentId) history.deleted(ex.agentId, at);
      return;
    case "sendMessage": {
      if (!ex.agentId) return;
      let reply: unknown = status === 200 ? data : undefined;
      let failed = status === 500 && isRecord(json) && isRecord(json.error) && json.error.code === "MODEL_ERROR";
      if (status === 200 && (ex.response.headers["content-type"] ?? "").includes("text/event-stream")) {
        const events = new EventStreamCollector(() => 0);
        events.feed(ex.response.bodyText);
        events.end();
        const stream = summarizeStream(events.events);
        reply = stream.done;
        failed = stream.error?.code === "MODEL_ERROR";
      }
      if (failed) history.modelFailed(ex.agentId);
      if (!isRecord(reply)) return;
      const { agentId, conversationId, turn, userId, roomId } = reply;
      if (typeof agentId === "string" && typeof conversationId === "string" && typeof turn === "number")
        history.replied(
          {
            agentId,
            conversationId,
            turn,
            userId: typeof userId === "string" ? userId : null,
            roomId: typeof roomId === "string" ? roomId : null,
          },
          at,
        );
      return;
    }
  }
}
observeExchanges((ex, key) => {
  if (KEYS.includes(key)) feedHistory(ex);
});

/**
 * Each case (and each shrink candidate, and the replay) judges the violations its own answers
 * made: one a case left behind when it failed before taking them would otherwise fail the next
 * candidate, which shrinking would then keep for a failure it does not have.
 */
function ownHistory<Ts>(): fc.Plugin<Ts> {
  // cast: fast-check types its life-cycle plugins Plugin<unknown>, which Parameters<Ts> does not
  // take; a beforeEach hook reads no case value, so it fits a property of any case type
  return fc.beforeEach(() => {
    history.take();
  }) as fc.Plugin<Ts>;
}

/** The run's history keeps every invariant so far (PROFILE §4, §5, §8): fails the case or step otherwise. */
export function expectHistoryKept(): void {
  const broken = history.take().map((v) => `${v.invariant} (PROFILE ${v.clause}): ${v.message}`);
  // vitest's expect only for a broken one: this runs after every step (see expectEqual in cases.ts)
  if (broken.length) expect(broken, "invariants over the run's whole history").toEqual([]);
}

/**
 * `--max-requests`: by default sized so the suite adds at most 5 minutes on a deployment at
 * the account's tier (PROFILE §7: tier requests per window W); the embedded target has no cap.
 */
export const MAX_REQUESTS =
  target.property?.maxRequests ??
  (target.kind === "embedded" || PROPERTY_KEYS.length ? Number.POSITIVE_INFINITY : deploymentPropertyRequests(target));

/**
 * Windows of W the budget spans at the account's tier (PROFILE §7): Create and Delete hold 10 a
 * window per key, so on a deployment they, not the tier, bound how many agents a run may make.
 */
const WINDOWS = MAX_REQUESTS / (target.tierLimit ?? RATE_LIMITS.tiers.standard);
// four fifths for the cases: populations, their cleanup and the run's sweep take the rest
const CREATE_BUDGET = Math.floor(
  0.8 * WINDOWS * Math.min(RATE_LIMITS.perKeyEndpoint.createAgent, RATE_LIMITS.perKeyEndpoint.deleteAgent),
);

/** Whether the run is paced by a deployment's buckets (a request budget) rather than free (embedded). */
export const BUDGETED = Number.isFinite(MAX_REQUESTS);

/**
 * Cases for a property: `embedded` on a reference target the harness started, else its share of
 * the request budget and of the create budget (`creates` agents made per case, counting a
 * rejected create too: it is counted in the Create bucket all the same).
 */
export function runsFor(
  embedded: number,
  share: { requests: number; creates: number },
  perCase: { requests: number; creates: number },
): number {
  if (!BUDGETED) return embedded;
  const byRequests = Math.floor((MAX_REQUESTS * share.requests) / perCase.requests);
  const byCreates = perCase.creates ? Math.floor((CREATE_BUDGET * share.creates) / perCase.creates) : byRequests;
  return Math.max(1, Math.min(embedded, byRequests, byCreates));
}

/** Agents a property makes before its cases (a population): fewer on a paced deployment. */
export const setupAgents = (embedded: number): number => (BUDGETED ? Math.max(2, Math.floor(CREATE_BUDGET * 0.12)) : embedded);

/** A property stops generating (and shrinking) after this long: a bound, not a budget. */
const TIME_LIMIT_MS = BUDGETED ? 15 * 60_000 : 90_000;
/** How long a case the time limit cut is waited for: a few requests, each within the client's timeout. */
const CUT_CASE_WAIT_MS = 120_000;

/* ------------------------------------------------------------------ steps */

interface Step {
  exchange: Exchange;
  key: string;
}

/** Record every exchange of the property clients while `fn` runs. */
async function recording<T>(fn: () => Promise<T>): Promise<{ value: T; steps: Step[] }> {
  const steps: Step[] = [];
  const stop = observeExchanges((exchange, key) => {
    if (KEYS.includes(key)) steps.push({ exchange, key });
  });
  try {
    return { value: await fn(), steps };
  } finally {
    stop();
  }
}

/** Numbered curl steps, the key's role named (the key itself is read from $AGENT_API_KEY). */
export function formatSteps(steps: readonly Step[], label = ""): string {
  return steps
    .map(({ exchange }, i) => {
      const id = exchange.requestId ? `, request id ${exchange.requestId}` : "";
      return `${label}${i + 1}. [${KEY_ROLE}] → ${exchange.response.status}${id}\n   ${exchange.curl}`;
    })
    .join("\n");
}

/**
 * A bash script replaying the steps: the ids the target made in a create are captured and used
 * in the steps after it, so the script runs against a fresh server too.
 */
function replayScript(replay: PropertyReplay, setup: readonly Step[], steps: readonly Step[], command: string): string {
  const lines = [
    "#!/usr/bin/env bash",
    `# property: ${replay.property}`,
    `# seed ${replay.seed}, path ${replay.path}${replay.replayPath ? `, replayPath ${replay.replayPath}` : ""}`,
    `# reproduce with the harness: ${command}`,
    `# or by hand: AGENT_API_KEY=<${KEY_ROLE}> bash ${"$0"}`,
    "set -u",
  ];
  const ids = new Map<string, string>();
  [...setup, ...steps].forEach(({ exchange }, i) => {
    let curl = exchange.curl;
    for (const [id, variable] of ids) curl = curl.split(id).join(`'"$${variable}"'`);
    const data = (exchange.response.json as { data?: Record<string, unknown> } | undefined)?.data;
    const made = exchange.endpoint === "createAgent" && exchange.response.status === 201 ? data?.[target.idField] : undefined;
    lines.push(`# step ${i + 1}${i < setup.length ? " (setup)" : ""}: answered ${exchange.response.status}`);
    if (typeof made === "string") {
      const variable = `AGENT_${ids.size + 1}`;
      ids.set(made, variable);
      lines.push(
        `${variable}=$(${curl} | sed -n 's/.*"${target.idField}":"\\([^"]*\\)".*/\\1/p' | head -n 1)`,
        `echo "${variable}=$${variable}"`,
      );
    } else lines.push(curl, "echo");
  });
  return `${lines.join("\n")}\n`;
}

/* ------------------------------------------------------------------ runner */

/** The case `--replay` names, if any. */
export const REPLAY: PropertyReplay | undefined = target.property?.replay;

/** With `--replay`, every other property is skipped (it is not part of the case). */
export function skipUnlessReplayed(title: string, skip: (note?: string) => never): void {
  if (REPLAY && REPLAY.property !== title) skip(`--replay runs only "${REPLAY.property}"`);
}

export interface PropertyRun<Ts extends unknown[]> {
  /** the property's title: names it in the replay file */
  title: string;
  /** cases to run */
  numRuns: number;
  /** the property; `replayPath` is for a command sequence's replay */
  property: (replayPath: string | undefined) => fc.IAsyncProperty<Ts> | fc.IAsyncPropertyWithHooks<Ts>;
  /** exchanges made before the cases (a population), shown as setup steps of a failure */
  setup?: () => readonly Step[];
  /** a command sequence rather than a case */
  sequences?: boolean;
}

export interface PropertyOutcome {
  title: string;
  cases: number;
  sequences: number;
  generators: Record<string, number>;
  /** status transitions driven, by `from>to` (stateful sequences only) */
  transitions?: Record<string, number>;
  requests: number;
  durationMs: number;
  seed: number;
}

/** An assertion's message, with the fields where expected and received differ (vitest keeps the diff apart). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { actual, expected } = error as Error & { actual?: unknown; expected?: unknown };
  const differences: string[] = [];
  const walk = (a: unknown, e: unknown, path: string) => {
    if (differences.length >= 6 || JSON.stringify(a) === JSON.stringify(e)) return;
    if (isRecord(a) && typeof e === "object" && e !== null) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(e)]))
        walk(a[key], Reflect.get(e, key), path ? `${path}.${key}` : key);
      return;
    }
    differences.push(
      `  ${path || "(value)"}: expected ${JSON.stringify(e)?.slice(0, 200)}, received ${JSON.stringify(a)?.slice(0, 200)}`,
    );
  };
  if (actual !== undefined || expected !== undefined) walk(actual, expected, "");
  return [error.message.split("\n")[0], ...differences].join("\n");
}

const outcomes = new Map<string, PropertyOutcome>();
/** The figures of the property run of this title in this worker, once it ran (passed or failed). */
export const outcomeOf = (title: string): PropertyOutcome | undefined => outcomes.get(title);

/** Record a property's figures for the report (one JSON line each in property.jsonl). */
function report(outcome: PropertyOutcome): void {
  outcomes.set(outcome.title, outcome);
  appendFileSync(join(reportDir, "property.jsonl"), `${JSON.stringify(outcome)}\n`);
}

/**
 * Run one property with the run's seed; on failure, shrink, replay the shrunk case once while
 * recording it, write the replay files and throw a ConformanceFailure that shows them.
 * Returns the number of cases (or sequences) run.
 */
/** Why cases of the running property were not judged: another client's activity (suites/property/foreign.ts). */
let unjudged: string[] = [];

/**
 * A case that cannot be judged (another client's activity in the account, the deployment's own
 * model failing a message): fast-check skips it as it skips a case whose precondition fails (so it
 * is neither a failure nor shrunk), and the property is inconclusive, naming what was seen (`seen`
 * says its cause), unless a case of its own failed.
 */
export function notJudged(seen: string): never {
  unjudged.push(seen);
  fc.pre(false);
  throw new Inconclusive(seen);
}

/**
 * PROFILE §5 lets a deployment's own model fail any message (500 MODEL_ERROR, or the stream's
 * error event); only a reference-compatible target says when (§10). A case that needs the reply
 * is then not judged: on the reference, the failure is the case's to judge.
 */
export function unlessModelFailed(code: string | undefined, what: string): void {
  if (!target.referenceFaults && code === "MODEL_ERROR") notJudged(`${MODEL_FAILED} ${what} (MODEL_ERROR)`);
}

/**
 * PROFILE §5: past the message budget a message answers 503 AGENT_UNAVAILABLE (a stream, its
 * error event), and takes no turn: a starved runner or a slow service, not a defect. A case whose
 * message the budget ended is not judged, in the words the functional suites use for it.
 */
export function unlessBudgetEnded(res: { error?: { code?: string }; exchange: { durationMs: number } }, what: string): void {
  if (endedByTheBudget(res.error?.code, res.exchange.durationMs, target.messageTimeoutSeconds))
    notJudged(`${what} answered AGENT_UNAVAILABLE: ${budgetEndedWords(target.messageTimeoutSeconds)}`);
}

/**
 * A case's failure that is not the service's: a 429 the pacing did not expect (a §7 breach of its
 * own, or the harness's: src/client/refusal.ts), the harness's own error, a request the network
 * lost (a harness error, as in every other suite). Never a finding, and while a failure of the
 * service's shrinks, never its counterexample.
 */
const notTheService = (error: unknown): error is Error =>
  error instanceof RateLimitBreach ||
  error instanceof RefusedAgain ||
  error instanceof HarnessError ||
  error instanceof TransportError;

export async function runProperty<Ts extends unknown[]>(run: PropertyRun<Ts>): Promise<number> {
  unjudged = [];
  const generators: Record<string, number> = {};
  const transitions: Record<string, number> = {};
  currentGenerators = generators;
  currentTransitions = transitions;
  const started = performance.now();
  const before = requests;
  const seed = REPLAY?.seed ?? target.seed;
  const params: fc.Parameters<Ts> = REPLAY
    ? { seed, path: REPLAY.path, endOnFailure: true, numRuns: 1, plugins: [ownHistory<Ts>()] }
    : { seed, numRuns: run.numRuns, endOnFailure: false, interruptAfterTimeLimit: TIME_LIMIT_MS, plugins: [ownHistory<Ts>()] };
  // a replay first runs the cases the original run ran before the failing one: the target's
  // history (agents made and deleted by them) is then the same when the shrunk case runs
  const earlier = REPLAY ? Number(REPLAY.path.split(":")[0]) : 0;
  if (earlier > 0) await fc.check(run.property(undefined), { seed, numRuns: earlier, plugins: [ownHistory<Ts>()] });
  // a case the time limit cuts is waited for: none of its requests leaves after its property ended
  const { details, cutCaseEnded, cutCaseError } = await checkFollowingCases(
    run.property(REPLAY?.replayPath),
    params,
    CUT_CASE_WAIT_MS,
    notTheService,
  );
  const cases = details.numRuns;
  currentGenerators = undefined;
  currentTransitions = undefined;
  const outcome: PropertyOutcome = {
    title: run.title,
    cases: run.sequences ? 0 : cases,
    sequences: run.sequences ? cases : 0,
    generators,
    ...(Object.keys(transitions).length ? { transitions } : {}),
    requests: requests - before,
    durationMs: Math.round(performance.now() - started),
    seed,
  };
  report(outcome);
  const seen = unjudged;
  unjudged = [];
  // a failure of its own (a counterexample that shrank) is still a finding; else another client decides
  if (seen.length && (!details.failed || details.counterexample === null))
    throw new Inconclusive(
      `property "${run.title}": ${seen.length} case(s) not judged: ${[...new Set(seen)].slice(0, 3).join("; ")}`,
    );
  // the time limit ended the property before a failure: fewer cases judged than its depth, or none
  // (fast-check then says "failed" with no counterexample): a timing the harness could not keep,
  // neither a pass nor the service's failure
  if (details.interrupted && (!details.failed || details.counterexample === null)) {
    const unit = run.sequences ? "sequences" : "cases";
    // the case the limit cut failed once fast-check had stopped looking: the service's failure, unshrunk
    if (cutCaseError !== undefined) {
      if (notTheService(cutCaseError)) throw cutCaseError;
      throw new ConformanceFailure(
        `${run.title}: a case the time limit (${TIME_LIMIT_MS / 1000} s) cut failed after it (no shrunk replay): ${String(cutCaseError)}`,
      );
    }
    throw new HarnessError(
      `property "${run.title}": the time limit (${TIME_LIMIT_MS / 1000} s) ended it after ${cases} of ${run.numRuns} ${unit}, none failed${cutCaseEnded ? "" : `; the case it cut still ran ${CUT_CASE_WAIT_MS / 1000} s later`}`,
    );
  }
  if (!details.failed) return cases;
  // nor is a case the harness could not judge (another client in the account: above)
  const thrown = details.errorInstance;
  if (notTheService(thrown)) throw thrown;
  if (details.counterexample === null || details.counterexamplePath === null)
    throw new ConformanceFailure(`${run.title}: ${String(details.errorInstance ?? "failed without a counterexample")}`);

  const shrunk = details.counterexample;
  const replayPath = run.sequences ? /replayPath="([^"]*)"/.exec(String(shrunk[0]))?.[1] : undefined;
  const replay: PropertyReplay = {
    property: run.title,
    seed: details.seed,
    path: details.counterexamplePath,
    ...(replayPath ? { replayPath } : {}),
    // what shapes the generators besides the seed: a replay runs with them (src/run/verify.ts)
    // the budget the run had (given, or a deployment's default from its tier and W); none on embedded
    ...(Number.isFinite(MAX_REQUESTS) ? { maxRequests: MAX_REQUESTS } : {}),
    referenceFaults: target.referenceFaults,
  };
  // replay the shrunk case once, recording its exchanges: the steps a person can run
  const again = await recording(() =>
    fc.check(run.property(replayPath), {
      seed: replay.seed,
      path: replay.path,
      endOnFailure: true,
      numRuns: 1,
      plugins: [ownHistory<Ts>()],
    }),
  );
  const slug = run.title
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .toLowerCase();
  const replayFile = join(reportDir, `replay-${slug}.json`);
  const scriptFile = join(reportDir, `replay-${slug}.sh`);
  // (a deployment's replay needs the flag again: the reference always honours its mock models)
  const flags = target.kind === "external" && target.referenceFaults ? " --reference-faults" : "";
  const command = `agent-harness verify --suites property --seed ${replay.seed}${flags} --replay ${replayFile}`;
  const setup = run.setup?.() ?? [];
  writeFileSync(replayFile, `${JSON.stringify(replay, null, 2)}\n`);
  writeFileSync(scriptFile, replayScript(replay, setup, again.steps, command), { mode: 0o755 });
  const error = describeError(details.errorInstance);
  const reproduced = again.value.failed
    ? ""
    : "\n(the shrunk case passed when replayed once: the fault depends on timing or on earlier runs)";
  throw new ConformanceFailure(
    [
      `property "${run.title}" failed after ${details.numRuns} case(s), shrunk ${details.numShrinks} time(s)`,
      `seed ${replay.seed}, path ${replay.path}${replayPath ? `, replayPath ${replayPath}` : ""}`,
      `shrunk counterexample: ${run.sequences ? String(shrunk[0]) : fc.stringify(shrunk)}`,
      `failure: ${error}`,
      ...(setup.length ? ["setup steps:", formatSteps(setup, "setup ")] : []),
      "steps:",
      formatSteps(again.steps),
      `replay: ${command}`,
      `replay script: ${scriptFile}${reproduced}`,
    ].join("\n"),
  );
}

let currentGenerators: Record<string, number> | undefined;
let currentTransitions: Record<string, number> | undefined;
/** Count a status transition a sequence drove an agent through (the from → to table of the summary). */
export function transition(from: TransitionFrom, to: TransitionTo): void {
  if (currentTransitions) currentTransitions[transitionKey(from, to)] = (currentTransitions[transitionKey(from, to)] ?? 0) + 1;
}
/** Count a case's generator for the report: the run says which generators it covered. */
export function tally(generator: string): void {
  if (currentGenerators) currentGenerators[generator] = (currentGenerators[generator] ?? 0) + 1;
}

/** Platform tokens of a body: the leak check must know every one sent (PROFILE §4). */
export function rememberTokens(body: unknown): void {
  const platforms = (body as { platforms?: Record<string, { token?: unknown } | null> } | null)?.platforms;
  if (typeof platforms !== "object" || platforms === null) return;
  for (const p of Object.values(platforms)) if (typeof p?.token === "string") rememberToken(p.token);
}

export { recording };
export type { Step };

/* ---------------------------------------------------------- shared oracles */

/** Every agent of the account, walking all pages (PROFILE §5 List: limit ≤ 100). */
export async function listAccount(client: ServiceClient): Promise<import("../../src/contract/index.js").Agent[]> {
  const out: import("../../src/contract/index.js").Agent[] = [];
  for (let page = 1; page <= 1000; page++) {
    const res = await client.listAgents({ page, limit: 100, sortBy: "createdAt", order: "asc" });
    if (res.status !== 200 || !res.data || !res.pagination)
      throw new ConformanceFailure(`listing the account answered ${res.status} ${res.error?.code ?? ""}`);
    out.push(...res.data);
    if (!res.pagination.hasMore) return out;
  }
  throw new ConformanceFailure("the account holds more than 100,000 agents: too many to model");
}
