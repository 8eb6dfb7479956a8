package io.mintid

import uniffi.mintid_ffi.uuid7FromBytes
import uniffi.mintid_ffi.uuid7FromFields
import uniffi.mintid_ffi.uuid7Parse
import java.util.UUID
import uniffi.mintid_ffi.Uuid7Fields as FfiFields

/**
 * The fields of a UUIDv7 (RFC 9562): `unix_ts_ms`(48) | version | `rand_a`(12) | variant |
 * `rand_b`(62).
 *
 * @property uuid the UUID itself.
 * @property unixMillis milliseconds since the Unix epoch (48 bits).
 * @property randA the 12 bits after the version field.
 * @property randB the 62 bits after the variant field (never negative).
 * @property counter mintid's 16-bit counter: `rand_a` and the top 4 bits of `rand_b`.
 */
data class Uuid7Fields(
    val uuid: UUID,
    val unixMillis: Long,
    val randA: Int,
    val randB: Long,
    val counter: Int,
)

/**
 * UUIDv7 (RFC 9562) as [java.util.UUID]: generation from a process-wide [Uuid7Generator],
 * parsing, fields and text forms.
 */
object Uuid7 {
    private val shared by lazy { Uuid7Generator() }

    /** A new UUIDv7 from the process-wide generator (see [Uuid7Generator.next]). */
    @JvmStatic
    fun next(): UUID = shared.next()

    /** A new UUIDv7 from the process-wide generator, hyphenated. */
    @JvmStatic
    fun nextString(): String = shared.next().toString()

    /**
     * Reads a UUIDv7 in any of the four [UuidTextForm]s.
     *
     * @throws Uuid7Exception `uuid7.invalid_text`, `uuid7.wrong_version` or
     *   `uuid7.wrong_variant`.
     */
    @JvmStatic
    fun parse(text: String): UUID = core { uuid7Parse(text) }.toFields().uuid

    /**
     * Reads 16 bytes, most significant first, as a UUIDv7.
     *
     * @throws ArgumentException `argument.byte_length` unless [bytes] holds exactly 16 bytes.
     * @throws Uuid7Exception `uuid7.wrong_version` or `uuid7.wrong_variant`.
     */
    @JvmStatic
    fun fromBytes(bytes: ByteArray): UUID = fields(bytes).uuid

    /**
     * The UUIDv7 with these fields. [unixMillis] and [randB] are read as unsigned 64-bit values
     * (a negative one is far out of range).
     *
     * @throws Uuid7Exception `uuid7.timestamp_out_of_range` (beyond 48 bits),
     *   `uuid7.rand_a_out_of_range` (beyond 12 bits) or `uuid7.rand_b_out_of_range` (beyond 62
     *   bits).
     * @throws ArgumentException `argument.out_of_range` for a [randA] outside 0..65535.
     */
    @JvmStatic
    fun fromFields(
        unixMillis: Long,
        randA: Int,
        randB: Long,
    ): UUID {
        val a = requireUShort(randA, "rand_a")
        return core { uuid7FromFields(unixMillis.toULong(), a, randB.toULong()) }.toFields().uuid
    }

    /**
     * The fields of [uuid].
     *
     * @throws Uuid7Exception `uuid7.wrong_version` or `uuid7.wrong_variant` if it is no UUIDv7.
     */
    @JvmStatic
    fun fields(uuid: UUID): Uuid7Fields = fields(Uuids.toBytes(uuid))

    /** The Unix millisecond in [uuid]'s timestamp; see [fields]. */
    @JvmStatic
    fun timestampMillis(uuid: UUID): Long = fields(uuid).unixMillis

    private fun fields(bytes: ByteArray): Uuid7Fields = core { uuid7FromBytes(bytes) }.toFields()

    private fun FfiFields.toFields() =
        Uuid7Fields(
            uuid = Uuids.fromBigEndian(bytes),
            unixMillis = unixMillis.toLong(),
            randA = randA.toInt(),
            randB = randB.toLong(),
            counter = counter.toInt(),
        )
}
