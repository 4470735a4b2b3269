import { PACKAGE_VERSION as VERSION } from "../run/package-root.js";
import { UsageError } from "../run/usage-error.js";
import { guardExit, internalErrorLine } from "./exit-guard.js";

export const USAGE = `agent-harness ${VERSION} — conformance and load verification for the Agent Management Service v1

usage: agent-harness <command> [options]

commands:
  verify    run the checks against the embedded reference server (default), a container, or --base-url
  load      drive the load scenarios (bursts, the concurrency cap, streams at the budget) and chart them
  serve     start the reference server (see: agent-harness serve --help)
  cleanup   delete agents left behind by earlier, killed runs (by their name prefix)
  openapi   print the OpenAPI 3.1 document emitted from the contract
  judge     the verdict of one response-level check on a 'curl -i' output (replay scripts use it)
  help      this text; 'agent-harness verify --help' lists verify's options

exit codes: 0 every check passed; 1 a finding or a failed check; 2 bad usage, target unreachable,
a harness error, fewer checks run than planned or no check ran; 130 interrupted`;

/**
 * The CLI: parse → validate → run → exit code. Usage problems are exit 2 with a readable message;
 * the process exits with the code returned, whatever else runs or breaks (src/cli/exit-guard.ts).
 */
export async function main(argv: string[]): Promise<number> {
  const guard = guardExit();
  return guard.decide(await command(argv));
}

async function command(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "verify":
        return await (await import("./verify.js")).verify(rest);
      case "load":
        return await (await import("./load.js")).load(rest);
      case "serve":
        return await (await import("./serve.js")).serve(rest);
      case "judge":
        return await (await import("./judge.js")).judge(rest);
      case "cleanup":
        return await (await import("./cleanup.js")).cleanup(rest);
      case "openapi":
        if (rest.length === 1 && (rest[0] === "--help" || rest[0] === "-h")) {
          process.stdout.write("usage: agent-harness openapi > openapi.json  (the OpenAPI 3.1 document of the contract)\n");
          return 0;
        }
        if (rest.length) throw new UsageError(`openapi takes no arguments, got ${rest.join(" ")}`);
        process.stdout.write(`${JSON.stringify((await import("../contract/index.js")).openApiDocument(), null, 2)}\n`);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      case "--version":
        process.stdout.write(`${VERSION}\n`);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}" (agent-harness help lists the commands)`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message) process.stderr.write(`agent-harness: ${err.message}\n`);
      return 2;
    }
    // a harness error, not a verdict on the target: say what broke in one line, exit 2 (never 0 or 1)
    process.stderr.write(`${internalErrorLine(err)}\n`);
    return 2;
  }
}
