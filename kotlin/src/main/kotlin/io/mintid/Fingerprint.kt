package io.mintid

import uniffi.mintid_ffi.fingerprintBytes
import uniffi.mintid_ffi.fingerprintCanonicalJson
import uniffi.mintid_ffi.fingerprintJson
import uniffi.mintid_ffi.fingerprintParse
import uniffi.mintid_ffi.fingerprintToText
import uniffi.mintid_ffi.fingerprintValue

/**
 * The fingerprint of a request payload: SHA-256 of its RFC 8785 (JCS) canonical JSON, or of the
 * raw bytes of a non-JSON body. The same payload gives the same fingerprint in every language
 * and whatever the key order or number spelling of the JSON.
 *
 * Its text form is `sha256:` and 43 base64url characters ([toString]).
 *
 * One input rule per call, the same in every language: [of] takes a parsed value (a map, a list,
 * a number; never JSON text), [ofJson] a JSON text, [ofBytes] a raw body.
 *
 * Java: `Fingerprint.of(Map.of("a", 1))`, `Fingerprint.ofJson("{\"a\":1}")`,
 * `Fingerprint.parse("sha256:…")`.
 */
class Fingerprint private constructor(
    private val digest: ByteArray,
    /** The text form, `sha256:` and 43 base64url characters. */
    val text: String,
) {
    /** A copy of the 32 digest bytes. */
    fun digest(): ByteArray = digest.copyOf()

    /** Equal when the digests are. */
    override fun equals(other: Any?): Boolean = other is Fingerprint && digest.contentEquals(other.digest)

    override fun hashCode(): Int = digest.contentHashCode()

    /** The text form; see [text]. */
    override fun toString(): String = text

    internal fun digestBytes(): ByteArray = digest

    /** Factories. */
    companion object {
        /**
         * The fingerprint of a parsed value: a `Map` with `String` keys, a `List` (any
         * `Iterable`) or array of objects, a `String` inside them, a number, a `Boolean` or
         * null, narrowed by the JSON Pointers [include] and [exclude] as in [ofJson].
         *
         * @throws FingerprintException `fingerprint.string_value` for a value that is one string
         *   (it could be meant as JSON text, which [ofJson] takes), `fingerprint.invalid_json`
         *   for a value JSON cannot represent (a `ByteArray` among them), or the core's codes.
         */
        @JvmStatic
        @JvmOverloads
        fun of(
            value: Any?,
            include: List<String> = emptyList(),
            exclude: List<String> = emptyList(),
        ): Fingerprint {
            val text = JsonText.of(value)
            return ofDigest(core { fingerprintValue(text, include, exclude) })
        }

        /**
         * The fingerprint of the part of a JSON text that the JSON Pointers [include] (the whole
         * document when empty) and [exclude] select: volatile fields such as timestamps or
         * trace ids are left out this way.
         *
         * @throws FingerprintException a `fingerprint.*` code: invalid pointers
         *   (`fingerprint.invalid_pointer`) before the input is read, then errors in the JSON
         *   with their [MintidException.position].
         */
        @JvmStatic
        @JvmOverloads
        fun ofJson(
            json: String,
            include: List<String> = emptyList(),
            exclude: List<String> = emptyList(),
        ): Fingerprint = ofJson(json.toByteArray(Charsets.UTF_8), include, exclude)

        /** The fingerprint of a JSON text given as UTF-8 bytes; see [ofJson]. */
        @JvmStatic
        @JvmOverloads
        fun ofJson(
            json: ByteArray,
            include: List<String> = emptyList(),
            exclude: List<String> = emptyList(),
        ): Fingerprint = ofDigest(core { fingerprintJson(json, include, exclude) })

        /** The fingerprint of a raw, non-JSON body: SHA-256 of its bytes. */
        @JvmStatic
        fun ofBytes(raw: ByteArray): Fingerprint = ofDigest(fingerprintBytes(raw))

        /**
         * The RFC 8785 canonical text that [ofJson] hashes.
         *
         * @throws FingerprintException as [ofJson] does.
         */
        @JvmStatic
        @JvmOverloads
        fun canonicalJson(
            json: String,
            include: List<String> = emptyList(),
            exclude: List<String> = emptyList(),
        ): String = canonicalJson(json.toByteArray(Charsets.UTF_8), include, exclude)

        /** The RFC 8785 canonical text of a JSON text given as UTF-8 bytes; see [canonicalJson]. */
        @JvmStatic
        @JvmOverloads
        fun canonicalJson(
            json: ByteArray,
            include: List<String> = emptyList(),
            exclude: List<String> = emptyList(),
        ): String = core { fingerprintCanonicalJson(json, include, exclude) }

        /**
         * Reads the text form `sha256:` + 43 base64url characters.
         *
         * @throws FingerprintException `fingerprint.invalid_text`.
         */
        @JvmStatic
        fun parse(text: String): Fingerprint = ofDigest(core { fingerprintParse(text.toByteArray(Charsets.UTF_8)) })

        /**
         * The fingerprint with these 32 digest bytes.
         *
         * @throws ArgumentException `argument.byte_length` unless [digest] holds 32 bytes.
         */
        @JvmStatic
        fun ofDigest(digest: ByteArray): Fingerprint {
            val copy = digest.copyOf()
            return Fingerprint(copy, core { fingerprintToText(copy) })
        }
    }
}
