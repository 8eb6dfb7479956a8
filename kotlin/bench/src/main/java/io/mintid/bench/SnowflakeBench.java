package io.mintid.bench;

import com.github.f4b6a3.tsid.TsidCreator;
import com.github.f4b6a3.tsid.TsidFactory;
import io.mintid.SequencePolicy;
import io.mintid.Snowflake;
import io.mintid.SnowflakeLayout;
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

/**
 * One 64-bit time-ordered ID, sustained (every benchmark runs for whole seconds, so a layout's
 * per-tick capacity counts): mintid beside tsid-creator.
 *
 * <p>tsid-creator lets its counter carry into the time field, so its IDs run ahead of the clock
 * without bound; mintid does the same under {@code SequencePolicy.borrowAhead(Long.MAX_VALUE)}.
 * Under the default policy ({@code waitForNextTick}) a classic layout issues at most 4096 IDs
 * per ms, 244 ns per ID; a layout with 16 sequence bits shows the hand-out cost within capacity.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class SnowflakeBench {
    /** Like tsid-creator: the time field runs ahead of the clock without bound. */
    private final Snowflake mintidBorrowAhead =
            Snowflake.builder(SnowflakeLayout.classic(), 7)
                    .sequencePolicy(SequencePolicy.borrowAhead(Long.MAX_VALUE))
                    .build();
    /** The default: at most 4096 IDs per ms. */
    private final Snowflake mintidWait = Snowflake.builder(SnowflakeLayout.classic(), 7).build();
    /** 16 sequence bits (65536 IDs per ms, 64 workers): the hand-out cost, never the capacity. */
    private final Snowflake mintidWideSequence =
            Snowflake.builder(SnowflakeLayout.of(41, 6, 16, 1_735_689_600_000L, 1), 7).build();
    private final TsidFactory tsidLocal = TsidFactory.newInstance1024(7);

    @Benchmark
    public long mintidNextIdBorrowAhead() {
        return mintidBorrowAhead.nextId();
    }

    @Benchmark
    public long mintidNextIdWideSequence() {
        return mintidWideSequence.nextId();
    }

    /** One boundary crossing for 4096 IDs, per ID: what the buffer pays to refill. */
    @Benchmark
    @OperationsPerInvocation(4096)
    public long[] mintidNextIds4096BorrowAhead() {
        return mintidBorrowAhead.nextIds(4096);
    }

    @Benchmark
    public long mintidNextIdWaitForNextTick() {
        return mintidWait.nextId();
    }

    @Benchmark
    public long tsidCreatorGetTsid() {
        return TsidCreator.getTsid().toLong();
    }

    @Benchmark
    public long tsidCreatorLocalFactory1024() {
        return tsidLocal.create().toLong();
    }
}
