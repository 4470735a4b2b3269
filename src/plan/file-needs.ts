import type { KeyRoleName } from "../target/key-roles.js";

/**
 * What a suite file's checks need, stated once next to them (`declareFile` in suites/support):
 * the planner places the file from this alone. A field left out is false.
 */
export interface FileNeeds {
  /** the key roles its checks use besides the main key (a check whose key is not given is skipped) */
  keys?: readonly Exclude<KeyRoleName, "main">[];
  /** it sends Send Message: PROFILE §3 lets a spent quota answer any message 429 INSUFFICIENT_QUOTA */
  sendsMessages?: boolean;
  /** it sends requests unpaced (a burst, a race): its account's pacing cannot keep it to a share */
  sendsUnpaced?: boolean;
  /** it empties a bucket on purpose: a lane sharing the account would meet the empty bucket */
  emptiesBuckets?: boolean;
  /** it judges X-RateLimit-Remaining from one answer to the next: no other user of the account may count between */
  readsRemainingAcrossAnswers?: boolean;
  /** it creates agents in another account: a lane whose main account that is must not see them in its lists */
  createsAgentsInOtherAccount?: boolean;
  /** it spends the quota account's message quota (the quota check) */
  spendsQuota?: boolean;
}

/** Where the planner reads a file's needs: undefined for a file that declared none (it runs in the main lane, with every key). */
export type NeedsOf = (file: string) => FileNeeds | undefined;
