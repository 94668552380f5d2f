//! kfd-sim kernel-model tests through real syscalls: run under the launcher
//! (`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="<target>/release/kfdsim run --"`), so
//! `open("/dev/kfd")`, `ioctl` and `mmap` reach the model via LD_PRELOAD. Without the launcher
//! (no `KFDSIM_ROOT`) the tests skip.
//!
//! One KFD process per test binary, as in a real process (a second ACQUIRE_VM with another
//! render fd would be EBUSY): the tests share one environment and run one at a time.

mod common;

use common::{
    alloc, alloc_at, cpu_map, create_event, create_sdma, dbg_trap, drain, event_page, free, in_child, kio, map, map_on,
    open, pc_sample, perfmon_capable, readable, reserve, serial, topology_gpus, unmap, wait, Buf, Env, GTT, VRAM,
};
use kfd_ioctl::kfd::*;
use kfd_ioctl::sdma;
use libc::c_void;
use nix::errno::Errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// The shared environment; the default topology has 2 GPUs.
fn env() -> &'static Env {
    let e = common::env();
    assert!(e.gpus.len() >= 2, "the default topology has 2 GPUs");
    e
}

#[test]
fn get_version_is_1_17_and_unknown_nr_is_enotty() {
    let _g = serial();
    let e = env();
    let mut v = kfd_ioctl_get_version_args::default();
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    assert_eq!((v.major_version, v.minor_version), (1, 17));
    assert_eq!(kio(e.kfd.as_raw_fd(), 0xc008_4b27, &mut v), Err(Errno::ENOTTY));
    // ROCm DKMS's second table: its IPC pair (0x80, 0x81) and PC sampling (0x85) are answered;
    // DBG_TRAP of ROCm 5 (0x82), CROSS_MEMORY_COPY (0x83) and RLC_SPM (0x84) answer as upstream.
    assert_eq!(kio(e.kfd.as_raw_fd(), 0xc030_4b80, &mut [0u8; 48]), Err(Errno::EINVAL), "unknown share handle");
    for nr in [0x82, 0x83, 0x84, 0x86] {
        assert_eq!(kio(e.kfd.as_raw_fd(), 0xc030_4b00 | nr, &mut [0u8; 48]), Err(Errno::ENOTTY), "nr {nr:#x}");
    }
}

/// PC sampling sessions as `kfd_pc_sampling.c` keeps them (ROCm DKMS; amd-gfx v4): GC 9.4.2's
/// one host-trap format; the format of the first session binds every process until the last
/// session goes (EEXIST with the format in use written back); trace ids are the creator's
/// only; START/STOP twice → EALREADY; a started session cannot be destroyed; a process's
/// sessions go with it; and the debugger is refused while a session exists.
#[test]
fn pc_sample_sessions_follow_kfd_pc_sampling() {
    let _g = serial();
    let e = env();
    let fd = e.kfd.as_raw_fd();
    let gpu = e.gpus[0];
    if !perfmon_capable() {
        for op in 0..5 {
            assert_eq!(pc_sample(fd, op, gpu, 1, None).0, Err(Errno::EACCES), "op {op} without CAP_PERFMON");
        }
        eprintln!("skipped the rest: no CAP_PERFMON or CAP_SYS_ADMIN");
        return;
    }
    let mut q =
        kfd_ioctl_pc_sample_args { op: KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES, gpu_id: 0xdead, ..Default::default() };
    assert_eq!(kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut q), Err(Errno::EINVAL), "unknown GPU");
    // No buffer: the number of formats (what ROCr and kfdtest ask first).
    q.gpu_id = gpu;
    assert_eq!((kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut q), q.num_sample_info), (Ok(()), 1));
    let mut caps = [kfd_pc_sample_info::default(); 2];
    (q.sample_info_ptr, q.num_sample_info) = (caps.as_mut_ptr() as u64, 2);
    assert_eq!(kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut q), Ok(()));
    let hosttrap = kfd_pc_sample_info {
        interval: 0,
        interval_min: 1,
        interval_max: u64::MAX,
        flags: 0,
        method: KFD_IOCTL_PCS_METHOD_HOSTTRAP,
        r#type: KFD_IOCTL_PCS_TYPE_TIME_US,
    };
    assert_eq!(caps, [hosttrap, kfd_pc_sample_info::default()]);
    let mut info = kfd_pc_sample_info { interval: 0x10_0000, ..hosttrap };
    // CREATE's checks, before anything is made.
    let mut a = kfd_ioctl_pc_sample_args { op: KFD_IOCTL_PCS_OP_CREATE, gpu_id: gpu, ..Default::default() };
    (a.sample_info_ptr, a.num_sample_info) = (&mut info as *mut kfd_pc_sample_info as u64, 2);
    assert_eq!(kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut a), Err(Errno::EINVAL), "num_sample_info 2");
    let mut odd = kfd_pc_sample_info { interval: 3, flags: KFD_IOCTL_PCS_FLAG_POWER_OF_2, ..hosttrap };
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut odd)).0, Err(Errno::EINVAL));
    let mut cycles = kfd_pc_sample_info { interval: 256, r#type: KFD_IOCTL_PCS_TYPE_CLOCK_CYCLES, ..hosttrap };
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut cycles)).0, Err(Errno::EOPNOTSUPP));
    let mut zero = hosttrap;
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut zero)).0, Err(Errno::EOPNOTSUPP), "interval 0");
    // kfdtest BasicTest's order.
    for op in [KFD_IOCTL_PCS_OP_START, KFD_IOCTL_PCS_OP_STOP, KFD_IOCTL_PCS_OP_DESTROY] {
        assert_eq!(pc_sample(fd, op, gpu, 12345, None).0, Err(Errno::EINVAL), "op {op} of an unknown trace id");
    }
    let (r, a) = pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut info));
    let id = a.trace_id;
    assert!(r.is_ok() && id >= 1, "{r:?} trace id {id}");
    // A session exists: QUERY answers its format, unless asked for all.
    let mut cur = [kfd_pc_sample_info::default(); 2];
    q = kfd_ioctl_pc_sample_args {
        op: KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES,
        gpu_id: gpu,
        sample_info_ptr: cur.as_mut_ptr() as u64,
        num_sample_info: 2,
        ..Default::default()
    };
    assert_eq!((kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut q), q.num_sample_info, cur[0]), (Ok(()), 1, info));
    q.flags = KFD_IOCTL_PCS_QUERY_TYPE_FULL;
    assert_eq!((kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut q), cur[0]), (Ok(()), hosttrap));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_START, gpu, id, None).0, Ok(()));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_START, gpu, id, None).0, Err(Errno::EALREADY));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_DESTROY, gpu, id, None).0, Err(Errno::EBUSY), "started");
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_START, e.gpus[1], id, None).0, Err(Errno::EINVAL), "other GPU");
    let mut a = kfd_ioctl_pc_sample_args { op: 5, gpu_id: gpu, trace_id: id, ..Default::default() };
    assert_eq!(kio(fd, AMDKFD_IOC_PC_SAMPLE, &mut a), Err(Errno::EINVAL), "op 5");
    // PC sampling and the debugger exclude each other (pc_sampling_ref).
    assert_eq!(dbg_trap(std::process::id(), KFD_IOC_DBG_TRAP_ENABLE, |_| {}).0, Err(Errno::EBUSY));
    // Another process: other parameters → EEXIST with the ones in use; the same → a session of
    // its own; this process's trace id is not its to start. It exits without destroying.
    let code = in_child(|| {
        let kfd = open("/dev/kfd");
        let fd = kfd.as_raw_fd();
        let mut other = kfd_ioctl_get_process_apertures_new_args::default();
        let _ = kio(fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut other);
        let mut faster = kfd_pc_sample_info { interval: 100, ..hosttrap };
        if pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut faster)).0 != Err(Errno::EEXIST) {
            return 2;
        }
        if faster.interval != 0x10_0000 {
            return 3;
        }
        if pc_sample(fd, KFD_IOCTL_PCS_OP_START, gpu, id, None).0 != Err(Errno::EINVAL) {
            return 4;
        }
        let (r, a) = pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut faster));
        if r.is_err() || a.trace_id == id {
            return 5;
        }
        if pc_sample(fd, KFD_IOCTL_PCS_OP_START, gpu, a.trace_id, None).0.is_err() {
            return 6;
        }
        0
    });
    assert_eq!(code, 0, "the child's step {code} failed");
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_STOP, gpu, id, None).0, Ok(()));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_STOP, gpu, id, None).0, Err(Errno::EALREADY));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_DESTROY, gpu, id, None).0, Ok(()));
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_DESTROY, gpu, id, None).0, Err(Errno::EINVAL), "destroyed");
    // The child's session went with it: other parameters are free to take.
    let mut faster = kfd_pc_sample_info { interval: 100, ..hosttrap };
    let (r, a) = pc_sample(fd, KFD_IOCTL_PCS_OP_CREATE, gpu, 0, Some(&mut faster));
    assert_eq!(r, Ok(()), "the exited child's session is still there");
    assert_eq!(pc_sample(fd, KFD_IOCTL_PCS_OP_DESTROY, gpu, a.trace_id, None).0, Ok(()));
}

#[test]
fn apertures_are_gfx9_dgpu_svm() {
    let _g = serial();
    let e = env();
    let mut a = kfd_ioctl_get_process_apertures_new_args::default();
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    assert_eq!(a.num_of_nodes as usize, e.gpus.len());
    let mut ap = vec![kfd_process_device_apertures::default(); e.gpus.len()];
    a.kfd_process_device_apertures_ptr = ap.as_mut_ptr() as u64;
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    for (i, x) in ap.iter().enumerate() {
        assert_eq!(x.gpu_id, e.gpus[i]);
        assert!(x.gpuvm_base > 0 && x.gpuvm_base <= 0x100_0000);
        assert_eq!(x.gpuvm_limit, 0x7fff_ffff_ffff);
    }
}

#[test]
fn vram_alloc_cpu_mmap_map_free_rules() {
    let _g = serial();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: reserve(4096),
        size: 0,
        gpu_id: e.gpus[0],
        flags: VRAM,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EINVAL), "size 0");
    a.size = 4096;
    a.gpu_id = 0xdead;
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EINVAL), "unknown gpu");

    let b = alloc(0, 2 << 20, VRAM);
    // SAFETY: CPU-mapped through the render node.
    unsafe { std::ptr::write_bytes(b.va as *mut u8, 0xa5, b.size as usize) };
    map(&b, &e.gpus).unwrap();
    assert_eq!(free(&b), Err(Errno::EBUSY), "FREE while mapped");
    let bogus = Buf { handle: (e.gpus[0] as u64) << 32 | 0x00ff_ffff, va: 0, size: 0 };
    assert_eq!(map(&bogus, &e.gpus[..1]), Err(Errno::ENOMEM), "MAP of an unknown handle");
    assert_eq!(unmap(&bogus, &e.gpus[..1]), Err(Errno::ENOMEM));
    assert_eq!(free(&bogus), Err(Errno::EINVAL));
    unmap(&b, &e.gpus).unwrap();
    free(&b).unwrap();
    // The CPU mapping outlives the BO (the vma holds the pages), as with a real GEM object.
    // SAFETY: still mapped.
    assert_eq!(unsafe { *(b.va as *const u8) }, 0xa5);
}

#[test]
fn dmabuf_export_import_in_forked_child() {
    let _g = serial();
    let e = env();
    let b = alloc(0, 1 << 20, VRAM);
    // SAFETY: CPU-mapped.
    unsafe {
        for i in 0..b.size {
            *((b.va + i) as *mut u8) = (i % 253) as u8;
        }
    }
    let mut x = kfd_ioctl_export_dmabuf_args { handle: b.handle, flags: 0, dmabuf_fd: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_EXPORT_DMABUF, &mut x).unwrap();
    // SAFETY: fresh fd from EXPORT_DMABUF.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(x.dmabuf_fd as RawFd) };
    let parent_kfd = e.kfd.as_raw_fd();
    let dfd = dmabuf.as_raw_fd();
    let size = b.size;
    let code = in_child(move || {
        // The parent's /dev/kfd fd is not usable here.
        let mut v = kfd_ioctl_get_version_args::default();
        if kio(parent_kfd, AMDKFD_IOC_GET_VERSION, &mut v) != Err(Errno::EBADF) {
            return 2;
        }
        let gpus = topology_gpus();
        let kfd = open("/dev/kfd");
        let render = open(&format!("/dev/dri/renderD{}", gpus[1].1));
        let mut a = kfd_ioctl_acquire_vm_args { drm_fd: render.as_raw_fd() as u32, gpu_id: gpus[1].0 };
        if kio(kfd.as_raw_fd(), AMDKFD_IOC_ACQUIRE_VM, &mut a).is_err() {
            return 3;
        }
        let mut info = kfd_ioctl_get_dmabuf_info_args { dmabuf_fd: dfd as u32, ..Default::default() };
        if kio(kfd.as_raw_fd(), AMDKFD_IOC_GET_DMABUF_INFO, &mut info).is_err()
            || info.size != size
            || info.gpu_id != gpus[0].0
        {
            return 4;
        }
        let va = reserve(size);
        let mut im = kfd_ioctl_import_dmabuf_args { va_addr: va, gpu_id: gpus[1].0, dmabuf_fd: dfd as u32, handle: 0 };
        if kio(kfd.as_raw_fd(), AMDKFD_IOC_IMPORT_DMABUF, &mut im).is_err() {
            return 5;
        }
        if map_on(kfd.as_raw_fd(), &Buf { handle: im.handle, va, size }, &[gpus[1].0]).is_err() {
            return 6;
        }
        // Read the parent's bytes through the dma-buf itself (amdgpu dma-bufs are mmappable).
        // SAFETY: mapping the dma-buf fd read-only.
        let q = unsafe { libc::mmap(std::ptr::null_mut(), size as usize, libc::PROT_READ, libc::MAP_SHARED, dfd, 0) };
        if q == libc::MAP_FAILED {
            return 7;
        }
        for i in (0..size).step_by(997) {
            // SAFETY: mapped above.
            if unsafe { *((q as u64 + i) as *const u8) } != (i % 253) as u8 {
                return 8;
            }
        }
        0
    });
    assert_eq!(code, 0, "child failed at step {code}");
    assert_eq!(unmap(&b, &[]), Err(Errno::EINVAL), "n_devices == 0");
    free(&b).unwrap();
}

/// This (new) process's KFD with GPU 1's VM: (kfd, render fd, gpu_id).
fn kfd_on_gpu1() -> (OwnedFd, OwnedFd, u32) {
    let gpus = topology_gpus();
    let kfd = open("/dev/kfd");
    let render = open(&format!("/dev/dri/renderD{}", gpus[1].1));
    let mut a = kfd_ioctl_acquire_vm_args { drm_fd: render.as_raw_fd() as u32, gpu_id: gpus[1].0 };
    kio(kfd.as_raw_fd(), AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
    (kfd, render, gpus[1].0)
}

/// IPC_IMPORT_HANDLE of 1 MiB share handle `h` on `gpu_id`, CPU-mapped: the import and the
/// exporter's flags, or the import's errno.
fn ipc_import(kfd: &OwnedFd, render: &OwnedFd, gpu_id: u32, h: [u32; 4]) -> Result<(Buf, u32), Errno> {
    let size = 1 << 20;
    let va = reserve(size);
    let mut im = kfd_ioctl_ipc_import_handle_args { va_addr: va, share_handle: h, gpu_id, ..Default::default() };
    kio(kfd.as_raw_fd(), AMDKFD_IOC_IPC_IMPORT_HANDLE, &mut im)?;
    cpu_map(render.as_raw_fd(), va, size, im.mmap_offset);
    Ok((Buf { handle: im.handle, va, size }, im.flags))
}

/// A new process's import of `h` on GPU 1 (see [`ipc_import`]).
fn import_in_new_process(h: [u32; 4]) -> Result<(Buf, u32), Errno> {
    let (kfd, render, gpu) = kfd_on_gpu1();
    let r = ipc_import(&kfd, &render, gpu, h);
    // The process keeps its KFD until it exits.
    std::mem::forget((kfd, render));
    r
}

/// ROCm DKMS's IPC handles (`kfd_ipc.c`): a share handle filed by one process imports in others,
/// bytes pass both ways, and the handle lives while any process's BO references it.
#[test]
fn ipc_share_handle_imports_in_other_processes_while_referenced() {
    let _g = serial();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let b = alloc(0, 1 << 20, VRAM);
    let bytes = |va: u64, i: u64| (va + i) as *mut u8;
    for i in 0..b.size {
        // SAFETY: CPU-mapped, b.size bytes.
        unsafe { *bytes(b.va, i) = (i % 251) as u8 };
    }
    let mut x =
        kfd_ioctl_ipc_export_handle_args { handle: b.handle, gpu_id: e.gpus[0], flags: 0x1234, ..Default::default() };
    kio(kfd, AMDKFD_IOC_IPC_EXPORT_HANDLE, &mut x).unwrap();
    let h = x.share_handle;
    assert_ne!(h, [0; 4]);
    // The same BO gives the same handle; unknown GPU or BO → EINVAL, and nothing is written.
    let mut again = kfd_ioctl_ipc_export_handle_args { flags: 7, ..x };
    again.share_handle = [0; 4];
    kio(kfd, AMDKFD_IOC_IPC_EXPORT_HANDLE, &mut again).unwrap();
    assert_eq!(again.share_handle, h);
    for bad in [
        kfd_ioctl_ipc_export_handle_args { gpu_id: 0xdead, ..x },
        kfd_ioctl_ipc_export_handle_args { handle: b.handle + 999, ..x },
    ] {
        let mut bad = kfd_ioctl_ipc_export_handle_args { share_handle: [0; 4], ..bad };
        assert_eq!(kio(kfd, AMDKFD_IOC_IPC_EXPORT_HANDLE, &mut bad), Err(Errno::EINVAL));
        assert_eq!(bad.share_handle, [0; 4]);
    }

    // Another process imports it, reads the exporter's bytes and writes its own.
    let code = in_child(move || {
        let (kfd, render, gpu) = kfd_on_gpu1();
        let mut flipped = h;
        flipped[3] ^= 1;
        if ipc_import(&kfd, &render, gpu, flipped).err() != Some(Errno::EINVAL) {
            return 2;
        }
        let Ok((imp, flags)) = ipc_import(&kfd, &render, gpu, h) else { return 3 };
        if flags != 0x1234 {
            return 4;
        }
        for i in (0..imp.size).step_by(509) {
            // SAFETY: the import is CPU-mapped, imp.size bytes.
            if unsafe { *bytes(imp.va, i) } != (i % 251) as u8 {
                return 5;
            }
            // SAFETY: as above.
            unsafe { *bytes(imp.va, i) = 0x5a };
        }
        0
    });
    assert_eq!(code, 0, "importer failed at step {code}");
    for i in (0..b.size).step_by(509) {
        // SAFETY: CPU-mapped.
        assert_eq!(unsafe { *bytes(b.va, i) }, 0x5a, "byte {i} written by the importer");
    }

    // A holder: imports, then waits for the parent's word before it exits.
    let (mut to_holder, mut from_holder) = ([0; 2], [0; 2]);
    // SAFETY: two fresh pipes.
    unsafe { assert!(libc::pipe(to_holder.as_mut_ptr()) == 0 && libc::pipe(from_holder.as_mut_ptr()) == 0) };
    // SAFETY: the child only imports, talks over the pipes and _exits.
    let holder = unsafe { libc::fork() };
    assert!(holder >= 0);
    if holder == 0 {
        let ok = import_in_new_process(h).is_ok();
        let mut w = [ok as u8];
        // SAFETY: our pipe ends and a one-byte buffer. Without the parent's write end, the read
        // ends when the parent exits, even by a failed assertion.
        unsafe {
            libc::close(to_holder[1]);
            libc::write(from_holder[1], w.as_ptr().cast(), 1);
            libc::read(to_holder[0], w.as_mut_ptr().cast(), 1);
            libc::_exit(0);
        }
    }
    let mut w = [0u8];
    // SAFETY: our pipe ends and a one-byte buffer.
    unsafe {
        libc::close(to_holder[0]);
        libc::close(from_holder[1]);
        libc::read(from_holder[0], w.as_mut_ptr().cast(), 1);
    }
    assert_eq!(w[0], 1, "the holder imported");
    // The exporter frees its BO: the holder's reference keeps the handle.
    free(&b).unwrap();
    let code = in_child(move || match import_in_new_process(h) {
        Ok((imp, _)) if (0..imp.size).step_by(509).all(|i| unsafe { *bytes(imp.va, i) } == 0x5a) => 0,
        Ok(_) => 2,
        Err(_) => 3,
    });
    assert_eq!(code, 0, "import after the exporter's free failed at step {code}");
    // The holder exits without freeing (its entry goes stale): the handle is gone.
    // SAFETY: our pipe end, our child.
    unsafe {
        libc::write(to_holder[1], w.as_ptr().cast(), 1);
        libc::waitpid(holder, std::ptr::null_mut(), 0);
    }
    let code = in_child(move || match import_in_new_process(h) {
        Err(Errno::EINVAL) => 0,
        _ => 1,
    });
    assert_eq!(code, 0, "a handle nobody references imports");
    let hex: String = h.iter().map(|w| format!("{w:08x}")).collect();
    let dir = std::path::Path::new(&std::env::var_os("KFDSIM_SESSION").unwrap()).join("ipc").join(hex);
    assert!(!dir.exists(), "{} is left", dir.display());
    // SAFETY: our pipe ends.
    unsafe {
        libc::close(to_holder[1]);
        libc::close(from_holder[0]);
    }
}

#[test]
fn forked_child_gets_ebadf_on_parent_kfd_fd() {
    let _g = serial();
    let kfd = env().kfd.as_raw_fd();
    let code = in_child(move || {
        let mut v = kfd_ioctl_get_version_args::default();
        match kio(kfd, AMDKFD_IOC_GET_VERSION, &mut v) {
            Err(Errno::EBADF) => 0,
            _ => 1,
        }
    });
    assert_eq!(code, 0);
}

#[test]
fn sdma_copy_fence_trap_and_wait_events() {
    let _g = serial();
    let e = env();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_sdma(0);
    let src = alloc(0, 3 << 20, VRAM);
    // Destination: two BOs on GPU 1 adjacent in VA, so the copy crosses a mapping boundary.
    let region = reserve(3 << 20);
    let dst_a = alloc_at(1, region, 2 << 20, VRAM);
    let dst_b = alloc_at(1, region + (2 << 20), 1 << 20, VRAM);
    let signal = alloc(0, 4096, GTT);
    for b in [&src, &dst_a, &dst_b, &signal] {
        map(b, &e.gpus).unwrap();
    }
    // SAFETY: CPU-mapped.
    unsafe {
        for i in 0..src.size {
            *((src.va + i) as *mut u8) = (i * 7 % 251) as u8;
        }
    }
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, region, src.va, 3 << 20);
    sdma::fence(&mut dw, signal.va, 0xfeed).unwrap();
    sdma::fence(&mut dw, slots + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
    sdma::trap(&mut dw, ev.event_id).unwrap();
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 10_000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    // SAFETY: CPU-mapped.
    unsafe {
        assert_eq!(*(signal.va as *const u32), 0xfeed);
        for i in (0..(3u64 << 20)).step_by(1021) {
            assert_eq!(*((region + i) as *const u8), (i * 7 % 251) as u8, "byte {i:#x}");
        }
        assert_eq!(*(q.ptrs.va as *const u64), q.wptr, "rptr caught up");
    }
    // Unmapping the ring of a live queue is refused.
    assert_eq!(unmap(&q.ring, &e.gpus[..1]), Err(Errno::EBUSY));
    let (ring, ptrs) = q.destroy();
    unmap(&ring, &e.gpus[..1]).unwrap();
    unmap(&ptrs, &e.gpus[..1]).unwrap();
}

#[test]
fn sdma_copy_from_unmapped_va_raises_memory_exception() {
    let _g = serial();
    let e = env();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_sdma(1);
    let dst = alloc(1, 4096, GTT);
    map(&dst, &e.gpus[1..2]).unwrap();
    let hole = reserve(1 << 20) + 0x5000;
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, dst.va, hole + 0x20, 256);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 10_000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!(d.va, hole);
    assert_eq!(d.gpu_id, e.gpus[1]);
    assert_eq!((d.failure.NotPresent, d.failure.ReadOnly), (1, 0));
    // The queue is stopped: a later FENCE never lands.
    let mut dw = Vec::new();
    sdma::fence(&mut dw, dst.va, 9).unwrap();
    q.submit(&dw);
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: CPU-mapped.
    assert_eq!(unsafe { *(dst.va as *const u32) }, 0);
    let mut de = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut de).unwrap();
    q.destroy();
}

#[test]
fn create_queue_with_wrong_ring_mapping_size_is_einval() {
    let _g = serial();
    let e = env();
    let ring = alloc(0, 65536, GTT);
    let ptrs = alloc(0, 4096, GTT);
    map(&ring, &e.gpus[..1]).unwrap();
    map(&ptrs, &e.gpus[..1]).unwrap();
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: ring.va,
        ring_size: 32768, // the mapping is 64 KiB
        gpu_id: e.gpus[0],
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        read_pointer_address: ptrs.va,
        write_pointer_address: ptrs.va + 8,
        ..Default::default()
    };
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q), Err(Errno::EINVAL));
    // Nothing stays referenced: the buffers unmap.
    unmap(&ring, &e.gpus[..1]).unwrap();
    unmap(&ptrs, &e.gpus[..1]).unwrap();
    free(&ring).unwrap();
    free(&ptrs).unwrap();
}

#[test]
fn wait_events_times_out() {
    let _g = serial();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let t = Instant::now();
    let (r, res, _) = wait(&[ev.event_id], 50);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT));
    assert!(t.elapsed() >= Duration::from_millis(49));
    let (r, res, _) = wait(&[ev.event_id], 0);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT));
    let mut s = kfd_ioctl_set_event_args { event_id: ev.event_id, pad: 0 };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_EVENT, &mut s).unwrap();
    assert_eq!(wait(&[ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    // Auto-reset consumed it.
    assert_eq!(wait(&[ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
}

// ------------------------------------------------------------------------------------------
// Render node: GEM, PRIME and syncobjs across processes
// ------------------------------------------------------------------------------------------

use kfd_ioctl::amdgpu::*;
use kfd_ioctl::drm::*;

#[test]
fn gem_bo_shared_by_prime_with_forked_child() {
    let _g = serial();
    let r = env().render[0].as_raw_fd();
    let mut c = drm_amdgpu_gem_create::new(drm_amdgpu_gem_create_in {
        bo_size: 1 << 20,
        alignment: 4096,
        domains: AMDGPU_GEM_DOMAIN_GTT,
        domain_flags: 0,
    });
    kio(r, DRM_IOCTL_AMDGPU_GEM_CREATE, &mut c).unwrap();
    let h = c.output().handle;
    let mut m = drm_amdgpu_gem_mmap::new(h);
    kio(r, DRM_IOCTL_AMDGPU_GEM_MMAP, &mut m).unwrap();
    // SAFETY: CPU mapping of the GEM BO.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            1 << 20,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            r,
            m.output().addr_ptr as i64,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: mapped above.
    unsafe { std::ptr::write_bytes(p as *mut u8, 0x6b, 1 << 20) };
    let mut ph = drm_prime_handle { handle: h, flags: DRM_RDWR, fd: -1 };
    kio(r, DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut ph).unwrap();
    // SAFETY: fresh fd.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(ph.fd) };
    let dfd = dmabuf.as_raw_fd();
    let code = in_child(move || {
        let gpus = topology_gpus();
        let render = open(&format!("/dev/dri/renderD{}", gpus[1].1));
        let mut im = drm_prime_handle { handle: 0, flags: 0, fd: dfd };
        if kio(render.as_raw_fd(), DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut im).is_err() {
            return 2;
        }
        let mut m = drm_amdgpu_gem_mmap::new(im.handle);
        if kio(render.as_raw_fd(), DRM_IOCTL_AMDGPU_GEM_MMAP, &mut m).is_err() {
            return 3;
        }
        // SAFETY: CPU mapping of the imported BO.
        let q = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                1 << 20,
                libc::PROT_READ,
                libc::MAP_SHARED,
                render.as_raw_fd(),
                m.output().addr_ptr as i64,
            )
        };
        if q == libc::MAP_FAILED {
            return 4;
        }
        // SAFETY: mapped.
        if unsafe { *((q as u64 + 12345) as *const u8) } != 0x6b {
            return 5;
        }
        0
    });
    assert_eq!(code, 0, "child failed at step {code}");
    let mut gc = drm_gem_close { handle: h, pad: 0 };
    kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc), Err(Errno::EINVAL));
}

#[test]
fn syncobj_signaled_by_forked_child() {
    let _g = serial();
    let r = env().render[0].as_raw_fd();
    let mut c = drm_syncobj_create { handle: 0, flags: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_CREATE, &mut c).unwrap();
    let mut x = drm_syncobj_handle { handle: c.handle, flags: 0, fd: -1, pad: 0, point: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &mut x).unwrap();
    // SAFETY: fresh fd.
    let sfd = unsafe { OwnedFd::from_raw_fd(x.fd) };
    let fd = sfd.as_raw_fd();
    // SAFETY: plain fork; the child signals and _exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        std::thread::sleep(Duration::from_millis(30));
        let gpus = topology_gpus();
        let render = open(&format!("/dev/dri/renderD{}", gpus[0].1));
        let mut i = drm_syncobj_handle { handle: 0, flags: 0, fd, pad: 0, point: 0 };
        let ok = kio(render.as_raw_fd(), DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &mut i).is_ok() && {
            let hs = [i.handle];
            let mut a = drm_syncobj_array { handles: hs.as_ptr() as u64, count_handles: 1, pad: 0 };
            kio(render.as_raw_fd(), DRM_IOCTL_SYNCOBJ_SIGNAL, &mut a).is_ok()
        };
        // SAFETY: leave the child.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let hs = [c.handle];
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let deadline = ts.tv_sec * 1_000_000_000 + ts.tv_nsec + 5_000_000_000;
    let mut w = drm_syncobj_wait {
        handles: hs.as_ptr() as u64,
        timeout_nsec: deadline,
        count_handles: 1,
        flags: DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
        first_signaled: 9,
        pad: 0,
        deadline_nsec: 0,
    };
    kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut w).unwrap();
    assert_eq!(w.first_signaled, 0);
    let mut status = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    let mut d = drm_syncobj_destroy { handle: c.handle, pad: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_DESTROY, &mut d).unwrap();
}

/// The VMM path (ALLOC va 0 → EXPORT_DMABUF → PRIME_FD_TO_HANDLE → GEM_VA) with
/// `AMDGPU_VM_PAGE_READABLE` only: an SDMA write through the mapping raises a VM fault with
/// `failure.ReadOnly` and leaves the memory unchanged; reads through it work.
#[test]
fn sdma_write_through_read_only_gem_va_mapping_faults() {
    let _g = serial();
    let e = env();
    let (kfd, render) = (e.kfd.as_raw_fd(), e.render[1].as_raw_fd());
    let size = 1u64 << 16;
    let mut a =
        kfd_ioctl_alloc_memory_of_gpu_args { va_addr: 0, size, gpu_id: e.gpus[1], flags: VRAM, ..Default::default() };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    // CPU view of the chunk, filled with 0x11.
    let cpu = reserve(size);
    cpu_map(render, cpu, size, a.mmap_offset);
    // SAFETY: mapped above.
    unsafe { std::ptr::write_bytes(cpu as *mut u8, 0x11, size as usize) };
    let mut x = kfd_ioctl_export_dmabuf_args { handle: a.handle, flags: libc::O_CLOEXEC as u32, dmabuf_fd: 0 };
    kio(kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut x).unwrap();
    // SAFETY: the fd the ioctl just made.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(x.dmabuf_fd as RawFd) };
    let mut pr = drm_prime_handle { handle: 0, flags: 0, fd: dmabuf.as_raw_fd() };
    kio(render, DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut pr).unwrap();
    drop(dmabuf);
    let gpu_va = reserve(size);
    let mut va = drm_amdgpu_gem_va {
        handle: pr.handle,
        operation: AMDGPU_VA_OP_MAP,
        flags: AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_EXECUTABLE,
        va_address: gpu_va,
        offset_in_bo: 0,
        map_size: size,
        ..Default::default()
    };
    kio(render, DRM_IOCTL_AMDGPU_GEM_VA, &mut va).unwrap();
    let src = alloc(1, 4096, GTT);
    map(&src, &e.gpus[1..2]).unwrap();
    // SAFETY: CPU-mapped.
    unsafe { std::ptr::write_bytes(src.va as *mut u8, 0x99, 4096) };

    // A read through the read-only mapping works.
    let mut q = create_sdma(1);
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, src.va, gpu_va + 0x100, 256);
    sdma::fence(&mut dw, src.va + 2048, 7).unwrap();
    q.submit(&dw);
    let t0 = Instant::now();
    // SAFETY: CPU-mapped.
    while unsafe { std::ptr::read_volatile((src.va + 2048) as *const u32) } != 7 {
        assert!(t0.elapsed() < Duration::from_secs(10), "read through a read-only mapping never completed");
        std::thread::sleep(Duration::from_millis(1));
    }
    // SAFETY: CPU-mapped.
    assert_eq!(unsafe { *(src.va as *const u8) }, 0x11);
    q.destroy();

    // A write faults, and nothing lands.
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_sdma(1);
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, gpu_va + 0x1000, src.va, 256);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 10_000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!(d.va, gpu_va + 0x1000);
    assert_eq!((d.failure.NotPresent, d.failure.ReadOnly), (0, 1));
    // SAFETY: CPU-mapped.
    let bytes = unsafe { std::slice::from_raw_parts(cpu as *const u8, size as usize) };
    assert!(bytes.iter().all(|b| *b == 0x11), "a write went through a read-only mapping");
    let mut de = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(kfd, AMDKFD_IOC_DESTROY_EVENT, &mut de).unwrap();
    q.destroy();
    va.operation = AMDGPU_VA_OP_UNMAP;
    va.flags = 0;
    kio(render, DRM_IOCTL_AMDGPU_GEM_VA, &mut va).unwrap();
    let mut c = drm_gem_close { handle: pr.handle, pad: 0 };
    kio(render, DRM_IOCTL_GEM_CLOSE, &mut c).unwrap();
    // SAFETY: our own mapping.
    unsafe { libc::munmap(cpu as *mut c_void, size as usize) };
    free(&Buf { handle: a.handle, va: 0, size }).unwrap();
    unmap(&src, &e.gpus[1..2]).unwrap();
    free(&src).unwrap();
}

/// kfdtest `KFDDBGTest.AttachToSpawnedProcess` across two processes: a debugger attaches to a
/// child it ptraces before the child opened /dev/kfd (its runtime still disabled); the child's
/// RUNTIME_ENABLE and its RUNTIME_DISABLE each write the debugger's file and wait until the
/// debugger answers with SEND_RUNTIME_EVENT (forced: the child reports over a pipe when its
/// ioctl returned, and nothing comes before the answer). A process the caller does not trace is
/// EPERM, a pid that does not exist ESRCH.
#[test]
fn dbg_trap_attach_to_a_traced_child_waits_for_the_debugger_at_runtime_enable() {
    let _g = serial();
    let runtime = kfd_ec_mask(EC_PROCESS_RUNTIME);
    assert_eq!(dbg_trap(1, KFD_IOC_DBG_TRAP_ENABLE, |_| {}).0, Err(Errno::EPERM), "init is not traced by us");
    assert_eq!(dbg_trap(i32::MAX as u32, KFD_IOC_DBG_TRAP_ENABLE, |_| {}).0, Err(Errno::ESRCH));
    let (mut ev, mut done) = ([0; 2], [0; 2]);
    // SAFETY: two fresh pipes.
    unsafe {
        assert_eq!(libc::pipe2(ev.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC), 0);
        assert_eq!(libc::pipe2(done.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC), 0);
    }
    // SAFETY: the child asks to be traced, stops, then opens /dev/kfd itself, enables and
    // disables its runtime, reports each over the pipe and _exits.
    let child = unsafe { libc::fork() };
    assert!(child >= 0);
    if child == 0 {
        // SAFETY: as above; every call has valid arguments.
        unsafe {
            libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0);
            libc::raise(libc::SIGSTOP);
        }
        let kfd = open("/dev/kfd");
        let mut r = kfd_ioctl_runtime_enable_args {
            r_debug: 0,
            mode_mask: KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
            capabilities_mask: 0,
        };
        let on = kio(kfd.as_raw_fd(), AMDKFD_IOC_RUNTIME_ENABLE, &mut r).is_ok();
        // SAFETY: our pipe's write end, one byte.
        unsafe { libc::write(done[1], [1u8].as_ptr().cast(), 1) };
        r.mode_mask = 0;
        let off = kio(kfd.as_raw_fd(), AMDKFD_IOC_RUNTIME_ENABLE, &mut r).is_ok();
        // SAFETY: leave the child.
        unsafe { libc::_exit(if on && off { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(child, &mut status, 0) };
    assert!(libc::WIFSTOPPED(status), "the child stops for its tracer");
    let mut info = kfd_runtime_info { r_debug: 7, runtime_state: 9, ttmp_setup: 9 };
    let (r, _) = dbg_trap(child as u32, KFD_IOC_DBG_TRAP_ENABLE, |a| {
        a.set_u64(0, runtime);
        a.set_u64(8, &mut info as *mut kfd_runtime_info as u64);
        a.set_u32(16, 16);
        a.set_u32(20, ev[0] as u32);
    });
    assert_eq!(r, Ok(()));
    assert_eq!((info.runtime_state, info.ttmp_setup), (DEBUG_RUNTIME_STATE_DISABLED, 0));
    // SAFETY: our tracee.
    unsafe { libc::ptrace(libc::PTRACE_CONT, child, 0, 0) };
    for step in ["enable", "disable"] {
        assert!(readable(ev[0], 5000), "no byte on the debugger's file at runtime {step}");
        drain(ev[0]);
        let (r, q) = dbg_trap(child as u32, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |a| a.set_u64(0, runtime));
        assert_eq!((r, q.u64_at(0), q.u32_at(8), q.u32_at(12)), (Ok(()), runtime, 0, 0), "runtime {step}");
        if step == "enable" {
            assert!(!readable(done[0], 100), "RUNTIME_ENABLE returned before the debugger's answer");
        }
        assert_eq!(dbg_trap(child as u32, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT, |a| a.set_u64(0, runtime)).0, Ok(()));
        if step == "enable" {
            assert!(readable(done[0], 5000), "RUNTIME_ENABLE still waits after the answer");
        }
    }
    assert_eq!(dbg_trap(child as u32, KFD_IOC_DBG_TRAP_DISABLE, |_| {}).0, Ok(()));
    // SAFETY: our tracee, then our child.
    unsafe {
        libc::ptrace(libc::PTRACE_DETACH, child, 0, 0);
        libc::waitpid(child, &mut status, 0);
        for fd in ev.into_iter().chain(done) {
            libc::close(fd);
        }
    }
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child status {status:#x}");
}
