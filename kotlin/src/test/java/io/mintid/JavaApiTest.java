package io.mintid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Proves that Java callers reach the public API with plain Java: statics, builders, longs. */
class JavaApiTest {
    @Test
    void snowflakeFromJava() {
        SnowflakeLayout layout = SnowflakeLayout.preset("classic");
        Snowflake ids = Snowflake.builder(layout, 7)
                .rollback(RollbackPolicy.waitUpTo(5))
                .sequencePolicy(SequencePolicy.waitForNextTick())
                .build();
        long first = ids.nextId();
        long second = ids.nextId();
        assertTrue(first > 0 && second > first);
        assertEquals(7L, layout.decode(second).getWorker());
        assertEquals(second, Snowflake.fromBase32(Snowflake.toBase32(second)));
        assertEquals(3, ids.nextIds(3).length);
        Long highWater = ids.getHighWater();
        assertTrue(highWater != null && highWater >= second);
    }

    @Test
    void uuid7FromJava() {
        UUID a = Mintid.uuid7();
        UUID b = Uuid7.next();
        assertTrue(a.compareTo(b) < 0);
        assertEquals(7, b.version());
        Uuid7Generator generator = new Uuid7Generator(RollbackPolicy.fail());
        UUID c = generator.next();
        assertEquals(c, Uuid7.parse(Uuids.format(c, UuidTextForm.BASE32)));
        assertTrue(Uuid7.timestampMillis(c) <= System.currentTimeMillis());
        ManualClock clock = new ManualClock(1_700_000_000_000L);
        UUID fixed = Uuid7Generator.forTesting(clock).next();
        assertEquals(1_700_000_000_000L, Uuid7.fields(fixed).getUnixMillis());
    }

    @Test
    void errorsFromJava() {
        MintidException error = assertThrows(MintidException.class, () -> Uuid7.parse("nope"));
        assertTrue(error instanceof Uuid7Exception);
        assertEquals("uuid7.invalid_text", error.getCode());
        SnowflakeException snowflake =
                assertThrows(SnowflakeException.class, () -> Snowflake.builder(SnowflakeLayout.classic(), 5000).build());
        assertEquals("snowflake.worker_out_of_range", snowflake.getCode());
    }

    @Test
    void base32FromJava() {
        assertEquals("FZZZZZZZZZZZZ", Base32.encode(-1L));
    }

    @Test
    void idempotencyFromJava() {
        Fingerprint payload = Mintid.fingerprintJson("{\"b\":2,\"a\":1.0}");
        assertEquals(payload, Fingerprint.ofJson("{\"a\":1,\"b\":2}"));
        assertEquals(payload, Fingerprint.parse(payload.toString()));
        IdempotencyKey key = IdempotencyKey.fromHeader("order.create", "tenant-7", "\"A-1001\"");
        assertEquals("order.create:tenant-7:A-1001", key.toString());
        assertEquals(key, IdempotencyKey.fromFields("order.create", "tenant-7", List.of("A-1001")));
        long now = 1_000_000L;
        Decision first = Decision.decide(null, new Incoming(payload), now, RecordPolicy.DEFAULT);
        assertEquals("execute", first.getName());
        Claim claim = ((Decision.Execute) first).getClaim();
        Record stored = claim.apply(null, now).complete(claim.getFence());
        Decision again = Decision.decide(stored, new Incoming(payload), now + 1, RecordPolicy.DEFAULT);
        assertTrue(again instanceof Decision.Replay);
        assertEquals(Outcome.SUCCEEDED, ((Decision.Replay) again).getOutcome());
    }

    @Test
    void requestIdsFromJava() {
        KeyRing ring = new KeyRing(1, new byte[32]);
        Grant grant = ring.issueGrant("user:42", System.currentTimeMillis() + 60_000);
        RequestId id = RequestId.mint(Grant.parse(grant.getText()));
        UUID verified = RequestId.verify(ring, id.getText(), "user:42");
        assertEquals(id.getUnverifiedUuid(), verified);
        RequestIdException error =
                assertThrows(RequestIdException.class, () -> ring.verify(id.getText(), "user:43"));
        assertEquals("request_id.bad_tag", error.getCode());
    }
}
