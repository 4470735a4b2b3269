import * as hdr from "hdr-histogram-js";
import { formatMs, newHistogram } from "../histogram.js";
import { FLOOD_SHAPES, FLOOD_SHORT, type FloodOutcome, floodLine, floodShortBecause, generatorSaturated } from "./floods.js";
import type { Shard } from "./plan.js";

/** A histogram in µs as a shard writes it: HDR's compressed encoding, merged exactly by adding. */
export const encodeHistogram = (h: hdr.Histogram): string => hdr.encodeIntoCompressedBase64(h);

export function decodeHistogram(encoded: string): hdr.Histogram {
  const h = newHistogram();
  h.add(hdr.decodeFromCompressedBase64(encoded));
  return h;
}

const ms = (us: number) => Math.round(us) / 1000;
/** a percentile in ms, within what was recorded (HDR answers a bucket's highest equivalent value) */
const percentileMs = (h: hdr.Histogram, p: number) =>
  h.totalCount ? ms(Math.min(h.maxValue, Math.max(h.minNonZeroValue, h.getValueAtPercentile(p)))) : 0;

/** One tenant's (account's) admitted latency and its outcomes. */
export interface TenantTally {
  latency: hdr.Histogram;
  admitted: number;
  refused: number;
  unexpected: number;
  errors: number;
}

/** The phases noisy-neighbour compares, for every tenant but the flooding one: calm, then one per flood shape. */
const PHASES = ["calm", ...FLOOD_SHAPES] as const;
export type Phase = (typeof PHASES)[number];

/**
 * What the capacity drive counts besides the recorder's figures, in a form shards can add up:
 * histograms (µs) per interval and endpoint, per tenant, per noisy-neighbour phase, the
 * generator's lateness; counters. Two tallies merge exactly (HDR histograms add).
 */
export class CapacityTally {
  /** interval index → endpoint label → admitted latency */
  readonly intervals = new Map<number, Map<string, hdr.Histogram>>();
  readonly tenants = new Map<string, TenantTally>();
  /** per phase, the other tenants': admitted latency, refusals (unexpected ones apart), errors; their sends, and those sent over HEADROOM_LAG_MS late */
  readonly phases = new Map<
    Phase,
    {
      latency: hdr.Histogram;
      refused: number;
      unexpected: number;
      errors: number;
      sent: number;
      late: number;
      /** the latest send after its due time */
      lagMaxMs: number;
    }
  >();
  /** what each flood achieved (in the one shard that holds the flooding tenant) */
  readonly floods: FloodOutcome[] = [];
  /** how late the generator sent each request after it was due */
  readonly sendLag = newHistogram();
  readonly counts = { sent: 0, admitted: 0, refused: 0, unexpected: 0, errors: 0, skipped: 0 };

  tenant(account: string): TenantTally {
    let t = this.tenants.get(account);
    if (!t) {
      t = { latency: newHistogram(), admitted: 0, refused: 0, unexpected: 0, errors: 0 };
      this.tenants.set(account, t);
    }
    return t;
  }

  phase(phase: Phase) {
    let p = this.phases.get(phase);
    if (!p) {
      p = { latency: newHistogram(), refused: 0, unexpected: 0, errors: 0, sent: 0, late: 0, lagMaxMs: 0 };
      this.phases.set(phase, p);
    }
    return p;
  }

  interval(index: number, endpoint: string): hdr.Histogram {
    let row = this.intervals.get(index);
    if (!row) {
      row = new Map();
      this.intervals.set(index, row);
    }
    let h = row.get(endpoint);
    if (!h) {
      h = newHistogram();
      row.set(endpoint, h);
    }
    return h;
  }

  toJSON(): EncodedTally {
    return {
      intervals: [...this.intervals].map(([index, row]) => ({
        index,
        endpoints: Object.fromEntries([...row].map(([e, h]) => [e, encodeHistogram(h)])),
      })),
      tenants: Object.fromEntries(
        [...this.tenants].map(([account, t]) => [account, { ...t, latency: encodeHistogram(t.latency) }]),
      ),
      phases: Object.fromEntries([...this.phases].map(([p, v]) => [p, { ...v, latency: encodeHistogram(v.latency) }])),
      sendLag: encodeHistogram(this.sendLag),
      counts: { ...this.counts },
      floods: [...this.floods],
    };
  }

  /** Add another tally (a shard's, decoded) into this one. */
  add(other: EncodedTally): void {
    for (const { index, endpoints } of other.intervals)
      for (const [e, h] of Object.entries(endpoints)) this.interval(index, e).add(decodeHistogram(h));
    for (const [account, t] of Object.entries(other.tenants)) {
      const mine = this.tenant(account);
      mine.latency.add(decodeHistogram(t.latency));
      mine.admitted += t.admitted;
      mine.refused += t.refused;
      mine.unexpected += t.unexpected;
      mine.errors += t.errors;
    }
    for (const [p, v] of Object.entries(other.phases)) {
      const phase = PHASES.find((name) => name === p);
      if (!phase) continue;
      const mine = this.phase(phase);
      mine.latency.add(decodeHistogram(v.latency));
      mine.unexpected += v.unexpected;
      mine.errors += v.errors ?? 0;
      mine.refused += v.refused ?? 0;
      mine.sent += v.sent ?? 0;
      mine.late += v.late ?? 0;
      mine.lagMaxMs = Math.max(mine.lagMaxMs, v.lagMaxMs ?? 0);
    }
    this.floods.push(...(other.floods ?? []));
    this.sendLag.add(decodeHistogram(other.sendLag));
    for (const k of Object.keys(this.counts) as Array<keyof CapacityTally["counts"]>) this.counts[k] += other.counts[k];
  }
}

export interface EncodedTally {
  intervals: Array<{ index: number; endpoints: Record<string, string> }>;
  tenants: Record<string, Omit<TenantTally, "latency"> & { latency: string }>;
  phases: Record<
    string,
    {
      latency: string;
      unexpected: number;
      errors?: number;
      refused?: number;
      sent?: number;
      late?: number;
      lagMaxMs?: number;
    }
  >;
  sendLag: string;
  counts: CapacityTally["counts"];
  floods?: FloodOutcome[];
}

/** The drive's settings as its figures repeat them. */
export interface CapacitySettings {
  profile: string;
  share: number;
  durationSeconds: number;
  rampSeconds: number;
  intervalSeconds: number;
  tenants: number;
  keys: number;
  /** the steady arrival rate planned, requests per second over every tenant */
  offeredPerSecond: number;
  /** noisy-neighbour: the flooding account */
  flooder?: string;
  /** the shard this process drove (`--shard i/n`) */
  shard?: Shard;
  /** a merge of this many shards */
  shards?: number;
  /**
   * where the service ran against the generator: its event loop, and the cores they share (the
   * generator's cores, and `ownCores` the service had to itself, when it had some)
   */
  service?: { where: "this process" | "a process of its own" | "elsewhere"; cores: number; ownCores?: number };
}

/** A tenant's row in the report. */
interface TenantFigure {
  account: string;
  p99Ms: number;
  admitted: number;
  refused: number;
  unexpected: number;
}

/** The other tenants' figures in one phase of noisy-neighbour. */
export interface PhaseFigures {
  p99Ms: number;
  /** the median: where contention for shared cores moves the tail, a slower service moves this too */
  p50Ms: number;
  /** admitted answers */
  count: number;
  /** their requests sent, and the share of them the generator sent over HEADROOM_LAG_MS late */
  sent: number;
  lateShare: number;
  /** the latest of their sends after its due time: latency counts from due, so this much of any one latency may be the generator's */
  lagMaxMs: number;
  refused: number;
  unexpected: number;
  errors: number;
  /** errors (5xx and transport) of what they sent */
  errorRate: number;
}

/** One flood shape against the calm phase: what the flood achieved, and how the others fared meanwhile. */
export interface FloodFigures extends PhaseFigures {
  flood: FloodOutcome;
  /** refusals a second server-wide while it ran: the flood's and the others' */
  refusedPerSecond: number;
  /**
   * a verdict was given: the others were harmed by more than the generator's lateness explains (a
   * failure, whatever the flood reached), or the flood reached its intended rate, slots or sockets
   * (floodShortBecause) with the generator on time in both phases (a pass, or a failure): else none
   */
  reached: boolean;
  /** why not, when not: the generator's headroom */
  unreachedBecause?: string;
  /** the others' p99 while it ran may be at most this */
  allowedP99Ms: number;
  /** their median is judged in the p99's stead (a service on cores of its own on the generator's machine), and may be at most this */
  allowedP50Ms?: number;
  passed: boolean;
}

/** The noisy-neighbour comparison: every other tenant's figures, calm and during each flood shape. */
export interface NeighbourFigures {
  flooder: string;
  calm: PhaseFigures;
  floods: FloodFigures[];
}

/** What load.json holds of a capacity run, besides every scenario's figures. */
export interface CapacityFigures {
  settings: CapacitySettings;
  counts: CapacityTally["counts"];
  /** 5xx and transport errors among the answers */
  errorRate: number;
  /** admitted latency per interval and endpoint (p50 / p99 ms, answers) */
  intervals: Array<{ second: number; endpoints: Record<string, { count: number; p50: number; p99: number }> }>;
  /** the tenants with the highest admitted p99, then those refused most */
  worstTenants: TenantFigure[];
  mostRefused: TenantFigure[];
  /** the generator's lateness: when it sent after the requests were due, its figures say so */
  headroom: { sendLagP50Ms: number; sendLagP99Ms: number; sendLagMaxMs: number; bound: boolean; note: string };
  neighbours?: NeighbourFigures;
}

/** Worst tenants shown in the report. */
const WORST = 5;
/** Past this lateness (p99) of the generator's sends, the figures are bounded by the generator. */
export const HEADROOM_LAG_MS = 50;
/**
 * The processes of the run itself on a machine it shares with the service (the generator and the
 * service): a 1-minute load average above the cores plus these is others' work taking the service's cores.
 */
const OWN_PROCESSES = 2;
/**
 * A service on cores of its own: past this share of them taken by other work while a flood ran,
 * its latency says nothing of it (docs/load.md gives what a quiet machine measured).
 */
const OTHER_WORK_SHARE = 0.1;
/**
 * noisy-neighbour, each flood shape against the calm phase (docs/load.md gives the reasons):
 * the others' p99 at most ×2 + 20 ms; their error rate at most 0.1 point above calm; no more
 * unexpected 429s than calm; and the generator late (over HEADROOM_LAG_MS) on at most 1% of
 * their sends, else no verdict.
 */
export const NEIGHBOUR_TOLERANCE = { factor: 2, plusMs: 20, errorRate: 0.001, lateShare: 0.01 } as const;

/** The figures of a tally (one process's or a merge of shards'). */
export function capacityFigures(tally: CapacityTally, settings: CapacitySettings): CapacityFigures {
  const rows: TenantFigure[] = [...tally.tenants]
    .filter(([account]) => account !== settings.flooder)
    .map(([account, t]) => ({
      account,
      p99Ms: percentileMs(t.latency, 99),
      admitted: t.admitted,
      refused: t.refused,
      unexpected: t.unexpected,
    }));
  const lag = tally.sendLag;
  const lagP99 = percentileMs(lag, 99);
  const bound = lagP99 > HEADROOM_LAG_MS;
  const answered = tally.counts.admitted + tally.counts.refused + tally.counts.errors;
  const figures: CapacityFigures = {
    settings,
    counts: { ...tally.counts },
    errorRate: answered ? tally.counts.errors / answered : 0,
    intervals: [...tally.intervals]
      .sort(([a], [b]) => a - b)
      .map(([index, row]) => ({
        second: index * settings.intervalSeconds,
        endpoints: Object.fromEntries(
          [...row].map(([e, h]) => [e, { count: h.totalCount, p50: percentileMs(h, 50), p99: percentileMs(h, 99) }]),
        ),
      })),
    worstTenants: [...rows].sort((a, b) => b.p99Ms - a.p99Ms).slice(0, WORST),
    mostRefused: [...rows]
      .filter((r) => r.refused > 0)
      .sort((a, b) => b.refused - a.refused)
      .slice(0, WORST),
    headroom: {
      sendLagP50Ms: percentileMs(lag, 50),
      sendLagP99Ms: lagP99,
      sendLagMaxMs: lag.totalCount ? ms(lag.maxValue) : 0,
      bound,
      note: (bound
        ? `the generator sent late (p99 ${formatMs(lagP99)} ms after due, over ${HEADROOM_LAG_MS} ms): the figures are bounded by the generator — fewer keys per process (--shard)`
        : `the generator kept its schedule (sends p99 ${formatMs(lagP99)} ms after due)`
      ).concat(settings.service ? `; ${serviceLine(settings.service)}` : ""),
    },
  };
  if (settings.flooder) {
    const calm = phaseFigures(tally, "calm");
    const allowedP99Ms = allowance(calm.p99Ms);
    figures.neighbours = {
      flooder: settings.flooder,
      calm,
      floods: tally.floods.map((flood) => floodFigures(flood, phaseFigures(tally, flood.shape), calm, allowedP99Ms, settings)),
    };
  }
  return figures;
}

/** The other tenants' figures in one phase of noisy-neighbour (calm, or while a flood shape ran). */
function phaseFigures(tally: CapacityTally, p: Phase): PhaseFigures {
  const v = tally.phases.get(p);
  const sent = v?.sent ?? 0;
  return {
    p99Ms: v ? percentileMs(v.latency, 99) : 0,
    p50Ms: v ? percentileMs(v.latency, 50) : 0,
    count: v?.latency.totalCount ?? 0,
    sent,
    lateShare: sent ? Math.round(((v?.late ?? 0) / sent) * 1000) / 1000 : 0,
    lagMaxMs: Math.round(v?.lagMaxMs ?? 0),
    refused: v?.refused ?? 0,
    unexpected: v?.unexpected ?? 0,
    errors: v?.errors ?? 0,
    errorRate: sent ? Math.round(((v?.errors ?? 0) / sent) * 10_000) / 10_000 : 0,
  };
}

type Flood = CapacityTally["floods"][number];

/**
 * How the others' latency under this flood is judged: `tail` says why their p99 proves nothing, if
 * it does not; `median` says their median is judged in its stead.
 *
 * A service on this machine is slow for want of cores when others keep it busy, or when a storm's
 * generator or the connection hog takes them (measured: a clean reference's others 56 -> 436 ms
 * under 900 a second on two cores). On cores of its own it still shares the machine with the
 * generator (its memory, its network stack): under a storm a clean reference's others then had
 * p99s from 8 to 90 ms against an allowance of about 45, their median within 2 ms of calm; a
 * service that slows everyone under a storm moves the median (300 ms). So the bulk is judged there,
 * and a tail over its allowance is no verdict.
 */
function latencyJudged(flood: Flood, settings: CapacitySettings): { tail?: string; median?: true } {
  const s = settings.service;
  if (!s || s.where === "elsewhere") return {};
  const says = "the others' p99 over its allowance says nothing of the service";
  if (s.ownCores) {
    // the generator on other cores: what the service's own cores did besides serving decides
    const other = flood.otherOnServiceCores;
    if (other === undefined)
      return { tail: `what else ran on the service's ${coreCount(s.ownCores)} while it flooded was not measured: ${says}` };
    if (other > OTHER_WORK_SHARE)
      return {
        tail: `other work took ${Math.round(other * 100)}% of the service's ${coreCount(s.ownCores)} while it flooded: ${says}`,
      };
    if (flood.unit === "slots") return {};
    return {
      tail: `the ${flood.unit === "req/s" ? "storm's generator" : "connection hog's sockets"} shared this machine with the service (on cores of their own): ${says}; their median, judged in its stead, was within its allowance`,
      median: true,
    };
  }
  // another job's spike shows here before the load average, which trails it by a minute
  if ((flood.otherOnMachine ?? 0) > OTHER_WORK_SHARE)
    return {
      tail: `work of neither the generator nor the service took ${Math.round((flood.otherOnMachine ?? 0) * 100)}% of this machine's ${coreCount(s.cores)} while it flooded: ${says}`,
    };
  if ((flood.loadAverage ?? 0) > s.cores + OWN_PROCESSES)
    return {
      tail: `the machine was busy (load average ${flood.loadAverage} on ${coreCount(s.cores)}, the generator and the service included): ${says}`,
    };
  // the connection hog opens hundreds of sockets at once: on two shared cores that alone took a
  // clean reference's others from 25.9 to 344 ms (CI, 2026-11-28); its verdict is the fresh clients served
  if (flood.unit === "req/s" || flood.unit === "sockets")
    return {
      tail: `the ${flood.unit === "req/s" ? "storm's generator" : "connection hog's sockets"} shared the service's ${coreCount(s.cores)}: ${says} (a generator on a machine of its own, --base-url, judges it; or a deployment pinned to cores of its own here, named by --service-cores)`,
    };
  return {};
}

/** "1 core", "2 cores": how a report counts CPUs. */
const coreCount = (n: number) => `${n} core${n === 1 ? "" : "s"}`;

/** What the others' latency (a percentile) may be under a flood, from the calm phase's. */
const allowance = (calmMs: number) => calmMs * NEIGHBOUR_TOLERANCE.factor + NEIGHBOUR_TOLERANCE.plusMs;

/** One flood shape against the calm phase: its figures, whether it reached its intent (or why not), and its verdict. */
function floodFigures(flood: Flood, during: PhaseFigures, calm: PhaseFigures, allowedP99Ms: number, settings: CapacitySettings) {
  const served = (flood.probes?.failed ?? 0) === 0;
  const judged = latencyJudged(flood, settings);
  const allowedP50Ms = allowance(calm.p50Ms);
  // a harm larger than the generator's latest send could add is the service's, whatever the flood reached;
  // a generator whose loop never idled adds more than its sends' lateness shows: no latency is judged
  const timed = !generatorSaturated(flood);
  const harm = (slack: number) =>
    (timed && !judged.tail && during.p99Ms - slack > allowedP99Ms) ||
    (timed && judged.median === true && during.p50Ms - slack > allowedP50Ms) ||
    during.unexpected > calm.unexpected ||
    during.errorRate > calm.errorRate + NEIGHBOUR_TOLERANCE.errorRate ||
    !served;
  const lateIn = (p: PhaseFigures, name: string) =>
    p.lateShare > NEIGHBOUR_TOLERANCE.lateShare
      ? `the generator sent ${Math.round(p.lateShare * 100)}% of the others' requests ${name} over ${HEADROOM_LAG_MS} ms late`
      : undefined;
  const overByLag = (figure: "median" | "p99") =>
    `the others' ${figure} is over its allowance by no more than the generator's latest send (${formatMs(during.lagMaxMs)} ms)`;
  // no harm beyond what the generator's lateness explains: each figure over its allowance is no
  // verdict, the median first (the tail's reason says the median was within its own)
  const because = harm(during.lagMaxMs)
    ? undefined
    : (floodShortBecause(flood) ??
      lateIn(calm, "in the calm phase") ??
      lateIn(during, "meanwhile") ??
      (judged.median && during.p50Ms > allowedP50Ms ? overByLag("median") : undefined) ??
      (during.p99Ms > allowedP99Ms ? (judged.tail ?? overByLag("p99")) : undefined));
  return {
    ...during,
    flood,
    refusedPerSecond: Math.round(flood.refusedPerSecond + during.refused / Math.max(0.1, flood.spanSeconds ?? flood.seconds)),
    reached: because === undefined,
    ...(because ? { unreachedBecause: because } : {}),
    allowedP99Ms,
    ...(judged.median ? { allowedP50Ms } : {}),
    passed: !harm(0) && during.p99Ms <= allowedP99Ms,
  };
}

/**
 * noisy-neighbour's verdicts on the figures (one process's or a merge's), one per flood shape that
 * reached its intent: the other tenants' admitted p99, unexpected 429s and errors while it ran,
 * against their calm phase (and the connection hog's fresh clients, every one served).
 */
export function neighboursVerdicts(n: NeighbourFigures) {
  return n.floods
    .filter((f) => f.reached)
    .map(
      (f) =>
        ({
          ok: f.passed,
          clause: "limits.tier",
          check: `noisy-neighbour ${f.flood.shape}`,
          expected: `while ${n.flooder} floods (${f.flood.shape}), the other tenants' admitted ${f.allowedP50Ms === undefined ? "p99" : "median (the p99 where the service had a machine of its own)"} stays within ×${NEIGHBOUR_TOLERANCE.factor} + ${NEIGHBOUR_TOLERANCE.plusMs} ms of the calm phase, no more of their requests are refused unexpectedly or fail, and a new client is served`,
          received: `${floodLine(f.flood)}; the others' p99 ${formatMs(n.calm.p99Ms)} ms calm → ${formatMs(f.p99Ms)} ms (at most ${formatMs(f.allowedP99Ms)})${f.allowedP50Ms === undefined ? "" : `, median ${formatMs(n.calm.p50Ms)} → ${formatMs(f.p50Ms)} ms (at most ${formatMs(f.allowedP50Ms)})`}; unexpected 429s ${n.calm.unexpected} → ${f.unexpected}; errors ${n.calm.errors} → ${f.errors}${f.flood.probes?.firstFailure ? `; a new client got ${f.flood.probes.firstFailure}` : ""}`,
        }) as const,
    );
}

/** Where the service ran against the generator: the headroom's other half. */
function serviceLine(s: NonNullable<CapacitySettings["service"]>): string {
  return s.where === "elsewhere"
    ? `the service ran elsewhere; the generator had ${coreCount(s.cores)} of its own`
    : s.ownCores
      ? `the service ran in ${s.where} on ${coreCount(s.ownCores)} of its own; the generator had the other ${s.cores}`
      : `the service ran in ${s.where} on the generator's machine: they shared its ${coreCount(s.cores)}${s.where === "this process" ? " and one event loop" : ""}`;
}

/** The floods that did not reach what they set out to do: no verdict on them (the generator's headroom). */
export function unreachedFloods(n: NeighbourFigures): string[] {
  return n.floods.filter((f) => !f.reached).map((f) => `${floodLine(f.flood)}: ${f.unreachedBecause}`);
}

/**
 * Why a run with floods that fell short is inconclusive rather than passed (its findings stand),
 * one process's or a merge's alike; undefined when every flood reached its intent.
 */
export function floodsShortBecause(n: NeighbourFigures): string | undefined {
  const short = unreachedFloods(n);
  return short.length
    ? `${FLOOD_SHORT} (${short.join("; ")}): the generator's headroom, not the service — fewer tenants per process (--shard) or a lower --flood-rate / --flood-sockets`
    : undefined;
}

const percent = (share: number) => `${(share * 100).toFixed(2)}%`;

/** One flood shape in the report: achieved vs intended, refusals server-wide, the others calm → flooded. */
export function floodFigureLine(f: FloodFigures, calm: PhaseFigures): string {
  const verdict = f.reached ? (f.passed ? "passed" : "FAILED") : `no verdict: ${f.unreachedBecause}`;
  const served = f.flood.probes
    ? `; new clients served ${f.flood.probes.tried - f.flood.probes.failed} of ${f.flood.probes.tried}`
    : "";
  return `${f.flood.shape} (${verdict}): ${f.flood.achieved.toLocaleString("en")} of ${f.flood.intended.toLocaleString("en")} ${f.flood.unit} over ${f.flood.seconds} s${f.flood.heldBack ? ` (held back by the service: ${f.flood.heldBack})` : ""}; ${f.refusedPerSecond.toLocaleString("en")} refused a second server-wide; the others' p99 ${formatMs(calm.p99Ms)} → ${formatMs(f.p99Ms)} ms (at most ${formatMs(f.allowedP99Ms)}), median ${formatMs(calm.p50Ms)} → ${formatMs(f.p50Ms)} ms${f.allowedP50Ms === undefined ? "" : ` (at most ${formatMs(f.allowedP50Ms)})`}, errors ${percent(calm.errorRate)} → ${percent(f.errorRate)}, unexpected 429s ${calm.unexpected} → ${f.unexpected}${served}`;
}

/** The CLI's lines of a capacity run under its verdict. */
export function capacityLines(c: CapacityFigures): string[] {
  const s = c.settings;
  const tenant = (t: TenantFigure) =>
    `${t.account} p99 ${formatMs(t.p99Ms)} ms, ${t.admitted} admitted, ${t.refused} refused (${t.unexpected} unexpected)`;
  const n = c.neighbours;
  return [
    `${s.tenants} tenants, ${s.keys} keys at ${s.share * 100}% of their buckets (${s.offeredPerSecond} req/s planned${s.shards ? ` over ${s.shards} shards` : ""}), ${s.durationSeconds} s with ${s.rampSeconds} s ramp-up (${s.profile})`,
    `${c.counts.sent} sent: ${c.counts.admitted} admitted, ${c.counts.refused} refused (${c.counts.unexpected} unexpected), ${c.counts.errors} errors (${(c.errorRate * 100).toFixed(2)}%)`,
    ...(c.worstTenants.length ? [`worst p99: ${c.worstTenants.slice(0, 3).map(tenant).join("; ")}`] : []),
    ...(c.mostRefused.length ? [`most refused: ${c.mostRefused.slice(0, 3).map(tenant).join("; ")}`] : []),
    ...(n
      ? [
          `noisy-neighbour (${n.flooder} floods, one shape after another): the others calm: p99 ${formatMs(n.calm.p99Ms)} ms, errors ${percent(n.calm.errorRate)}, unexpected 429s ${n.calm.unexpected}`,
          ...n.floods.map((f) => `  ${floodFigureLine(f, n.calm)}`),
        ]
      : []),
    `headroom: ${c.headroom.note}`,
  ];
}
