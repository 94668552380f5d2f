//! hipDeviceDisablePeerAccess revokes the GPUVM mapping: an SDMA access through it afterwards
//! raises a VM fault, and the runtime reports it (sticky `hipErrorIllegalAddress`) instead of
//! hanging. The fault is sticky for the process, so this is a test binary of its own with a
//! single test (cargo runs every test binary as its own process, under `kfdsim run`).
//!
//! The runtime itself never touches a revoked mapping (disable waits for its copies), so the
//! access comes from an SDMA queue this test creates on device 0 with raw KFD ioctls
//! (`AMDKFD_IOC_CREATE_QUEUE` on a second `/dev/kfd` fd, which names the same KFD process), its
//! ring and pointers in `hipHostMalloc` memory (GTT, mapped on every GPU at its CPU address).

use amdhip64::api::device::*;
use amdhip64::api::memory::*;
use amdhip64::api::peer::*;
use amdhip64::api::types::*;
use kfd_ioctl::kfd::*;
use kfd_ioctl::mmap::KFD_DOORBELL_PROCESS_SLICE;
use kfd_ioctl::{sdma, Kfd};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const RING: usize = 64 << 10;

fn ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess);
}

fn host_malloc(n: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(hipHostMalloc(&mut p, n, 0));
    p
}

/// A bare SDMA queue on one GPU.
struct RawQueue {
    ring: *mut u32,
    rw: *mut AtomicU64,
    doorbell: *mut u64,
    wptr: u64,
}

impl RawQueue {
    fn new(kfd: &Kfd, gpu_id: u32) -> RawQueue {
        let ring = host_malloc(RING) as *mut u32;
        let rw = host_malloc(4096) as *mut AtomicU64;
        let mut a = kfd_ioctl_create_queue_args {
            ring_base_address: ring as u64,
            write_pointer_address: rw as u64 + 8,
            read_pointer_address: rw as u64,
            ring_size: RING as u32,
            gpu_id,
            queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
            queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
            queue_priority: KFD_MAX_QUEUE_PRIORITY,
            ..Default::default()
        };
        kfd.create_queue(&mut a).expect("CREATE_QUEUE");
        let off = a.doorbell_offset & !(KFD_DOORBELL_PROCESS_SLICE - 1);
        // SAFETY: maps this process's doorbell page of the GPU at the offset the KFD returned.
        let page = unsafe {
            libc::mmap(
                null_mut(),
                KFD_DOORBELL_PROCESS_SLICE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                kfd.fd(),
                off as libc::off_t,
            )
        };
        assert_ne!(page, libc::MAP_FAILED);
        let doorbell = (page as u64 + (a.doorbell_offset & (KFD_DOORBELL_PROCESS_SLICE - 1))) as *mut u64;
        RawQueue { ring, rw, doorbell, wptr: 0 }
    }

    /// Writes `pk` at the ring's write index and rings the doorbell (no wrap: the test submits
    /// a few hundred bytes).
    fn submit(&mut self, pk: &[u32]) {
        // SAFETY: the ring is a live hipHostMalloc buffer of RING bytes; the test stays far below.
        unsafe { std::ptr::copy_nonoverlapping(pk.as_ptr(), self.ring.add((self.wptr / 4) as usize), pk.len()) };
        self.wptr += pk.len() as u64 * 4;
        assert!(self.wptr < RING as u64);
        // SAFETY: rw is a live 4 KiB hipHostMalloc page: rptr at +0, wptr at +8.
        unsafe { (*self.rw.add(1)).store(self.wptr, Ordering::Release) };
        // SAFETY: the queue's doorbell slot in the mapped doorbell page.
        unsafe { std::ptr::write_volatile(self.doorbell, self.wptr) };
    }
}

fn gpu_id_of_node(node: u32) -> u32 {
    std::fs::read_to_string(format!("/sys/devices/virtual/kfd/kfd/topology/nodes/{node}/gpu_id"))
        .expect("gpu_id")
        .trim()
        .parse()
        .expect("gpu_id number")
}

fn wait_word(w: &AtomicU64, v: u64, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if w.load(Ordering::Acquire) == v {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

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
