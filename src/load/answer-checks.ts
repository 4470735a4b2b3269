import type { ScenarioContext } from "./context.js";
import type { LoadResponse } from "./recorder.js";
import type { LoadRequest } from "./requests.js";

/** One request a scenario's generator sent and the answer it got, with the harness's times. */
interface SentAnswer {
  /** the key it was sent with */
  key: string;
  request: LoadRequest;
  response: LoadResponse;
  /** harness clock, ms: when it was written, and when its answer (a stream's end) was read */
  sentAt: number;
  settledAt: number;
}

/**
 * A check over the generator's answers that needs more than one answer at a time (the response
 * checks of src/checks see one): it sees every answer a scenario's open-model generator gets,
 * and reports what it found through the scenario's recorder when the drive ends.
 */
export interface AnswerCheck {
  id: string;
  /** a fresh state per scenario run */
  start(ctx: ScenarioContext): {
    onAnswer(answer: SentAnswer): void;
    /** after the last answer; findings go to ctx.recorder */
    finish(): void | Promise<void>;
  };
}

/**
 * The answer checks every open-model load drive (capacity) runs, in order. A check that judges
 * answers across requests (a request id echoed to its own request, a count of admitted requests
 * behind a Remaining header) is one entry here; the drive hands each of them every answer.
 */
export const ANSWER_CHECKS: AnswerCheck[] = [];
