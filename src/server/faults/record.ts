import { isRecord, READ_ONLY_FIELDS } from "../../contract/index.js";
import { sendError } from "../http.js";
import {
  accountOf,
  agentsIn,
  BODY_KEYS,
  endpointOf,
  type FaultRecord,
  fault,
  jsonBody,
  type Obj,
  onCreated,
  rewriteBody,
  rewriteJson,
  wrap,
} from "./tools.js";

const READ_ONLY: ReadonlySet<string> = new Set(READ_ONLY_FIELDS);

/** Injected faults of PROFILE §4 the record. */
export const RECORD_FAULTS: FaultRecord = {
  /* §4 the record */
  "utf16-name-length": fault("record.lengths", "name length is counted in UTF-16 units (51 emoji are too long)", (app) => {
    app.addHook("preHandler", async (req, reply) => {
      const endpoint = endpointOf(req);
      if (endpoint !== "createAgent" && endpoint !== "updateAgent") return;
      const name = jsonBody(req)?.name;
      if (typeof name === "string" && name.length > 100) {
        sendError(reply, "INVALID_REQUEST", "The request has invalid fields", [{ field: "name", issue: "too long" }]);
        return reply;
      }
    });
  }),
  "token-echoed": fault("record.token-write-only", "agent records show the platform tokens", (app, ctx) => {
    const tokens = new Map<string, Obj>();
    const remember = (id: string, body: { platforms?: unknown }) => {
      if (!isRecord(body.platforms)) return;
      const kept = tokens.get(id) ?? {};
      for (const [p, v] of Object.entries(body.platforms)) if (isRecord(v) && typeof v.token === "string") kept[p] = v.token;
      tokens.set(id, kept);
    };
    onCreated(ctx.store, (agent, _accountId, body) => remember(agent.id, body));
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
      const r = orig(accountId, id, patch);
      if (r?.ok) remember(id, patch);
      return r;
    });
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body))
        for (const [p, token] of Object.entries(tokens.get(String(agent.id)) ?? {}))
          if (isRecord(agent.platforms)) {
            const platform = agent.platforms[p];
            if (isRecord(platform)) platform.token = token;
          }
    });
  }),
  "unknown-keys-dropped": fault("record.unknown-keys", "unknown top-level keys in a body are silently dropped", (app) => {
    rewriteBody(app, ["createAgent", "updateAgent"], (body) => {
      for (const key of Object.keys(body)) if (!BODY_KEYS.has(key) && !READ_ONLY.has(key)) delete body[key];
    });
  }),
  "read-only-fields-ignored": fault(
    "record.read-only-fields",
    "id, createdAt, updatedAt in a body are silently dropped",
    (app) => {
      rewriteBody(app, ["createAgent", "updateAgent"], (body) => {
        for (const key of ["id", "createdAt", "updatedAt"]) delete body[key];
      });
    },
  ),
  "account-id-exposed": fault("record.shape", "agent records carry an extra accountId field", (app) => {
    rewriteJson(app, (body, req) => {
      for (const agent of agentsIn(body)) agent.accountId = accountOf(req);
    });
  }),
  "bio-default-null": fault("record.defaults", 'an empty bio reads null instead of the default ""', (app) => {
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body)) if (agent.bio === "") agent.bio = null;
    });
  }),
  // PROFILE §4: the times of the create and the update, on the server's clock (its Date header)
  "timestamps-behind-clock": fault("record.timestamps", "createdAt/updatedAt are 5 s behind the server's clock", (app) => {
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body))
        for (const key of ["createdAt", "updatedAt"]) agent[key] = new Date(Date.parse(String(agent[key])) - 5000).toISOString();
    });
  }),
  // each time well-formed and near the clock: only the pair is wrong
  "updated-before-created": fault(
    "record.timestamps",
    "an updated agent's updatedAt is answered 1 s before its createdAt",
    (app) => {
      rewriteJson(app, (body) => {
        for (const agent of agentsIn(body))
          if (agent.updatedAt !== agent.createdAt)
            agent.updatedAt = new Date(Date.parse(String(agent.createdAt)) - 1000).toISOString();
      });
    },
  ),
  "timestamps-without-ms": fault("record.timestamps", "createdAt/updatedAt lose their milliseconds", (app) => {
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body))
        for (const key of ["createdAt", "updatedAt"]) agent[key] = String(agent[key]).replace(/\.\d{3}Z$/, "Z");
    });
  }),
};
