import { declareFile } from "../support/declare-file.js";
import { bucketChecks } from "../support/limit-buckets.js";

declareFile({ keys: ["readOnly"], sendsMessages: true, sendsUnpaced: true, emptiesBuckets: true });

/**
 * PROFILE §7: each endpoint's bucket empties at its size and refills at its reset — half the
 * rows here, half in limits-buckets.test.ts; the account's buckets, the tier, the concurrency cap,
 * path variants and quota in limits-account.test.ts, limits-tier.test.ts and limits-cap.test.ts:
 * files that run in parallel workers, each with its own accounts.
 */
bucketChecks({ part: 0, of: 2 });
