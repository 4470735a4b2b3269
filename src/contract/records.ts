/**
 * A JSON object as a body, a query or a nested field arrives: an object that is not null and not
 * an array. Every layer reads bodies it has not typed yet (the server's store and faults, the
 * client, the checks, the model, the generators, the load scenarios), and only the contract is
 * importable from all of them, so the one guard lives here. Applied to a union such as a JSON
 * value type, it narrows to the union's object member; applied to `unknown`, to a record of unknowns.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
