/**
 * Where HTTP/1.1 responses end in the bytes a server sends on one connection (RFC 9112 §6):
 * after a Content-Length body, after the last chunk of a chunked body and its trailers, right
 * after the head when a response has no body (1xx, 204, 304), or at the connection's end when
 * neither length is given. The delaying proxy needs it to close after a response or to hold a
 * whole response; it does not validate, it only finds boundaries.
 */
export class ResponseFramer {
  private state: "head" | "length" | "chunk-size" | "chunk-data" | "chunk-crlf" | "trailers" | "until-close" = "head";
  /** bytes of the head or of the current line, until it is complete */
  private line = "";
  private remaining = 0;
  /** responses completed since the connection opened */
  completed = 0;

  /**
   * Feed the next bytes; returns the offsets in `chunk` just past each response that ends in it.
   * A 1xx response is not an end: its final response follows on the same connection.
   */
  push(chunk: Buffer): number[] {
    const ends: number[] = [];
    let i = 0;
    while (i < chunk.length) {
      switch (this.state) {
        case "head": {
          const j = this.readLine(chunk, i, "\r\n\r\n");
          if (j < 0) return ends;
          i = j;
          const body = this.startBody(this.line);
          this.line = "";
          if (body === "none") this.end(ends, i);
          break;
        }
        case "length": {
          const take = Math.min(this.remaining, chunk.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.end(ends, i);
          break;
        }
        case "chunk-size": {
          const j = this.readLine(chunk, i, "\r\n");
          if (j < 0) return ends;
          i = j;
          const size = Number.parseInt(this.line.split(";")[0]!.trim(), 16);
          this.line = "";
          if (!Number.isFinite(size) || size <= 0) this.state = "trailers";
          else {
            this.remaining = size;
            this.state = "chunk-data";
          }
          break;
        }
        case "chunk-data": {
          const take = Math.min(this.remaining, chunk.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.state = "chunk-crlf";
          break;
        }
        case "chunk-crlf": {
          const j = this.readLine(chunk, i, "\r\n");
          if (j < 0) return ends;
          i = j;
          this.line = "";
          this.state = "chunk-size";
          break;
        }
        case "trailers": {
          // the trailer section ends with an empty line: the line just read is "" when there is none
          const j = this.readLine(chunk, i, "\r\n");
          if (j < 0) return ends;
          i = j;
          const last = this.line === "";
          this.line = "";
          if (last) this.end(ends, i);
          break;
        }
        case "until-close":
          return ends;
      }
    }
    return ends;
  }

  /** Accumulate into `line` up to and without `terminator`; the offset past it, or -1 when it is not in `chunk` yet. */
  private readLine(chunk: Buffer, from: number, terminator: string): number {
    const held = this.line;
    // the terminator may straddle two chunks: its start among the last bytes held
    const carry = held.slice(Math.max(0, held.length - (terminator.length - 1)));
    const probe = carry + chunk.toString("latin1", from, Math.min(chunk.length, from + terminator.length - 1));
    const straddle = probe.indexOf(terminator);
    if (carry && straddle >= 0 && straddle < carry.length) {
      this.line = held.slice(0, held.length - carry.length + straddle);
      return from + straddle + terminator.length - carry.length;
    }
    const at = chunk.indexOf(terminator, from, "latin1");
    if (at < 0) {
      this.line = held + chunk.toString("latin1", from);
      return -1;
    }
    this.line = held + chunk.toString("latin1", from, at);
    return at + terminator.length;
  }

  /** Set the state for the body the head announces: none, one (state set), or an informational head (no end). */
  private startBody(head: string): "none" | "body" | "informational" {
    const [statusLine = "", ...fields] = head.split("\r\n");
    const status = Number(statusLine.split(" ")[1]);
    const header = (name: string) =>
      fields
        .filter((f) => f.slice(0, f.indexOf(":")).trim().toLowerCase() === name)
        .map((f) =>
          f
            .slice(f.indexOf(":") + 1)
            .trim()
            .toLowerCase(),
        );
    if (status >= 100 && status < 200) {
      // informational: the final response follows on the same connection
      this.state = "head";
      return "informational";
    }
    this.state = "head";
    if (status === 204 || status === 304) return "none";
    if (header("transfer-encoding").some((v) => v.includes("chunked"))) {
      this.state = "chunk-size";
      return "body";
    }
    const length = header("content-length")[0];
    if (length === undefined) {
      this.state = "until-close";
      return "body";
    }
    this.remaining = Number(length);
    if (!(this.remaining > 0)) return "none";
    this.state = "length";
    return "body";
  }

  private end(ends: number[], at: number) {
    this.state = "head";
    this.completed++;
    ends.push(at);
  }
}
