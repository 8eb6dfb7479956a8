package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import java.util.UUID

/** Every entry point, given bad input, throws the right [MintidException] with the right code. */
class BadInputTest {
    private val layout = SnowflakeLayout.classic()
    private val v4 = UUID.fromString("f81d4fae-7dec-41d0-a765-00a0c91e6bf6")

    private inline fun <reified E : MintidException> case(
        name: String,
        code: String,
        noinline call: () -> Any?,
    ): DynamicTest =
        DynamicTest.dynamicTest("$name -> $code") {
            val error = assertThrows<E> { call() }
            assertEquals(code, error.code, error.message)
            assertEquals("$code: ${error.detail}", error.message)
        }

    @TestFactory
    fun uuids() =
        listOf(
            case<UuidException>("Uuids.parse of 35 characters", "uuid.invalid_length") { Uuids.parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf") },
            case<UuidException>("Uuids.parse of a non-hex digit", "uuid.invalid_character") { Uuids.parse("g81d4fae-7dec-41d0-a765-00a0c91e6bf6") },
            case<ArgumentException>("Uuids.fromBytes of 15 bytes", "argument.byte_length") { Uuids.fromBytes(ByteArray(15)) },
            case<ArgumentException>("Uuids.newV8 of 17 bytes", "argument.byte_length") { Uuids.newV8(ByteArray(17)) },
        )

    @TestFactory
    fun uuid7() =
        listOf(
            case<Uuid7Exception>("Uuid7.parse of text", "uuid7.invalid_text") { Uuid7.parse("not a uuid") },
            case<Uuid7Exception>("Uuid7.parse of a v4", "uuid7.wrong_version") { Uuid7.parse(v4.toString()) },
            case<Uuid7Exception>("Uuid7.fields of a v4", "uuid7.wrong_version") { Uuid7.fields(v4) },
            case<Uuid7Exception>("Uuid7.timestampMillis of a v4", "uuid7.wrong_version") { Uuid7.timestampMillis(v4) },
            case<ArgumentException>("Uuid7.fromBytes of 0 bytes", "argument.byte_length") { Uuid7.fromBytes(ByteArray(0)) },
            case<Uuid7Exception>("Uuid7.fromFields, negative ms", "uuid7.timestamp_out_of_range") { Uuid7.fromFields(-1, 0, 0) },
            case<Uuid7Exception>("Uuid7.fromFields, rand_a 4096", "uuid7.rand_a_out_of_range") { Uuid7.fromFields(0, 4096, 0) },
            case<ArgumentException>("Uuid7.fromFields, rand_a -1", "argument.out_of_range") { Uuid7.fromFields(0, -1, 0) },
            case<Uuid7Exception>("Uuid7.fromFields, negative rand_b", "uuid7.rand_b_out_of_range") { Uuid7.fromFields(0, 0, -1) },
            case<ArgumentException>("Uuid7Generator.nextUuids(-1)", "argument.negative") { Uuid7Generator().nextUuids(-1) },
            case<ArgumentException>("Uuid7Generator.nextUuids(65537)", "argument.batch_too_large") { Uuid7Generator().nextUuids(65_537) },
            case<Uuid7Exception>("Uuid7Generator.next past 48 bits", "uuid7.timestamp_overflow") {
                Uuid7Generator.forTesting(ManualClock(1L shl 48)).next()
            },
            case<Uuid7Exception>("Uuid7Generator.next after a rollback", "uuid7.clock_rollback") {
                val clock = ManualClock(1_700_000_000_000)
                val generator = Uuid7Generator.forTesting(clock, policy = RollbackPolicy.fail())
                generator.next()
                clock.rewindMillis(10)
                generator.next()
            },
        )

    @TestFactory
    fun policiesAndClocks() =
        listOf(
            case<ArgumentException>("RollbackPolicy.waitUpTo(-1)", "argument.negative") { RollbackPolicy.waitUpTo(-1) },
            case<ArgumentException>("RollbackPolicy.logical(-1)", "argument.negative") { RollbackPolicy.logical(-1) },
            case<ArgumentException>("SequencePolicy.borrowAhead(-1)", "argument.negative") { SequencePolicy.borrowAhead(-1) },
            case<ArgumentException>("ManualClock(-1)", "argument.negative") { ManualClock(-1) },
            case<ArgumentException>("ManualClock.setMillis(-1)", "argument.negative") { ManualClock(0).setMillis(-1) },
            case<ArgumentException>("ManualClock.advanceMillis(-1)", "argument.negative") { ManualClock(0).advanceMillis(-1) },
            case<ArgumentException>("ManualClock.rewindMillis(-1)", "argument.negative") { ManualClock(0).rewindMillis(-1) },
        )

    @TestFactory
    fun snowflakeLayout() =
        listOf(
            case<SnowflakeException>("SnowflakeLayout.of, no time bits", "snowflake.invalid_layout") { SnowflakeLayout.of(0, 10, 12, 0, 1) },
            case<SnowflakeException>("SnowflakeLayout.of, 64 bits", "snowflake.invalid_layout") { SnowflakeLayout.of(42, 10, 12, 0, 1) },
            case<SnowflakeException>("SnowflakeLayout.of, tick 0", "snowflake.invalid_layout") { SnowflakeLayout.of(41, 10, 12, 0, 0) },
            case<ArgumentException>("SnowflakeLayout.of, 256 bits", "argument.out_of_range") { SnowflakeLayout.of(256, 10, 12, 0, 1) },
            case<ArgumentException>("SnowflakeLayout.of, -1 bits", "argument.out_of_range") { SnowflakeLayout.of(41, -1, 12, 0, 1) },
            case<SnowflakeException>("SnowflakeLayout.preset", "snowflake.unknown_preset") { SnowflakeLayout.preset("snowflake") },
            case<SnowflakeException>("withDatacenterBits(11)", "snowflake.invalid_layout") { layout.withDatacenterBits(11) },
            case<ArgumentException>("withDatacenterBits(-1)", "argument.out_of_range") { layout.withDatacenterBits(-1) },
            case<ArgumentException>("remainingMillis(-1)", "argument.negative") { layout.remainingMillis(-1) },
            case<SnowflakeException>("workerId, worker -1", "snowflake.worker_out_of_range") { layout.workerId(0, -1) },
            case<SnowflakeException>("compose before the epoch", "snowflake.time_out_of_range") { layout.compose(0, 0, 0) },
            case<SnowflakeException>("compose, sequence 4096", "snowflake.sequence_out_of_range") {
                layout.compose(layout.epochMillis, 0, 4096)
            },
            case<SnowflakeException>("composeTick, worker 1024", "snowflake.worker_out_of_range") { layout.composeTick(0, 1024, 0) },
            case<SnowflakeException>("decode(-1)", "snowflake.id_out_of_range") { layout.decode(-1) },
        )

    @TestFactory
    fun snowflake() =
        listOf(
            case<SnowflakeException>("build, worker -1", "snowflake.worker_out_of_range") { Snowflake.builder(layout, -1).build() },
            case<SnowflakeException>("build, worker 1024", "snowflake.worker_out_of_range") { Snowflake.builder(layout, 1024).build() },
            case<SnowflakeException>("build after a negative id", "snowflake.id_out_of_range") {
                Snowflake.builder(layout, 1).startingAfterId(-1).build()
            },
            case<ArgumentException>("build after a negative time", "argument.negative") {
                Snowflake.builder(layout, 1).startingAfterUnixMillis(-1).build()
            },
            case<SnowflakeException>("nextId before the epoch", "snowflake.epoch_in_future") {
                Snowflake.builder(layout.withEpochMillis(System.currentTimeMillis() + 86_400_000), 1).build().nextId()
            },
            case<ArgumentException>("nextIds(-1)", "argument.negative") { Snowflake.builder(layout, 1).build().nextIds(-1) },
            case<ArgumentException>("nextIds(65537)", "argument.batch_too_large") { Snowflake.builder(layout, 1).build().nextIds(65_537) },
            case<SnowflakeException>("fromDecimal of letters", "snowflake.invalid_text") { Snowflake.fromDecimal("12a") },
            case<SnowflakeException>("fromDecimal of 2^63", "snowflake.id_out_of_range") { Snowflake.fromDecimal("9223372036854775808") },
            case<SnowflakeException>("fromBase32 of 12 digits", "snowflake.invalid_text") { Snowflake.fromBase32("000000000000") },
            case<SnowflakeException>("toBase32(-1)", "snowflake.id_out_of_range") { Snowflake.toBase32(-1) },
        )

    private val secret = ByteArray(32) { it.toByte() }
    private val digest = Fingerprint.ofBytes(ByteArray(0))

    @TestFactory
    fun keysAndFingerprints() =
        listOf(
            case<IdempotencyKeyException>("IdempotencyKey.of, empty kind", "key.empty") { IdempotencyKey.of("", "s", "i") },
            case<IdempotencyKeyException>("IdempotencyKey.of, upper-case kind", "key.invalid_character") { IdempotencyKey.of("Order", "s", "i") },
            case<IdempotencyKeyException>("IdempotencyKey.of, id too long", "key.too_long") { IdempotencyKey.of("k", "s", "x".repeat(300)) },
            case<IdempotencyKeyException>("IdempotencyKey.fromHeader, unterminated", "key.invalid_header") { IdempotencyKey.fromHeader("k", "s", "\"abc") },
            case<IdempotencyKeyException>("IdempotencyKey.fromFields, none", "key.empty") { IdempotencyKey.fromFields("k", "s", emptyList()) },
            case<IdempotencyKeyException>("IdempotencyKey.derived, bad scope", "key.invalid_character") { IdempotencyKey.derived("k", "a b", digest) },
            case<IdempotencyKeyException>("IdempotencyKey.parse, no separator", "key.invalid_text") { IdempotencyKey.parse("order.create") },
            case<IdempotencyKeyException>("IdempotencyKey.parseHeader, empty", "key.empty") { IdempotencyKey.parseHeader("") },
            case<IdempotencyKeyException>("IdempotencyKey.idFromFields, none", "key.empty") { IdempotencyKey.idFromFields(emptyList()) },
            case<FingerprintException>("Fingerprint.ofJson, empty", "fingerprint.invalid_json") { Fingerprint.ofJson("") },
            case<FingerprintException>("fingerprintJson(bytes), bad UTF-8", "fingerprint.invalid_utf8") { fingerprintJson(byteArrayOf(0x22, -1, 0x22)) },
            case<FingerprintException>("fingerprint(a string value)", "fingerprint.string_value") { fingerprint("{\"a\":1}") },
            case<FingerprintException>("fingerprint(bytes)", "fingerprint.invalid_json") { fingerprint(byteArrayOf(0x7b, 0x7d)) },
            case<FingerprintException>("Fingerprint.ofJson, bad pointer", "fingerprint.invalid_pointer") { Fingerprint.ofJson("{}", listOf("a")) },
            case<FingerprintException>("Fingerprint.canonicalJson, trailing comma", "fingerprint.invalid_json") {
                Fingerprint.canonicalJson("[1,]")
            },
            case<FingerprintException>("Fingerprint.parse, wrong prefix", "fingerprint.invalid_text") { Fingerprint.parse("md5:x") },
            case<ArgumentException>("Fingerprint.ofDigest, 31 bytes", "argument.byte_length") { Fingerprint.ofDigest(ByteArray(31)) },
        )

    @TestFactory
    fun requestIds() =
        listOf(
            case<RequestIdException>("KeyRing, weak secret", "request_id.weak_secret") { KeyRing(1, ByteArray(31)) },
            case<ArgumentException>("KeyRing, key id -1", "argument.out_of_range") { KeyRing(-1, secret) },
            case<ArgumentException>("KeyRing, key id 2^32", "argument.out_of_range") { KeyRing(1L shl 32, secret) },
            case<RequestIdException>("KeyRing.add, duplicate id", "request_id.duplicate_key_id") { KeyRing(1, secret).add(1, secret) },
            case<RequestIdException>("KeyRing.rotate, weak secret", "request_id.weak_secret") { KeyRing(1, secret).rotate(2, ByteArray(3)) },
            case<RequestIdException>("KeyRing.retire, current key", "request_id.current_key") { KeyRing(1, secret).retire(1) },
            case<RequestIdException>("KeyRing.retire, unknown key", "request_id.unknown_key") { KeyRing(1, secret).retire(9) },
            case<RequestIdException>("KeyRing.issueGrant, empty scope", "request_id.invalid_scope") { KeyRing(1, secret).issueGrant("", 1) },
            case<RequestIdException>("KeyRing.verify, garbage", "request_id.malformed") { KeyRing(1, secret).verify("x", "s") },
            case<ArgumentException>("KeyRing.verify, negative time", "argument.negative") { KeyRing(1, secret).verify("x", "s", -1) },
            case<RequestIdException>("Grant.parse, garbage", "request_id.malformed_grant") { Grant.parse("x") },
            case<Uuid7Exception>("Grant.mint of a v4", "uuid7.wrong_version") {
                KeyRing(1, secret).issueGrant("s", System.currentTimeMillis() + 60_000).mint(v4)
            },
            case<RequestIdException>("RequestId.parse, garbage", "request_id.malformed") { RequestId.parse("x") },
            case<RequestIdException>("RequestId.verify, another scope", "request_id.bad_tag") {
                val ring = KeyRing(1, secret)
                RequestId.verify(ring, ring.issueGrant("user:1", System.currentTimeMillis() + 60_000).mint().text, "user:2")
            },
            case<RequestIdException>("RequestId.verifyUnsigned, a v4", "request_id.malformed") { RequestId.verifyUnsigned(v4.toString()) },
            case<RequestIdException>("RequestId.verifyUnsigned, too old", "request_id.too_old") {
                RequestId.verifyUnsigned(Uuid7.fromFields(0, 0, 0).toString())
            },
            case<ArgumentException>("Freshness(-1, 0)", "argument.negative") { Freshness(-1, 0) },
        )

    @TestFactory
    fun records() =
        listOf(
            case<RecordException>("RecordStatus.parse", "record.unknown_status") { RecordStatus.parse("done") },
            case<RecordException>("RecordPolicy.check, zero lease", "record.invalid_policy") { RecordPolicy.DEFAULT.copy(leaseMillis = 0).check() },
            case<RecordException>("Decision.decide, zero lease", "record.invalid_policy") {
                Decision.decide(null, Incoming(digest), 1000, RecordPolicy.DEFAULT.copy(leaseMillis = 0))
            },
            case<RecordException>("Decision.decide past 64 bits", "record.time_overflow") {
                Decision.decide(null, Incoming(digest), -1, RecordPolicy.DEFAULT)
            },
            case<RecordException>("Record.complete, stale fence", "record.stale_token") {
                val claim = (Decision.decide(null, Incoming(digest), 1000, RecordPolicy.DEFAULT) as Decision.Execute).claim
                claim.apply(null, 1000).complete(Fence(claim.fence.token + 1, claim.fence.createdMillis))
            },
            case<RecordException>("Record.fail, not pending", "record.not_pending") {
                val claim = (Decision.decide(null, Incoming(digest), 1000, RecordPolicy.DEFAULT) as Decision.Execute).claim
                val done = claim.apply(null, 1000).complete(claim.fence)
                done.fail(claim.fence, Failure.FINAL, RecordPolicy.DEFAULT)
            },
            case<RecordException>("Claim.apply over another claim", "record.claim_conflict") {
                val claim = (Decision.decide(null, Incoming(digest), 1000, RecordPolicy.DEFAULT) as Decision.Execute).claim
                claim.apply(claim.apply(null, 1000), 1000)
            },
        )

    @TestFactory
    fun leasesSegmentsOutbox() =
        listOf(
            case<LeaseException>("LeasePolicy, 17 worker bits", "lease.invalid_policy") { LeasePolicy(SnowflakeLayout.of(30, 17, 16, 0, 1)) },
            case<LeaseException>("Acquisition.acquire of a held row", "lease.still_held") {
                Acquisition.acquire(WorkerLease(1, 2, 50_000, 0, true), 49_999, LeasePolicy(layout))
            },
            case<LeaseException>("Acquisition.noneFound, all held", "lease.no_worker_free") { Acquisition.noneFound(1024, 0, LeasePolicy(layout)) },
            case<SnowflakeException>("LeaseGuard.admit(-1)", "snowflake.id_out_of_range") {
                val policy = LeasePolicy(layout)
                LeaseGuard(Acquisition.acquire(WorkerLease(0, 0, 0, 0, false), System.currentTimeMillis(), policy), policy).admit(-1)
            },
            case<SegmentException>("SegmentPolicy.check, min step 0", "segment.invalid_policy") { SegmentPolicy(1000, 0, 1_000_000, 10, 1, 2).check() },
            case<SegmentException>("SegmentPolicy.of, min above max", "segment.invalid_policy") { SegmentPolicy.of(10, 100, 50) },
            case<SegmentException>("SegmentAllocator, bad policy", "segment.invalid_policy") { SegmentAllocator(SegmentPolicy(1000, 0, 1_000_000, 10, 1, 2)) },
            case<ArgumentException>("SegmentPolicy, fetch at 300%", "argument.out_of_range") { SegmentPolicy(10, 5, 40, 300, 1, 2).check() },
            case<ArgumentException>("SegmentAllocator.fill(-1)", "argument.negative") { SegmentAllocator(SegmentPolicy.of(10, 5, 40)).fill(-1) },
            case<OutboxException>("OutboxStatus.parse", "outbox.unknown_status") { OutboxStatus.parse("") },
            case<OutboxException>("RelayPolicy.of, batch 0", "outbox.invalid_policy") { RelayPolicy.of(0, 60_000) },
            case<OutboxException>("RelayPolicy.claim past 64 bits", "outbox.time_overflow") { RelayPolicy.of(100, 60_000).claim(-60_000, 2) },
            case<OutboxException>("OutboxRules.enqueued(2)", "outbox.unexpected_rows") { OutboxRules.enqueued(2) },
            case<OutboxException>("OutboxRules.checkMarked, 0 rows", "outbox.claim_lost") { OutboxRules.checkMarked(0, 42, 7) },
            case<OutboxException>("OutboxRules.checkMessage, empty kind", "outbox.invalid_message") { OutboxRules.checkMessage("", "k", 0) },
        )
}
