# The cross-language matrix (tests/cross/): request IDs and grants made by Rust (the
# `mintid` tool), Python, Kotlin and a browser, checked by each of the others.
#
# It uses what the language suites build and install (the Python test venv, the
# io.mintid:mintid jar in ~/.m2, js/dist and Debian's chromium), so in `make test` it
# adds only the release build of the command-line tool and the run itself.

TEST_TARGETS += test-cross

.PHONY: test-cross cross-cli

cross-cli:
	$(CARGO) build --release -p mintid-cli

test-cross: cross-cli test-python test-kotlin js-build
	node --test tests/cross/
