import { isRecord } from "../contract/index.js";

/**
 * PROFILE §11: a deployment may name the identifier field otherwise; the contract's schemas and the
 * model say `id`. An agent answer's body (one record, or a List's page of them) with the deployment's
 * identifier field read as `id`; a record that already has an `id` is left as it is. Not for Send
 * Message: its reply is no agent record (its `agentId` names the agent it answers for).
 */
export function renameIdField(json: unknown, idField: string): unknown {
  if (idField === "id" || !isRecord(json)) return json;
  const rename = (record: unknown): unknown => {
    if (!isRecord(record) || !(idField in record) || "id" in record) return record;
    const { [idField]: id, ...rest } = record;
    return { id, ...rest };
  };
  const data = json.data;
  return { ...json, data: Array.isArray(data) ? data.map(rename) : rename(data) };
}
