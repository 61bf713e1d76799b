# Convenience entry points; the build itself is CMake (CMakeLists.txt).
#   make tune    install what is missing, build, tune a shipped kernel on the best backend found
#   make check   install what is missing, build, run every test (ends on "N passed, N failed")
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build tune check clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$$(nproc)

tune: build
	@scripts/tune-demo.sh $(BUILD)/ktune

check: build
	@scripts/run-tests.sh $(BUILD)

clean:
	rm -rf $(BUILD)
