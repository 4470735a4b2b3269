import { isRecord } from "../contract/index.js";
import { defineCheck } from "./define.js";

/** The agent records of a success answer: its one record, or the records of a list page. */
const recordsOf = (json: unknown): Record<string, unknown>[] => {
  if (!isRecord(json) || json.success !== true) return [];
  return (Array.isArray(json.data) ? json.data : [json.data]).filter(
    (r): r is Record<string, unknown> => isRecord(r) && typeof r.createdAt === "string" && typeof r.updatedAt === "string",
  );
};

/**
 * PROFILE §4: createdAt never changes and updatedAt moves on every effective update, so no record
 * is ever updated before it was created: in every answer, updatedAt ≥ createdAt. (Each alone is
 * well-formed and near the clock; only the pair shows the defect.)
 */
export default defineCheck({
  id: "updated-after-created",
  clause: "record.timestamps",
  applies: (ex) => ex.response.status < 300,
  run: (ex) =>
    recordsOf(ex.response.json)
      .filter((r) => Date.parse(String(r.updatedAt)) < Date.parse(String(r.createdAt)))
      .map((r) => ({
        expected: "updatedAt at or after createdAt",
        received: `createdAt ${r.createdAt}, updatedAt ${r.updatedAt}`,
      })),
});
