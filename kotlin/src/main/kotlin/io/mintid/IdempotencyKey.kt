package io.mintid

import uniffi.mintid_ffi.idempotencyKeyDerived
import uniffi.mintid_ffi.idempotencyKeyFromFields
import uniffi.mintid_ffi.idempotencyKeyFromHeader
import uniffi.mintid_ffi.idempotencyKeyIdFromFields
import uniffi.mintid_ffi.idempotencyKeyParse
import uniffi.mintid_ffi.idempotencyKeyParseHeader
import uniffi.mintid_ffi.IdempotencyKey as FfiKey

/**
 * An idempotency key, `kind:scope:id`: which operation ([kind], e.g. `order.create`), whose
 * key ([scope]: a tenant, user or client, so one client can never see another's result) and
 * which attempt ([id]). Every part is checked against the key rules of `docs/spec.md`; the
 * canonical text ([toString]) is what storage keys on.
 *
 * Java: `IdempotencyKey.fromHeader("order.create", "user:42", request.getHeader("Idempotency-Key"))`.
 */
class IdempotencyKey private constructor(
    /** The operation, e.g. `order.create`. */
    val kind: String,
    /** Whose key it is: a tenant, user or client. */
    val scope: String,
    /** Which attempt. */
    val id: String,
    /** The canonical text `kind:scope:id` (with the scope escaped as the rules say). */
    val text: String,
) {
    /** Equal when the canonical texts are. */
    override fun equals(other: Any?): Boolean = other is IdempotencyKey && text == other.text

    override fun hashCode(): Int = text.hashCode()

    /** The canonical text; see [text]. */
    override fun toString(): String = text

    /** Factories; every one fails with a [IdempotencyKeyException] whose `part` and `position` say where. */
    companion object {
        private fun of(key: FfiKey) = IdempotencyKey(key.kind, key.scope, key.id, key.text)

        /**
         * A key from its three parts.
         *
         * @throws IdempotencyKeyException `key.empty`, `key.too_long` or `key.invalid_character`.
         */
        @JvmStatic
        fun of(
            kind: String,
            scope: String,
            id: String,
        ): IdempotencyKey = IdempotencyKey(kind, scope, id, core { io.mintid.store.keyText(kind, scope, id) })

        /**
         * A key whose id is the value of an `Idempotency-Key` header: a Structured Field String
         * (`"…"`) or, as Stripe's clients send it, a bare token.
         *
         * @throws IdempotencyKeyException as [of] does, or `key.invalid_header`.
         */
        @JvmStatic
        fun fromHeader(
            kind: String,
            scope: String,
            header: String,
        ): IdempotencyKey = fromHeader(kind, scope, header.toByteArray(Charsets.UTF_8))

        /** A key whose id is the value of an `Idempotency-Key` header given as raw bytes; see [fromHeader]. */
        @JvmStatic
        fun fromHeader(
            kind: String,
            scope: String,
            header: ByteArray,
        ): IdempotencyKey = of(core { idempotencyKeyFromHeader(kind, scope, header) })

        /**
         * A key whose id is built from business fields (e.g. user, order number, date).
         *
         * @throws IdempotencyKeyException as [of] does.
         */
        @JvmStatic
        fun fromFields(
            kind: String,
            scope: String,
            fields: List<String>,
        ): IdempotencyKey = of(core { idempotencyKeyFromFields(kind, scope, fields) })

        /**
         * A key whose id is derived from the payload's [fingerprint] (a version 8 UUID), for a
         * request that came without a key.
         *
         * @throws IdempotencyKeyException as [of] does.
         */
        @JvmStatic
        fun derived(
            kind: String,
            scope: String,
            fingerprint: Fingerprint,
        ): IdempotencyKey = of(core { idempotencyKeyDerived(kind, scope, fingerprint.digestBytes()) })

        /**
         * Reads the canonical text `kind:scope:id`.
         *
         * @throws IdempotencyKeyException `key.invalid_text` or as [of] does.
         */
        @JvmStatic
        fun parse(text: String): IdempotencyKey = of(core { idempotencyKeyParse(text.toByteArray(Charsets.UTF_8)) })

        /**
         * The id an `Idempotency-Key` header value carries.
         *
         * @throws IdempotencyKeyException `key.empty`, `key.too_long`, `key.invalid_character` or
         *   `key.invalid_header`, with the byte [MintidException.position] in the value.
         */
        @JvmStatic
        fun parseHeader(value: String): String = parseHeader(value.toByteArray(Charsets.UTF_8))

        /** The id an `Idempotency-Key` header value given as raw bytes carries; see [parseHeader]. */
        @JvmStatic
        fun parseHeader(value: ByteArray): String = core { idempotencyKeyParseHeader(value) }

        /**
         * The id [fromFields] builds from [fields].
         *
         * @throws IdempotencyKeyException as [of] does for the id.
         */
        @JvmStatic
        fun idFromFields(fields: List<String>): String = core { idempotencyKeyIdFromFields(fields) }
    }
}
