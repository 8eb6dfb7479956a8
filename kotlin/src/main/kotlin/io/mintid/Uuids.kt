package io.mintid

import uniffi.mintid_ffi.uuidFormat
import uniffi.mintid_ffi.uuidInspect
import uniffi.mintid_ffi.uuidNewV8
import uniffi.mintid_ffi.uuidParse
import java.nio.ByteBuffer
import java.util.UUID
import uniffi.mintid_ffi.UuidTextForm as FfiTextForm

/** A text form of a UUID. */
enum class UuidTextForm {
    /** `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex (what [UUID.toString] gives). */
    HYPHENATED,

    /** 32 lower-case hex digits. */
    SIMPLE,

    /** `urn:uuid:` and the hyphenated form. */
    URN,

    /** 26 upper-case Crockford base32 digits. */
    BASE32,
    ;

    internal fun toFfi(): FfiTextForm =
        when (this) {
            HYPHENATED -> FfiTextForm.HYPHENATED
            SIMPLE -> FfiTextForm.SIMPLE
            URN -> FfiTextForm.URN
            BASE32 -> FfiTextForm.BASE32
        }
}

/** UUIDs of any version as [java.util.UUID]: the four text forms, bytes, version 8. */
object Uuids {
    /**
     * Reads a UUID of any version in any of the four [UuidTextForm]s.
     *
     * @throws UuidException `uuid.invalid_length`, `uuid.invalid_character` or
     *   `uuid.base32_overflow`.
     */
    @JvmStatic
    fun parse(text: String): UUID = fromBigEndian(core { uuidParse(text) }.bytes)

    /** Writes [uuid] in [form]. */
    @JvmStatic
    fun format(
        uuid: UUID,
        form: UuidTextForm,
    ): String =
        when (form) {
            UuidTextForm.HYPHENATED -> uuid.toString()
            else -> core { uuidFormat(toBytes(uuid), form.toFfi()) }
        }

    /**
     * The UUID of 16 bytes, most significant first.
     *
     * @throws ArgumentException `argument.byte_length` unless [bytes] holds exactly 16 bytes.
     */
    @JvmStatic
    fun fromBytes(bytes: ByteArray): UUID = fromBigEndian(core { uuidInspect(bytes) }.bytes)

    /** The 16 bytes of [uuid], most significant first. */
    @JvmStatic
    fun toBytes(uuid: UUID): ByteArray =
        ByteBuffer.allocate(16).putLong(uuid.mostSignificantBits).putLong(uuid.leastSignificantBits).array()

    /**
     * A version 8 UUID carrying [custom] (16 bytes) except where the version and variant
     * fields go.
     *
     * @throws ArgumentException `argument.byte_length` unless [custom] holds exactly 16 bytes.
     */
    @JvmStatic
    fun newV8(custom: ByteArray): UUID = fromBigEndian(core { uuidNewV8(custom) })

    internal fun fromBigEndian(bytes: ByteArray): UUID {
        val buffer = ByteBuffer.wrap(bytes)
        return UUID(buffer.getLong(), buffer.getLong())
    }
}
