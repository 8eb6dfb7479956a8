/** Reading a request body up to a limit. */

/** The body of `stream`, or `undefined` as soon as it exceeds `limit` bytes (the rest is drained, not kept). */
export async function readLimited(stream: AsyncIterable<Uint8Array | string>, limit: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of stream) {
    if (over) continue;
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > limit) over = true;
    else chunks.push(bytes);
  }
  if (over) return undefined;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
