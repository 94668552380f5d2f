//! kfd-sim regression tests for the kernel-interface paths AMD's userspace takes and our runtime
//! does not (kfd-sim/FIDELITY.md): each test replays, through real syscalls, the sequence
//! `KFDSIM_TRACE=1` shows libhsakmt 5.2 / ROCr 5.2 making, and asserts what the kernel answers.
//!
//! Runs under the launcher (`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="<target>/release/kfdsim
//! run --"`, default topology xgmi-2); a test that needs another topology re-runs this executable
//! under `kfdsim run --topology ...` for that one test. One KFD process per executable.

mod common;

use common::{env, kio, reserve, serial};
use kfd_ioctl::kfd::*;
use kfd_ioctl::mmap::*;
use kfd_ioctl::sdma::{self, AtomicOp, Packet};
use libc::c_void;
use nix::errno::Errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::process::Command;

/// Set in the re-run child: the name of the one test to run for real.
const CHILD_ENV: &str = "SIM_FIDELITY_CHILD";

/// `MAP_MEMORY_TO_GPU` of `handle` on one GPU → `n_success`.
fn map_one(kfd: RawFd, handle: u64, gpu_id: u32) -> u32 {
    let devs = [gpu_id];
    let mut m = kfd_ioctl_map_memory_to_gpu_args {
        handle,
        device_ids_array_ptr: devs.as_ptr() as u64,
        n_devices: 1,
        n_success: 0,
    };
    kio(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut m).unwrap();
    m.n_success
}

/// `UNMAP_MEMORY_FROM_GPU` of `handle` from one GPU, then `FREE_MEMORY_OF_GPU`.
fn unmap_free(kfd: RawFd, handle: u64, gpu_id: u32) {
    let devs = [gpu_id];
    let mut u = kfd_ioctl_unmap_memory_from_gpu_args {
        handle,
        device_ids_array_ptr: devs.as_ptr() as u64,
        n_devices: 1,
        n_success: 0,
    };
    kio(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut u).unwrap();
    let mut f = kfd_ioctl_free_memory_of_gpu_args { handle };
    kio(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f).unwrap();
}

fn mmap(addr: u64, len: u64, prot: i32, flags: i32, fd: RawFd, off: u64) -> Result<u64, Errno> {
    // SAFETY: either a fresh mapping or MAP_FIXED over our own reservation.
    let p = unsafe { libc::mmap(addr as *mut c_void, len as usize, prot, flags, fd, off as i64) };
    if p == libc::MAP_FAILED {
        Err(Errno::last())
    } else {
        Ok(p as u64)
    }
}

/// libhsakmt 5.2's flags for VRAM allocated without HostAccess (`fmm_allocate_device`, coarse
/// grain): VRAM | WRITABLE | EXECUTABLE | NO_SUBSTITUTE, no PUBLIC.
const HSAKMT_VRAM: u32 = KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
    | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;

/// Re-runs this executable's test `name` under `kfdsim run --topology <topology>` and asserts it
/// passed there. Returns false in that child (the caller then runs the body).
fn rerun_under(topology: &str, name: &str) -> bool {
    rerun_with(topology, name, &[]).is_some()
}

/// As [`rerun_under`], with `envs` set for the child; returns the child's stderr (None in the child).
fn rerun_with(topology: &str, name: &str, envs: &[(&str, &str)]) -> Option<String> {
    if std::env::var(CHILD_ENV).is_ok_and(|v| v == name) {
        return None;
    }
    let exe = std::env::current_exe().unwrap();
    let kfdsim: PathBuf = exe.parent().unwrap().parent().unwrap().join("kfdsim");
    assert!(kfdsim.is_file(), "{} not found", kfdsim.display());
    let out = Command::new(&kfdsim)
        .args(["run", "--topology", topology, "--"])
        .arg(&exe)
        .args(["--exact", name, "--test-threads=1"])
        .env(CHILD_ENV, name)
        .envs(envs.iter().copied())
        .output()
        .expect("kfdsim runs");
    let so = String::from_utf8_lossy(&out.stdout);
    // The child's report indented, so its `test result:` line is not counted as ours.
    let indent = |t: &str| t.lines().map(|l| format!("  | {l}\n")).collect::<String>();
    assert!(
        out.status.success() && so.contains("test result: ok. 1 passed"),
        "{name} under {topology}: {:?}\n{}{}",
        out.status,
        indent(&so),
        indent(&String::from_utf8_lossy(&out.stderr))
    );
    Some(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The libhsakmt 5.2 VRAM sequence (`fmm_allocate_device` without HostAccess): ALLOC at a reserved
/// VA with no PUBLIC, then `mmap(va, PROT_NONE, MAP_PRIVATE|MAP_FIXED, render_fd, mmap_offset)`;
/// a failed mmap makes libhsakmt give the allocation up (ROCr: "BlockAllocator::alloc failed").
/// The kernel accepts it: KFD VRAM without PUBLIC is not `AMDGPU_GEM_CREATE_NO_CPU_ACCESS`
/// (`amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu`), and `amdgpu_gem_object_mmap` clears VM_MAYWRITE
/// of a PROT_NONE private mapping instead of refusing it. A private mapping that can be read is
/// COW: EINVAL (`ttm_bo_mmap_obj`). GET_DMABUF_INFO reports VRAM without PUBLIC.
fn hsakmt_vram_without_host_access() {
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let size = 2u64 << 20;
    let va = reserve(size);
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: va,
        size,
        gpu_id: e.gpus[0],
        flags: HSAKMT_VRAM,
        ..Default::default()
    };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let render = e.render[0].as_raw_fd();
    assert_eq!(mmap(va, size, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_FIXED, render, a.mmap_offset), Ok(va));
    assert_eq!(mmap(0, size, libc::PROT_READ, libc::MAP_PRIVATE, render, a.mmap_offset), Err(Errno::EINVAL));
    let devs = [e.gpus[0]];
    assert_eq!(map_one(kfd, a.handle, devs[0]), 1);
    traced_peek_poke_reaches_the_bo(va + (1 << 20) - 8);
    let mut x = kfd_ioctl_export_dmabuf_args { handle: a.handle, flags: libc::O_CLOEXEC as u32, dmabuf_fd: 0 };
    kio(kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut x).unwrap();
    // SAFETY: the fd was just created for us.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(x.dmabuf_fd as RawFd) };
    let mut info = kfd_ioctl_get_dmabuf_info_args { dmabuf_fd: dmabuf.as_raw_fd() as u32, ..Default::default() };
    kio(kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info).unwrap();
    assert_eq!((info.size, info.gpu_id, info.flags), (size, e.gpus[0], KFD_IOC_ALLOC_MEM_FLAGS_VRAM));
    drop(dmabuf);
    unmap_free(kfd, a.handle, devs[0]);
    // SAFETY: our reservation.
    unsafe { libc::munmap(va as *mut c_void, size as usize) };
}

/// A debugger's PTRACE_PEEKDATA/POKEDATA of the word at `addr` of that PROT_NONE mapping, in a
/// stopped child that inherited it, through libc's `ptrace` (the interposed one): the kernel's
/// `vm_ops->access` (`ttm_bo_vm_access`) reads and writes the BO whatever the VMA's protection,
/// and glibc's PEEK returns the word with errno 0 (kfdtest `PtraceAccessInvisibleVram`;
/// kfd-sim/FIDELITY.md row 15).
fn traced_peek_poke_reaches_the_bo(addr: u64) {
    let a = addr as *mut c_void;
    // SAFETY: ptrace on our stopped tracee; PEEK and POKE write no memory of ours.
    let (poke, peek) = common::with_stopped_tracee(|child| unsafe {
        let poke = libc::ptrace(libc::PTRACE_POKEDATA, child, a, 0x0123_4567_89ab_cdef_u64 as *mut c_void);
        let poke = (poke, Errno::last());
        Errno::set_raw(77);
        (poke, (libc::ptrace(libc::PTRACE_PEEKDATA, child, a, std::ptr::null_mut::<c_void>()) as u64, Errno::last()))
    });
    assert_eq!(poke.0, 0, "POKEDATA: {}", poke.1);
    assert_eq!(peek, (0x0123_4567_89ab_cdef, Errno::from_raw(0)));
}

#[test]
fn hsakmt_vram_without_host_access_large_bar() {
    let _g = serial();
    hsakmt_vram_without_host_access();
}

/// The same on a small-BAR GPU (preset pcie-2, where ROCr's VRAM pools are not host-accessible),
/// where PUBLIC VRAM is refused (`kfd_ioctl_alloc_memory_of_gpu`: EINVAL).
#[test]
fn hsakmt_vram_without_host_access_small_bar() {
    if rerun_under("pcie-2", "hsakmt_vram_without_host_access_small_bar") {
        return;
    }
    let _g = serial();
    let e = env();
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: reserve(4096),
        size: 4096,
        gpu_id: e.gpus[0],
        flags: HSAKMT_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
        ..Default::default()
    };
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EINVAL));
    hsakmt_vram_without_host_access();
}

/// libhsakmt's MMIO_REMAP page (`init_mmio_aperture`, hsaKmtOpenKFD on gfx9+): one page,
/// `mmap_offset = KFD_MMAP_TYPE_MMIO | gpu_id << 46`, CPU-mapped through /dev/kfd
/// (`kfd_mmio_mmap`: exactly one page, else EINVAL); any other size → EINVAL
/// (`kfd_ioctl_alloc_memory_of_gpu`).
#[test]
fn hsakmt_mmio_remap_page() {
    let _g = serial();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let flags = KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP
        | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE
        | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
    let mut bad = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: reserve(8192),
        size: 8192,
        gpu_id: e.gpus[1 % e.gpus.len()],
        flags,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut bad), Err(Errno::EINVAL));
    let va = reserve(4096);
    let gpu = e.gpus[1 % e.gpus.len()];
    let mut a =
        kfd_ioctl_alloc_memory_of_gpu_args { va_addr: va, size: 4096, gpu_id: gpu, flags, ..Default::default() };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    assert_eq!(a.mmap_offset, KFD_MMAP_TYPE_MMIO | kfd_mmap_gpu_id_bits(gpu));
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    assert_eq!(mmap(0, 8192, rw, libc::MAP_SHARED, kfd, a.mmap_offset), Err(Errno::EINVAL));
    assert_eq!(mmap(va, 4096, rw, libc::MAP_SHARED | libc::MAP_FIXED, kfd, a.mmap_offset), Ok(va));
    let devs = [gpu];
    map_one(kfd, a.handle, devs[0]);
    unmap_free(kfd, a.handle, devs[0]);
}

/// ROCr's system-memory pool on a dGPU is USERPTR (libhsakmt `fmm_allocate_host_gpu`): ALLOC
/// with the user address in `mmap_offset`, the BO cannot be mmapped from the render node
/// (`amdgpu_gem_object_mmap`: EPERM) and an address that is not mapped is EFAULT.
#[test]
fn hsakmt_userptr_system_memory() {
    let _g = serial();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let size = 1u64 << 20;
    let user =
        mmap(0, size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0).unwrap();
    let flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
        | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE
        | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: user,
        size,
        gpu_id: e.gpus[0],
        flags,
        mmap_offset: user,
        ..Default::default()
    };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    assert_eq!(
        mmap(0, size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, e.render[0].as_raw_fd(), a.mmap_offset),
        Err(Errno::EPERM)
    );
    let mut f = kfd_ioctl_free_memory_of_gpu_args { handle: a.handle };
    kio(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut f).unwrap();
    let hole = reserve(size);
    // SAFETY: our own reservation, released so the range is unmapped.
    unsafe { libc::munmap(hole as *mut c_void, size as usize) };
    let mut b = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: hole,
        size,
        gpu_id: e.gpus[0],
        flags,
        mmap_offset: hole,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut b), Err(Errno::EFAULT));
    // SAFETY: our mapping.
    unsafe { libc::munmap(user as *mut c_void, size as usize) };
}

/// `KFDSIM_TRACE=1` shows every SDMA packet the engine executes, one line each
/// (`SDMA queue <id> gpu <gpu_id> rptr <offset>: <packet>`), so ROCr's submissions can be read:
/// here ROCr's completion sequence for a copy (COPY_LINEAR, ATOMIC decrement of the signal value,
/// FENCE), submitted on an SDMA queue and polled to completion.
#[test]
fn sdma_packets_are_traced() {
    let name = "sdma_packets_are_traced";
    if let Some(stderr) = rerun_with("xgmi-2", name, &[("KFDSIM_TRACE", "1")]) {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("] SDMA queue ")).collect();
        let kinds: Vec<&str> = lines
            .iter()
            .map(|l| l.split_once(": ").unwrap().1.split(|c: char| !c.is_alphanumeric()).next().unwrap())
            .collect();
        assert_eq!(kinds, ["CopyLinear", "Atomic", "Fence"], "{stderr}");
        assert!(lines[1].contains("Dec64"), "{}", lines[1]);
        return;
    }
    let _g = serial();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let gtt = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
    let gpu = [e.gpus[0]];
    let bo = |size: u64| {
        let va = reserve(size);
        let mut a =
            kfd_ioctl_alloc_memory_of_gpu_args { va_addr: va, size, gpu_id: gpu[0], flags: gtt, ..Default::default() };
        kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        assert_eq!(
            mmap(va, size, rw, libc::MAP_SHARED | libc::MAP_FIXED, e.render[0].as_raw_fd(), a.mmap_offset),
            Ok(va)
        );
        map_one(kfd, a.handle, gpu[0]);
        va
    };
    let (ring, ptrs, data) = (bo(65536), bo(4096), bo(8192));
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: ring,
        ring_size: 65536,
        gpu_id: gpu[0],
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        queue_priority: 15,
        read_pointer_address: ptrs,
        write_pointer_address: ptrs + 8,
        ..Default::default()
    };
    kio(kfd, AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    let page =
        mmap(0, 8192, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, kfd, q.doorbell_offset & !0x1fff).unwrap();
    let doorbell = (page + (q.doorbell_offset & 0x1fff)) as *mut u64;
    // SAFETY: `data` is CPU-mapped read-write, 8 KiB: source bytes, the signal value, the fence.
    unsafe {
        std::ptr::write_bytes(data as *mut u8, 0x3c, 4096);
        *((data + 4096) as *mut u64) = 1;
    }
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, data + 2048, data, 1024);
    Packet::Atomic { op: AtomicOp::Dec64, addr: data + 4096, src: 0, cmp: 0, loop_cmpswap: false, loop_interval: 0 }
        .encode(&mut dw);
    sdma::fence(&mut dw, data + 4104, 0x600d).unwrap();
    // SAFETY: the ring, the wptr slot and the doorbell are mapped read-write.
    unsafe {
        std::ptr::copy_nonoverlapping(dw.as_ptr(), ring as *mut u32, dw.len());
        *((ptrs + 8) as *mut u64) = dw.len() as u64 * 4;
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        std::ptr::write_volatile(doorbell, dw.len() as u64 * 4);
    }
    let t0 = std::time::Instant::now();
    // SAFETY: mapped; the engine writes it.
    while unsafe { std::ptr::read_volatile((data + 4104) as *const u32) } != 0x600d {
        assert!(t0.elapsed().as_secs() < 10, "fence never written");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: as above.
    unsafe {
        assert_eq!(*((data + 4096) as *const u64), 0, "signal decremented");
        assert_eq!(*((data + 2048 + 1023) as *const u8), 0x3c);
    }
    let mut d = kfd_ioctl_destroy_queue_args { queue_id: q.queue_id, pad: 0 };
    kio(kfd, AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
}
