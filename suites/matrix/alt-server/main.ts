import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { keysFileSchema } from "../../../src/contract/index.js";
import { altKeysFile } from "./keys.js";
import { startAltServer } from "./server.js";

/**
 * The second conformant server as a process:
 *   npx tsx suites/matrix/alt-server/main.ts --port 8090 --window-seconds 5 --message-timeout-seconds 3 --clock-offset 7
 * With --keys FILE (serve's format) it serves those keys; without, it makes the four roles at
 * --tier and prints them as verify options. Its first stdout line is `listening on <base URL>`.
 */
const usage =
  "usage: main.ts [--port N] [--host H] [--keys FILE | --tier N] [--window-seconds S] [--message-timeout-seconds S] [--clock-offset S]";

function fail(message: string): never {
  process.stderr.write(`alt-server: ${message}\n${usage}\n`);
  process.exit(2);
}

function positive(name: string, text: string | undefined, fallback: number, allowNegative = false): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || (!allowNegative && value <= 0))
    fail(`--${name} must be a ${allowNegative ? "" : "positive "}number`);
  return value;
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      port: { type: "string" },
      host: { type: "string" },
      keys: { type: "string" },
      tier: { type: "string" },
      "window-seconds": { type: "string" },
      "message-timeout-seconds": { type: "string" },
      "clock-offset": { type: "string" },
    },
  });
}
try {
  parsed = parse();
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
const v = parsed.values;
let keys: ReturnType<typeof altKeysFile>["keys"] | undefined;
let file: ReturnType<typeof altKeysFile>["file"];
if (v.keys) {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(v.keys, "utf8"));
  } catch (err) {
    fail(`cannot read --keys ${v.keys}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const checked = keysFileSchema.safeParse(json);
  if (!checked.success) fail(`--keys ${v.keys}: ${checked.error.issues[0]?.message}`);
  file = checked.data;
} else {
  ({ keys, file } = altKeysFile(positive("tier", v.tier, 60)));
}
const server = await startAltServer({
  keys: file,
  port: positive("port", v.port, 0, true),
  host: v.host ?? "127.0.0.1",
  windowSeconds: positive("window-seconds", v["window-seconds"], 60),
  messageTimeoutSeconds: positive("message-timeout-seconds", v["message-timeout-seconds"], 30),
  clockOffsetSeconds: positive("clock-offset", v["clock-offset"], 0, true),
});
process.stdout.write(`listening on ${server.baseUrl}\n`);
if (keys)
  process.stdout.write(
    `--api-key ${keys.main} --read-only-key ${keys.readOnly} --other-account-key ${keys.other} --quota-key ${keys.quota} --tier ${v.tier ?? 60}\n`,
  );
const stop = () => void server.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
