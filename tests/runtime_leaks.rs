//! Leak checks: alone in their test binary, so no other test moves the counts.

use amdhip64::abi::types::*;
use amdhip64::api::device::*;
use amdhip64::api::memory::*;
use std::ffi::c_void;
use std::ptr::null_mut;

fn ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess);
}

fn malloc(size: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(hipMalloc(&mut p, size));
    assert!(!p.is_null());
    p
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn alloc_free_cycles_leak_no_fd_and_no_memory() {
    let mut free0 = 0;
    let mut total = 0;
    // Bring the runtime up, with the null stream's queue, before counting.
    let p = malloc(4096);
    ok(hipMemset(p, 0, 4096));
    ok(hipFree(p));
    ok(hipMemGetInfo(&mut free0, &mut total));
    let fds = open_fds();
    for _ in 0..200 {
        let p = malloc(1 << 20);
        ok(hipMemset(p, 7, 1 << 20));
        ok(hipFree(p));
    }
    let mut free1 = 0;
    ok(hipMemGetInfo(&mut free1, &mut total));
    assert_eq!(open_fds(), fds, "fds leaked");
    assert_eq!(free1, free0, "VRAM not given back");
}
