/**
 * A response as the idempotency store keeps it: the content type in the
 * record's content-type column, and in its body column the core's envelope
 * holding the status, the selected headers and the body bytes
 * (`docs/spec.md`, "HTTP integrations"; `encodeEnvelope`/`decodeEnvelope`).
 */

import { decodeEnvelope, encodeEnvelope } from "../node.js";
import type { StoredResponse } from "../store/idempotency.js";
import type { HttpAnswer } from "./answer.js";

/**
 * The stored form of `answer`, keeping only the headers named in `keep` besides content-type.
 *
 * @throws HttpError `http.invalid_status` or `http.invalid_header` (a kept header the envelope cannot hold).
 */
export function toStored(answer: HttpAnswer, keep: readonly string[]): StoredResponse {
  return encodeEnvelope(answer, keep);
}

/**
 * The answer a stored response replays.
 *
 * @throws HttpError `http.bad_stored_response` when the stored bytes are not an envelope (a record written by something else).
 */
export function fromStored(stored: StoredResponse): HttpAnswer {
  return decodeEnvelope(stored.contentType, stored.body);
}
