package io.mintid.bench;

import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.mintid.Fingerprint;
import io.mintid.IdempotencyKey;
import io.mintid.RecordPolicy;
import io.mintid.store.Dialect;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.Migrations;
import io.mintid.store.RedisFastPath;
import io.mintid.store.RunResult;
import io.mintid.store.StoreClock;
import io.mintid.store.StoreMetrics;
import io.mintid.store.StoreRequest;
import io.mintid.store.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Redis Cluster fast path from the JVM (issue 17): {@code IdempotencyStore} with a
 * {@code RedisFastPath} over Lettuce's {@code RedisClusterClient} against the same store without
 * it, on the same PostgreSQL and the cluster of {@code scripts/db/with-db.sh}
 * ({@code MINTID_PG_*}, {@code MINTID_REDIS_CLUSTER}), measured like {@link StoreBench}: replays
 * of stored keys (through the fast path: one script, no database; database only: the record's
 * load) and a fresh key's {@code runOnce} (what the fast path adds: the check before and the
 * settle after), with 1 and 8 threads sharing one store (a HikariCP pool of 8) and one Lettuce
 * connection. Rounds interleave the rows; each row is the round with the median throughput.
 * Run by {@code make bench-kotlin}; arguments {@code --seconds S --rounds N}.
 */
public final class FastPathBench {
    private static final StoredResponse RESPONSE =
            new StoredResponse("application/json", "{\"ok\":true}".getBytes(StandardCharsets.UTF_8));
    private static final StoreRequest REQUEST =
            new StoreRequest(Fingerprint.ofJson("{\"order\":\"A-1001\",\"amount\":12.5}"));
    /** Stored keys the replays cycle through. */
    private static final int STORED = 1_000;
    private static final AtomicLong SERIAL = new AtomicLong();
    private static final String RUN = Long.toHexString(System.nanoTime());

    private FastPathBench() {}

    private static IdempotencyKey key(String kind, long serial) {
        return IdempotencyKey.of(kind, "tenant-1", RUN + "-" + serial);
    }

    private static void expect(String decision, RunResult result) {
        if (!result.getDecision().equals(decision)) {
            throw new IllegalStateException("expected " + decision + ", got " + result.getDecision());
        }
    }

    /** Replays the stored keys of [kind] in turn. */
    private static StoreBench.Step replay(IdempotencyStore store, String kind) {
        AtomicLong next = new AtomicLong();
        return own -> expect("replay", store.runOnce(key(kind, next.incrementAndGet() % STORED), REQUEST, held -> RESPONSE));
    }

    private static StoreBench.Step fresh(IdempotencyStore store) {
        return own -> expect("execute", store.runOnce(key("bench.fresh", SERIAL.incrementAndGet()), REQUEST, held -> RESPONSE));
    }

    public static void main(String[] args) throws Exception {
        StoreBench.Options options = StoreBench.Options.of(args);
        List<RedisURI> seeds = new ArrayList<>();
        for (String node : System.getenv("MINTID_REDIS_CLUSTER").split(",")) {
            seeds.add(RedisURI.create("redis://" + node));
        }
        RedisClusterClient client = RedisClusterClient.create(seeds);
        client.setOptions(ClusterClientOptions.builder()
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(100)))
                .build());
        StoreBench.schema(true);
        StoreBench.Target target = StoreBench.postgres("PostgreSQL", "");
        try (StatefulRedisClusterConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
            Migrations.migrate(target.pool(), Dialect.POSTGRES);
            RedisFastPath fastPath = new RedisFastPath(connection.sync());
            RecordPolicy policy = RecordPolicy.DEFAULT;
            IdempotencyStore databaseOnly = new IdempotencyStore(target.pool(), Dialect.POSTGRES, policy);
            IdempotencyStore fast = new IdempotencyStore(target.pool(), Dialect.POSTGRES, policy, StoreClock.SYSTEM, StoreMetrics.NONE, fastPath);
            // The stored keys: through the fast path, so that Redis holds each one's response.
            for (String kind : new String[] {"bench.db", "bench.fast"}) {
                for (long serial = 0; serial < STORED; serial++) {
                    expect("execute", fast.runOnce(key(kind, serial), REQUEST, held -> RESPONSE));
                }
            }
            // Warm-up: the JIT, the pool, the Lettuce connections to every primary.
            StoreBench.measure("warm-up", target, 8, 0.5, false, replay(fast, "bench.fast"));
            StoreBench.measure("warm-up", target, 8, 0.5, false, fresh(databaseOnly));
            List<Callable<StoreBench.Row>> runs = new ArrayList<>();
            for (int threads : new int[] {1, 8}) {
                double s = options.seconds();
                runs.add(() -> StoreBench.measure("replay, database only", target, threads, s, false, replay(databaseOnly, "bench.db")));
                runs.add(() -> StoreBench.measure("replay, fast path", target, threads, s, false, replay(fast, "bench.fast")));
                runs.add(() -> StoreBench.measure("fresh key `runOnce`, database only", target, threads, s, false, fresh(databaseOnly)));
                runs.add(() -> StoreBench.measure("fresh key `runOnce`, fast path", target, threads, s, false, fresh(fast)));
            }
            StoreBench.table(StoreBench.rounds(runs, options.rounds()));
            System.out.println();
            System.out.println("fast path: " + fastPath.getMetrics());
        } finally {
            target.pool().close();
            StoreBench.schema(false);
            client.shutdown();
        }
    }
}
