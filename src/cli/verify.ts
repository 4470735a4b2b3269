import { VERIFY_OPTIONS } from "../run/config.js";
import { runVerify } from "../run/verify.js";
import { optionsHelp, parseOrHelp, parseVerifyConfig } from "./config.js";

export const VERIFY_USAGE = `usage: agent-harness verify [options]

With no options it starts the embedded reference server and verifies it. With --base-url and
--api-key it verifies that deployment. Options (each also read from the env var shown):
${optionsHelp(VERIFY_OPTIONS)}`;

/** `agent-harness verify`: its options parsed and validated, then the run (src/run/verify.ts). */
export async function verify(argv: string[]): Promise<number> {
  const config = parseOrHelp(() => parseVerifyConfig(argv), VERIFY_USAGE);
  return config ? runVerify(config) : 0;
}
