import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { CheckContext, ObservedExchange } from "../checks/define.js";
import { RESPONSE_CHECKS } from "../checks/registry.js";
import { runChecks } from "../checks/run.js";
import { matchEndpoint } from "../contract/index.js";
import { type Evidence, type Finding, findingKey, type RunResult } from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { KEY_VARIABLES, keyVariable } from "../target/key-roles.js";
import { UsageError } from "./config.js";
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
export function replayScript(finding: Finding, target: HarnessTarget): string | undefined {
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
  ];
  if (finding.setup && agentId) {
    lines.push(
      "# 1. create the agent the failing call addresses",
      `${retarget(finding.setup.evidence.curl, target.baseUrl)} > "$out" || exit 2`,
      `id=$(node "$HARNESS" judge --print-id ${target.idField} < "$out") || exit 2`,
      "# 2. the call that showed the defect",
    );
  }
  lines.push(
    "sent=$(node -e 'process.stdout.write(String(Date.now()))')",
    `${retarget(evidence.curl, target.baseUrl, agentId)} > "$out" || exit 2`,
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

/** Write `replay-F<n>.sh` for each response-level finding into the run's folder; sets `finding.replay`. */
export function writeReplays(run: RunResult, runDir: string, target: HarnessTarget): void {
  for (const finding of run.findings ?? []) {
    const script = replayScript(finding, target);
    if (!script) continue;
    const name = `replay-${finding.id}.sh`;
    writeFileSync(join(runDir, name), script, { mode: 0o755 });
    finding.replay = name;
  }
}

/** A `curl -i` output: the last non-1xx status block and the body after it. */
export function parseCurlOutput(raw: string): ObservedExchange["response"] | undefined {
  let rest = raw;
  for (;;) {
    const m = /^HTTP\/[0-9.]+ (\d{3})[^\n]*\n([\s\S]*?)\r?\n\r?\n/.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length);
    const status = Number(m[1]);
    if (status >= 100 && status < 200) continue;
    const headers: Record<string, string> = {};
    for (const line of (m[2] ?? "").split(/\r?\n/)) {
      const i = line.indexOf(":");
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let json: unknown;
    try {
      json = JSON.parse(rest);
    } catch {
      json = undefined;
    }
    return { status, headers, bodyText: rest, ...(json === undefined ? {} : { json }) };
  }
}

/**
 * `agent-harness judge`: the verdict of one response-level check on a `curl -i` output (stdin).
 * Exit 1 when the check finds the same defect again, 0 when it does not, 2 when stdin holds no answer.
 * With `--print-id FIELD` it prints the created agent's id instead.
 */
const JUDGE_OPTIONS = {
  check: { type: "string" },
  clause: { type: "string" },
  expected: { type: "string" },
  method: { type: "string", default: "GET" },
  url: { type: "string" },
  window: { type: "string", default: "60" },
  "id-field": { type: "string", default: "id" },
  "sent-at": { type: "string" },
  header: { type: "string", multiple: true },
  "print-id": { type: "string" },
} as const;

/** A create answer read leniently: `data` as an object, for the id field `--print-id` names. */
const createdData = z.object({ data: z.record(z.string(), z.unknown()) });

export async function judge(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ args: string[]; strict: true; options: typeof JUDGE_OPTIONS }>>["values"];
  try {
    ({ values } = parseArgs({ args: argv, strict: true, options: JUDGE_OPTIONS }));
  } catch (err) {
    throw new UsageError(`judge: ${err instanceof Error ? err.message : String(err)}`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  const response = parseCurlOutput(Buffer.concat(chunks).toString("utf8"));
  if (!response) {
    process.stderr.write("judge: no HTTP answer on stdin\n");
    return 2;
  }
  if (values["print-id"]) {
    const id = createdData.safeParse(response.json).data?.data[values["print-id"]];
    if (typeof id !== "string") {
      process.stderr.write(`judge: the create answered ${response.status} without data.${values["print-id"]}\n`);
      return 2;
    }
    process.stdout.write(id);
    return 0;
  }
  if (!values.check || !values.url) throw new UsageError("judge needs --check and --url");
  const check = RESPONSE_CHECKS.find((c) => c.id === values.check);
  if (!check) throw new UsageError(`judge: unknown check ${values.check}`);
  const headers: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const i = h.indexOf(":");
    if (i > 0) headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  const url = values.url;
  const baseUrl = url.replace(/(\/v1)(\/.*)?$/, "$1");
  // every role's variable, the load scenarios' too (a finding under load replays with their keys)
  const keys = KEY_VARIABLES.map((v) => process.env[v]).filter((k): k is string => !!k);
  const now = Date.now();
  const ctx: CheckContext = {
    endpoint: matchEndpoint(values.method, url, { baseUrl })?.spec,
    authenticated: /^bearer \S/i.test(headers.authorization ?? ""),
    keys,
    tokens: [],
    windowSeconds: Number(values.window),
    receivedAt: now,
    sentAt: values["sent-at"] ? Number(values["sent-at"]) : now,
    clockSkewSeconds: 1,
    idField: values["id-field"],
  };
  const exchange: ObservedExchange = { request: { method: values.method, url, headers }, response };
  const wanted =
    values.clause && values.expected
      ? findingKey({ check: check.id, clause: values.clause, expected: values.expected })
      : undefined;
  const found = runChecks(exchange, ctx, [check]).filter((v) => !wanted || findingKey(v) === wanted);
  for (const v of found) process.stdout.write(`still there: ${v.clause}: expected ${v.expected}; received ${v.received}\n`);
  if (!found.length)
    process.stdout.write(`gone: ${check.id} finds nothing at ${values.method} ${url} (answered ${response.status})\n`);
  return found.length ? 1 : 0;
}
