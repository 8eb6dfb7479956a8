# Kotlin/JVM package (kotlin/), see kotlin/README.md.
#
# 1. The native library: the release build of the wheel's (FFI_CDYLIB, mk/python.mk), so
#    the two suites share one build of it.
# 2. The uniffi Kotlin sources, generated from that very library (never committed) by the
#    uniffi-bindgen maturin builds and runs (FFI_BINDGEN: dev profile, feature `cli`), so a
#    full `make test` builds the bindgen once, whichever suite comes first.
# 3. Maven compiles, tests and installs io.mintid:mintid into the local repository
#    (Maven's default ~/.m2, so a second run downloads nothing).
# 4. A separate consumer project uses that jar with no JNA path settings: the packaging proof.
#    (5. below: the Spring Boot starter, and a separate application on it.)
MVN ?= mvn
MVN_FLAGS ?= -B --no-transfer-progress -Dstyle.color=never
FFI_LIB := target/release/libmintid_ffi.so
KOTLIN_GENERATED := kotlin/target/generated-sources/uniffi
KOTLIN_BENCH_FLAGS ?=

TEST_TARGETS += test-kotlin
BENCH_TARGETS += bench-kotlin

.PHONY: test-kotlin bench-kotlin kotlin-bindings

kotlin-bindings:
	$(FFI_CDYLIB)
	rm -rf $(KOTLIN_GENERATED)
	$(FFI_BINDGEN) generate --no-format --library $(FFI_LIB) --language kotlin --out-dir $(KOTLIN_GENERATED)

# 5. The Spring Boot starter (kotlin/spring-boot) on the jar and test jar just installed: its
#    tests on Spring Boot 4.0 and its installation in the local repository, then
#    examples/spring-consumer (a separate Spring Boot application that depends on it the way
#    any application does: one @Idempotent request sent twice), then the starter compiled and
#    its application test run on Spring Boot 3.5.
test-kotlin: kotlin-bindings
	$(MVN) $(MVN_FLAGS) -f kotlin/pom.xml install
	$(MVN) $(MVN_FLAGS) -q -f examples/jvm-consumer/pom.xml verify
	$(MVN) $(MVN_FLAGS) -f kotlin/spring-boot/pom.xml install
	$(MVN) $(MVN_FLAGS) -q -f examples/spring-consumer/pom.xml verify
	$(MVN) $(MVN_FLAGS) -f kotlin/spring-boot/pom.xml -Dboot3 -Dtest=OrdersApplicationTest clean verify

# JMH beside uuid-creator and tsid-creator in the same run; short runs for a 2-core machine.
# Then io.mintid.store on throwaway PostgreSQL and SQLite (a timed loop, from the same jar), and
# the Redis Cluster fast path in front of PostgreSQL (FastPathBench).
bench-kotlin: kotlin-bindings
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml install -DskipTests
	$(MVN) $(MVN_FLAGS) -q -f kotlin/bench/pom.xml package
	java -jar kotlin/target/bench/benchmarks.jar $(KOTLIN_BENCH_FLAGS)
	scripts/db/with-db.sh java -cp kotlin/target/bench/benchmarks.jar io.mintid.bench.StoreBench --seconds 2 --rounds 3
	scripts/db/with-db.sh java -cp kotlin/target/bench/benchmarks.jar io.mintid.bench.FastPathBench --seconds 2 --rounds 3

# Leases, segments and the outbox of io.mintid.store: timed loops on SQLite and PostgreSQL
# (kotlin/bench/store, a plain main; figures in ms and ns, not JMH).
BENCH_TARGETS += bench-kotlin-store
.PHONY: bench-kotlin-store
bench-kotlin-store: kotlin-bindings
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml install -DskipTests
	$(MVN) $(MVN_FLAGS) -q -f kotlin/bench/store/pom.xml package
	scripts/db/with-db.sh java -jar kotlin/target/bench-store/store-bench.jar
