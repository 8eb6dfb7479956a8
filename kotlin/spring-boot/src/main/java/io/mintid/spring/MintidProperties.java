package io.mintid.spring;

import io.mintid.RecordPolicy;
import io.mintid.store.Dialect;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The starter's settings, under {@code mintid.*}; every one has a safe default. */
@ConfigurationProperties("mintid")
public class MintidProperties {
    /** The database's SQL dialect; by default read from the DataSource's connection. */
    private Dialect dialect;

    /**
     * Whether to apply the schema's migrations at start-up. Off by default: apply them with
     * Flyway from {@code classpath:db/migration/mintid/<dialect>}, or turn this on.
     */
    private boolean migrate = false;

    private final Record record = new Record();
    private final Http http = new Http();
    private final RequestIds requestIds = new RequestIds();
    private final Leases leases = new Leases();
    private final Segments segments = new Segments();
    private final Outbox outbox = new Outbox();

    public Dialect getDialect() {
        return dialect;
    }

    public void setDialect(Dialect dialect) {
        this.dialect = dialect;
    }

    public boolean isMigrate() {
        return migrate;
    }

    public void setMigrate(boolean migrate) {
        this.migrate = migrate;
    }

    public Record getRecord() {
        return record;
    }

    public Http getHttp() {
        return http;
    }

    public RequestIds getRequestIds() {
        return requestIds;
    }

    public Leases getLeases() {
        return leases;
    }

    public Segments getSegments() {
        return segments;
    }

    public Outbox getOutbox() {
        return outbox;
    }

    /** The record policy; unset values are the core's defaults. */
    public static class Record {
        /** How long a claim holds its key while the operation runs (renewed meanwhile). */
        private Duration lease;

        /** How long a completed record is kept and replayed. */
        private Duration retention;

        /** Whether a final failure (a 5xx answer) is stored and replayed; else the key is released. */
        private Boolean storeErrors;

        /** The Retry-After a duplicate of a request in flight is told. */
        private Duration retryAfter;

        /** How long a duplicate waits for a request in flight before it is answered 409. */
        private Duration maxWait;

        /** How often a waiting duplicate looks again. */
        private Duration poll;

        public Duration getLease() {
            return lease;
        }

        public void setLease(Duration lease) {
            this.lease = lease;
        }

        public Duration getRetention() {
            return retention;
        }

        public void setRetention(Duration retention) {
            this.retention = retention;
        }

        public Boolean getStoreErrors() {
            return storeErrors;
        }

        public void setStoreErrors(Boolean storeErrors) {
            this.storeErrors = storeErrors;
        }

        public Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }

        public Duration getMaxWait() {
            return maxWait;
        }

        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        public Duration getPoll() {
            return poll;
        }

        public void setPoll(Duration poll) {
            this.poll = poll;
        }

        /** The policy these settings make, checked by the core when the store is built. */
        public RecordPolicy toPolicy() {
            RecordPolicy base = RecordPolicy.DEFAULT;
            return new RecordPolicy(
                    millis(lease, base.getLeaseMillis()),
                    millis(retention, base.getRetentionMillis()),
                    storeErrors == null ? base.getStoreErrors() : storeErrors,
                    millis(retryAfter, base.getRetryAfterMillis()),
                    millis(maxWait, base.getMaxWaitMillis()),
                    millis(poll, base.getPollMillis()));
        }

        private static long millis(Duration value, long otherwise) {
            return value == null ? otherwise : value.toMillis();
        }
    }

    /** The {@code @Idempotent} controller methods. */
    public static class Http {
        /** Whether the filter for {@code @Idempotent} methods is registered. */
        private boolean enabled = true;

        /** The covered methods (default the core's: POST and PATCH); others pass through. */
        private List<String> methods;

        /** The largest body read, in bytes (default the core's: 1 MiB); above it 413. */
        private Integer bodyLimit;

        /** The header of signed request IDs (default the core's: Mintid-Request-Id). */
        private String requestIdHeader;

        /**
         * Whether plain {@code Idempotency-Key} values count (default: only without a key ring).
         */
        private Boolean acceptIdempotencyKey;

        /** Serves the grant endpoint (POST) at this path when a key ring is configured. */
        private String grantPath;

        /** How long a grant lasts (default the core's: one hour). */
        private Duration grantTtl;

        /**
         * Whether {@code @Idempotent} methods run in the same-transaction mode: each in a Spring
         * transaction of the store's data source with the record, so that the method's JDBC
         * writes on that data source commit or roll back with its completed record (default
         * false: run-once, the method commits its own writes, then the record completes).
         */
        private boolean sameTransaction;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public Integer getBodyLimit() {
            return bodyLimit;
        }

        public void setBodyLimit(Integer bodyLimit) {
            this.bodyLimit = bodyLimit;
        }

        public String getRequestIdHeader() {
            return requestIdHeader;
        }

        public void setRequestIdHeader(String requestIdHeader) {
            this.requestIdHeader = requestIdHeader;
        }

        public Boolean getAcceptIdempotencyKey() {
            return acceptIdempotencyKey;
        }

        public void setAcceptIdempotencyKey(Boolean acceptIdempotencyKey) {
            this.acceptIdempotencyKey = acceptIdempotencyKey;
        }

        public String getGrantPath() {
            return grantPath;
        }

        public void setGrantPath(String grantPath) {
            this.grantPath = grantPath;
        }

        public Duration getGrantTtl() {
            return grantTtl;
        }

        public void setGrantTtl(Duration grantTtl) {
            this.grantTtl = grantTtl;
        }

        public boolean isSameTransaction() {
            return sameTransaction;
        }

        public void setSameTransaction(boolean sameTransaction) {
            this.sameTransaction = sameTransaction;
        }
    }

    /** The server key that signs grants and verifies signed request IDs. */
    public static class RequestIds {
        /** The key's id (0 to 2^32 - 1). */
        private long keyId = 1;

        /** The key's secret, base64 (at least 32 bytes); without one only Idempotency-Key is read. */
        private String secret;

        public long getKeyId() {
            return keyId;
        }

        public void setKeyId(long keyId) {
            this.keyId = keyId;
        }

        public String getSecret() {
            return secret;
        }

        public void setSecret(String secret) {
            this.secret = secret;
        }
    }

    /** Worker-id leases. */
    public static class Leases {
        /** Whether a {@code WorkerLeases} bean is created. */
        private boolean enabled = false;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** ID segments. */
    public static class Segments {
        /** The segment tag; when set, a {@code SegmentIds} bean hands out its IDs. */
        private String tag;

        public String getTag() {
            return tag;
        }

        public void setTag(String tag) {
            this.tag = tag;
        }
    }

    /** The transactional outbox. */
    public static class Outbox {
        /** Whether an {@code Outbox} bean is created (relay it on a schedule of yours). */
        private boolean enabled = false;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
