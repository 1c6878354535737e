import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { NO_SCRUB, type SecretFilter, scrubJsonText } from "./stored-secrets.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * LangGraph's serializer with every value scrubbed of secrets on its way into a checkpoint,
 * checkpoint write (the `__error__` of a failed node included) or blob, on either backend. Reads
 * are LangGraph's own: what was stored scrubbed is read back as stored.
 */
export class ScrubbingSerializer implements SerializerProtocol {
  constructor(
    private readonly filter: SecretFilter,
    private readonly inner: SerializerProtocol = new JsonPlusSerializer(),
  ) {}

  async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.inner.dumpsTyped(data);
    if (this.filter === NO_SCRUB) return [type, bytes];
    if (type === "json") {
      const text = decoder.decode(bytes);
      const scrubbed = scrubJsonText(acrossFields(text, this.filter), this.filter);
      return [type, scrubbed === text ? bytes : encoder.encode(scrubbed)];
    }
    if (type === "bytes") {
      // Raw bytes are scrubbed only when they are text; binary data cannot carry a key as typed.
      const text = asUtf8(bytes);
      if (text !== undefined) {
        const scrubbed = this.filter.scrub(text);
        if (scrubbed !== text) return [type, encoder.encode(scrubbed)];
      }
    }
    return [type, bytes];
  }

  loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    return this.inner.loadsTyped(type, data);
  }
}

/**
 * `json` with the runs of configured secrets that span fields masked too: each string was scrubbed
 * on its own, which leaves the pieces of a secret spread over several (each too short to be a run).
 * The mask keeps the quotes between them, so the text stays JSON; should it not, the fields stay
 * as they were scrubbed one by one.
 */
function acrossFields(json: string, filter: SecretFilter): string {
  const joined = filter.scrubExact(json);
  if (joined === json) return json;
  try {
    JSON.parse(joined);
    return joined;
  } catch {
    return json;
  }
}

function asUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}
