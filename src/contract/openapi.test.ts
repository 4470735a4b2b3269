import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, test } from "vitest";
import { ENDPOINT_LIST, MERGE_PATCH_CONTENT_TYPE } from "./endpoints.js";
import { BODY_LIMIT_BYTES, LIST_LIMITS, MESSAGE_LIMITS } from "./limits.js";
import { openApiDocument } from "./openapi.js";
import { isBlank } from "./text.js";

// biome-ignore lint/suspicious/noExplicitAny: a JSON document walked by path in assertions; a wrong path fails the test
type Json = Record<string, any>;

/**
 * The emitted document loads in standard tools. A real validator (swagger-parser:
 * the OpenAPI 3.1 schema, then every $ref resolved) must accept it without a single error.
 */
describe("the OpenAPI 3.1 document", () => {
  const doc = openApiDocument() as Json;

  test("passes @apidevtools/swagger-parser validation, every $ref resolved", async () => {
    // validate() mutates what it is given: hand it a copy
    const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as Json;
    expect(api.openapi).toBe("3.1.0");
    const dereferenced = JSON.stringify(await SwaggerParser.dereference(structuredClone(doc) as never));
    expect(dereferenced).not.toContain('"$ref"');
  });

  test("refers only into components/schemas, never to a $defs of an inlined schema", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(doc.components.schemas[ref.split("/").at(-1)!], ref).toBeDefined();
    }
  });

  test("says what OpenAPI can: unique plugins, page bound, required headers, 401, 405, events, links", () => {
    const { schemas } = doc.components;
    expect(schemas.Agent.properties.plugins.uniqueItems).toBe(true);
    expect(schemas.CreateAgentBody.properties.plugins.uniqueItems).toBe(true);
    const list = doc.paths["/agents"].get;
    expect(list.parameters.find((p: Json) => p.name === "page").schema.maximum).toBe(2 ** 53 - 1);
    expect(LIST_LIMITS.maxInteger).toBe(2 ** 53 - 1);
    for (const ep of ENDPOINT_LIST) {
      const op = doc.paths[ep.path.replace(":agentId", "{agentId}")][ep.method.toLowerCase()];
      const ok = op.responses[ep.successStatus];
      for (const h of ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
        expect(ok.headers[h]?.required, `${ep.id} ${h}`).toBe(true);
      expect(op.responses[401].headers["WWW-Authenticate"].required).toBe(true);
      expect(op.responses[405].headers.Allow.required).toBe(true);
    }
    const stream = doc.paths["/agents/{agentId}/messages"].post.responses[200].content["text/event-stream"];
    expect(Object.keys(stream["x-sse-events"]).sort()).toEqual(["delta", "done", "error"]);
    const links = doc.paths["/agents"].post.responses[201].links;
    expect(Object.keys(links).sort()).toEqual(["deleteAgent", "getAgent", "sendMessage", "updateAgent"]);
    for (const link of Object.values(links) as Json[]) expect(link.parameters.agentId).toBe("$response.body#/data/id");
  });

  test("says the rules the contract holds: 413 on DELETE, merge-patch, not blank, size limits, no stray schema", () => {
    const agent = doc.paths["/agents/{agentId}"];
    // PROFILE §7 Sizes: any body over the limit, a DELETE's too
    expect(Object.keys(agent.delete.responses)).toEqual(expect.arrayContaining(["400", "413"]));
    expect(agent.delete.responses[413].description).toContain(String(BODY_LIMIT_BYTES));
    expect(Object.keys(agent.patch.requestBody.content)).toEqual(["application/json", MERGE_PATCH_CONTENT_TYPE]);
    expect(agent.patch.requestBody.description).toContain(String(BODY_LIMIT_BYTES));
    const { schemas } = doc.components;
    const context = schemas.MessageBody.properties.context;
    expect(context["x-max-json-bytes"]).toBe(MESSAGE_LIMITS.contextJsonBytes);
    expect(Object.keys(schemas)).not.toContain("ListQuery");
    // PROFILE §4 name, §5 text: the pattern rejects exactly what the contract calls blank
    for (const notBlank of [
      schemas.CreateAgentBody.properties.name,
      schemas.Agent.properties.name,
      schemas.MessageBody.properties.text,
    ]) {
      const pattern = new RegExp(notBlank.pattern);
      for (const text of ["", " ", "\t\n", "\u00a0\u2003", "\ufeff", " a ", "😀", "\u200b"])
        expect(pattern.test(text), JSON.stringify(text)).toBe(!isBlank(text));
    }
    for (const ep of ENDPOINT_LIST) {
      const op = doc.paths[ep.path.replace(":agentId", "{agentId}")][ep.method.toLowerCase()];
      expect(op.description, ep.id).toContain(ep.permission);
      expect(op.tags, ep.id).toHaveLength(1);
    }
  });
});
