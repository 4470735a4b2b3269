import { escapeHtml, type ReportOptions, type RunResult, redactValue, renderHtml } from "../report/index.js";
import { capacityLines } from "./capacity/tally.js";
import { remainingLine } from "./concurrency-checks.js";
import { FEW_ANSWERS, formatMs as fmt, type HistogramSummary, OUTCOME_LABEL, OUTCOMES, outcomeOf } from "./recorder.js";
import { brokenClauses, type ScenarioReport } from "./scenario-run.js";
import { thresholdMark } from "./thresholds.js";

/** What the charts read of a load run (load.json). */
export interface LoadRunView {
  target: { windowSeconds: number; messageTimeoutSeconds: number };
  scenarios: ScenarioReport[];
  thresholds: Array<{ source: string; passed: boolean; judged: boolean; observed: string }>;
}

const COLORS = ["#2563eb", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#dc2626"];
const STATUS_COLOR = (status: number) =>
  status === 429
    ? "#f59e0b"
    : status >= 500
      ? "#dc2626"
      : status >= 400
        ? "#a855f7"
        : status >= 200 && status < 300
          ? "#16a34a"
          : "#64748b";

const W = 800;
const H = 260;
const PAD = { left: 56, right: 330, top: 16, bottom: 40 };

/** Rounded-up axis maximum: 1, 2, 5 × 10^k. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/** One line of an HDR chart: its colour (the endpoint's, the same in every panel), dashed for refusals. */
interface HdrSeries {
  name: string;
  h: HistogramSummary;
  color?: string;
  dashed?: boolean;
}

/**
 * The HDR percentile plot: x is the percentile on the usual log scale (1 / (1 − p): 90%, 99%,
 * 99.9% …), y the latency in ms; one line per series, its legend with the answers it rests on.
 */
export function hdrChart(title: string, series: HdrSeries[]): string {
  const usable = series.filter((s) => s.h.count > 0 && s.h.distribution.length > 1);
  if (!usable.length) return "";
  const xOf = (p: number) => Math.log10(1 / (1 - Math.min(p, 99.999) / 100));
  const xMax = xOf(99.999);
  const yMax = niceMax(Math.max(...usable.flatMap((s) => s.h.distribution.map((d) => d.ms))));
  const px = (p: number) => PAD.left + (xOf(p) / xMax) * (W - PAD.left - PAD.right);
  const py = (ms: number) => H - PAD.bottom - (ms / yMax) * (H - PAD.top - PAD.bottom);
  const ticksX = [0, 90, 99, 99.9, 99.99]
    .map(
      (p) =>
        `<line x1="${px(p)}" x2="${px(p)}" y1="${PAD.top}" y2="${H - PAD.bottom}" class="grid"/><text x="${px(p)}" y="${H - PAD.bottom + 14}" text-anchor="middle">${p}%</text>`,
    )
    .join("");
  const ticksY = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(f * yMax)}" y2="${py(f * yMax)}" class="grid"/><text x="${PAD.left - 6}" y="${py(f * yMax) + 4}" text-anchor="end">${fmt(f * yMax)}</text>`,
    )
    .join("");
  const lines = usable
    .map((s, i) => {
      const pts = s.h.distribution.map((d) => `${px(d.percentile).toFixed(1)},${py(d.ms).toFixed(1)}`).join(" ");
      const color = s.color ?? COLORS[i % COLORS.length];
      const dash = s.dashed ? ' stroke-dasharray="5 3"' : "";
      return `<polyline class="mark" points="${pts}" fill="none" stroke="${color}" stroke-width="2"${dash}/><line x1="${W - PAD.right + 8}" x2="${W - PAD.right + 22}" y1="${PAD.top + i * 16 + 5}" y2="${PAD.top + i * 16 + 5}" stroke="${color}" stroke-width="3"${dash}/><text x="${W - PAD.right + 26}" y="${PAD.top + i * 16 + 9}">${escapeHtml(s.name)} (p99 ${fmt(s.h.percentiles.p99 ?? 0)}, n ${s.h.count})</text>`;
    })
    .join("");
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">${ticksY}${ticksX}${lines}<text x="${(W - PAD.right + PAD.left) / 2}" y="${H - 6}" text-anchor="middle">percentile</text><text x="12" y="${H / 2}" transform="rotate(-90 12 ${H / 2})" text-anchor="middle">ms</text></svg></figure>`;
}

/** Answers per second, stacked by status: a person sees the limit take hold and release. */
/** Horizontal grid lines at 0, half and the top of the y axis, labelled. */
function gridLines(py: (v: number) => number, yMax: number): string {
  return [0, 0.5, 1]
    .map(
      (f) =>
        `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(f * yMax)}" y2="${py(f * yMax)}" class="grid"/><text x="${PAD.left - 6}" y="${py(f * yMax) + 4}" text-anchor="end">${fmt(f * yMax)}</text>`,
    )
    .join("");
}

function timelineChart(title: string, rows: ScenarioReport["statusPerSecond"]): string {
  if (!rows.length) return "";
  const seconds = Math.max(...rows.map((r) => r.second)) + 1;
  const statuses = [...new Set(rows.flatMap((r) => Object.keys(r.statuses)))].sort();
  const yMax = niceMax(Math.max(...rows.map((r) => Object.values(r.statuses).reduce((a, b) => a + b, 0))));
  const bw = (W - PAD.left - PAD.right) / seconds;
  const py = (v: number) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const bars = rows
    .map((r) => {
      let acc = 0;
      return statuses
        .map((st) => {
          const n = r.statuses[st] ?? 0;
          if (!n) return "";
          const y0 = py(acc);
          acc += n;
          const y1 = py(acc);
          return `<rect class="mark" x="${(PAD.left + r.second * bw + 1).toFixed(1)}" y="${y1.toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${(y0 - y1).toFixed(1)}" fill="${STATUS_COLOR(Number(st))}"><title>second ${r.second}: ${n} × ${st}</title></rect>`;
        })
        .join("");
    })
    .join("");
  const ticksY = gridLines(py, yMax);
  const step = Math.max(1, Math.ceil(seconds / 10));
  const ticksX = Array.from({ length: Math.ceil(seconds / step) }, (_, i) => i * step)
    .map((s) => `<text x="${PAD.left + (s + 0.5) * bw}" y="${H - PAD.bottom + 14}" text-anchor="middle">${s}</text>`)
    .join("");
  const legend = statuses
    .map(
      (st, i) =>
        `<rect x="${W - PAD.right + 10}" y="${PAD.top + i * 16}" width="10" height="10" fill="${STATUS_COLOR(Number(st))}"/><text x="${W - PAD.right + 24}" y="${PAD.top + i * 16 + 9}">${st}</text>`,
    )
    .join("");
  return `<figure><figcaption>${escapeHtml(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">${ticksY}${bars}${ticksX}${legend}<text x="${(W - PAD.right + PAD.left) / 2}" y="${H - 6}" text-anchor="middle">seconds since the scenario started</text><text x="12" y="${H / 2}" transform="rotate(-90 12 ${H / 2})" text-anchor="middle">answers / s</text></svg></figure>`;
}

/** Per endpoint, one row per outcome: the admitted work's figures never mixed with the refusals'. */
/** Below this share of all answers the admitted ones vanish at the foot of the stacked timeline. */
const ADMITTED_HIDDEN_SHARE = 0.05;

/**
 * Where refusals outnumber the admitted answers twenty to one (throughput), the admitted ones on
 * their own scale: the bucket refilling each window, which the stacked timeline flattens.
 */
function admittedTimeline(r: ScenarioReport): string {
  const admitted = r.statusPerSecond.map((row) => ({
    second: row.second,
    statuses: Object.fromEntries(Object.entries(row.statuses).filter(([st]) => outcomeOf(Number(st)) === "2xx")),
  }));
  const count = (rows: ScenarioReport["statusPerSecond"]) =>
    rows.reduce((n, row) => n + Object.values(row.statuses).reduce((a, b) => a + b, 0), 0);
  const [shown, all] = [count(admitted), count(r.statusPerSecond)];
  if (!shown || shown >= all * ADMITTED_HIDDEN_SHARE) return "";
  return timelineChart(
    `${r.id}: admitted (2xx) answers per second, ${shown} of ${all} — the buckets refilling each window`,
    admitted,
  );
}

function latencyTable(r: ScenarioReport): string {
  const rows = Object.entries(r.latency)
    .flatMap(([ep, byOutcome]) => {
      const total = OUTCOMES.reduce((n, o) => n + (byOutcome[o]?.count ?? 0), 0);
      return OUTCOMES.flatMap((o) => {
        const h = byOutcome[o];
        if (!h) return [];
        const share = total ? ` (${((h.count / total) * 100).toFixed(1)}%)` : "";
        const few = h.count < FEW_ANSWERS ? "*" : "";
        return [
          `<tr class="outcome-${o}"><td>${escapeHtml(ep)}</td><td>${OUTCOME_LABEL[o]}</td><td>${h.count}${few}${share}</td><td>${fmt(h.percentiles.p50 ?? 0)}</td><td>${fmt(h.percentiles.p90 ?? 0)}</td><td>${fmt(h.percentiles.p99 ?? 0)}</td><td>${fmt(h.maxMs)}</td></tr>`,
        ];
      });
    })
    .join("");
  const anyFew = Object.values(r.latency).some((byOutcome) =>
    OUTCOMES.some((o) => (byOutcome[o]?.count ?? FEW_ANSWERS) < FEW_ANSWERS),
  );
  const few = anyFew ? `<p class="note">* fewer than ${FEW_ANSWERS} answers: the p99 is about their maximum.</p>` : "";
  return `<table class="latency"><thead><tr><th>endpoint</th><th>outcome</th><th>answers</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>${rows}</tbody></table>${few}`;
}

/**
 * The latency charts of a scenario: one HDR panel per outcome (each on its own scale: the 429s
 * are answered at once), an endpoint in the same colour in every panel, refusals dashed.
 */
function latencyCharts(r: ScenarioReport): string {
  const endpoints = Object.keys(r.latency);
  const colorOf = (ep: string) => COLORS[endpoints.indexOf(ep) % COLORS.length];
  return OUTCOMES.map((o) =>
    hdrChart(
      `${r.id}: latency of ${OUTCOME_LABEL[o]} answers by percentile (HDR)`,
      endpoints.flatMap((ep) => {
        const h = r.latency[ep]?.[o];
        return h ? [{ name: ep, h, color: colorOf(ep), dashed: o !== "2xx" }] : [];
      }),
    ),
  ).join("");
}

export const CHART_STYLE = `
#load .charts{display:flex;flex-wrap:wrap;gap:12px}#load figure{margin:12px 0}#load figcaption{font-weight:600;margin-bottom:4px}
#load svg{background:#fff;border:1px solid #e5e7eb;border-radius:6px;font:11px system-ui,sans-serif}
#load svg .grid{stroke:#e5e7eb}#load .scenario{border-top:1px solid #e5e7eb;padding-top:8px;margin-top:16px}
#load .saturated{color:#b45309}`;

/** The load section: per scenario its verdict, the generator's health, its charts and latency table. */
/**
 * capacity: the admitted p99 of each endpoint per interval (one HDR histogram per interval and
 * endpoint), one line each on one chart; then the worst tenants, the headroom and, for
 * noisy-neighbour, the calm and flooded phases.
 */
function capacityBlock(r: ScenarioReport): string {
  const c = r.capacity;
  if (!c) return "";
  const endpoints = [...new Set(c.intervals.flatMap((i) => Object.keys(i.endpoints)))].sort();
  const last = Math.max(1, ...c.intervals.map((i) => i.second + c.settings.intervalSeconds));
  const yMax = niceMax(Math.max(0, ...c.intervals.flatMap((i) => Object.values(i.endpoints).map((e) => e.p99))));
  const px = (s: number) => PAD.left + (s / last) * (W - PAD.left - PAD.right);
  const py = (v: number) => H - PAD.bottom - (v / yMax) * (H - PAD.top - PAD.bottom);
  const lines = endpoints
    .map((ep, i) => {
      const color = COLORS[i % COLORS.length];
      const pts = c.intervals
        .filter((row) => row.endpoints[ep])
        .map((row) => `${px(row.second + c.settings.intervalSeconds / 2).toFixed(1)},${py(row.endpoints[ep]!.p99).toFixed(1)}`)
        .join(" ");
      return `<polyline class="mark" points="${pts}" fill="none" stroke="${color}" stroke-width="2"/><line x1="${W - PAD.right + 8}" x2="${W - PAD.right + 22}" y1="${PAD.top + i * 16 + 5}" y2="${PAD.top + i * 16 + 5}" stroke="${color}" stroke-width="3"/><text x="${W - PAD.right + 26}" y="${PAD.top + i * 16 + 9}">${escapeHtml(ep)}</text>`;
    })
    .join("");
  const ticksY = gridLines(py, yMax);
  const title = `${r.id}: admitted p99 per endpoint, every ${c.settings.intervalSeconds} s`;
  const chart = `<figure><figcaption>${escapeHtml(title)}</figcaption><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">${ticksY}${lines}<text x="${(W - PAD.right + PAD.left) / 2}" y="${H - 6}" text-anchor="middle">seconds since the drive started</text><text x="12" y="${H / 2}" transform="rotate(-90 12 ${H / 2})" text-anchor="middle">p99 ms</text></svg></figure>`;
  return `<div class="charts">${chart}</div><ul>${capacityLines(c)
    .map((line) => `<li>${escapeHtml(line)}</li>`)
    .join("")}</ul>`;
}

export function loadSection(run: LoadRunView): string {
  // the scenarios that say so first (the profile, the streams): the charts a person looks at; the sort is stable
  const ordered = [...run.scenarios].sort((a, b) => Number(!a.chartsFirst) - Number(!b.chartsFirst));
  const parts = ordered.map((r) => {
    const broken = brokenClauses(r);
    const charts = [
      timelineChart(`${r.id}: statuses per second`, r.statusPerSecond),
      admittedTimeline(r),
      latencyCharts(r),
      r.streams
        ? hdrChart(`${r.id}: stream timings by percentile (TTFB, first delta, gaps between deltas, total)`, [
            { name: "TTFB", h: r.streams.ttfb },
            { name: "first delta", h: r.streams.firstDelta },
            { name: "inter-event gap", h: r.streams.gap },
            { name: "total", h: r.streams.total },
          ])
        : "",
    ].join("");
    const streams = r.streams
      ? `<p>Streams ended: ${r.streams.ended.done} done, ${r.streams.ended.error} error, ${r.streams.ended.neither} neither.</p>`
      : "";
    return `<div class="scenario" id="load-${escapeHtml(r.id)}"><h3>${escapeHtml(r.id)} — <span class="verdict ${r.status}">${r.status}</span></h3>
<p>${escapeHtml(r.title)}</p>
<p class="note">${r.conformance.responses} answers in ${(r.durationMs / 1000).toFixed(1)} s (${r.rps}/s); response-level checks on ${escapeHtml(r.conformance.sampling)} (${(r.conformance.share * 100).toFixed(1)}%).</p>
<p class="${r.generator.saturated ? "saturated" : "note"}">Generator: ${escapeHtml(r.generator.note)}.</p>
${r.remaining ? `<p class="note">${escapeHtml(remainingLine(r.remaining))}.</p>` : ""}
${r.message ? `<p class="note">${escapeHtml(r.message)}</p>` : ""}
${Object.keys(r.latency).length ? `<p class="note">Latency, per endpoint and outcome: ${escapeHtml(r.latencyNote)}${r.latencyJudged ? "" : " (latency thresholds do not judge these figures)"}.</p>` : ""}
${broken.length ? `<ul>${broken.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>` : ""}
${streams}<div class="charts">${charts}</div>${capacityBlock(r)}${Object.keys(r.latency).length ? latencyTable(r) : ""}</div>`;
  });
  const thresholds = run.thresholds.length
    ? `<ul>${run.thresholds.map((t) => `<li>${thresholdMark(t)} ${escapeHtml(t.source)}: ${escapeHtml(t.observed)}</li>`).join("")}</ul>`
    : "";
  return `<section id="load"><style>${CHART_STYLE}</style>
<h2>Load (W = ${run.target.windowSeconds} s, budget ${run.target.messageTimeoutSeconds} s)</h2>
${thresholds}${parts.join("\n")}
</section>`;
}

/** The verify-style report with the load section before the check tables. */
export function renderLoadHtml(result: RunResult, run: LoadRunView, options: ReportOptions = {}): string {
  // the run's command names the report: a load run is not a verify run
  const html = renderHtml(result, options)
    .replace("· agent-harness verify ·", "· agent-harness load ·")
    .replace("<h1>agent-harness verify ", "<h1>agent-harness load ");
  const at = html.indexOf('<section id="checks">');
  // the load section's text (scenario messages, failure samples) is scrubbed as the run's is
  const section = loadSection(redactValue(run, options.secrets ?? []));
  return at === -1 ? html.replace("</main>", `${section}</main>`) : `${html.slice(0, at)}${section}\n${html.slice(at)}`;
}
