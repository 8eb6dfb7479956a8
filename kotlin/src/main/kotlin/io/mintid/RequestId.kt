package io.mintid

import uniffi.mintid_ffi.grantMint
import uniffi.mintid_ffi.grantParse
import uniffi.mintid_ffi.requestIdFreshnessDefaults
import uniffi.mintid_ffi.requestIdParse
import uniffi.mintid_ffi.requestIdVerifyUnsigned
import java.util.UUID
import uniffi.mintid_ffi.Grant as FfiGrant
import uniffi.mintid_ffi.KeyRing as FfiKeyRing
import uniffi.mintid_ffi.SignedRequestId as FfiRequestId

/**
 * How fresh a request ID must be when it is verified.
 *
 * @property maxAgeMillis how old (by its UUIDv7 timestamp) an ID may be.
 * @property maxSkewMillis how far ahead of the verifier's clock an ID may be.
 * @throws ArgumentException `argument.negative` for a negative bound.
 */
data class Freshness(
    val maxAgeMillis: Long,
    val maxSkewMillis: Long,
) {
    init {
        requireNonNegative(maxAgeMillis, "max_age")
        requireNonNegative(maxSkewMillis, "max_skew")
    }

    /** The core's defaults. */
    companion object {
        /** The core's default bounds: a day of age, five minutes of clock skew. */
        @JvmField
        val DEFAULT: Freshness = requestIdFreshnessDefaults().let { Freshness(it.maxAgeMillis.toLong(), it.maxSkewMillis.toLong()) }
    }
}

/**
 * A grant: the right to mint request IDs for one scope until an expiry, issued by a server's
 * [KeyRing] and sent to the client as its 58-character [text]. Its grant key is a bearer
 * secret of that scope.
 */
class Grant private constructor(
    /** The 58-character text the server sends the client. */
    val text: String,
    /** The id of the server key the grant was derived from (0 to 2^32 - 1). */
    val keyId: Long,
    /** When the grant expires, in Unix milliseconds. */
    val expiresMillis: Long,
    private val grantKey: ByteArray,
) {
    /** A copy of the 32-byte key the grant's request IDs are tagged with. */
    fun grantKey(): ByteArray = grantKey.copyOf()

    /**
     * Mints a request ID carrying [uuid] (a new UUIDv7 by default).
     *
     * @throws Uuid7Exception if [uuid] is no UUIDv7.
     */
    @JvmOverloads
    fun mint(uuid: UUID = uuid7()): RequestId = RequestId.mint(this, uuid)

    /** Equal when the texts are. */
    override fun equals(other: Any?): Boolean = other is Grant && text == other.text

    override fun hashCode(): Int = text.hashCode()

    /** The text; see [text]. */
    override fun toString(): String = text

    /** Reading grants. */
    companion object {
        internal fun of(grant: FfiGrant) = Grant(grant.text, grant.keyId.toLong(), grant.expiresMillis.toLong(), grant.grantKey)

        /**
         * Reads the text of a grant.
         *
         * @throws RequestIdException `request_id.malformed_grant`.
         */
        @JvmStatic
        fun parse(text: String): Grant = of(core { grantParse(text) })
    }
}

/**
 * A signed request ID: a UUIDv7 a client minted from a [Grant], tagged so that the server can
 * verify it was minted by a holder of a grant for the caller's scope, and is fresh. Its text is
 * 58 base64url characters.
 *
 * Java: `RequestId.mint(grant)`, `RequestId.verify(ring, text, scope)`.
 */
class RequestId private constructor(
    /** The 58-character text. */
    val text: String,
    /** The id of the server key of its grant. */
    val keyId: Long,
    /** When its grant expires, in Unix milliseconds. */
    val expiresMillis: Long,
    /** The UUIDv7 it carries, not yet verified. */
    val unverifiedUuid: UUID,
    private val tag: ByteArray,
) {
    /** A copy of the 16-byte tag. */
    fun tag(): ByteArray = tag.copyOf()

    /** Equal when the texts are. */
    override fun equals(other: Any?): Boolean = other is RequestId && text == other.text

    override fun hashCode(): Int = text.hashCode()

    /** The text; see [text]. */
    override fun toString(): String = text

    /** Minting, reading and verifying request IDs. */
    companion object {
        private fun of(id: FfiRequestId) =
            RequestId(id.text, id.keyId.toLong(), id.expiresMillis.toLong(), Uuids.fromBigEndian(id.uuid), id.tag)

        /**
         * Mints a request ID from [grant] carrying [uuid] (a new UUIDv7 by default).
         *
         * @throws Uuid7Exception if [uuid] is no UUIDv7.
         */
        @JvmStatic
        @JvmOverloads
        fun mint(
            grant: Grant,
            uuid: UUID = uuid7(),
        ): RequestId = of(core { grantMint(grant.text, Uuids.toBytes(uuid)) })

        /**
         * Reads the text of a signed request ID without verifying it.
         *
         * @throws RequestIdException `request_id.malformed` or `request_id.unsupported_version`.
         */
        @JvmStatic
        fun parse(text: String): RequestId = of(core { requestIdParse(text) })

        /**
         * Verifies a signed request ID for the caller's [scope] at [nowMillis] against the keys
         * of [ring]; returns the UUIDv7 it carries.
         *
         * @throws RequestIdException a `request_id.*` code naming the first check that failed.
         */
        @JvmStatic
        @JvmOverloads
        fun verify(
            ring: KeyRing,
            text: String,
            scope: String,
            nowMillis: Long = System.currentTimeMillis(),
            freshness: Freshness = Freshness.DEFAULT,
        ): UUID = ring.verify(text, scope, nowMillis, freshness)

        /**
         * Checks an unsigned request ID, a UUIDv7 in any text form, for freshness at [nowMillis];
         * returns it.
         *
         * @throws RequestIdException `request_id.malformed`, `request_id.too_old` or
         *   `request_id.in_future`.
         * @throws ArgumentException `argument.negative` for a negative time.
         */
        @JvmStatic
        @JvmOverloads
        fun verifyUnsigned(
            text: String,
            nowMillis: Long = System.currentTimeMillis(),
            freshness: Freshness = Freshness.DEFAULT,
        ): UUID {
            val now = requireNonNegative(nowMillis, "the time")
            return Uuids.fromBigEndian(
                core {
                    requestIdVerifyUnsigned(text, now, freshness.maxAgeMillis.toULong(), freshness.maxSkewMillis.toULong())
                },
            )
        }
    }
}

/**
 * A server's keys for request IDs: the current key issues grants, every key verifies the IDs
 * minted from its grants, so keys rotate without breaking IDs in flight. Safe to share between
 * threads.
 *
 * @param keyId the id of the first, current key (0 to 2^32 - 1).
 * @param secret its secret: at least 32 random bytes.
 * @throws RequestIdException `request_id.weak_secret`.
 * @throws ArgumentException `argument.out_of_range` for a key id beyond 32 bits.
 */
class KeyRing(
    keyId: Long,
    secret: ByteArray,
) {
    private val ffi = core { FfiKeyRing(requireUInt(keyId, "the key id"), secret) }

    /**
     * Adds a key that verifies but does not issue.
     *
     * @throws RequestIdException `request_id.weak_secret` or `request_id.duplicate_key_id`.
     */
    fun add(
        keyId: Long,
        secret: ByteArray,
    ) = core { ffi.add(requireUInt(keyId, "the key id"), secret) }

    /**
     * Makes a new key current; the previous one keeps verifying until retired.
     *
     * @throws RequestIdException `request_id.weak_secret` or `request_id.duplicate_key_id`.
     */
    fun rotate(
        keyId: Long,
        secret: ByteArray,
    ) = core { ffi.rotate(requireUInt(keyId, "the key id"), secret) }

    /**
     * Removes a key that is not current.
     *
     * @throws RequestIdException `request_id.current_key` or `request_id.unknown_key`.
     */
    fun retire(keyId: Long) = core { ffi.retire(requireUInt(keyId, "the key id")) }

    /** The id of the current key. */
    val currentId: Long get() = ffi.currentId().toLong()

    /** The ids of every key, the current one first. */
    val keyIds: List<Long> get() = ffi.keyIds().map { it.toLong() }

    /**
     * Issues a grant with the current key for [scope] until [expiresMillis].
     *
     * @throws RequestIdException `request_id.invalid_scope` or `request_id.expiry_out_of_range`
     *   (a negative time included).
     */
    fun issueGrant(
        scope: String,
        expiresMillis: Long,
    ): Grant = Grant.of(core { ffi.issueGrant(scope, expiresMillis.toULong()) })

    /**
     * Verifies a signed request ID for the caller's [scope] at [nowMillis]; returns the UUIDv7
     * it carries.
     *
     * @throws RequestIdException a `request_id.*` code naming the first check that failed.
     * @throws ArgumentException `argument.negative` for a negative time.
     */
    @JvmOverloads
    fun verify(
        text: String,
        scope: String,
        nowMillis: Long = System.currentTimeMillis(),
        freshness: Freshness = Freshness.DEFAULT,
    ): UUID {
        val now = requireNonNegative(nowMillis, "the time")
        return Uuids.fromBigEndian(
            core { ffi.verify(text, scope, now, freshness.maxAgeMillis.toULong(), freshness.maxSkewMillis.toULong()) },
        )
    }
}
