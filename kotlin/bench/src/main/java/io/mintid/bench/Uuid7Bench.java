package io.mintid.bench;

import com.github.f4b6a3.uuid.UuidCreator;
import com.github.f4b6a3.uuid.factory.standard.TimeOrderedEpochFactory;
import io.mintid.Uuid7Generator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** One UUIDv7 as a java.util.UUID (and as text), mintid beside uuid-creator and the JDK. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class Uuid7Bench {
    private final Uuid7Generator mintid = new Uuid7Generator();
    private final TimeOrderedEpochFactory creatorLocal = new TimeOrderedEpochFactory();

    @Benchmark
    public UUID mintidUuid7() {
        return mintid.next();
    }

    /** One boundary crossing for 4096 UUIDs, per UUID: what the buffer pays to refill. */
    @Benchmark
    @OperationsPerInvocation(4096)
    public List<UUID> mintidNextUuids4096() {
        return mintid.nextUuids(4096);
    }

    @Benchmark
    public String mintidUuid7String() {
        return mintid.nextString();
    }

    @Benchmark
    public UUID uuidCreatorTimeOrderedEpoch() {
        return UuidCreator.getTimeOrderedEpoch();
    }

    @Benchmark
    public UUID uuidCreatorLocalFactory() {
        return creatorLocal.create();
    }

    @Benchmark
    public String uuidCreatorString() {
        return UuidCreator.getTimeOrderedEpoch().toString();
    }

    @Benchmark
    public UUID jdkRandomUuid() {
        return UUID.randomUUID();
    }

    /** The clock read of every hand-out (and of every peer's call). */
    @Benchmark
    public long systemCurrentTimeMillis() {
        return System.currentTimeMillis();
    }

    /** The monotonic clock, for comparison: no cheaper on Linux (both are one vDSO clock_gettime). */
    @Benchmark
    public long systemNanoTime() {
        return System.nanoTime();
    }
}
