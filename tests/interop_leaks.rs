//! External interop leaves nothing behind (issue 10): import / map / free / destroy cycles and
//! every error path keep the process's fd count and the model's BO and syncobj mappings where
//! they were. Alone in its test binary, so no other test moves the counts. The producer is a
//! GEM BO (DRM_IOCTL_AMDGPU_GEM_CREATE + PRIME_HANDLE_TO_FD) and a syncobj (SYNCOBJ_CREATE +
//! HANDLE_TO_FD) on a render node of our own, through kfd-ioctl.

use amdhip64::abi::types::*;
use amdhip64::api::interop::*;
use amdhip64::api::memory::*;
use amdhip64::api::stream::*;
use kfd_ioctl::amdgpu::{AMDGPU_GEM_DOMAIN_GTT, AMDGPU_GEM_DOMAIN_VRAM};
use kfd_ioctl::drm::{drm_syncobj_handle, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD};
use kfd_ioctl::RenderNode;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::ptr::null_mut;

fn ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess);
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Mappings in /proc/self/maps whose name contains `kind`: `kfdsim-` for every model object
/// (BOs, syncobjs; one mapping per live object), `kfdsim-syncobj` for syncobjs alone.
fn maps_of(kind: &str) -> usize {
    std::fs::read_to_string("/proc/self/maps").unwrap().lines().filter(|l| l.contains(kind)).count()
}

fn model_maps() -> usize {
    maps_of("kfdsim-")
}

fn fd_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only asks whether the fd number is open.
    unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
}

fn mem_desc(fd: RawFd, size: u64) -> hipExternalMemoryHandleDesc {
    // SAFETY: all-zero is a valid descriptor (plain integers and pointers).
    let mut d: hipExternalMemoryHandleDesc = unsafe { std::mem::zeroed() };
    d.r#type = hipExternalMemoryHandleType::hipExternalMemoryHandleTypeOpaqueFd;
    d.handle.fd = fd;
    d.size = size;
    d
}

fn buf_desc(offset: u64, size: u64) -> hipExternalMemoryBufferDesc {
    // SAFETY: all-zero is a valid descriptor.
    let mut b: hipExternalMemoryBufferDesc = unsafe { std::mem::zeroed() };
    b.offset = offset;
    b.size = size;
    b
}

fn dmabuf(r: &RenderNode, size: u64, domain: u64) -> RawFd {
    let h = r.gem_create(size, 4096, domain, 0).unwrap();
    let fd = r.prime_handle_to_fd(h).unwrap().into_raw_fd();
    r.gem_close(h).unwrap();
    fd
}

fn syncobj_fd(r: &RenderNode) -> RawFd {
    let h = r.syncobj_create(0).unwrap();
    let mut a = drm_syncobj_handle { handle: h, ..Default::default() };
    // SAFETY: the uapi struct of DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD.
    unsafe { kfd_ioctl::wrappers::ioctl(r.fd(), DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &mut a) }.unwrap();
    r.syncobj_destroy(h).unwrap();
    a.fd
}

#[test]
fn interop_cycles_and_error_paths_leak_nothing() {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let n = 256 << 10;
    let r = RenderNode::open(128).unwrap();
    // Bring the runtime, the null stream, a stream with a queue of its own and the syncobj
    // waiter up before counting.
    let mut s: hipStream_t = null_mut();
    ok(hipStreamCreate(&mut s));
    let mut d: *mut c_void = null_mut();
    ok(hipMalloc(&mut d, 4096));
    ok(hipMemset(d, 0, 4096));
    ok(hipFree(d));
    let mut sem: hipExternalSemaphore_t = null_mut();
    // SAFETY: all-zero is a valid descriptor.
    let mut sd: hipExternalSemaphoreHandleDesc = unsafe { std::mem::zeroed() };
    sd.r#type = hipExternalSemaphoreHandleType::hipExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    sd.handle.fd = syncobj_fd(&r);
    let syncobjs = maps_of("kfdsim-syncobj");
    ok(hipImportExternalSemaphore(&mut sem, &sd));
    let mut wp: [u8; 144] = [0; 144];
    wp[0..8].copy_from_slice(&1u64.to_le_bytes());
    ok(hipWaitExternalSemaphoresAsync(&sem, wp.as_ptr() as *const hipExternalSemaphoreWaitParams, 1, s));
    ok(hipDestroyExternalSemaphore(sem));
    ok(hipStreamSynchronize(s));
    // The baseline holds the waiter thread's own wake syncobj, not the destroyed semaphore's:
    // the waiter may still hold that semaphore for the wait it was in when the destroy woke it
    // (a CI run counted it, 29 mappings, then 28 at the end). Wait for it to let go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while maps_of("kfdsim-syncobj") != syncobjs + 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (fds, maps) = (open_fds(), model_maps());
    let maps_text = std::fs::read_to_string("/proc/self/maps").unwrap();

    for i in 0..50u64 {
        let domain = if i % 2 == 0 { AMDGPU_GEM_DOMAIN_VRAM } else { AMDGPU_GEM_DOMAIN_GTT };
        let fd = dmabuf(&r, n, domain);
        // error paths first: the fd stays open and nothing is left
        let mut m: hipExternalMemory_t = null_mut();
        assert_eq!(hipImportExternalMemory(&mut m, &mem_desc(fd, n + 1)), hipError_t::hipErrorInvalidValue);
        assert!(fd_open(fd));
        ok(hipImportExternalMemory(&mut m, &mem_desc(fd, n)));
        let mut p: [*mut c_void; 3] = [null_mut(); 3];
        assert_eq!(hipExternalMemoryGetMappedBuffer(&mut p[0], m, &buf_desc(n, 1)), hipError_t::hipErrorInvalidValue);
        for (k, q) in p.iter_mut().enumerate() {
            ok(hipExternalMemoryGetMappedBuffer(q, m, &buf_desc(k as u64 * 4097, 4096)));
        }
        ok(hipMemset(p[1], i as i32, 4096));
        ok(hipFree(p[0]));
        ok(hipDestroyExternalMemory(m));
        assert!(!fd_open(fd), "destroy closes the fd");
        ok(hipFree(p[1]));
        ok(hipFree(p[2]));

        let sfd = syncobj_fd(&r);
        sd.handle.fd = sfd;
        ok(hipImportExternalSemaphore(&mut sem, &sd));
        // Parameters by bytes (fence.value at 0, flags at 72): value 1.
        wp[72] = 1; // flags = 1: refused, nothing queued
        let bad = wp.as_ptr() as *const hipExternalSemaphoreWaitParams;
        assert_eq!(hipWaitExternalSemaphoresAsync(&sem, bad, 1, s), hipError_t::hipErrorInvalidValue);
        wp[72] = 0;
        let wpp = wp.as_ptr() as *const hipExternalSemaphoreWaitParams;
        ok(hipWaitExternalSemaphoresAsync(&sem, wpp, 1, s));
        ok(hipSignalExternalSemaphoresAsync(&sem, wpp as *const hipExternalSemaphoreSignalParams, 1, s));
        ok(hipDestroyExternalSemaphore(sem)); // releases the wait
        ok(hipStreamSynchronize(s));
        assert!(!fd_open(sfd));
    }
    // not a dma-buf / not a syncobj: refused, fd kept
    let pipe = nix::unistd::pipe().unwrap();
    let mut m: hipExternalMemory_t = null_mut();
    assert_eq!(hipImportExternalMemory(&mut m, &mem_desc(pipe.0.as_raw_fd(), 4096)), hipError_t::hipErrorInvalidValue);
    sd.handle.fd = pipe.0.as_raw_fd();
    assert_eq!(hipImportExternalSemaphore(&mut sem, &sd), hipError_t::hipErrorInvalidValue);
    assert!(fd_open(pipe.0.as_raw_fd()));
    drop(pipe);
    // the completion thread runs the last signal's job after the stream's fence
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(open_fds(), fds, "fds leaked");
    let now = std::fs::read_to_string("/proc/self/maps").unwrap();
    let grown: Vec<&str> = now.lines().filter(|l| l.contains("kfdsim-") && !maps_text.contains(*l)).collect();
    assert_eq!(model_maps(), maps, "BOs or syncobjs leaked (model mappings): {grown:#?}");
    ok(hipStreamDestroy(s));
}
