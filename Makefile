# hipkfd: `make demo` runs the main job on kfd-sim; `make test` runs everything.
CARGO   ?= cargo
REL     := $(CURDIR)/target/release
KFDSIM  := $(REL)/kfdsim
CONF    := $(MAKE) -C hip-conformance HIPKFD_LIB=$(REL) KFDSIM=$(KFDSIM)

.PHONY: all build demo bench test header clean

all: build

## Release artifacts: libamdhip64.so (SONAME libamdhip64.so.7, with the symlink), libkfdsim.so, kfdsim.
build:
	$(CARGO) build --release --workspace
	ln -sf libamdhip64.so $(REL)/libamdhip64.so.7

## The main job: the C demo on two simulated GPUs.
demo: build
	@$(CONF) demo

## IPC latency benchmark (median and p99 of get/open/close); not part of `make test`.
bench: build
	@$(CONF) bench

## Rust tests (each test binary runs under kfdsim) and the C conformance suite.
## The last line is `N passed, N failed`.
test: build
	@tools/run-tests

## Regenerate include/hip/hip_runtime_api.h from the Rust definitions.
header:
	HIPKFD_BLESS=1 $(CARGO) test --release --test header

clean:
	$(CARGO) clean
	$(MAKE) -C hip-conformance clean
