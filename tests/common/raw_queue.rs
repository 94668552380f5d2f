//! A bare SDMA queue made with raw KFD ioctls next to the runtime's own, for tests that make the
//! GPU do what the runtime never would (access a revoked or read-only mapping): its ring and
//! pointers live in `hipHostMalloc` memory (GTT, mapped on every GPU at its CPU address), and
//! `AMDKFD_IOC_CREATE_QUEUE` goes through a second `/dev/kfd` fd, which names the same KFD process.

use amdhip64::abi::types::hipError_t;
use amdhip64::api::memory::hipHostMalloc;
use kfd_ioctl::kfd::*;
use kfd_ioctl::mmap::KFD_DOORBELL_PROCESS_SLICE;
use kfd_ioctl::Kfd;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const RING: usize = 64 << 10;

pub fn ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess);
}

pub fn host_malloc(n: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(hipHostMalloc(&mut p, n, 0));
    p
}

/// A bare SDMA queue on one GPU.
pub struct RawQueue {
    ring: *mut u32,
    rw: *mut AtomicU64,
    doorbell: *mut u64,
    wptr: u64,
}

impl RawQueue {
    pub fn new(kfd: &Kfd, gpu_id: u32) -> RawQueue {
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
    pub fn submit(&mut self, pk: &[u32]) {
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

pub fn gpu_id_of_node(node: u32) -> u32 {
    std::fs::read_to_string(format!("/sys/devices/virtual/kfd/kfd/topology/nodes/{node}/gpu_id"))
        .expect("gpu_id")
        .trim()
        .parse()
        .expect("gpu_id number")
}

pub fn wait_word(w: &AtomicU64, v: u64, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if w.load(Ordering::Acquire) == v {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}
