package io.mintid

import java.util.UUID
import uniffi.mintid_ffi.Uuid7Generator as FfiGenerator

/**
 * A UUIDv7 generator (RFC 9562, monotonic within a millisecond) that any number of threads may
 * share.
 *
 * Every UUID is unique; each thread sees its UUIDs increase; and a UUID's timestamp is never
 * more than 1 ms behind the wall clock when it is handed out. The core makes UUIDs in bulk
 * (one boundary crossing per batch, the batch size following the caller's rate) and this
 * generator hands them out from a lock-free buffer.
 *
 * Java: `new Uuid7Generator()`, `new Uuid7Generator(RollbackPolicy.fail())`,
 * `Uuid7Generator.forTesting(clock, entropy, policy)`.
 */
class Uuid7Generator private constructor(
    private val ffi: FfiGenerator,
    testClock: ManualClock?,
) {
    /**
     * A generator on the system clock and the per-thread, OS-seeded random generator.
     *
     * @param policy what to do when the clock goes backwards; `null` takes the core's default.
     */
    @JvmOverloads
    constructor(policy: RollbackPolicy? = null) : this(FfiGenerator(policy?.toFfi(), null, null), null)

    private val buffer =
        object : IdBuffer(2, rfcOrder = true, testClock) {
            override fun fetchBatch(handedOut: Int) = core { ffi.nextBatch(handedOut.toUInt()) }

            override fun fetch(count: Int) = core { ffi.nextBytes(count.toUInt()) }
        }

    /**
     * The next UUIDv7.
     *
     * @throws Uuid7Exception `uuid7.clock_rollback` when the clock went back further than the
     *   [policy] allows, or `uuid7.timestamp_overflow`.
     */
    fun next(): UUID {
        while (true) {
            val batch = buffer.current
            val offset = buffer.claim(batch)
            if (offset >= 0) return UUID(buffer.word(batch, offset), buffer.word(batch, offset + 1))
            buffer.refill(batch, offset)
        }
    }

    /**
     * [count] new UUIDv7s from one boundary crossing and one clock reading, in increasing order.
     *
     * @throws ArgumentException `argument.negative` for a negative [count],
     *   `argument.batch_too_large` above 65536.
     * @throws Uuid7Exception as [next] does; a failed call issues nothing.
     */
    fun nextUuids(count: Int): List<UUID> {
        val words = buffer.bulk(count)
        return List(words.size / 2) { UUID(words[2 * it], words[2 * it + 1]) }
    }

    /** The next UUIDv7, hyphenated; see [next]. */
    fun nextString(): String = next().toString()

    /** The next UUIDv7 written in [form]; see [next]. */
    fun nextString(form: UuidTextForm): String = Uuids.format(next(), form)

    /** What the generator does when the clock goes backwards. */
    val policy: RollbackPolicy
        get() = RollbackPolicy.fromFfi(ffi.policy())

    /** Factories. */
    companion object {
        /**
         * A deterministic generator for tests: it reads [clock] (one UUID per boundary
         * crossing, so every call sees the time the test set) and, when [entropy] is given,
         * replays and cycles those bytes instead of drawing random ones.
         */
        @JvmStatic
        @JvmOverloads
        fun forTesting(
            clock: ManualClock,
            entropy: ByteArray? = null,
            policy: RollbackPolicy? = null,
        ): Uuid7Generator = Uuid7Generator(FfiGenerator(policy?.toFfi(), clock.ffi, entropy), clock)
    }
}
