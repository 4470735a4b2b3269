/**
 * A test-only seam, not a user option: AGENT_HARNESS_INTERNAL_FAULT=<kind> makes the harness break
 * itself once its target is up, so a test can prove that every way a harness can break ends in
 * exit 2 with one line, never 1 (which a CI reads as a defect of the service). The kinds are the
 * ways seen in practice:
 * - `throw`: an exception out of the run (after which the run still deletes what it made);
 * - `rejection`: a promise rejected with no one to catch it, while the run goes on;
 * - `exit`: a library ending the process with code 1 (vitest does on an unhandled rejection);
 * - `exit-code`: a library setting the exit code to 1 after the verdict (vitest does when a run of
 *   its fails): the verdict stands.
 */
export const INTERNAL_FAULTS = ["throw", "rejection", "exit", "exit-code"] as const;
export type InternalFault = (typeof INTERNAL_FAULTS)[number];

export function internalFaultOf(env: NodeJS.ProcessEnv = process.env): InternalFault | undefined {
  return INTERNAL_FAULTS.find((kind) => kind === env.AGENT_HARNESS_INTERNAL_FAULT);
}

/** Break as asked, if asked: called where the run has a target and nothing of its checks done. */
export function breakIfAsked(fault: InternalFault | undefined = internalFaultOf()): void {
  const injected = new Error(`injected internal fault "${fault}" (AGENT_HARNESS_INTERNAL_FAULT)`);
  if (fault === "throw") throw injected;
  if (fault === "rejection") void Promise.reject(injected);
  if (fault === "exit") process.exit(1);
  if (fault === "exit-code") process.once("beforeExit", () => (process.exitCode = 1));
}
