import { parseArgs } from "node:util";
import { z } from "zod";
import { RESPONSE_CHECKS } from "../checks/registry.js";
import { errorCodeSchema } from "../contract/index.js";
import { createdId, parseCurlOutput, replayVerdict } from "../run/judge.js";
import { UsageError } from "../run/usage-error.js";

/**
 * `agent-harness judge`: the verdict of one response-level check on a `curl -i` output (stdin).
 * Exit 1 when the check finds the same defect again, 0 when it does not, 2 when stdin holds no answer.
 * With `--print-id FIELD` it prints the created agent's id instead. With `--retry-after` it prints the
 * seconds to wait and exits 0 when the answer is a rate-limit refusal (429 RATE_LIMIT_EXCEEDED: the
 * call did nothing, so it shows nothing — PROFILE §7), 1 otherwise: a replay sends such a call again.
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
  "retry-after": { type: "boolean" },
} as const;

/** An error body read leniently, for its code: one the contract knows (PROFILE §3), so the code compared is typed. */
const errorCode = z.object({ error: z.object({ code: errorCodeSchema }) });

const USAGE = `usage: <curl -i output> | agent-harness judge --check ID --clause ID --url URL [--method M] [--expected TEXT]
       [--window S] [--id-field NAME] [--sent-at MS] [--header 'Name: value' ...]
       agent-harness judge --print-id FIELD | --retry-after [--window S]   (reading the same output)
The verdict of one response-level check on one answer, as a finding's replay script asks it: exit 1
while the check finds the defect again, 0 once it does not, 2 when it cannot tell (no answer, or a
refusal of the replay's own key). --print-id prints the created agent's id; --retry-after prints the
seconds to wait when the answer is 429 RATE_LIMIT_EXCEEDED (exit 0), else exits 1.`;

export async function judge(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let values: ReturnType<typeof parseArgs<{ args: string[]; strict: true; options: typeof JUDGE_OPTIONS }>>["values"];
  try {
    ({ values } = parseArgs({ args: argv, strict: true, options: JUDGE_OPTIONS }));
  } catch (err) {
    throw new UsageError(`judge: ${err instanceof Error ? err.message : String(err)}`);
  }
  // a number that is not one would judge nothing (every comparison with NaN is false) and say "gone"
  const windowSeconds = Number(values.window);
  if (!Number.isFinite(windowSeconds) || windowSeconds <= 0)
    throw new UsageError(`judge: --window ${values.window}: a number of seconds above 0`);
  const sentAt = values["sent-at"] ? Number(values["sent-at"]) : undefined;
  if (sentAt !== undefined && !Number.isFinite(sentAt))
    throw new UsageError(`judge: --sent-at ${values["sent-at"]}: a time in milliseconds since the epoch`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  const response = parseCurlOutput(Buffer.concat(chunks).toString("utf8"));
  if (!response) {
    process.stderr.write("judge: no HTTP answer on stdin\n");
    return 2;
  }
  if (values["retry-after"]) {
    if (response.status !== 429 || errorCode.safeParse(response.json).data?.error.code !== "RATE_LIMIT_EXCEEDED") return 1;
    // the announced wait, never longer than one window (PROFILE §7: the bucket refills within it)
    const announced = Number(response.headers["retry-after"]);
    process.stdout.write(
      String(Number.isFinite(announced) && announced >= 0 ? Math.min(announced, windowSeconds) : windowSeconds),
    );
    return 0;
  }
  if (values["print-id"]) {
    const id = createdId(response, values["print-id"]);
    if (id === undefined) {
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
  const { method, url } = values;
  const verdict = replayVerdict(
    check,
    {
      method,
      url,
      headers,
      windowSeconds,
      idField: values["id-field"],
      ...(sentAt !== undefined ? { sentAt } : {}),
      ...(values.clause ? { clause: values.clause } : {}),
      ...(values.expected ? { expected: values.expected } : {}),
    },
    response,
  );
  process.stdout.write(verdict.stdout);
  if (verdict.stderr) process.stderr.write(verdict.stderr);
  return verdict.code;
}
