/**
 * A bad flag, env var or combination: a readable message and exit code 2. Its own module, so
 * `agent-harness --help` and `--version` load nothing but the entry point (no zod, no contract).
 */
export class UsageError extends Error {}
