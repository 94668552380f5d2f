/* RCCL's LL protocol between two GPUs (rccl src/collectives/device/prims_ll.h, storeLL and
 * readLL): each 8-byte half of a 16-byte line is {data, flag}. The sender writes whole lines
 * with two nontemporal 8-byte stores (one flat_store_dwordx4 glc slc), the receiver on the other
 * GPU spins on them with two nontemporal 8-byte loads (one flat_load_dwordx4) until both flags are
 * the step's, then uses the data beside them. That is correct only because gfx90a moves each
 * aligned 8-byte part of an access whole: a receiver never sees a new flag beside old data.
 *
 * The sender on device 0 writes step s only after the receiver on device 1 has acknowledged step
 * s-1, so every step's store lands while the receiver is spinning on that very line: each step
 * is a chance for a torn read, which the receiver counts (data that is not the flag's). Cases:
 * 16-byte lines by all 64 lanes at consecutive addresses (the interpreter's full-wave path), the
 * same with lanes in reverse order (its per-lane path), 8-byte {data, flag} lines, and half the
 * lanes active. Each case: 0 torn reads, and the last step's data in every line. */
#include <hip/hip_runtime.h>
#include <stdint.h>

#include "check.h"

#define STEPS 3000

union LLLine {
  struct {
    uint32_t data1, flag1, data2, flag2;
  };
  uint64_t v[2];
};

/* The data that goes with flag `step` in half `h` of lane `t`'s line: never the data of another
 * step, so a torn read cannot pass for a whole one. */
__device__ __host__ static uint32_t ll_data(uint32_t step, uint32_t t, uint32_t h) {
  return step * 0x9e3779b9u ^ (t << 1 | h) ^ 0x5a5a0000u;
}

/* Which line lane t uses: its own (mode 0), or lane 63-t's (mode 1: addresses in reverse lane
 * order, so not one contiguous range). Mode 2: only even lanes take part. */
__device__ static int line_of(int t, int mode) { return mode == 1 ? 63 - t : t; }

/* What keeps a spin on nontemporal (non-volatile) loads a loop that reloads: an acquire fence
 * (RCCL's readLL gets the same from its abort-flag check). */
__device__ static void spin_fence(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

__device__ static void wait_ack(volatile int* ack, int want) {
  while (__atomic_load_n((int*)ack, __ATOMIC_ACQUIRE) != want) __builtin_amdgcn_s_sleep(1);
}

__global__ void ll_send16(LLLine* lines, int* ack, int mode) {
  int t = threadIdx.x;
  for (uint32_t s = 1; s <= STEPS; s++) {
    wait_ack(ack, (int)s - 1);
    if (mode == 2 && (t & 1)) continue;
    LLLine l;
    l.data1 = ll_data(s, t, 0);
    l.flag1 = s;
    l.data2 = ll_data(s, t, 1);
    l.flag2 = s;
    LLLine* dst = &lines[line_of(t, mode)];
    __builtin_nontemporal_store(l.v[0], dst->v);
    __builtin_nontemporal_store(l.v[1], dst->v + 1);
  }
}

__global__ void ll_recv16(LLLine* lines, int* ack, int mode, int* torn) {
  int t = threadIdx.x;
  for (uint32_t s = 1; s <= STEPS; s++) {
    if (!(mode == 2 && (t & 1))) {
      LLLine* src = &lines[line_of(t, mode)];
      LLLine l;
      do {
        spin_fence();
        l.v[0] = __builtin_nontemporal_load(src->v);
        l.v[1] = __builtin_nontemporal_load(src->v + 1);
      } while (l.flag1 != s || l.flag2 != s);
      if (l.data1 != ll_data(s, t, 0) || l.data2 != ll_data(s, t, 1)) atomicAdd(torn, 1);
    }
    __syncthreads();
    if (t == 0) __atomic_store_n(ack, (int)s, __ATOMIC_RELEASE);
  }
}

/* 8-byte lines: {data, flag} in one dwordx2 access per lane. */
__global__ void ll_send8(uint64_t* lines, int* ack) {
  int t = threadIdx.x;
  for (uint32_t s = 1; s <= STEPS; s++) {
    wait_ack(ack, (int)s - 1);
    __builtin_nontemporal_store((uint64_t)s << 32 | ll_data(s, t, 0), &lines[t]);
  }
}

__global__ void ll_recv8(uint64_t* lines, int* ack, int* torn) {
  int t = threadIdx.x;
  for (uint32_t s = 1; s <= STEPS; s++) {
    uint64_t v;
    do {
      spin_fence();
      v = __builtin_nontemporal_load(&lines[t]);
    } while ((uint32_t)(v >> 32) != s);
    if ((uint32_t)v != ll_data(s, t, 0)) atomicAdd(torn, 1);
    __syncthreads();
    if (t == 0) __atomic_store_n(ack, (int)s, __ATOMIC_RELEASE);
  }
}

/* One case: the sender on device 0, the receiver on device 1, lines and the ack word in device
 * 1's fine-grained memory (what RCCL's P2P transport gives its LL buffers). */
static void run_case(const char* name, int wide, int mode) {
  const size_t bytes = 64 * sizeof(LLLine);
  void* lines = NULL;
  int* ack = NULL;
  int* torn = NULL;
  CHECK_OK(hipSetDevice(1));
  CHECK_OK(hipExtMallocWithFlags(&lines, bytes, hipDeviceMallocFinegrained));
  CHECK_OK(hipExtMallocWithFlags((void**)&ack, sizeof(int), hipDeviceMallocFinegrained));
  CHECK_OK(hipMalloc((void**)&torn, sizeof(int)));
  CHECK_OK(hipMemset(lines, 0, bytes));
  CHECK_OK(hipMemset(ack, 0, sizeof(int)));
  CHECK_OK(hipMemset(torn, 0, sizeof(int)));
  CHECK_OK(hipDeviceSynchronize());
  hipStream_t rs, ss;
  CHECK_OK(hipStreamCreateWithFlags(&rs, hipStreamNonBlocking));
  if (wide)
    hipLaunchKernelGGL(ll_recv16, dim3(1), dim3(64), 0, rs, (LLLine*)lines, ack, mode, torn);
  else
    hipLaunchKernelGGL(ll_recv8, dim3(1), dim3(64), 0, rs, (uint64_t*)lines, ack, torn);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipStreamCreateWithFlags(&ss, hipStreamNonBlocking));
  if (wide)
    hipLaunchKernelGGL(ll_send16, dim3(1), dim3(64), 0, ss, (LLLine*)lines, ack, mode);
  else
    hipLaunchKernelGGL(ll_send8, dim3(1), dim3(64), 0, ss, (uint64_t*)lines, ack);
  CHECK_OK(hipGetLastError());
  CHECK_OK(hipStreamSynchronize(ss));
  CHECK_OK(hipStreamSynchronize(rs));

  int h_torn = -1, h_ack = -1;
  CHECK_OK(hipMemcpy(&h_torn, torn, sizeof(int), hipMemcpyDeviceToHost));
  CHECK_OK(hipMemcpy(&h_ack, ack, sizeof(int), hipMemcpyDeviceToHost));
  printf("%s: %d steps acknowledged, %d torn reads\n", name, h_ack, h_torn);
  CHECK(h_ack == STEPS);
  CHECK(h_torn == 0);
  /* The last step's lines, as the sender wrote them. */
  uint32_t h[64 * 4];
  CHECK_OK(hipMemcpy(h, lines, bytes, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int t = 0; t < 64; t++) {
    if (wide) {
      if (mode == 2 && (t & 1)) continue;
      int i = (mode == 1 ? 63 - t : t) * 4;
      if (h[i] != ll_data(STEPS, t, 0) || h[i + 1] != STEPS || h[i + 2] != ll_data(STEPS, t, 1) ||
          h[i + 3] != STEPS)
        bad++;
    } else if (h[2 * t] != ll_data(STEPS, t, 0) || h[2 * t + 1] != STEPS) {
      bad++;
    }
  }
  CHECK(bad == 0);
  CHECK_OK(hipStreamDestroy(ss));
  CHECK_OK(hipSetDevice(1));
  CHECK_OK(hipStreamDestroy(rs));
  CHECK_OK(hipFree(lines));
  CHECK_OK(hipFree(ack));
  CHECK_OK(hipFree(torn));
}

int main(void) {
  check_bound_to_expected_library((void*)&hipDeviceSynchronize);
  int n = 0;
  CHECK_OK(hipGetDeviceCount(&n));
  if (n < 2) {
    printf("ll_protocol needs 2 GPUs, found %d\n", n);
    CHECK(n >= 2);
    return summary();
  }
  int can = 0;
  CHECK_OK(hipDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == 1);
  CHECK_OK(hipSetDevice(0));
  CHECK_OK(hipDeviceEnablePeerAccess(1, 0));
  CHECK_OK(hipSetDevice(1));
  CHECK_OK(hipDeviceEnablePeerAccess(0, 0));
  run_case("16-byte lines, all lanes", 1, 0);
  run_case("16-byte lines, lanes reversed", 1, 1);
  run_case("16-byte lines, even lanes", 1, 2);
  run_case("8-byte lines, all lanes", 0, 0);
  return summary();
}
