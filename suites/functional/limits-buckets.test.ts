import { bucketChecks } from "../support/limit-buckets.js";

/** PROFILE §7: the other half of the endpoint buckets (see limits.test.ts). */
bucketChecks({ part: 1, of: 2 });
