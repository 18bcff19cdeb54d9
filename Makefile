# Front door. Every target installs what is missing first (scripts/bootstrap.sh).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

FUZZ_SECONDS ?= 60

# Debug info as line tables (-g1): backtraces, perf and sanitizer reports
# still name file and line, and a build takes about a quarter less time than
# with full debug info (-g). CMAKE_FLAGS can set the flags back.
LINE_TABLES = -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O2 -g1 -DNDEBUG' \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -g1 -DNDEBUG' \
  -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1

.PHONY: all build test test-sanitize fuzz demo bench bootstrap clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD)/build.ninja: CMakeLists.txt | bootstrap
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LINE_TABLES) $(CMAKE_FLAGS) >/dev/null

build: bootstrap $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@bash scripts/run_tests.sh $(BUILD)

# Unit tests of the library under AddressSanitizer and UndefinedBehaviorSanitizer
# (CI runs it), in the instrumented build that the fuzz targets share
# (scripts/configure_sanitize.sh). The bindings are left out (a Fortran or
# Python program is not built with the sanitizer runtime), and so is the
# install test, which links uninstrumented programs against the instrumented
# library, and so are the source checks (label lint), which `make test` runs
# already. Only what these tests run is built.
test-sanitize: bootstrap
	@bash scripts/configure_sanitize.sh build-sanitize
	@cmake --build build-sanitize -j $(JOBS) --target cairn_unit_programs
	@ctest --test-dir build-sanitize -L unit -LE 'install|lint' --output-on-failure -j $(JOBS)

# Every libFuzzer target, built with clang under ASan/UBSan in build-sanitize, for
# FUZZ_SECONDS each over its corpus (docs/testing.md).
fuzz: bootstrap
	@FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) bash scripts/run_fuzz.sh

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@bash scripts/run_bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-sanitize
