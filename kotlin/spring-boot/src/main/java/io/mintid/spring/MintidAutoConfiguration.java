package io.mintid.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.mintid.KeyRing;
import io.mintid.LeasePolicy;
import io.mintid.RelayPolicy;
import io.mintid.SegmentPolicy;
import io.mintid.metrics.MicrometerMetrics;
import io.mintid.store.Dialect;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.Migrations;
import io.mintid.store.Outbox;
import io.mintid.store.SegmentIds;
import io.mintid.store.StoreClock;
import io.mintid.store.StoreMetrics;
import io.mintid.store.WorkerLeases;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store from the application's {@link DataSource}: an {@link IdempotencyStore} (its dialect
 * read from the connection unless {@code mintid.dialect} names it), the same-transaction way,
 * the store's Micrometer metrics when the application has a {@link MeterRegistry}, a key ring
 * when {@code mintid.request-ids.secret} is set, and worker leases, segments and the outbox
 * when their properties enable them. Every bean backs off when the application declares its own.
 * An application whose database lacks mintid's schema does not start
 * ({@link MintidStartupException}).
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration",
            "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
        })
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(MintidProperties.class)
public class MintidAutoConfiguration {
    /** The store's SQL dialect: the property's, else the database product's. */
    static Dialect dialect(DataSource dataSource, MintidProperties properties) {
        if (properties.getDialect() != null) {
            return properties.getDialect();
        }
        String product;
        try (Connection connection = dataSource.getConnection()) {
            product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        } catch (SQLException error) {
            throw new IllegalStateException("mintid: cannot read the database's product name; set mintid.dialect", error);
        }
        if (product.contains("postgres")) {
            return Dialect.POSTGRES;
        }
        if (product.contains("mysql") || product.contains("mariadb")) {
            return Dialect.MYSQL;
        }
        if (product.contains("sqlite")) {
            return Dialect.SQLITE;
        }
        throw new IllegalStateException("mintid: no dialect for the database " + product + "; set mintid.dialect");
    }

    /** The idempotency records, in the application's database. */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyStore idempotencyStore(
            DataSource dataSource, MintidProperties properties, ObjectProvider<StoreMetrics> metrics) {
        Dialect dialect = dialect(dataSource, properties);
        if (properties.isMigrate()) {
            Migrations.migrate(dataSource, dialect);
        }
        return new IdempotencyStore(
                dataSource,
                dialect,
                properties.getRecord().toPolicy(),
                StoreClock.SYSTEM,
                metrics.getIfAvailable(() -> StoreMetrics.NONE));
    }

    /**
     * With migrations off ({@code mintid.migrate=false}, the default), stops the start when the
     * application's database lacks mintid's schema or part of it, naming the ways to apply it.
     * It looks once every singleton exists: after Flyway's and Liquibase's migrations ran.
     */
    @Bean
    @ConditionalOnProperty(name = "mintid.migrate", havingValue = "false", matchIfMissing = true)
    static SmartInitializingSingleton mintidSchemaCheck(ObjectProvider<IdempotencyStore> stores) {
        return () -> stores.ifAvailable(MintidAutoConfiguration::checkSchema);
    }

    /** Fails with the migrations {@code store}'s database lacks, if any. */
    static void checkSchema(IdempotencyStore store) {
        Dialect dialect = store.getDialect();
        List<Long> pending;
        Exception unreadable = null;
        try {
            pending = Migrations.pending(store.getDataSource(), dialect);
        } catch (Exception error) {
            // Kotlin's Migrations may throw the driver's SQLException without declaring it.
            pending = null;
            unreadable = error;
        }
        if (pending != null && pending.isEmpty()) {
            return;
        }
        String what = pending == null
                ? "mintid's schema is not in the application's database: its table mintid_schema_migrations cannot be read ("
                        + unreadable.getMessage() + "), so every idempotent request would fail."
                : "mintid's schema in the application's database lacks the migrations " + pending
                        + ", so idempotent requests would fail.";
        String directory = dialect.getDirectory();
        throw new MintidStartupException(
                what,
                "Apply mintid's migrations: set mintid.migrate=true (the starter applies them at start-up), or run them"
                        + " with Flyway (spring.flyway.locations=classpath:db/migration/mintid/" + directory
                        + ") or Liquibase (spring.liquibase.change-log=classpath:db/changelog/mintid/" + directory
                        + ".xml), or call io.mintid.store.Migrations.migrate(dataSource, Dialect." + dialect.name()
                        + ") before the application starts.",
                unreadable);
    }

    /** The same-transaction way, joining the current {@code @Transactional} method. */
    @Bean
    @ConditionalOnMissingBean
    public TransactionalIdempotency transactionalIdempotency(IdempotencyStore store) {
        return new TransactionalIdempotency(store);
    }

    /** The key ring of signed request IDs and grants. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty("mintid.request-ids.secret")
    public KeyRing mintidKeyRing(MintidProperties properties) {
        MintidProperties.RequestIds ids = properties.getRequestIds();
        return new KeyRing(ids.getKeyId(), Base64.getDecoder().decode(ids.getSecret()));
    }

    /** Worker-id leases for Snowflake generators. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "mintid.leases.enabled", havingValue = "true")
    public WorkerLeases workerLeases(
            DataSource dataSource, MintidProperties properties, ObjectProvider<StoreMetrics> metrics) {
        return new WorkerLeases(
                dataSource,
                dialect(dataSource, properties),
                new LeasePolicy(),
                StoreClock.SYSTEM,
                metrics.getIfAvailable(() -> StoreMetrics.NONE));
    }

    /** The IDs of the segment {@code mintid.segments.tag}. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty("mintid.segments.tag")
    public SegmentIds segmentIds(
            DataSource dataSource, MintidProperties properties, ObjectProvider<StoreMetrics> metrics) {
        return new SegmentIds(
                dataSource,
                dialect(dataSource, properties),
                properties.getSegments().getTag(),
                new SegmentPolicy(),
                StoreClock.SYSTEM,
                true,
                metrics.getIfAvailable(() -> StoreMetrics.NONE));
    }

    /** The transactional outbox (relay it on a schedule of yours). */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "mintid.outbox.enabled", havingValue = "true")
    public Outbox outbox(DataSource dataSource, MintidProperties properties, ObjectProvider<StoreMetrics> metrics) {
        return new Outbox(
                dataSource,
                dialect(dataSource, properties),
                new RelayPolicy(),
                StoreClock.SYSTEM,
                metrics.getIfAvailable(() -> StoreMetrics.NONE));
    }

    /** The store's metrics in the application's Micrometer registry, when it has one. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(MeterRegistry.class)
        StoreMetrics mintidStoreMetrics(MeterRegistry registry) {
            return new MicrometerMetrics(registry);
        }
    }
}
