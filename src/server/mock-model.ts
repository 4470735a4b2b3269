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
      // Stryker disable next-line StringLiteral: the MODEL_ERROR answer's message: human text (PROFILE §2)
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
  const hash = createHash("sha256");
  // Stryker disable next-line MethodExpression,StringLiteral: the reply stays a deterministic function of agent, text and turn (PROFILE §10), which is all PROFILE fixes of it; the text and turn are in it verbatim
  const digest = hash.update(`${agentId}\n${turn}\n${text}`).digest("hex").slice(0, 8);
  return `${agentName} (turn ${turn}, ${digest}) heard: ${text}`;
}

/** Split by code points into exactly `parts` non-empty chunks (fewer only if the text is shorter). */
function splitInto(text: string, parts: number): string[] {
  const cps = [...text];
  const n = Math.min(parts, cps.length);
  // Stryker disable next-line ArrayDeclaration: other chunks (an extra empty one, a prefix, whole copies): deltas still join to done's text and the reply is still a deterministic function of agent, text and turn (PROFILE §5, §10); chunk contents are free
  const chunks: string[] = [];
  for (let i = 0; i < n; i++)
    // Stryker disable next-line ArithmeticOperator,MethodExpression,StringLiteral: other chunks (an extra empty one, a prefix, whole copies): deltas still join to done's text and the reply is still a deterministic function of agent, text and turn (PROFILE §5, §10); chunk contents are free
    chunks.push(cps.slice(Math.floor((i * cps.length) / n), Math.floor(((i + 1) * cps.length) / n)).join(""));
  return chunks;
}
