# Cold start (issue 29): a program's first ID in fresh processes, in Python, Node and on the
# JVM, each beside its empty runtime and a peer (scripts/bench/cold.py, docs/benchmarks.md
# "Cold start"). It needs the three packages built: the wheel in the benchmark venv, the npm
# package's dist/, the jar with kotlin-stdlib and JNA (the class path Maven resolves).
# COLD_ROUNDS processes per case (the median and the 90th percentile are printed).

COLD_ROUNDS ?= 20
COLD_CLASSPATH := kotlin/target/cold-classpath.txt

BENCH_TARGETS += bench-cold
.PHONY: bench-cold

bench-cold: python-wheel js-build kotlin-bindings
	$(call py_fresh_venv,$(PY_BENCH_VENV),python/requirements/bench.txt)
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml install -DskipTests
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml dependency:build-classpath \
	  -DincludeArtifactIds=kotlin-stdlib,jna -Dmdep.outputFile=$(CURDIR)/$(COLD_CLASSPATH)
	$(PYTHON) scripts/bench/cold.py --rounds $(COLD_ROUNDS) \
	  --python $(PY_BENCH_VENV)/bin/python --node-package $(JS_DIR) \
	  --java-classpath "kotlin/target/mintid-$$($(PYTHON) scripts/dist/version.py show).jar:$$(cat $(COLD_CLASSPATH))"
