import fc from "fast-check";
import { MESSAGE_LIMITS as M, type MessageBody } from "../contract/index.js";
import type { Generated, InvalidInput } from "./bodies.js";
import { blankString, codePointString, exactCodePoints } from "./strings.js";

/** A few user and room ids, so that generated messages meet in the same conversations. */
const USERS = ["u1", "u2", "ü-3", "user 😀"];
const ROOMS = ["r1", "r2", "room/٣"];
/** A few texts, so the same words come again in one conversation and in others. */
export const TEXT_POOL = ["hello", "¿qué?", "😀 hi"] as const;

/** A context object whose JSON is exactly `bytes` UTF-8 bytes, padded with a chosen character. */
export function contextOfBytes(bytes: number, pad: string): Record<string, unknown> {
  const shell = Buffer.byteLength(JSON.stringify({ k: "" }), "utf8");
  const unit = Buffer.byteLength(pad, "utf8");
  const room = bytes - shell;
  return { k: pad.repeat(Math.floor(room / unit)) + "a".repeat(room % unit) };
}

const padCharacter = fc.constantFrom("a", "é", "€", "😀");

/** Sizes up to and past 16 KiB in UTF-8 (PROFILE §5): multi-byte padding tells bytes from characters. */
const context = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.dictionary(fc.constantFrom("topic", "lang", "n", "nested"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  },
  { weight: 1, arbitrary: padCharacter.map((pad) => contextOfBytes(M.contextJsonBytes, pad)) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 8, max: M.contextJsonBytes }), padCharacter).map(([n, pad]) => contextOfBytes(n, pad)),
  },
);

const userId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...USERS) },
  { weight: 1, arbitrary: codePointString(M.userId.min, M.userId.max) },
);
const roomId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ROOMS) },
  { weight: 1, arbitrary: codePointString(M.roomId.min, M.roomId.max) },
);

/** A valid Send Message body (PROFILE §5); `stream` is chosen by the caller. */
export function validMessage(): fc.Arbitrary<Generated<Omit<MessageBody, "stream">>> {
  return fc
    .record(
      {
        text: fc.oneof(
          // a small pool too: the same text again in a conversation, and in another one
          { weight: 3, arbitrary: fc.constantFrom(...TEXT_POOL) },
          { weight: 5, arbitrary: codePointString(M.text.min, 40, { notBlank: true }) },
          { weight: 1, arbitrary: codePointString(M.text.min, M.text.max, { notBlank: true }) },
        ),
        userId,
        roomId,
        context,
      },
      { requiredKeys: ["text"] },
    )
    .map((value) => ({ generator: "message.valid", value }));
}

/** A Send Message body broken in one field. */
export function invalidMessage(): fc.Arbitrary<InvalidInput> {
  const base = validMessage().map((g) => g.value);
  const fault = fc.oneof<fc.Arbitrary<{ generator: string; field: string; value: unknown }>[]>(
    fc.constant({ generator: "message.text-empty", field: "text", value: "" }),
    blankString(20).map((value) => ({ generator: "message.text-blank", field: "text", value: value })),
    exactCodePoints(M.text.max + 1, { loneSurrogates: true }).map((value) => ({
      generator: "message.text-too-long",
      field: "text",
      value: value,
    })),
    fc.constantFrom("userId", "roomId").map((field) => ({ generator: "message.id-empty", field, value: "" })),
    fc
      .tuple(fc.constantFrom("userId", "roomId"), exactCodePoints(M.userId.max + 1))
      .map(([field, value]) => ({ generator: "message.id-too-long", field, value: value })),
    padCharacter.map((pad) => ({
      generator: "message.context-too-big",
      field: "context",
      value: contextOfBytes(M.contextJsonBytes + 1, pad),
    })),
    fc.constantFrom<unknown>([], "ctx", 1).map((value) => ({ generator: "message.context-not-object", field: "context", value })),
    fc
      .constantFrom("text", "userId", "roomId", "context", "stream")
      .map((field) => ({ generator: "message.null", field, value: null })),
    fc.constantFrom<unknown>("true", 1).map((value) => ({ generator: "message.stream-type", field: "stream", value })),
    fc.constantFrom("user", "agentId", "message").map((field) => ({ generator: "message.unknown-key", field, value: "x" })),
  );
  return (
    fc
      .tuple(base, fault)
      // PROFILE §5 asks a broken message body for a 400, not for details naming the field
      .map(([body, f]) => ({ generator: f.generator, body: { ...body, [f.field]: f.value }, field: f.field, mustName: false }))
  );
}
