# hipkfd: `make demo` runs the main job on kfd-sim; `make test` runs everything.
CARGO   ?= cargo
REL     := $(CURDIR)/target/release
KFDSIM  := $(REL)/kfdsim
CONF    := $(MAKE) -C hip-conformance HIPKFD_LIB=$(REL) KFDSIM=$(KFDSIM)

.PHONY: all build demo bench test reliability fuzz header clean

all: build

## Release artifacts: libamdhip64.so (SONAME libamdhip64.so.7, with the symlink), libkfdsim.so, kfdsim.
build:
	$(CARGO) build --release --workspace
	ln -sf libamdhip64.so $(REL)/libamdhip64.so.7

## The main job: the C demo on two simulated GPUs.
demo: build
	@$(CONF) demo

## Benchmarks (reports, not part of `make test`): IPC latency (median and p99 of get/open/close),
## then hipMemcpyPeer bandwidth (4 KiB..1 GiB) and small-copy latency as ratios to host memcpy
## (BENCH_TOPOLOGY=pcie-p2p-2, BENCH_MAX_MIB=256 to vary; `make -C hip-conformance peer-bench`),
## then the VMM cycle, 1 GiB chunk and cross-process sharing costs (VMM_CYCLES=100000).
bench: build
	@$(CONF) bench $(if $(BENCH_TOPOLOGY),BENCH_TOPOLOGY=$(BENCH_TOPOLOGY)) $(if $(BENCH_MAX_MIB),BENCH_MAX_MIB=$(BENCH_MAX_MIB)) $(if $(VMM_CYCLES),VMM_CYCLES=$(VMM_CYCLES))

## Rust tests (each test binary runs under kfdsim) and the C conformance suite.
## The last line is `N passed, N failed`.
test: build
	@tools/run-tests

## The long fault sweep (`make test` runs the quick one): the fault driver, the whole C suite and
## the examples under every KFDSIM_FAULTS class, seeds 1 2 3 (FAULT_SEEDS to vary); checks no
## crash, hang, leak or corruption. The last line is `N passed, N failed` (runs).
reliability: build
	@tools/fault-sweep --long

## The long fuzz run of the C ABI (hip-conformance/reliability/fuzz.c; `make test` runs a short
## one): FUZZ_CALLS operations (default 1000000) per seed of FUZZ_SEEDS (1 2 3) on 1, 2 and 4 GPUs.
fuzz: build
	@$(CONF) fuzz $(if $(FUZZ_CALLS),FUZZ_CALLS=$(FUZZ_CALLS)) $(if $(FUZZ_SEEDS),FUZZ_SEEDS="$(FUZZ_SEEDS)")

## Regenerate include/hip/hip_runtime_api.h from the Rust definitions.
header:
	HIPKFD_BLESS=1 $(CARGO) test --release --test header

clean:
	$(CARGO) clean
	$(MAKE) -C hip-conformance clean
