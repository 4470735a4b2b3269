/**
 * The process's exit code is the run's verdict — 0 every check passed, 1 a finding, 2 a harness
 * error, 130 interrupted — and nothing else may change it. Left alone, other code would: vitest
 * sets `process.exitCode = 1` when a run of its fails (a lane still running after the run ended)
 * and exits the process on an unhandled rejection; Node exits 1 on an uncaught exception; a
 * signal that arrives before the run listens for it kills the process with no word said. A CI
 * reads 1 as a defect of the service, so each of these is made what it is: a harness error (exit
 * 2, one line) or an interruption (exit 130, said on the last line).
 */
export interface ExitGuard {
  /** the verdict the run decided: the process exits with it, whatever runs after */
  decide(code: number): number;
  /** stop guarding (the listeners removed) */
  release(): void;
}

/** One line naming a harness error; its stack only when AGENT_HARNESS_DEBUG is set (a report of the harness's defect wants it). */
export function internalErrorLine(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const text = err instanceof Error ? `${err.name === "Error" ? "" : `${err.name}: `}${err.message}` : String(err);
  const line = text.split("\n").find((l) => l.trim()) ?? "(no message)";
  const stack = env.AGENT_HARNESS_DEBUG && err instanceof Error && err.stack ? `\n${err.stack}` : "";
  return `agent-harness: internal error (a harness error, not a finding about the service): ${line.trim()}${stack}`;
}

export function guardExit(stderr: NodeJS.WritableStream = process.stderr): ExitGuard {
  let decided: number | undefined;
  const crash = (err: unknown) => {
    stderr.write(`${internalErrorLine(err)}\n`);
    decided = 2;
    process.exit(2);
  };
  // only when no run listens (before its checks start, or a second signal once it has taken the first)
  const interrupted = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return;
    stderr.write(
      `\nagent-harness: interrupted (${signal}): stopped at once; agents this run made may be left (agent-harness cleanup deletes them)\n`,
    );
    decided = 130;
    process.exit(130);
  };
  const exiting = (code: number) => {
    if (decided === undefined) {
      stderr.write(
        `agent-harness: internal error (a harness error, not a finding about the service): the process was ended (code ${code}) before the run had a verdict\n`,
      );
      process.exitCode = 2;
    } else process.exitCode = decided;
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
  process.on("SIGINT", interrupted);
  process.on("SIGTERM", interrupted);
  process.on("exit", exiting);
  return {
    decide(code) {
      decided = code;
      return code;
    },
    release() {
      process.off("uncaughtException", crash);
      process.off("unhandledRejection", crash);
      process.off("SIGINT", interrupted);
      process.off("SIGTERM", interrupted);
      process.off("exit", exiting);
    },
  };
}
