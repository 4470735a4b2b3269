import type { ClauseId } from "../contract/index.js";

/**
 * Invariants over a whole run, not only the answer in hand (STYLE §8: a simplification of the
 * service, never a copy). The stateful model compares each answer with its prediction; these
 * watch every answer the property clients got, across cases and command sequences, for what
 * PROFILE says must stay unique, be kept, or never come back. Each names its clause.
 *
 * Two more invariants of the same kind are judged by the stateful model itself at each step,
 * since only it knows the account's population: list totals equal the live agents it holds
 * (PROFILE §2, §5 List), and an inactive agent keeps its configuration and its conversations'
 * turns (§8).
 */
export const HISTORY_INVARIANTS = {
  "id-unique": { clause: "record.shape", says: "a create never answers an id the run has seen before (§4: ids are unique)" },
  "deleted-stays-gone": {
    clause: "delete.gone",
    says: "no record of a deleted agent is ever answered again (§5 Delete)",
  },
  "created-at-fixed": { clause: "record.timestamps", says: "an agent's createdAt never changes (§4)" },
  "updated-at-forward": {
    clause: "record.timestamps",
    says: "an agent's updatedAt never goes backwards, nor before its createdAt (§4)",
  },
  "error-by-service": {
    clause: "status.lifecycle",
    says: "an agent reads error only after a model failure since it was last seen out of error (§8: only the service sets error)",
  },
  "conversation-one-agent": {
    clause: "message.conversation",
    says: "a conversation id belongs to one (agent, userId, roomId) for the whole run (§5)",
  },
  "conversation-turns": {
    clause: "message.turn",
    says: "each completed exchange of a conversation takes the next turn, one more than its last (§5)",
  },
} as const satisfies Record<string, { clause: ClauseId; says: string }>;

export type HistoryInvariant = keyof typeof HISTORY_INVARIANTS;

export interface HistoryViolation {
  invariant: HistoryInvariant;
  clause: ClauseId;
  /** what was seen, and where the earlier fact it contradicts came from */
  message: string;
}

/** What the run saw of one agent (the fields the invariants follow). */
export interface SeenRecord {
  id: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

/** What the run saw of one completed exchange (PROFILE §5 Send Message data). */
export interface SeenReply {
  agentId: string;
  conversationId: string;
  turn: number;
  userId: string | null;
  roomId: string | null;
}

interface AgentFacts {
  createdAt: string;
  updatedAt: string;
  /** where the facts were last seen (a request id or an endpoint), for the message */
  seenAt: string;
  deletedAt?: string;
  /** a model failure happened since the agent was last seen out of error */
  failedSince: boolean;
  /** made by a create of this run (else first seen in an answer: made before the run, or by another client) */
  made: boolean;
}

/** Facts of a run and the invariants they must keep; violations gather until taken. */
export class RunHistory {
  private readonly agents = new Map<string, AgentFacts>();
  private readonly conversations = new Map<string, { owner: string; turn: number; seenAt: string }>();
  private pending: HistoryViolation[] = [];

  private violate(invariant: HistoryInvariant, message: string): void {
    this.pending.push({ invariant, clause: HISTORY_INVARIANTS[invariant].clause, message });
  }

  /** The violations seen since the last call (each reported once). */
  take(): HistoryViolation[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** A create answered 201 with this record. */
  created(record: SeenRecord, at: string): void {
    const known = this.agents.get(record.id);
    if (known)
      this.violate(
        "id-unique",
        `create answered id ${record.id} (${at}), an id first answered at ${known.seenAt}${known.deletedAt ? ` and deleted at ${known.deletedAt}` : ""}`,
      );
    else
      this.agents.set(record.id, {
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        seenAt: at,
        failedSince: false,
        made: true,
      });
    this.read(record, at);
  }

  /** Any answer carrying the agent's record (create, get, update, a list item). */
  read(record: SeenRecord, at: string): void {
    const known = this.agents.get(record.id);
    if (!known) {
      // an agent made before the run or by another client: its facts start here (in error, it failed before)
      this.agents.set(record.id, {
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        seenAt: at,
        failedSince: record.status === "error",
        made: false,
      });
      return;
    }
    if (known.deletedAt !== undefined)
      this.violate("deleted-stays-gone", `agent ${record.id}, deleted at ${known.deletedAt}, answered again at ${at}`);
    if (record.createdAt !== known.createdAt)
      this.violate(
        "created-at-fixed",
        `agent ${record.id}: createdAt ${known.createdAt} (${known.seenAt}) became ${record.createdAt} (${at})`,
      );
    if (Date.parse(record.updatedAt) < Date.parse(known.updatedAt) || Date.parse(record.updatedAt) < Date.parse(record.createdAt))
      this.violate(
        "updated-at-forward",
        `agent ${record.id}: updatedAt ${known.updatedAt} (${known.seenAt}) went back to ${record.updatedAt} (${at}), createdAt ${record.createdAt}`,
      );
    // only the run's own agents: another client's messages (PROFILE §5: a model failure sets error) are not seen here
    if (record.status === "error" && !known.failedSince && known.made)
      this.violate("error-by-service", `agent ${record.id} reads error at ${at} with no model failure since its status was set`);
    known.updatedAt = record.updatedAt;
    known.seenAt = at;
    // out of error (a patch set the status): back in error needs a new model failure
    if (record.status !== "error") known.failedSince = false;
  }

  /** A message to the agent failed in the model (500 MODEL_ERROR, or a stream's error event). */
  modelFailed(id: string): void {
    const known = this.agents.get(id);
    if (known) known.failedSince = true;
  }

  /** A delete answered 200. */
  deleted(id: string, at: string): void {
    const known = this.agents.get(id);
    if (known) known.deletedAt = at;
    else this.agents.set(id, { createdAt: "", updatedAt: "", seenAt: at, deletedAt: at, failedSince: false, made: false });
  }

  /** A message answered (200, or a stream's done event). */
  replied(reply: SeenReply, at: string): void {
    const owner = JSON.stringify([reply.agentId, reply.userId, reply.roomId]);
    const known = this.conversations.get(reply.conversationId);
    if (!known) {
      this.conversations.set(reply.conversationId, { owner, turn: reply.turn, seenAt: at });
      if (reply.turn !== 1 && this.agents.get(reply.agentId)?.made)
        this.violate(
          "conversation-turns",
          `conversation ${reply.conversationId} of agent ${reply.agentId} (new to the run) began at turn ${reply.turn} (${at})`,
        );
      return;
    }
    if (known.owner !== owner)
      this.violate(
        "conversation-one-agent",
        `conversation ${reply.conversationId} answered for (agent, userId, roomId) ${owner} at ${at}; it was ${known.owner}'s at ${known.seenAt}`,
      );
    else if (reply.turn !== known.turn + 1)
      this.violate(
        "conversation-turns",
        `conversation ${reply.conversationId}: turn ${reply.turn} at ${at} after turn ${known.turn} at ${known.seenAt}`,
      );
    known.turn = reply.turn;
    known.seenAt = at;
  }
}
