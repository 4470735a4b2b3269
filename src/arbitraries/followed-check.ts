import fc from "fast-check";

/** What `checkFollowingCases` tells beside fast-check's details. */
export interface FollowedCheck<Ts extends unknown[]> {
  details: fc.RunDetails<Ts>;
  /** false when a case the time limit cut still ran once the wait was over */
  cutCaseEnded: boolean;
  /** the error a case the time limit cut failed with, after the limit (fast-check never saw it) */
  cutCaseError?: unknown;
}

/**
 * `fc.check` of an async property, with two things fast-check does not do:
 * - its time limit (`interruptAfterTimeLimit`) races the running case and lets it run on, unseen,
 *   after the check has returned; against a live service that case would go on sending requests
 *   into the next check. Here the case is followed, and once the limit has cut one it is waited
 *   for (at most `waitMs`) before the details come back, with how it ended;
 * - a failure `harnessMade` says is not the service's (a lost connection) never takes the place of
 *   one that is while fast-check shrinks: such a candidate proves nothing of the defect being
 *   shrunk, so it is skipped as a failed precondition would be.
 */
export async function checkFollowingCases<Ts extends unknown[]>(
  property: fc.IAsyncProperty<Ts> | fc.IAsyncPropertyWithHooks<Ts>,
  params: fc.Parameters<Ts>,
  waitMs: number,
  harnessMade: (error: unknown) => boolean = () => false,
): Promise<FollowedCheck<Ts>> {
  let serviceFailed = false;
  let running: Promise<unknown> | undefined;
  let lastError: unknown;
  const followed: typeof property = Object.create(property);
  followed.run = (value) => {
    lastError = undefined;
    const out = property.run(value).then((result) => {
      if (result === null || fc.PreconditionFailure.isFailure(result)) return result;
      lastError = result.error;
      if (!harnessMade(result.error)) serviceFailed = true;
      else if (serviceFailed) return new fc.PreconditionFailure();
      return result;
    });
    running = out;
    return out;
  };
  const details = await fc.check(followed, params);
  if (!details.interrupted || running === undefined) return { details, cutCaseEnded: true };
  let timer: NodeJS.Timeout | undefined;
  const cutCaseEnded = await Promise.race([
    running.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
    }),
  ]);
  clearTimeout(timer);
  return { details, cutCaseEnded, ...(cutCaseEnded && lastError !== undefined ? { cutCaseError: lastError } : {}) };
}
