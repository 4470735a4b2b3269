import { declareFile } from "../support/declare-file.js";
import { bucketChecks } from "../support/limit-buckets.js";

declareFile({ keys: ["readOnly"], sendsMessages: true, sendsUnpaced: true, emptiesBuckets: true });

/** PROFILE §7: the other half of the endpoint buckets (see limits.test.ts). */
bucketChecks({ part: 1, of: 2 });
