import { isRecord, MESSAGE_TIMING } from "../../contract/index.js";
import { agentIdParam } from "../http.js";
import {
  accountOf,
  endpointOf,
  type FaultRecord,
  fault,
  jsonBody,
  parseObj,
  rewriteBody,
  rewriteJson,
  rewriteStream,
  wrap,
} from "./tools.js";

/** Injected faults of PROFILE §5 Send Message. */
export const MESSAGES_FAULTS: FaultRecord = {
  /* §5 send message */
  "message-null-accepted": fault("message.body", "null fields in a message body are ignored instead of rejected", (app) => {
    rewriteBody(app, ["sendMessage"], (body) => {
      for (const [key, value] of Object.entries(body)) if (value === null) delete body[key];
    });
  }),
  "reply-id-without-prefix": fault("message.reply", "message ids lack the msg_ prefix", (app) => {
    rewriteJson(app, (body, req) => {
      if (endpointOf(req) === "sendMessage" && body.success === true && isRecord(body.data))
        body.data.id = String(body.data.id).replace(/^msg_/, "");
    });
  }),
  "conversation-ignores-room": fault(
    "message.conversation",
    "with a userId, the roomId does not separate conversations",
    (_app, ctx) => {
      wrap(
        ctx.store,
        "conversation",
        (orig) => (accountId, agentId, userId, roomId) =>
          orig(accountId, agentId, userId, userId === undefined ? roomId : undefined),
      );
    },
  ),
  "failed-exchange-takes-turn": fault("message.turn", "a failed exchange (500/503) still takes a turn", (app, ctx) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const body = jsonBody(req);
      const account = accountOf(req);
      if (endpointOf(req) !== "sendMessage" || reply.statusCode < 500 || !body || !account) return payload;
      const userId = typeof body.userId === "string" ? body.userId : undefined;
      const roomId = typeof body.roomId === "string" ? body.roomId : undefined;
      if (userId !== undefined || roomId !== undefined) {
        const conversation = ctx.store.conversation(account, agentIdParam(req), userId, roomId);
        if (conversation) conversation.turns++;
      }
      return payload;
    });
  }),
  "abandoned-stream-runs-on": fault(
    "message.turn",
    "an abandoned stream runs on and takes its turn when its reply is done",
    (app, ctx) => {
      app.addHook("preHandler", async (req, reply) => {
        const body = jsonBody(req);
        const account = accountOf(req);
        if (endpointOf(req) !== "sendMessage" || body?.stream !== true || !account) return;
        const userId = typeof body.userId === "string" ? body.userId : undefined;
        const roomId = typeof body.roomId === "string" ? body.roomId : undefined;
        if (userId === undefined && roomId === undefined) return;
        reply.raw.once("close", () => {
          if (reply.raw.writableFinished) return;
          const conversation = ctx.store.conversation(account, agentIdParam(req), userId, roomId);
          // the reply mock-slow would have finished (PROFILE §10: about 2 s) takes the turn
          ctx.clock.setTimer(MESSAGE_TIMING.slowModelSeconds * 1000, () => {
            if (conversation) conversation.turns++;
          });
        });
      });
    },
  ),
  "done-text-mismatch": fault("message.stream", "the done event's text drops the last character of the deltas", (_app, ctx) => {
    rewriteStream(ctx, () => (frame) => {
      const prefix = "event: done\ndata: ";
      if (!frame.startsWith(prefix)) return frame;
      const done = parseObj(frame.slice(prefix.length));
      done.text = String(done.text).slice(0, -1);
      return `${prefix}${JSON.stringify(done)}\n\n`;
    });
  }),
  "stream-error-dropped": fault(
    "message.stream-error",
    "a failure after the stream opened just closes it, no error event",
    (_app, ctx) => {
      rewriteStream(ctx, () => (frame) => (frame.startsWith("event: error") ? null : frame));
    },
  ),
  "no-heartbeat": fault("message.heartbeat", "a silent stream carries no comment lines", (_app, ctx) => {
    rewriteStream(ctx, () => (frame) => (frame.startsWith(":") ? null : frame));
  }),
  "budget-tripled": fault("message.budget", "the time budget is not enforced until three times its length", (_app, ctx) => {
    ctx.seam.messageBudgetMs = (ms) => ms * 3;
  }),
  // PROFILE §5: a message is answered within the budget; this one never is (the client gives up)
  "budget-never-enforced": fault("message.budget", "a model that never answers keeps the message open forever", (_app, ctx) => {
    ctx.seam.messageBudgetMs = () => 2_000_000_000; // about 23 days: under setTimeout's limit
  }),
  "inactive-agent-answers": fault("message.unavailable", "a message wakes an inactive agent instead of 503", (app, ctx) => {
    app.addHook("preHandler", async (req) => {
      const account = accountOf(req);
      if (endpointOf(req) !== "sendMessage" || !account) return;
      const id = agentIdParam(req);
      if (ctx.store.get(account, id)?.status === "inactive") ctx.store.update(account, id, { status: "active" });
    });
  }),
  "model-error-keeps-status": fault("message.model-error", "a model failure leaves the agent active", (_app, ctx) => {
    wrap(ctx.store, "setStatus", (orig) => (accountId, id, status) => {
      if (status !== "error") orig(accountId, id, status);
    });
  }),
};
