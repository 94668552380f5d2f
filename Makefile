# hipkfd: `make demo` runs the main job on kfd-sim; `make test` runs everything.
CARGO   ?= cargo
REL     := $(CURDIR)/target/release
KFDSIM  := $(REL)/kfdsim
CONF    := $(MAKE) -C hip-conformance HIPKFD_LIB=$(REL) KFDSIM=$(KFDSIM)

.PHONY: all build demo bench test reliability fuzz asan lint hip-tests cupy-tests kfdtest rccl-tests header install install-files clean

all: build

## Release artifacts: libamdhip64.so (SONAME libamdhip64.so.7, with the symlink), libkfdsim.so, kfdsim,
## and the companions for machines without ROCm: libroctracer64.so (SONAME libroctracer64.so.4, also
## serving libroctx64.so.4) and librocfft.so (SONAME librocfft.so.0, a placeholder that fails).
build:
	$(CARGO) build --release --workspace
	ln -sf libamdhip64.so $(REL)/libamdhip64.so.7

## The main job: the C demo on two simulated GPUs.
demo: build
	@$(CONF) demo

## Benchmarks (reports, not part of `make test`): first the scoreboard (issue 12: every operation
## with our figure, a reference measured in the same run, the ratio and the goal, on 8 simulated
## GPUs; BENCH_JSON=path also writes it as JSON; `make -C hip-conformance scoreboard`; a "stock
## HIP 5.2" column: the same program on AMD's libamdhip64.so.5 on the same simulated machine, each
## section under STOCK_TIMEOUT seconds, STOCK=0 leaves it out; SAXPY and interpreter rows; the
## latency and CPU of each wait policy on a 4 KiB copy + sync; kernel crossings (simulated ioctls
## and device mmaps, kfd-sim's `calls.total`) per steady-state operation; with BENCH_JSON, an SVG
## beside the JSON drawn by tools/bench-plot: peer bandwidth against size, latency bars), then IPC
## latency (median and p99 of get/open/close), hipMemcpyPeer bandwidth (4 KiB..1 GiB) and
## small-copy latency as ratios to host memcpy (BENCH_TOPOLOGY=pcie-p2p-2, BENCH_MAX_MIB=256 to
## vary; `make -C hip-conformance peer-bench`), then the VMM cycle, 1 GiB chunk and cross-process
## sharing costs (VMM_CYCLES=100000).
bench: build
	@$(CONF) bench $(if $(BENCH_JSON),BENCH_JSON=$(abspath $(BENCH_JSON))) $(if $(BENCH_TOPOLOGY),BENCH_TOPOLOGY=$(BENCH_TOPOLOGY)) $(if $(BENCH_MAX_MIB),BENCH_MAX_MIB=$(BENCH_MAX_MIB)) $(if $(VMM_CYCLES),VMM_CYCLES=$(VMM_CYCLES)) $(if $(STOCK),STOCK=$(STOCK)) $(if $(STOCK_TIMEOUT),STOCK_TIMEOUT=$(STOCK_TIMEOUT))
	@if [ -n "$(BENCH_JSON)" ]; then $(REL)/bench-plot $(abspath $(BENCH_JSON)); fi

## Rust tests (each test binary runs under kfdsim) and the C conformance suite.
## The last line is `N passed, N failed`.
test: build
	@tools/run-tests

## The long fault sweep (`make test` runs the quick one): the fault driver, the whole C suite and
## the examples under every KFDSIM_FAULTS class, seeds 1 2 3 (FAULT_SEEDS to vary); checks no
## crash, hang, leak or corruption. The last line is `N passed, N failed` (runs). Then the long
## concurrency run on 2 and 4 GPUs, each test for STRESS_SECONDS (default 120): 16 threads mixing
## allocations, copies, peer copies, IPC, VMM and stream/event traffic, the same with a forked
## exporter, and the 8-process IPC ring, with a report of operations, data checks, fds, VmRSS
## and VRAM before/after (`make -C hip-conformance stress`; STRESS_SECONDS= with STRESS_OPS=N
## runs N operations per thread instead); then 1,000,000 IPC open/close and
## 1,000,000 hipMalloc/hipFree cycles with fds, VmRSS and VRAM before/after (LONGRUN_CYCLES to
## vary; `make -C hip-conformance longrun`).
STRESS_SECONDS ?= 120
reliability: build
	@tools/fault-sweep --long
	@$(CONF) stress STRESS_SECONDS=$(STRESS_SECONDS) $(if $(STRESS_OPS),STRESS_OPS=$(STRESS_OPS))
	@$(CONF) longrun $(if $(LONGRUN_CYCLES),LONGRUN_CYCLES=$(LONGRUN_CYCLES))

## The C conformance suite built with -fsanitize=address and run under kfdsim with
## LeakSanitizer checking each test process at its end (`make -C hip-conformance asan`; about
## 2 min on 2 cores, run by .ci/run after `make test`). The last line is `N passed, N failed`.
asan: build
	@$(CONF) asan

## rustfmt and clippy over the workspace, every target, warnings as errors (run by .ci/run
## after `make asan`; a newer toolchain may bring new lints), and the runtime's layers: no file of
## src/ imports a layer above its own, no circle of more than 3 files (tools/layers).
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	tools/layers --check

## The long fuzz run of the C ABI (hip-conformance/reliability/fuzz.c; `make test` runs a short
## one): FUZZ_CALLS API calls (default 1000000) per run, each seed of FUZZ_SEEDS (1 2 3) in each
## FUZZ_CONFIGS entry GPUS:PROCESSES (1:1 2:1 4:1 2:2), FUZZ_JOBS runs at once: 12 M calls by default.
fuzz: build
	@$(CONF) fuzz $(if $(FUZZ_CALLS),FUZZ_CALLS=$(FUZZ_CALLS)) $(if $(FUZZ_SEEDS),FUZZ_SEEDS="$(FUZZ_SEEDS)") \
	  $(if $(FUZZ_JOBS),FUZZ_JOBS=$(FUZZ_JOBS)) $(if $(FUZZ_CONFIGS),FUZZ_CONFIGS="$(FUZZ_CONFIGS)")

## AMD's own tests, measured (a report, not part of `make test`): builds the chosen files of a local
## ROCm/hip-tests checkout (HIP_TESTS=path; fetch it yourself, it is never committed here) with
## hipcc against our library, caches them under target/hip-tests/, runs each case alone under
## `kfdsim run --gpus 2` and prints PASS/FAIL/SKIP per case with a class and reason, then a
## summary line. HIP_TESTS_ARGS passes options (--groups, --files REGEX, -j N, --json PATH,
## --timeout S); `tools/hip-tests --help`.
hip-tests: build
	@test -n "$(HIP_TESTS)" || { echo "make hip-tests HIP_TESTS=/path/to/hip-tests (a ROCm/hip-tests checkout)"; exit 2; }
	@tools/hip-tests --hip-tests "$(HIP_TESTS)" $(HIP_TESTS_ARGS)

## CuPy's own tests, measured (a report, not part of `make test`): CuPy's ROCm 7 wheel
## (cupy-rocm-7-0==14.2.0, in a venv cached at target/cupy-venv) runs the chosen test files of a
## local cupy/cupy checkout at v14.2.0 (CUPY=path; fetch it yourself, never committed here) on our
## install tree (target/cupy/install), each file in its own pytest process under
## `kfdsim run --gpus 2`; prints each failure with its class (ours, rocm-lib, cupy) and reason,
## counts per file and directory, and a summary line. CUPY_ARGS passes options (--paths,
## --files REGEX, -k EXPR, -m EXPR (default "not slow"), -j N, --timeout S, --json PATH,
## --preload LIB, --extra-libs DIR, -v); `tools/cupy --help`.
cupy-tests: build
	@test -n "$(CUPY)" || { echo "make cupy-tests CUPY=/path/to/cupy (a cupy/cupy checkout at v14.2.0)"; exit 2; }
	@tools/cupy --cupy "$(CUPY)" $(CUPY_ARGS)

## AMD's kfdtest on the model (a report, not part of `make test`): builds libhsakmt (static) and
## kfdtest from a local ROCT-Thunk-Interface checkout at rocm-5.3.3 or rocm-6.2.4 (KFDTEST=path; fetch it
## yourself, never committed here; needs cmake, libdrm-dev, libnuma-dev, llvm-15-dev or
## llvm-14-dev), caches the build under target/kfdtest/, runs each test alone under
## `kfdsim run --gpus N` with AMD's aldebaran exclusions (scripts/kfdtest.exclude) and prints
## pass/fail/skip/timeout/crash/excluded per test with a reason, counts per suite and a summary.
## KFDTEST_ARGS passes options (--gpus N, -j N, --timeout S, --filter REGEX, --json PATH, --all);
## `tools/kfdtest --help`.
kfdtest: build
	@test -n "$(KFDTEST)" || { echo "make kfdtest KFDTEST=/path/to/ROCT-Thunk-Interface (checked out at rocm-5.3.3 or rocm-6.2.4)"; exit 2; }
	@tools/kfdtest --src "$(KFDTEST)" $(KFDTEST_ARGS)

## RCCL on our library, measured (a report, not part of `make test`): builds RCCL (RCCL=path, a
## ROCm/rccl checkout at rocm-5.2.3) and rccl-tests (RCCL_TESTS=path, a ROCm/rccl-tests checkout
## of 2022-08, commit 45ec598; fetch both yourself, never committed here) with Debian's hipcc
## against our libamdhip64, cached under target/rccl/, then runs rccl-tests' *_perf programs with
## data checking under `kfdsim run` over collective x protocol x transport (P2P in one process,
## P2P/IPC, SHM and NET/Socket with one process per GPU under mpirun, two simulated nodes) x GPUs x
## datatype and prints one row per run (result, the transport RCCL picked, busbw, seconds).
## RCCL_ARGS passes options (--rccl-build, --coll, --proto, --transport, --gpus, --dtype, --full,
## --timeout, -j, --json PATH); `tools/rccl --help`.
rccl-tests: build
	@test -n "$(RCCL)" -a -n "$(RCCL_TESTS)" || { echo "make rccl-tests RCCL=/path/to/rccl RCCL_TESTS=/path/to/rccl-tests"; exit 2; }
	@tools/rccl --rccl "$(RCCL)" --rccl-tests "$(RCCL_TESTS)" $(RCCL_ARGS)

## Install like ROCm under $(DESTDIR)$(PREFIX): lib/libamdhip64.so.7 (+ the .so link; lib/compat/
## holds libamdhip64.so.5 and .so.6 links for binaries built against ROCm 5 or 6; libhiprtc.so.7
## links to it too, since ROCm 7 programs take hiprtc from there), include/hip/,
## lib/pkgconfig/hip.pc, lib/cmake/hip (find_package(hip): hip::host), bin/hipkfd-env,
## bin/hipkfd-info, bin/kfdsim and lib/libkfdsim.so; lib/fallback/roctracer/ (libroctracer64.so.4, and
## libroctx64.so.4 linking to it) and lib/fallback/rocfft/librocfft.so.0, ROCm's companions that ROCm
## builds of CuPy need, which hipkfd-env adds only where the loader finds none of ROCm's.
PREFIX  ?= /opt/hipkfd
DESTDIR ?=
HIP_VERSION := $(shell awk '/^\#define HIP_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v == "" ? "" : ".") $$3} END {print v}' include/hip/hip_runtime_api.h)
install: build
	@$(MAKE) --no-print-directory install-files
## The copying alone (tests/install.rs runs it on the artifacts `cargo test` already built).
install-files:
	@test -n "$(HIP_VERSION)" || { echo "no HIP_VERSION_* in include/hip/hip_runtime_api.h"; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/compat $(DESTDIR)$(PREFIX)/include/hip \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/hip \
		$(DESTDIR)$(PREFIX)/lib/fallback/roctracer $(DESTDIR)$(PREFIX)/lib/fallback/rocfft
	install -m 755 $(REL)/libamdhip64.so $(DESTDIR)$(PREFIX)/lib/libamdhip64.so.7
	ln -sf libamdhip64.so.7 $(DESTDIR)$(PREFIX)/lib/libamdhip64.so
	ln -sf ../libamdhip64.so.7 $(DESTDIR)$(PREFIX)/lib/compat/libamdhip64.so.5
	ln -sf ../libamdhip64.so.7 $(DESTDIR)$(PREFIX)/lib/compat/libamdhip64.so.6
	ln -sf libamdhip64.so.7 $(DESTDIR)$(PREFIX)/lib/libhiprtc.so.7
	ln -sf libhiprtc.so.7 $(DESTDIR)$(PREFIX)/lib/libhiprtc.so
	install -m 755 $(REL)/libkfdsim.so $(DESTDIR)$(PREFIX)/lib/libkfdsim.so
	install -m 755 $(REL)/libroctracer64.so $(DESTDIR)$(PREFIX)/lib/fallback/roctracer/libroctracer64.so.4
	ln -sf libroctracer64.so.4 $(DESTDIR)$(PREFIX)/lib/fallback/roctracer/libroctx64.so.4
	install -m 755 $(REL)/librocfft.so $(DESTDIR)$(PREFIX)/lib/fallback/rocfft/librocfft.so.0
	install -m 644 include/hip/hip_runtime_api.h include/hip/hiprtc.h tools/install/hip_runtime.h $(DESTDIR)$(PREFIX)/include/hip/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(HIP_VERSION)|' tools/install/hip.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/hip.pc
	install -m 644 tools/install/hip-config.cmake $(DESTDIR)$(PREFIX)/lib/cmake/hip/
	sed -e 's|@VERSION@|$(HIP_VERSION)|' tools/install/hip-config-version.cmake.in \
		> $(DESTDIR)$(PREFIX)/lib/cmake/hip/hip-config-version.cmake
	install -m 755 $(REL)/hipkfd-info $(REL)/kfdsim tools/install/hipkfd-env $(DESTDIR)$(PREFIX)/bin/

## Regenerate include/hip/hip_runtime_api.h from the Rust definitions.
header:
	HIPKFD_BLESS=1 $(CARGO) test --release --test header

clean:
	$(CARGO) clean
	$(MAKE) -C hip-conformance clean
