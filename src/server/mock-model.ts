import { createHash } from "node:crypto";
import { MESSAGE_TIMING, MOCK_MODELS } from "../contract/index.js";
import { type Clock, sleep, untilAborted } from "./clock.js";

export class ModelError extends Error {}

interface ModelInput {
  agentId: string;
  agentName: string;
  model: string;
  text: string;
  turn: number;
}

/**
 * PROFILE §10 mock models: every provider is answered by this deterministic model.
 * Yields the reply in chunks; `mock-slow` spreads ≥ 20 chunks over about 2 s, `mock-error`
 * fails, `mock-timeout` never answers (the caller's budget ends it through `signal`).
 */
export async function* mockReply(clock: Clock, input: ModelInput, signal: AbortSignal): AsyncGenerator<string> {
  switch (input.model) {
    case MOCK_MODELS.error:
      throw new ModelError("the mock model failed as configured (mock-error)");
    case MOCK_MODELS.timeout:
      return await untilAborted(signal);
    case MOCK_MODELS.slow: {
      const chunks = splitInto(replyText(input), MESSAGE_TIMING.slowModelMinDeltas);
      const gap = (MESSAGE_TIMING.slowModelSeconds * 1000) / chunks.length;
      for (const chunk of chunks) {
        await sleep(clock, gap, signal);
        yield chunk;
      }
      return;
    }
    default:
      yield* splitInto(replyText(input), 4);
  }
}

/** The reply: a function of the agent, the text and the turn only (PROFILE §10). */
function replyText({ agentId, agentName, text, turn }: ModelInput): string {
  const digest = createHash("sha256").update(`${agentId}\n${turn}\n${text}`).digest("hex").slice(0, 8);
  return `${agentName} (turn ${turn}, ${digest}) heard: ${text}`;
}

/** Split by code points into exactly `parts` non-empty chunks (fewer only if the text is shorter). */
function splitInto(text: string, parts: number): string[] {
  const cps = [...text];
  const n = Math.min(parts, cps.length);
  const chunks: string[] = [];
  for (let i = 0; i < n; i++)
    chunks.push(cps.slice(Math.floor((i * cps.length) / n), Math.floor(((i + 1) * cps.length) / n)).join(""));
  return chunks;
}
