//! No fd hoarding: 10,000 VRAM chunks mapped at once under the default `RLIMIT_NOFILE` soft
//! limit (1024), the way the runtime's VMM path maps them: per chunk ALLOC_MEMORY_OF_GPU (VRAM,
//! `va_addr` 0) → EXPORT_DMABUF → PRIME_FD_TO_HANDLE on the render fd given to ACQUIRE_VM →
//! AMDGPU_GEM_VA map → close the dma-buf fd; some chunks CPU-mapped at the same VA through
//! `mmap(render_fd, GEM_MMAP offset, MAP_SHARED|MAP_FIXED)`. The kernel holds BOs with no fd in
//! the process, so the process's open fd count must not move; nor may an importing process keep
//! a dup of the dma-bufs it imported (IMPORT_DMABUF, PRIME_FD_TO_HANDLE).
//!
//! Its own test executable: one test, which lowers the process's fd limit and counts
//! `/proc/self/fd`, so no other test may run beside it.

mod common;

use common::{env, in_child, kio, open, reserve, serial, topology_gpus};
use kfd_ioctl::amdgpu::*;
use kfd_ioctl::drm::*;
use kfd_ioctl::kfd::*;
use libc::c_void;
use nix::errno::Errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const CHUNKS: u64 = 10_000;
const CHUNK: u64 = 4096;
/// Every `CPU_EVERY`th chunk is also CPU-mapped and carries a pattern.
const CPU_EVERY: u64 = 100;
/// Chunks whose dma-bufs a forked child imports (kept open in the parent until the fork).
const SHARED: u64 = 300;
const VRAM: u32 = KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE
    | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;

/// Entries of `/proc/self/fd` (the directory's own fd is counted every time alike).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn pattern(i: u64, off: u64) -> u8 {
    (i.wrapping_mul(31) ^ off.wrapping_mul(7)) as u8
}

/// `mmap(addr, CHUNK, prot, MAP_SHARED | extra, fd, off)`.
fn map(addr: u64, prot: i32, extra: i32, fd: RawFd, off: u64) -> Result<*mut u8, Errno> {
    // SAFETY: callers pass MAP_FIXED only over their own reservation.
    let p = unsafe { libc::mmap(addr as *mut c_void, CHUNK as usize, prot, libc::MAP_SHARED | extra, fd, off as i64) };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as *mut u8)
    }
}

/// Bytes of chunk `i`'s pattern that differ at `p` (CHUNK bytes).
fn mismatches(p: *const u8, i: u64) -> usize {
    // SAFETY: `p` maps CHUNK readable bytes.
    let s = unsafe { std::slice::from_raw_parts(p, CHUNK as usize) };
    s.iter().enumerate().filter(|(o, b)| **b != pattern(i, *o as u64)).count()
}

/// The GEM_MMAP offset of GEM handle `h` on render fd `r`.
fn gem_mmap_offset(r: RawFd, h: u32) -> u64 {
    let mut m = drm_amdgpu_gem_mmap::new(h);
    kio(r, DRM_IOCTL_AMDGPU_GEM_MMAP, &mut m).unwrap();
    m.output().addr_ptr
}

fn set_nofile_soft(n: u64) {
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid rlimit out-pointer.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) }, 0);
    l.rlim_cur = n.min(l.rlim_max);
    // SAFETY: valid rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) }, 0);
}

struct Chunk {
    kfd_handle: u64,
    gem: u32,
}

/// True where this process may open `/proc/self/map_files` (CAP_SYS_ADMIN or
/// CAP_CHECKPOINT_RESTORE): kfd-sim then keeps no fd per BO; elsewhere it keeps one (FIDELITY.md).
fn map_files_permitted() -> bool {
    let p = map(0, libc::PROT_READ, libc::MAP_ANONYMOUS, -1, 0).unwrap() as u64;
    let ok = std::fs::File::open(format!("/proc/self/map_files/{:x}-{:x}", p, p + CHUNK)).is_ok();
    // SAFETY: the probe mapping made above.
    unsafe { libc::munmap(p as *mut c_void, CHUNK as usize) };
    ok
}

#[test]
fn ten_thousand_vram_chunks_mapped_at_once_hold_no_fd() {
    let _g = serial();
    if !map_files_permitted() {
        eprintln!("skipped: /proc/self/map_files cannot be opened here, kfd-sim keeps one fd per BO");
        return;
    }
    set_nofile_soft(1024);
    let e = env();
    let (kfd, r, gpu) = (e.kfd.as_raw_fd(), e.render[0].as_raw_fd(), e.gpus[0]);
    let region = reserve(CHUNKS * CHUNK);
    let va = |i: u64| region + i * CHUNK;
    let before = open_fds();

    let mut chunks = Vec::with_capacity(CHUNKS as usize);
    let mut shared = Vec::new();
    for i in 0..CHUNKS {
        let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: 0,
            size: CHUNK,
            gpu_id: gpu,
            flags: VRAM,
            ..Default::default()
        };
        kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap_or_else(|e| panic!("ALLOC chunk {i}: {e}"));
        let mut x = kfd_ioctl_export_dmabuf_args { handle: a.handle, flags: libc::O_CLOEXEC as u32, dmabuf_fd: 0 };
        kio(kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut x).unwrap_or_else(|e| panic!("EXPORT_DMABUF chunk {i}: {e}"));
        // SAFETY: fresh fd from EXPORT_DMABUF.
        let dmabuf = unsafe { OwnedFd::from_raw_fd(x.dmabuf_fd as RawFd) };
        let mut ph = drm_prime_handle { handle: 0, flags: 0, fd: dmabuf.as_raw_fd() };
        kio(r, DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut ph).unwrap();
        let mut v = drm_amdgpu_gem_va {
            handle: ph.handle,
            operation: AMDGPU_VA_OP_MAP,
            flags: AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
            va_address: va(i),
            offset_in_bo: 0,
            map_size: CHUNK,
            ..Default::default()
        };
        kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut v).unwrap();
        if i % CPU_EVERY == 0 {
            // CPU-map at the GPU VA, write through it, read through the dma-buf's own mapping
            // and through a second render-node mapping.
            let off = gem_mmap_offset(r, ph.handle);
            let p = map(va(i), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_FIXED, r, off).unwrap();
            for o in 0..CHUNK {
                // SAFETY: the chunk is CPU-mapped read-write at `p`.
                unsafe { *p.add(o as usize) = pattern(i, o) };
            }
            let d = map(0, libc::PROT_READ, 0, dmabuf.as_raw_fd(), 0).unwrap();
            let q = map(0, libc::PROT_READ, 0, r, off).unwrap();
            assert_eq!((mismatches(d, i), mismatches(q, i)), (0, 0), "chunk {i}");
            // SAFETY: the two read-only mappings made above; nothing borrows them.
            unsafe {
                libc::munmap(d as *mut c_void, CHUNK as usize);
                libc::munmap(q as *mut c_void, CHUNK as usize);
            }
        }
        if i % (CHUNKS / SHARED) == 0 && shared.len() < SHARED as usize {
            shared.push((i, dmabuf));
        } else {
            drop(dmabuf);
        }
        chunks.push(Chunk { kfd_handle: a.handle, gem: ph.handle });
    }
    assert_eq!(
        open_fds(),
        before + shared.len(),
        "fds held after mapping {CHUNKS} chunks (besides the {} kept dma-bufs)",
        shared.len()
    );

    // Another process imports the kept dma-bufs, half through KFD and half through PRIME, closing
    // each fd at once: it must not keep a dup of any.
    let fds: Vec<(u64, RawFd)> = shared.iter().map(|(i, f)| (*i, f.as_raw_fd())).collect();
    let code = in_child(move || {
        let gpus = topology_gpus();
        let kfd = open("/dev/kfd");
        let render = open(&format!("/dev/dri/renderD{}", gpus[1].1));
        let mut a = kfd_ioctl_acquire_vm_args { drm_fd: render.as_raw_fd() as u32, gpu_id: gpus[1].0 };
        if kio(kfd.as_raw_fd(), AMDKFD_IOC_ACQUIRE_VM, &mut a).is_err() {
            return 2;
        }
        let start = open_fds();
        let mut prime = Vec::new();
        for (n, (i, fd)) in fds.iter().enumerate() {
            if n % 2 == 1 {
                let mut im = kfd_ioctl_import_dmabuf_args {
                    va_addr: reserve(CHUNK),
                    gpu_id: gpus[1].0,
                    dmabuf_fd: *fd as u32,
                    handle: 0,
                };
                if kio(kfd.as_raw_fd(), AMDKFD_IOC_IMPORT_DMABUF, &mut im).is_err() {
                    return 3;
                }
            } else {
                let mut ph = drm_prime_handle { handle: 0, flags: 0, fd: *fd };
                if kio(render.as_raw_fd(), DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut ph).is_err() {
                    return 4;
                }
                prime.push((*i, ph.handle));
            }
            // SAFETY: the inherited dma-buf fd, ours to close in this process.
            unsafe { libc::close(*fd) };
        }
        if open_fds() + fds.len() != start {
            eprintln!("child: {} fds before the imports, {} after closing {} dma-bufs", start, open_fds(), fds.len());
            return 5;
        }
        for (i, h) in prime.into_iter().filter(|(i, _)| i % CPU_EVERY == 0) {
            let off = gem_mmap_offset(render.as_raw_fd(), h);
            match map(0, libc::PROT_READ, 0, render.as_raw_fd(), off) {
                Ok(p) if mismatches(p, i) == 0 => {}
                _ => return 6,
            }
        }
        0
    });
    assert_eq!(code, 0, "importing child failed at step {code}");
    drop(shared);
    assert_eq!(open_fds(), before);

    // The CPU-mapped chunks still read back at their VA.
    for i in (0..CHUNKS).step_by(CPU_EVERY as usize) {
        assert_eq!(mismatches(va(i) as *const u8, i), 0, "chunk {i} after all were mapped");
    }
    for (i, c) in chunks.iter().enumerate() {
        let mut gc = drm_gem_close { handle: c.gem, pad: 0 };
        kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc).unwrap_or_else(|e| panic!("GEM_CLOSE chunk {i}: {e}"));
        let mut f = kfd_ioctl_free_memory_of_gpu_args { handle: c.kfd_handle };
        kio(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f).unwrap_or_else(|e| panic!("FREE chunk {i}: {e}"));
    }
    // SAFETY: the reservation with the CPU mappings inside it; nothing borrows them any more.
    unsafe { libc::munmap(region as *mut c_void, (CHUNKS * CHUNK) as usize) };
    assert_eq!(open_fds(), before, "fds after freeing every chunk");
    eprintln!("{CHUNKS} chunks mapped, {SHARED} imported by a child: {before} open fds before, with all mapped (besides the kept dma-bufs) and after freeing");
}
