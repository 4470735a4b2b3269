import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { ENDPOINTS, type ErrorCode, type MessageReply, SSE_CONTENT_TYPE } from "../../contract/index.js";
import { type TimerHandle, untilAborted } from "../clock.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, agentNotFound, parseJsonBody, route, sendError } from "../http.js";
import { ModelError, mockReply } from "../mock-model.js";
import { describeRateBuckets } from "../plugins/guard.js";
import type { Conversation } from "../store.js";

class BudgetSpent extends Error {}
class ClientGone extends Error {}

/** PROFILE §5 Send Message, §7 quota, §10 mock models: a fastify plugin, registered with the server's context. */
export const messageRoutes: FastifyPluginAsync<{ ctx: ServerContext }> = async (app, { ctx }) => {
  const spec = ENDPOINTS.sendMessage;
  const configuredBudgetMs = ctx.options.messageTimeoutSeconds * 1000;

  app.route(
    route("sendMessage", async (req, reply) => {
      const body = parseJsonBody(req, reply, spec.body);
      if (!body.ok) return reply;
      const { text, userId, roomId, stream } = body.value;
      const accountId = req.principal.account.id;
      const agent = ctx.store.get(accountId, agentIdParam(req));
      if (!agent) return agentNotFound(reply);
      if (agent.status !== "active") return sendError(reply, "AGENT_UNAVAILABLE", `The agent is ${agent.status}`);
      if (!ctx.spendQuota(req.principal)) return sendError(reply, "INSUFFICIENT_QUOTA", "The account's message quota is spent");
      const conversation = ctx.store.conversation(accountId, agent.id, userId, roomId);

      // the exchange ends at the budget, or when the client goes away
      const abort = new AbortController();
      const budget: TimerHandle = ctx.clock.setTimer(ctx.seam.messageBudgetMs(configuredBudgetMs), () =>
        abort.abort(new BudgetSpent()),
      );
      reply.raw.once("close", () => {
        if (!reply.raw.writableFinished) abort.abort(new ClientGone());
      });
      // made once this exchange has its turn, so the reply is the one for the turn it takes
      const generate = () =>
        mockReply(
          ctx.clock,
          { agentId: agent.id, agentName: agent.name, model: agent.modelSettings.model, text, turn: conversation.turns + 1 },
          abort.signal,
        );
      let release: (() => void) | undefined;
      const finish = (replyText: string): MessageReply => ({
        id: `msg_${crypto.randomUUID().replaceAll("-", "")}`,
        agentId: agent.id,
        conversationId: conversation.id,
        turn: ++conversation.turns, // PROFILE §5: only a completed exchange takes a turn
        userId: userId ?? null,
        roomId: roomId ?? null,
        text: replyText,
        createdAt: new Date(ctx.clock.now()).toISOString(),
      });
      const failure = (err: unknown): { code: ErrorCode; message: string } | undefined => {
        if (err instanceof BudgetSpent)
          return { code: "AGENT_UNAVAILABLE", message: "The agent did not answer within the time budget" };
        if (err instanceof ModelError) {
          ctx.store.setStatus(accountId, agent.id, "error"); // PROFILE §5: a model failure sets status error
          return { code: "MODEL_ERROR", message: err.message };
        }
        if (err instanceof ClientGone) return undefined;
        throw err;
      };

      // one exchange, answered as one JSON envelope or as an event stream (PROFILE §5)
      const sse = stream ? openStream(reply, ctx) : undefined;
      try {
        release = await takeTurn(conversation, abort.signal);
        let replyText = "";
        for await (const chunk of generate()) {
          replyText += chunk;
          sse?.event("delta", { text: chunk });
        }
        if (!sse) return { success: true, data: finish(replyText) };
        sse.event("done", finish(replyText));
      } catch (err) {
        const f = failure(err);
        if (!sse) return f ? sendError(reply, f.code, f.message) : reply;
        if (f) sse.event("error", f);
      } finally {
        release?.();
        ctx.clock.clearTimer(budget);
        sse?.close();
      }
      return reply;
    }),
  );
};

/**
 * PROFILE §10: a reply is a function of the agent, the text and the turn, and §5: only a
 * completed exchange takes a turn. So exchanges of one conversation take turns: this waits
 * for the previous one to end (or for this one's budget or client to give up) and returns
 * the function that lets the next one go.
 */
async function takeTurn(conversation: Conversation, signal: AbortSignal): Promise<() => void> {
  const previous = conversation.queue ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  conversation.queue = previous.then(() => mine);
  try {
    await Promise.race([untilAborted(signal), previous]);
  } catch (err) {
    release(); // a waiter that gave up must not hold up the ones behind it
    throw err;
  }
  return release;
}

/** An SSE response with a heartbeat comment whenever the model has been silent a while. */
function openStream(reply: FastifyReply, ctx: ServerContext) {
  reply.hijack();
  describeRateBuckets(ctx, reply.request, reply);
  const raw = reply.raw;
  // the headers the hooks set so far (request id, rate limits) go out with the stream's
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
  raw.writeHead(200, { "content-type": `${SSE_CONTENT_TYPE}; charset=utf-8`, "cache-control": "no-cache" });
  let heartbeat: TimerHandle | undefined;
  const frame = ctx.seam.streamFrames();
  const write = (text: string) => {
    if (raw.writableEnded || raw.destroyed) return;
    const out = frame(text);
    if (out !== null) raw.write(out);
    if (heartbeat) ctx.clock.clearTimer(heartbeat);
    heartbeat = ctx.clock.setTimer(ctx.options.heartbeatMs, () => write(": heartbeat\n\n"));
  };
  write(": stream open\n\n");
  return {
    event(name: string, data: unknown) {
      write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      if (heartbeat) ctx.clock.clearTimer(heartbeat);
      if (!raw.writableEnded) raw.end();
    },
  };
}
