# Release artifacts (docs/release.md): `make dist` writes dist/ and checks each artifact the
# way its registry and a fresh consumer would. It is not part of `make test` (21 minutes
# from a fresh clone on 2 cores, 6 with a warm target/); `make test` runs only
# `test-version`, which takes a second, and `test-crates`, which packages the three crates
# and builds each from its package.
#
#   dist/python/  manylinux2014 (glibc 2.17) py3-none wheels for x86_64 and aarch64 + the sdist
#   dist/maven/   io.mintid:mintid as a Maven repository: jar (linux-x86-64 and linux-aarch64
#                 libraries), -sources.jar, -javadoc.jar, pom; io.mintid:mintid-spring-boot-starter
#                 beside it: jar, -sources.jar, -javadoc.jar, pom
#   dist/npm/     the npm tarball
#   dist/crates/  the .crate files of `mintid`, `mintid-cli` and `mintid-store`
#   dist/SHA256SUMS
#
# Everything it needs is installed by dist-setup: a venv with maturin, ziglang (the zig
# linker that makes glibc-2.17 builds from this machine), auditwheel, twine and build; the
# Rust targets; Debian's qemu-user-static and the aarch64 C library (to load the aarch64
# library in an aarch64 process); the npm dev dependencies (publint, attw, esbuild,
# playwright-core) and Debian's chromium through setup-js.

DIST := dist
# `make dist DIST_CARGO_FLAGS=--allow-dirty` packages the crates with uncommitted changes.
DIST_CARGO_FLAGS ?=
DIST_VENV := .venv/dist
DIST_STAMP := $(DIST_VENV)/.installed
DIST_WORK := target/dist
DIST_TRIPLES := x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
# Wheels for glibc 2.17 and later (manylinux2014), linked by zig against that glibc.
DIST_MANYLINUX := 2014
# The wheels' libraries, taken out of them for the jar.
DIST_NATIVE := $(DIST_WORK)/native
# The Debian packages: qemu-aarch64-static, the aarch64 glibc and libgcc_s that the
# library links against (in /usr/aarch64-linux-gnu, the loader's prefix under qemu -L),
# and aarch64-linux-gnu-objcopy (strip-wheel.sh).
DIST_APT := qemu-user-static libc6-arm64-cross libgcc-s1-arm64-cross binutils-aarch64-linux-gnu

.PHONY: dist dist-setup dist-python dist-jvm dist-npm dist-rust test-version test-crates

TEST_TARGETS += test-version test-crates

# One version for every package (scripts/dist/version.py); cheap, so part of `make test`.
test-version:
	$(PYTHON) scripts/dist/version.py check
	$(PYTHON) scripts/dist/check-docs.py

# The crates' packages are built in a target directory of their own. Cargo takes a packaged
# crate for an immutable registry crate: it unpacks one version once (into
# $CARGO_HOME/registry/src/-<hash>/) and reuses what it built from it, so a second run after the
# core changed would build the CLI against the old core. Forget both first; every mintid unit
# in that directory comes from a package, the dependencies' stay built.
PACKAGE_TARGET := target/package-check
PACKAGED_FORGET = rm -rf $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/mintid-* \
  $(PACKAGE_TARGET)/debug/.fingerprint/mintid* $(PACKAGE_TARGET)/debug/build/mintid* \
  $(PACKAGE_TARGET)/debug/deps/*mintid* $(PACKAGE_TARGET)/debug/mintid*

# The published crates build from what they package (a file the crate compiles in but does
# not include fails here, as the fast path's Lua scripts once did); a minute or two, so part of
# `make test` too. `--allow-dirty`: `make test` runs on a working tree.
test-crates:
	$(PACKAGED_FORGET)
	$(CARGO) package --quiet --allow-dirty --target-dir $(PACKAGE_TARGET) -p mintid -p mintid-cli -p mintid-store

dist: test-version dist-python dist-jvm dist-npm dist-rust
	cd $(DIST) && find . -type f ! -name SHA256SUMS ! -path './maven/*' | sort | xargs sha256sum > SHA256SUMS
	@echo "make dist: every artifact built and checked:"
	@cd $(DIST) && find . -type f \( -name '*.whl' -o -name '*.tar.gz' -o -name '*.tgz' -o -name '*.crate' -o -name '*.jar' \) | sort | xargs ls -l | awk '{printf "  %-60s %9d B\n", $$9, $$5}'

$(DIST_STAMP): python/requirements/dist.txt
	rm -rf $(DIST_VENV)
	$(PYTHON) -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

dist-setup: $(DIST_STAMP) setup-js
	@for t in $(DIST_TRIPLES); do \
	  rustup target list --installed | grep -qx $$t || rustup target add $$t; \
	done
	@[ -x /usr/bin/qemu-aarch64-static ] && [ -e /usr/aarch64-linux-gnu/lib/libgcc_s.so.1 ] \
	  && [ -x /usr/bin/aarch64-linux-gnu-objcopy ] \
	  || { apt-get update && apt-get install -y $(DIST_APT); }

# The two wheels (zig links both against glibc 2.17), the sdist, then their checks.
# `strip = "none"`: zig's linker would drop the symbol table with the debug info, and with
# it uniffi's metadata; strip-wheel.sh removes the debug info afterwards.
dist-python: dist-setup
	rm -rf $(DIST)/python
	for t in $(DIST_TRIPLES); do \
	  (cd python && PATH=$(CURDIR)/$(DIST_VENV)/bin:$$PATH CARGO_PROFILE_RELEASE_STRIP=none \
	    ../$(DIST_VENV)/bin/maturin build --release --zig --target $$t \
	    --compatibility manylinux$(DIST_MANYLINUX) --out ../$(DIST)/python) || exit 1; \
	done
	for w in $(DIST)/python/*.whl; do PATH=$(CURDIR)/$(DIST_VENV)/bin:$$PATH scripts/dist/strip-wheel.sh $$w; done
	cd python && ../$(DIST_VENV)/bin/maturin sdist --out ../$(DIST)/python
	PATH=$(CURDIR)/$(DIST_VENV)/bin:$$PATH scripts/dist/check-python.sh $(DIST)/python $(DIST_WORK)/python

# The jar carries the very libraries of the wheels (taken out of them), and its Kotlin
# sources are generated from the x86_64 one. Its tests of the shared vectors run on that
# library (the whole suite is `make test-kotlin`); then it is deployed with its sources,
# Javadoc and pom to a file repository (`deploy` installs it in the local repository too). The
# Spring Boot starter is built on that jar and deployed beside it (its tests, which need the
# test jar a release lacks, are `make test-kotlin`'s).
dist-jvm: dist-python
	rm -rf $(KOTLIN_GENERATED) $(DIST)/maven $(DIST_NATIVE)
	for arch in x86_64 aarch64; do \
	  mkdir -p $(DIST_NATIVE)/$$arch && \
	  unzip -q -j $(DIST)/python/mintid-*_$$arch.whl 'mintid/_ffi/libmintid_ffi*.so' -d $(DIST_NATIVE)/$$arch || exit 1; \
	done
	$(FFI_BINDGEN) generate --no-format --library $(DIST_NATIVE)/x86_64/libmintid_ffi.so --language kotlin --out-dir $(KOTLIN_GENERATED)
	$(MVN) $(MVN_FLAGS) -q -f kotlin/pom.xml -Prelease -Dtest='VersionTest,VectorsTest' \
	  -Dmintid.native.dir=$(CURDIR)/$(DIST_NATIVE)/x86_64 -Dmintid.native.aarch64.dir=$(CURDIR)/$(DIST_NATIVE)/aarch64 \
	  -DaltDeploymentRepository=dist::file://$(CURDIR)/$(DIST)/maven deploy
	$(MVN) $(MVN_FLAGS) -q -f kotlin/spring-boot/pom.xml -Prelease -Dmaven.test.skip=true \
	  -DaltDeploymentRepository=dist::file://$(CURDIR)/$(DIST)/maven clean deploy
	MVN="$(MVN)" scripts/dist/check-jvm.sh $(DIST)/maven $(DIST_WORK)/jvm

# The tarball of the package `make test-js` builds, with the licenses beside it.
dist-npm: dist-setup js-build
	rm -rf $(DIST)/npm && mkdir -p $(DIST)/npm
	cp LICENSE-MIT LICENSE-APACHE $(JS_DIR)/
	cd $(JS_DIR) && npm pack --pack-destination ../$(DIST)/npm --loglevel=error --ignore-scripts
	node scripts/dist/check-npm.mjs $(DIST)/npm/mintid-*.tgz
	npm publish --dry-run --loglevel=warn $(DIST)/npm/mintid-*.tgz

# The core, the CLI and the sqlx store: a publish dry run of the three, which packages them
# and verifies them together (the CLI and the store build against the packaged core, as they
# would against crates.io); then the .crate files themselves (`cargo package`, verified
# already).
dist-rust:
	rm -rf $(DIST)/crates && mkdir -p $(DIST)/crates
	$(PACKAGED_FORGET)
	$(CARGO) publish --dry-run --target-dir $(PACKAGE_TARGET) -p mintid -p mintid-cli -p mintid-store $(DIST_CARGO_FLAGS)
	$(CARGO) package --no-verify --quiet --target-dir $(PACKAGE_TARGET) -p mintid -p mintid-cli -p mintid-store $(DIST_CARGO_FLAGS)
	for crate in mintid mintid-cli mintid-store; do \
	  cp $(PACKAGE_TARGET)/package/$$crate-$$($(PYTHON) scripts/dist/version.py show).crate $(DIST)/crates/ || exit 1; \
	done
	@for crate in $(DIST)/crates/*.crate; do \
	  for file in README.md LICENSE-MIT LICENSE-APACHE; do \
	    tar -tzf $$crate | grep -x "$$(basename $$crate .crate)/$$file" > /dev/null \
	      || { echo "$$crate lacks $$file"; exit 1; }; \
	  done; \
	  echo "$$crate: README.md and both licenses inside"; \
	done
