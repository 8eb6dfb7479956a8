// Runners for tests/vectors/http.json, by op.
import assert from "node:assert/strict";
import {
  decodeEnvelope,
  defaultKind,
  encodeEnvelope,
  fingerprintBody,
  fingerprintRequest,
  grantDocument,
  HttpError,
  httpDefaults,
  isJsonContentType,
  problemDocument,
  statusDocument,
} from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

/** `action()`'s result, or the case's error (an `HttpError` with its code and position). */
function outcome(vector, where, action, check) {
  if ("error" in vector) {
    expectError(action, vector.error, where, vector);
    assert.throws(action, HttpError, where);
  } else {
    check(action());
  }
}

const nullable = (value) => (value === null ? undefined : value);

export const httpRunners = {
  default_kind(vector, where) {
    outcome(vector, where, () => defaultKind(vector.method, vector.path), (kind) => assert.equal(kind, vector.kind, where));
  },
  is_json_content_type(vector, where) {
    assert.equal(isJsonContentType(nullable(vector.content_type)), vector.expect, where);
  },
  fingerprint_body(vector, where) {
    outcome(vector, where, () => fingerprintBody(nullable(vector.content_type), fromHex(vector.body)), (fingerprint) => assert.equal(fingerprint.text, vector.fingerprint, where));
  },
  fingerprint_request(vector, where) {
    outcome(
      vector,
      where,
      () => fingerprintRequest(nullable(vector.content_type), vector.query, fromHex(vector.body)),
      (fingerprint) => assert.equal(fingerprint.text, vector.fingerprint, where),
    );
  },
  problem_document(vector, where) {
    assert.equal(problemDocument(vector.problem, vector.detail), vector.body, where);
  },
  status_document(vector, where) {
    outcome(vector, where, () => statusDocument(vector.status, vector.detail), (body) => assert.equal(body, vector.body, where));
  },
  grant_document(vector, where) {
    assert.equal(grantDocument(vector.grant, BigInt(vector.expires)), vector.body, where);
  },
  encode_envelope(vector, where) {
    const response = { status: vector.status, headers: vector.headers, body: fromHex(vector.body) };
    outcome(vector, where, () => encodeEnvelope(response, vector.stored_headers), (stored) => {
      assert.equal(stored.contentType, vector.content_type, where);
      assert.equal(toHex(stored.body), vector.envelope, where);
    });
  },
  decode_envelope(vector, where) {
    outcome(vector, where, () => decodeEnvelope(vector.content_type, fromHex(vector.envelope)), (response) => {
      assert.equal(response.status, vector.status, where);
      assert.deepEqual(response.headers, vector.headers, where);
      assert.equal(toHex(response.body), vector.body, where);
    });
  },
  defaults(vector, where) {
    const defaults = httpDefaults();
    assert.equal(defaults.idempotencyKeyHeader, vector.idempotency_key_header, where);
    assert.equal(defaults.requestIdHeader, vector.request_id_header, where);
    assert.equal(String(defaults.bodyLimit), vector.body_limit, where);
    assert.deepEqual(defaults.methods, vector.methods, where);
    assert.deepEqual(defaults.storedHeaders, vector.stored_headers, where);
    assert.equal(String(defaults.grantTtlMillis), vector.grant_ttl_millis, where);
    assert.equal(defaults.grantContentType, vector.grant_content_type, where);
    const empty = encodeEnvelope({ status: 200, headers: [], body: new Uint8Array() }, []);
    assert.equal(new TextDecoder().decode(empty.body), `${vector.envelope_magic}200\r\n\r\n`, where);
    assert.equal(vector.about_blank, JSON.parse(statusDocument(413)).type, where);
  },
};
