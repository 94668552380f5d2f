//! hipDeviceDisablePeerAccess revokes the GPUVM mapping: an SDMA access through it afterwards
//! raises a VM fault, and the runtime reports it (sticky `hipErrorIllegalAddress`) instead of
//! hanging. The fault is sticky for the process, so this is a test binary of its own with a
//! single test (cargo runs every test binary as its own process, under `kfdsim run`).
//!
//! The runtime itself never touches a revoked mapping (disable waits for its copies), so the
//! access comes from an SDMA queue this test creates on device 0 with raw KFD ioctls
//! (`AMDKFD_IOC_CREATE_QUEUE` on a second `/dev/kfd` fd, which names the same KFD process), its
//! ring and pointers in `hipHostMalloc` memory (GTT, mapped on every GPU at its CPU address).

mod common;

use amdhip64::abi::types::*;
use amdhip64::api::device::*;
use amdhip64::api::memory::*;
use amdhip64::api::peer::*;
use common::raw_queue::{gpu_id_of_node, host_malloc, ok, wait_word, RawQueue};
use kfd_ioctl::{sdma, Kfd};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

#[test]
fn sdma_access_through_a_revoked_peer_mapping_faults_and_is_reported() {
    // A hang is the failure this test exists to catch: abort instead of waiting forever.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(60));
        eprintln!("peer_fault: the runtime hung after the VM fault");
        std::process::abort();
    });
    let n = 64 << 10;
    let mut count = 0;
    ok(hipGetDeviceCount(&mut count));
    assert!(count >= 2, "needs 2 GPUs");
    let mut can = 0;
    ok(hipDeviceCanAccessPeer(&mut can, 0, 1));
    assert_eq!(can, 1, "kfdsim's default topology is an xGMI pair");

    // Device 1 memory with a pattern, device 0 memory zeroed.
    let pattern: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    ok(hipSetDevice(1));
    let mut p1 = null_mut();
    ok(hipMalloc(&mut p1, n));
    ok(hipMemcpy(p1, pattern.as_ptr() as *const c_void, n, hipMemcpyKind::hipMemcpyHostToDevice));
    ok(hipSetDevice(0));
    let mut p0 = null_mut();
    ok(hipMalloc(&mut p0, n));
    ok(hipMemset(p0, 0, n));
    ok(hipDeviceEnablePeerAccess(1, 0));

    let kfd = Kfd::open().expect("open /dev/kfd");
    let mut q = RawQueue::new(&kfd, gpu_id_of_node(1));
    let done = host_malloc(4096) as *const AtomicU64;
    // SAFETY: a live, zeroed 4 KiB hipHostMalloc page.
    let done = unsafe { &*done };

    // Control: through the live mapping, device 0's engine reads device 1's memory.
    let mut pk = vec![];
    sdma::copy_linear(&mut pk, p0 as u64, p1 as u64, n as u64);
    sdma::fence(&mut pk, done as *const _ as u64, 1).unwrap();
    q.submit(&pk);
    assert!(wait_word(done, 1, Duration::from_secs(20)), "the raw SDMA queue did not run");
    let mut back = vec![0u8; n];
    ok(hipMemcpy(back.as_mut_ptr() as *mut c_void, p0, n, hipMemcpyKind::hipMemcpyDeviceToHost));
    assert!(back == pattern, "peer read through the mapping returned wrong bytes");

    // Revoke, then the same access: a VM fault on device 0 (the fence is never written).
    ok(hipDeviceDisablePeerAccess(1));
    let mut pk = vec![];
    sdma::copy_linear(&mut pk, p0 as u64, p1 as u64, n as u64);
    sdma::fence(&mut pk, done as *const _ as u64, 2).unwrap();
    q.submit(&pk);
    assert!(!wait_word(done, 2, Duration::from_millis(500)), "the copy ran through a revoked mapping");

    // The runtime reports it: device 0's queues are stopped, so this copy would never finish.
    let t = Instant::now();
    let e = hipMemcpy(back.as_mut_ptr() as *mut c_void, p0, n, hipMemcpyKind::hipMemcpyDeviceToHost);
    assert_eq!(e, hipError_t::hipErrorIllegalAddress);
    assert!(t.elapsed() < Duration::from_secs(30));
    // Sticky: later calls that touch the GPUs fail the same way.
    assert_eq!(hipDeviceSynchronize(), hipError_t::hipErrorIllegalAddress);
    assert_eq!(hipMemset(p0, 1, n), hipError_t::hipErrorIllegalAddress);
}
