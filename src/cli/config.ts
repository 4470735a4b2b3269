import { parseArgs } from "node:util";
import { proxyProblem } from "../client/network.js";
import { type OptionSpec, VERIFY_OPTIONS, type VerifyConfig, verifySchema } from "../run/config.js";
import { UsageError } from "../run/usage-error.js";

/** Flags first, then env vars, read by the option tables of src/run/config.ts (and each command's own). */

export function optionsHelp(options: Record<string, OptionSpec>): string {
  return Object.values(options)
    .map(
      (o) =>
        `${`  --${o.flag}${o.type === "string" ? " VALUE" : ""}`.padEnd(30)}${o.help} [${o.flagOnly ? "flag only" : `$${o.env}`}]`,
    )
    .join("\n");
}

/** `parse()`, or `undefined` once `usage` is printed when the command was asked for --help. */
export function parseOrHelp<T>(parse: () => T, usage: string): T | undefined {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof UsageError && err.message === "")) throw err;
    process.stdout.write(`${usage}\n`);
    return undefined;
  }
}

/** Flags first, then env vars. Unknown flags are a UsageError. */
export function readOptions<T extends Record<string, OptionSpec> & Record<keyof T, OptionSpec>>(
  argv: string[],
  options: T,
  env: NodeJS.ProcessEnv,
): Partial<Record<keyof T, string | boolean | string[]>> {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(
          Object.values(options).map((o) => [
            o.flag,
            { type: o.type, ...("multiple" in o && o.multiple ? { multiple: true } : {}) },
          ]),
        ),
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    // one line, as every usage error: node's "argument is ambiguous" (a value starting with a dash) spans three
    throw new UsageError(
      String(err instanceof Error ? err.message : err)
        .replace(/\. To specify a positional argument.*$/s, "")
        .replace(/\s*\n\s*/g, " "),
    );
  }
  if (values.help) throw new UsageError("");
  const out: Partial<Record<keyof T, string | boolean | string[]>> = {};
  for (const name in options) {
    const spec: OptionSpec = options[name];
    const fromFlag = values[spec.flag];
    const fromEnv = env[spec.env];
    if (fromFlag !== undefined) out[name] = Array.isArray(fromFlag) ? fromFlag.map(String) : fromFlag;
    else if (spec.flagOnly) {
      if (fromEnv && (spec.type !== "boolean" || envBoolean(spec.env, fromEnv)))
        throw new UsageError(`$${spec.env}=${fromEnv} is not read here: ${spec.flagOnly}`);
    } else if (fromEnv !== undefined && fromEnv !== "")
      out[name] = spec.type === "boolean" ? envBoolean(spec.env, fromEnv) : spec.multiple ? fromEnv.split(",") : fromEnv;
  }
  return out;
}

/**
 * A switch set in the environment: 1/true/yes or 0/false/no, in any case; anything else is refused.
 * Read as "off", `AGENT_HARNESS_DRY_RUN=on` once made a cleanup delete for real.
 */
function envBoolean(variable: string, value: string): boolean {
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw new UsageError(`${variable}=${value}: takes 1, true or yes (on), 0, false or no (off)`);
}

export function parseVerifyConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): VerifyConfig {
  const raw = readOptions(argv, VERIFY_OPTIONS, env);
  const parsed = verifySchema.safeParse(raw);
  // one line, as every usage error, however many flags are wrong
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("; "));
  // a base URL variable set but empty is a CI secret this run did not get (a fork's pull request):
  // run on, the harness would verify its embedded reference server and say green for a deployment
  // it never reached. Unset, the embedded server is what was asked for.
  const baseUrlVariable = VERIFY_OPTIONS.baseUrl.env;
  if (parsed.data.baseUrl === undefined && env[baseUrlVariable] === "")
    throw new UsageError(
      `$${baseUrlVariable} is set but empty (a CI secret this run did not get?): give the deployment's URL, or unset it to verify the embedded reference server`,
    );
  // the proxy variables are the run's too: one it cannot use is a usage error, never a crash mid-run
  const proxy = proxyProblem(env);
  if (proxy) throw new UsageError(proxy);
  return parsed.data;
}
