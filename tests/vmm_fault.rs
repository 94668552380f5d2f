//! A read-only VMM mapping is read-only on the GPU: the runtime maps `hipMemAccessFlagsProtRead`
//! ranges with GEM_VA but without `AMDGPU_VM_PAGE_WRITEABLE`, so a GPU write through one raises
//! a VM fault, changes nothing, and comes back to the caller as `hipErrorIllegalAddress` (no
//! hang, no silent write). Stock ROCm maps every VMM range writable (libdrm ignores the flags).
//!
//! The runtime refuses its own writes to read-only ranges (`hipErrorInvalidValue`), so the write
//! comes from a bare SDMA queue of this test (tests/common/raw_queue.rs). The fault is sticky for
//! the process, so this is a test binary of its own with one test.

mod common;

use amdhip64::abi::types::*;
use amdhip64::api::device::*;
use amdhip64::api::memory::*;
use amdhip64::api::vmm::*;
use common::raw_queue::{gpu_id_of_node, host_malloc, ok, wait_word, RawQueue};
use kfd_ioctl::{sdma, Kfd};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

fn set_access(va: *mut c_void, n: usize, flags: hipMemAccessFlags) {
    let d = hipMemAccessDesc {
        location: hipMemLocation { r#type: hipMemLocationType::hipMemLocationTypeDevice, id: 0 },
        flags,
    };
    ok(hipMemSetAccess(va, n, &d, 1));
}

#[test]
fn gpu_write_through_a_read_only_vmm_mapping_faults_and_is_reported() {
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(60));
        eprintln!("vmm_fault: the runtime hung after the VM fault");
        std::process::abort();
    });
    let n: usize = 2 << 20;
    let mut prop: hipMemAllocationProp = unsafe { std::mem::zeroed() };
    prop.r#type = hipMemAllocationType::hipMemAllocationTypePinned;
    prop.location = hipMemLocation { r#type: hipMemLocationType::hipMemLocationTypeDevice, id: 0 };
    let mut h = null_mut();
    ok(hipMemCreate(&mut h, n, &prop, 0));
    let mut va = null_mut();
    ok(hipMemAddressReserve(&mut va, n, 0, null_mut(), 0));
    ok(hipMemMap(va, n, 0, h, 0));
    set_access(va, n, hipMemAccessFlags::hipMemAccessFlagsProtReadWrite);
    let pattern: Vec<u8> = (0..n).map(|i| (i * 13 + 5) as u8).collect();
    ok(hipMemcpy(va, pattern.as_ptr() as *const c_void, n, hipMemcpyKind::hipMemcpyHostToDevice));
    set_access(va, n, hipMemAccessFlags::hipMemAccessFlagsProtRead);

    let src = host_malloc(4096);
    // SAFETY: a live 4 KiB hipHostMalloc buffer.
    unsafe { std::ptr::write_bytes(src as *mut u8, 0xee, 4096) };
    let done = host_malloc(4096) as *const AtomicU64;
    // SAFETY: a live, zeroed 4 KiB hipHostMalloc page.
    let done = unsafe { &*done };
    let kfd = Kfd::open().expect("open /dev/kfd");
    let mut q = RawQueue::new(&kfd, gpu_id_of_node(1));

    // Control: the engine reads through the read-only mapping.
    let mut pk = vec![];
    sdma::copy_linear(&mut pk, src as u64, va as u64 + 4096, 1024);
    sdma::fence(&mut pk, done as *const _ as u64, 1).unwrap();
    q.submit(&pk);
    assert!(wait_word(done, 1, Duration::from_secs(20)), "a read through a read-only mapping did not complete");
    // SAFETY: hipHostMalloc memory, CPU-mapped.
    let got = unsafe { std::slice::from_raw_parts(src as *const u8, 1024) };
    assert_eq!(got, &pattern[4096..4096 + 1024]);

    // A write through it faults: the fence after it never lands.
    let mut pk = vec![];
    sdma::copy_linear(&mut pk, va as u64 + 8192, src as u64, 1024);
    sdma::fence(&mut pk, done as *const _ as u64, 2).unwrap();
    q.submit(&pk);
    assert!(!wait_word(done, 2, Duration::from_millis(500)), "the GPU wrote through a read-only mapping");

    // The caller hears of it instead of hanging, and the memory is unchanged (the CPU mapping of
    // a read-only range is PROT_READ, on the large-BAR default topology).
    let t = Instant::now();
    assert_eq!(hipDeviceSynchronize(), hipError_t::hipErrorIllegalAddress);
    assert!(t.elapsed() < Duration::from_secs(30));
    // SAFETY: the range is CPU-mapped read-only.
    let now = unsafe { std::slice::from_raw_parts(va as *const u8, n) };
    assert!(now == &pattern[..], "memory behind the read-only mapping changed");
}
