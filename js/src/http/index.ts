/**
 * `mintid/http`: the framework-neutral core of the HTTP integrations
 * (`mintid/http/express`, `mintid/http/fastify`), for wiring another framework.
 *
 * @packageDocumentation
 */

export { HTTP, type HttpAnswer, problemAnswer, statusAnswer } from "./answer.js";
export { type BodyRead, checkBodyRead } from "../http-rules.js";
export { readLimited } from "./body.js";
export {
  type Admission,
  type Admitted,
  DEFAULT_BODY_LIMIT,
  DEFAULT_METHODS,
  DEFAULT_STORED_HEADERS,
  fingerprintBody,
  fingerprintRequest,
  type GrantRoute,
  headerText,
  HttpIdempotency,
  type HttpRequestView,
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyOptions,
  isJsonContentType,
  type MintidRequestState,
  payloadBytes,
  REQUEST_ID_HEADER,
  type RunAnswer,
  type RunOnceStore,
} from "./core.js";
export { type GrantEndpointOptions, grantIssuer } from "./grant.js";
export { fromStored, toStored } from "./stored.js";
