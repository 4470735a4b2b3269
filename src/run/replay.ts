import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NETWORK_ENV, networkSettings } from "../client/network.js";
import type { Evidence, Finding, RunResult } from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { KEY_VARIABLES, keyVariable } from "../target/key-roles.js";
import { BIN_PATH } from "./package-root.js";

/**
 * A finding's replay is the minimal sequence that shows it (the create, then the failing
 * call) as a shell script in the report folder. It sends the requests with curl and asks
 * `agent-harness judge` for the verdict of the same response-level check, so it exits 1 while the
 * defect is there, 0 once it is gone, and 2 when it cannot tell (the target did not answer).
 */

/** A double-quoted shell word in which `$AGENT_API_BASE_URL` and `$id` are expanded, nothing else. */
function doubleQuoted(text: string): string {
  return `"${text.replace(/[\\"`$]/g, (c) => `\\${c}`)}"`;
}

/** The recorded curl line, aimed at `$AGENT_API_BASE_URL` and at the agent `$id` the script created. */
function retarget(curl: string, baseUrl: string, agentId?: string): string {
  let line = curl
    .replace(/ {2}# .*$/, "")
    .split(`'${baseUrl}`)
    .join(`"$AGENT_API_BASE_URL"'`);
  if (agentId) line = line.split(agentId).join(`'"$id"'`);
  return line;
}

function urlWord(url: string, baseUrl: string, agentId?: string): string {
  let word = doubleQuoted(url).replace(doubleQuoted(baseUrl).slice(1, -1), "$AGENT_API_BASE_URL");
  if (agentId) word = word.split(agentId).join("$id");
  return word;
}

function judgeLine(finding: Finding, evidence: Evidence, target: HarnessTarget, agentId?: string): string {
  // the request's headers as recorded (the credential is ***): the checks read only their names and shapes
  const headers = Object.entries(evidence.request.headers).map(
    ([name, value]) => `--header ${doubleQuoted(`${name}: ${value}`)}`,
  );
  return [
    'node "$HARNESS" judge',
    `--check ${finding.check}`,
    `--clause ${finding.clauseIds[0]}`,
    `--expected ${doubleQuoted(finding.message.replace(/^.*?: expected /, "").replace(/; received .*$/, ""))}`,
    `--method ${evidence.request.method}`,
    `--url ${urlWord(evidence.request.url, target.baseUrl, agentId)}`,
    `--window ${target.windowSeconds}`,
    `--id-field ${target.idField}`,
    '--sent-at "$sent"',
    ...headers,
    '< "$out"',
  ].join(" \\\n  ");
}

/** The script of one response-level finding. */
function findingReplayScript(finding: Finding, target: HarnessTarget): string | undefined {
  const evidence = finding.evidence[0];
  if (finding.kind !== "response" || !evidence) return undefined;
  const agentId = finding.setup?.agentId;
  // the key variables its curl lines read (src/client/recorder.ts writes `$VARIABLE` where a key stood)
  const curls = `${finding.setup?.evidence.curl ?? ""}\n${evidence.curl}`;
  const vars = KEY_VARIABLES.filter((v) => new RegExp(`\\$${v}\\b`).test(curls));
  const lines = [
    "#!/bin/sh",
    `# ${finding.id}: ${finding.message.replace(/\n/g, " ")}`,
    `# seen ${finding.occurrences}× on ${finding.endpoints.join(", ")}`,
    "# Replays the defect: exits 1 while it is there, 0 once it is gone, 2 when the target does not answer.",
    `# Needs curl, node and ${vars.map((v) => `$${v}`).join(", ") || "no key"}.`,
    "set -u",
    `: "\${AGENT_API_BASE_URL:=${target.baseUrl}}"`,
    `HARNESS="\${AGENT_HARNESS_BIN:-${BIN_PATH}}"`,
    "out=$(mktemp) && trap 'rm -f \"$out\"' EXIT",
    ...curlNetworkLines(),
  ];
  // a call the rate limit refused did nothing (PROFILE §7): wait its Retry-After and send it again,
  // three times at most — a replay run right after the run that found the defect meets its spent buckets.
  // A finding whose evidence is itself a 429 is replayed as it was: its 429 is what it judges.
  lines.push(
    "paced() {",
    "  for try in 1 2 3 4; do",
    '    "$1" > "$out" || return 2',
    `    wait=$(node "$HARNESS" judge --retry-after --window ${target.windowSeconds} < "$out") || return 0`,
    '    [ "$try" -lt 4 ] && sleep "$wait"',
    "  done",
    "}",
  );
  if (finding.setup && agentId) {
    lines.push(
      "# 1. create the agent the failing call addresses",
      `create() { ${retarget(finding.setup.evidence.curl, target.baseUrl)}; }`,
      "paced create || exit 2",
      `id=$(node "$HARNESS" judge --print-id ${target.idField} < "$out") || exit 2`,
      "# 2. the call that showed the defect",
    );
  }
  const refused = evidence.response?.status === 429;
  lines.push(
    `call() { sent=$(node -e 'process.stdout.write(String(Date.now()))'); ${retarget(evidence.curl, target.baseUrl, agentId)}; }`,
    refused ? 'call > "$out" || exit 2' : "paced call || exit 2",
    `${judgeLine(finding, evidence, target, agentId)}`,
    "verdict=$?",
  );
  if (finding.setup && agentId)
    lines.push(
      "# leave nothing behind",
      `curl -sS -o /dev/null -X DELETE "$AGENT_API_BASE_URL/agents/$id" -H "Authorization: Bearer $${keyVariable("main")}" || true`,
    );
  lines.push('exit "$verdict"', "");
  return lines.join("\n");
}

/**
 * curl honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY itself; the run's TLS material (--ca-file,
 * --client-cert, --client-key) it takes as flags: every curl of the script adds them from the
 * variables the harness reads, which default to the files the run used.
 */
function curlNetworkLines(): string[] {
  const settings = networkSettings();
  const flags = { caFile: "--cacert", clientCert: "--cert", clientKey: "--key" } as const;
  const names = Object.keys(flags) as (keyof typeof flags)[];
  if (!names.some((name) => settings[name])) return [];
  return [
    ...names.flatMap((name) => (settings[name] ? [`: "\${${NETWORK_ENV[name]}:=${settings[name]}}"`] : [])),
    `curl() { command curl ${names.map((name) => `\${${NETWORK_ENV[name]}:+${flags[name]} "$${NETWORK_ENV[name]}"}`).join(" ")} "$@"; }`,
  ];
}

/** Write `replay-F<n>.sh` for each response-level finding into the run's folder; sets `finding.replay`. */
export function writeReplays(run: RunResult, runDir: string, target: HarnessTarget): void {
  for (const finding of run.findings ?? []) {
    const script = findingReplayScript(finding, target);
    if (!script) continue;
    const name = `replay-${finding.id}.sh`;
    writeFileSync(join(runDir, name), script, { mode: 0o755 });
    finding.replay = name;
  }
}
