import fc from "fast-check";

/**
 * `fc.check` of an async property whose time limit (`interruptAfterTimeLimit`) may cut a case:
 * fast-check races the running case against the limit and lets it run on, unseen, after the
 * check has returned; against a live service that case would go on sending requests into the
 * next check. Here the case is followed, and once the limit has cut one it is waited for (at
 * most `waitMs`) before the details come back. `cutCaseEnded`: false when it still ran then.
 */
export async function checkFollowingCases<Ts extends unknown[]>(
  property: fc.IAsyncProperty<Ts> | fc.IAsyncPropertyWithHooks<Ts>,
  params: fc.Parameters<Ts>,
  waitMs: number,
): Promise<{ details: fc.RunDetails<Ts>; cutCaseEnded: boolean }> {
  let running: Promise<unknown> | undefined;
  const followed: typeof property = Object.create(property);
  followed.run = (value) => {
    const out = property.run(value);
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
  return { details, cutCaseEnded };
}
