import { proxyVariableFor } from "../client/network.js";
import type { ClauseId } from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { flagOf, needsKey } from "../target/key-roles.js";
import { loadTierOf, type ScenarioContext } from "./context.js";
import type { LoadOptions } from "./options.js";
import { BURST_PIPELINING } from "./requests.js";

export type { LoadOptions };

/** One load scenario: what it verifies, when it can run, how long it takes, and the run itself. */
export interface Scenario {
  id: string;
  title: string;
  clauses: ClauseId[];
  /**
   * A quick scenario (seconds on short windows) also runs in verify's default run on targets the
   * harness starts, from `suites/load/quick-<group>.test.ts`: one file per group, so groups run in
   * parallel workers, each with accounts of its own.
   */
  quickGroup?: number;
  /**
   * What its latency figures measure besides the target's work, said next to them in every
   * report; `judged`: latency thresholds may judge them (false where they hold intended waits).
   */
  latency: {
    note: string;
    judged: boolean;
    /** the run's latency profile: when it ran, latency thresholds judge its figures alone (the others hold bursts and waits) */
    profile?: true;
  };
  /** its charts lead the load report (a profile, the streams): what a person looks at first */
  chartsFirst?: true;
  /**
   * Drives the tenants of `agent-harness load --keys-file` (open model, for minutes): only
   * `agent-harness load` runs it, never verify's load suites.
   */
  tenants?: true;
  /**
   * Sends with autocannon (pipelined bursts on connections of its own): raw sockets, which no
   * HTTP proxy carries, so it is skipped when HTTP_PROXY or HTTPS_PROXY applies to the target.
   */
  rawSockets?: true;
  /** why it cannot run against this target, or undefined */
  unavailable?(target: HarnessTarget, options?: LoadOptions): string | undefined;
  estimateSeconds(target: HarnessTarget, options?: LoadOptions): number;
  run(ctx: ScenarioContext): Promise<void>;
}

/** One scenario, its metadata beside its body; listed once in src/load/scenarios.ts. */
export function defineScenario(scenario: Scenario): Scenario {
  return scenario;
}

/** A measurement the target's window turned in the middle of is taken again, this many times at most. */
export const MAX_ATTEMPTS = 3;

/** A burst's answers: pipelined, so each one's latency includes its turn behind the others on its connection. */
export const BURST_LATENCY = `pipelined bursts (${BURST_PIPELINING} requests a connection): an answer's latency includes its wait behind the others on its connection; the 429s are the burst's intended refusals`;

/** Why a scenario on raw sockets cannot reach `target`, or undefined when no proxy variable applies to it. */
export function behindHttpProxy(target: HarnessTarget): string | undefined {
  const variable = proxyVariableFor(target.baseUrl);
  return variable
    ? `its pipelined bursts open raw connections, which cannot go through the proxy in $${variable}: run it where the target is reachable directly (or add the host to $NO_PROXY)`
    : undefined;
}

export const needsReference = (target: HarnessTarget) =>
  target.referenceFaults ? undefined : "needs --reference-faults (a target with the PROFILE §10 mock models)";

/**
 * A burst of 2.5× an endpoint bucket must meet that bucket, not the account tier: the load
 * account (--load-key) with a tier of at least 3× the bucket, or the main key with a --tier
 * that large. A reference target the harness starts has such an account.
 */
export function needsRoomFor(bucket: number) {
  return (target: HarnessTarget): string | undefined => {
    const room = bucket * 3;
    const tier = loadTierOf(target);
    if (tier !== undefined)
      return tier >= room ? undefined : `needs a tier of at least ${room}: give ${flagOf("load")} with --load-tier`;
    // a deployment's unknown tier could mask the bucket and read as a finding
    return target.keys.load || target.kind !== "external"
      ? undefined
      : `${needsKey("load")} (an account with a tier of at least ${room}, e.g. enterprise) or --tier ≥ ${room} for the main key`;
  };
}

export const distinct = <T>(xs: readonly T[]) => [...new Set(xs)];

/** `{"200":10,"429":15}`: how often each value came, for a finding's "received". */
export const countEach = (xs: readonly (string | number)[]) => {
  const out: Record<string, number> = {};
  for (const x of xs) out[String(x)] = (out[String(x)] ?? 0) + 1;
  return JSON.stringify(out);
};
