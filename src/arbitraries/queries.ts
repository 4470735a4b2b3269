import fc from "fast-check";
import { AGENT_STATUSES, LIST_LIMITS, SORT_FIELDS, SORT_ORDERS } from "../contract/index.js";
import type { Generated } from "./bodies.js";

/** A list query as sent: each parameter once, or several times (an array repeats it). */
export type SentQuery = Record<string, string | string[]>;

/** An integer as a client may write it: `7`, or with leading zeros (`007` is 7, PROFILE §5). */
const written = (n: number) => fc.constantFrom(String(n), `0${n}`, `00${n}`);

/** A valid list query (PROFILE §5 List); absent parameters take their defaults. */
export function validListQuery(): fc.Arbitrary<Generated<SentQuery>> {
  return fc
    .record(
      {
        page: fc
          .oneof(
            { weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }) },
            { weight: 1, arbitrary: fc.constantFrom(LIST_LIMITS.maxInteger, 50) },
          )
          .chain(written),
        limit: fc
          .oneof(
            fc.integer({ min: LIST_LIMITS.limit.min, max: 7 }),
            fc.constantFrom(LIST_LIMITS.limit.min, LIST_LIMITS.limit.max),
          )
          .chain(written),
        status: fc.constantFrom(...AGENT_STATUSES),
        sortBy: fc.constantFrom(...SORT_FIELDS),
        order: fc.constantFrom(...SORT_ORDERS),
        // PROFILE §5: unknown parameters are ignored
        unknown: fc.constantFrom("1", "x", ""),
      },
      { requiredKeys: [] },
    )
    .map((q) => {
      const { unknown, ...rest } = q;
      return { generator: "list.valid", value: unknown === undefined ? rest : { ...rest, filter: unknown } };
    });
}

/** One parameter broken: malformed, out of range, not in the enum, or given twice. */
export interface InvalidQuery {
  generator: string;
  query: SentQuery;
  field: string;
}

const MALFORMED_INTEGERS = ["1.5", "1e2", "+1", "", " 1", "abc", "0x10", "1,000", "١", "１", "½", "NaN", "Infinity", "-"];

export function invalidListQuery(): fc.Arbitrary<InvalidQuery> {
  const base = validListQuery().map((g) => g.value);
  const intParam = fc.constantFrom("page", "limit");
  const enumParam = fc.constantFrom("status", "sortBy", "order");
  const fault = fc.oneof<fc.Arbitrary<{ generator: string; p: string; v: string | string[] }>[]>(
    fc
      .tuple(intParam, fc.constantFrom(...MALFORMED_INTEGERS))
      .map(([p, v]) => ({ generator: "list.malformed-integer", p, v: v })),
    fc
      .tuple(intParam, fc.constantFrom("0", "-1", "-0", "00", String(2 ** 53), "99999999999999999999"))
      .map(([p, v]) => ({ generator: "list.out-of-range", p, v: v })),
    fc.constantFrom(String(LIST_LIMITS.limit.max + 1), "1000").map((v) => ({ generator: "list.out-of-range", p: "limit", v: v })),
    fc
      .tuple(enumParam, fc.constantFrom("", "ASC", "Desc", "Name", "createdat", "deleted", "Active", "id", "updatedAt", "random"))
      .filter(([p, v]) => !(p === "status" && new Set<string>(AGENT_STATUSES).has(v)))
      .map(([p, v]) => ({ generator: "list.not-in-enum", p, v: v })),
    fc.tuple(fc.constantFrom("page", "limit", "status", "sortBy", "order"), fc.boolean()).map(([p, same]) => {
      const value = { page: "1", limit: "5", status: "active", sortBy: "name", order: "asc" }[p]!;
      const second = same ? value : { page: "2", limit: "6", status: "inactive", sortBy: "status", order: "desc" }[p]!;
      return { generator: "list.repeated", p, v: [value, second] };
    }),
  );
  return fc.tuple(base, fault).map(([q, f]) => ({ generator: f.generator, query: { ...q, [f.p]: f.v }, field: f.p }));
}
