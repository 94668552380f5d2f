//! In-process tests of the model through its entry points (no interposition: the test opens
//! memfds named like the interposer's and registers them).

use super::*;

/// The model's mmap entry point for these tests, which map only fresh ranges or their own
/// reservations (made by `reserve`).
fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: RawFd, off: i64) -> Result<*mut c_void, Errno> {
    let (key, _) = file_of(fd).ok_or(Errno::ENODEV)?;
    // SAFETY: see above: nothing in a MAP_FIXED target range is borrowed.
    unsafe { super::mmap(key, addr, len, prot, flags, fd, off) }
}
use kfd_ioctl::kfd::*;
use kfd_ioctl::sdma;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn open_node(kind: DevKind) -> OwnedFd {
    let name = match kind {
        DevKind::Kfd => "kfdsim-kfd".to_string(),
        DevKind::Render { minor } => format!("kfdsim-renderD{minor}"),
        DevKind::Udmabuf => "kfdsim-udmabuf".to_string(),
    };
    let fd = sys::memfd(&name, 0).unwrap();
    register_open(fd.as_raw_fd(), kind).unwrap();
    fd
}

/// The way into the kernel for the shared fixtures: the model's ioctl entry point.
fn sys_ioctl(fd: RawFd, req: c_ulong, arg: *mut c_void) -> Result<(), Errno> {
    ioctl(fd, req, arg).map(|_| ())
}

/// The way into mmap for the shared fixtures: the model's entry point for its files, the real
/// syscall for anonymous reservations (no MAP_FIXED: a fresh reservation aliases nothing).
fn sys_mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: RawFd,
    off: i64,
) -> Result<*mut c_void, Errno> {
    if fd < 0 {
        // SAFETY: an anonymous reservation at a kernel-chosen address.
        unsafe { sys::mmap(addr, len, prot, flags, fd, off) }
    } else {
        mmap(addr, len, prot, flags, fd, off)
    }
}

#[path = "../../test-support/kfd_fixtures.rs"]
mod fixtures;
use fixtures::*;

/// One KFD process per test binary (as in a real process): opened once, VMs acquired.
fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let kfd = open_node(DevKind::Kfd);
        let mut render = Vec::new();
        let mut ids = Vec::new();
        for g in gpus::all() {
            let r = open_node(DevKind::Render { minor: g.drm_render_minor });
            let mut a = kfd_ioctl_acquire_vm_args { drm_fd: r.as_raw_fd() as u32, gpu_id: g.gpu_id };
            kio(kfd.as_raw_fd(), AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
            render.push(r);
            ids.push(g.gpu_id);
        }
        Env { kfd, render, gpus: ids }
    })
}

#[test]
fn version_and_apertures() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mut v = kfd_ioctl_get_version_args::default();
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    assert_eq!((v.major_version, v.minor_version), (1, 17));
    let mut a = kfd_ioctl_get_process_apertures_new_args::default();
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    assert_eq!(a.num_of_nodes as usize, e.gpus.len());
    let mut ap = vec![kfd_process_device_apertures::default(); e.gpus.len()];
    a.kfd_process_device_apertures_ptr = ap.as_mut_ptr() as u64;
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    assert_eq!(ap[0].gpu_id, e.gpus[0]);
    assert!(ap[0].gpuvm_base != 0 && ap[0].gpuvm_limit > ap[0].gpuvm_base);
    // nr 0 and nr ≥ 0x27 → ENOTTY
    assert_eq!(kio(e.kfd.as_raw_fd(), 0xc0084b00, &mut v), Err(Errno::ENOTTY));
    assert_eq!(kio(e.kfd.as_raw_fd(), 0xc0084b27, &mut v), Err(Errno::ENOTTY));
}

#[test]
fn acquire_vm_rules() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    // Same file again → 0; another render file of the same GPU → EBUSY.
    let mut a = kfd_ioctl_acquire_vm_args { drm_fd: e.render[0].as_raw_fd() as u32, gpu_id: e.gpus[0] };
    assert_eq!(kio(kfd, AMDKFD_IOC_ACQUIRE_VM, &mut a), Ok(()));
    let other = open_node(DevKind::Render { minor: gpus::all()[0].drm_render_minor });
    a.drm_fd = other.as_raw_fd() as u32;
    assert_eq!(kio(kfd, AMDKFD_IOC_ACQUIRE_VM, &mut a), Err(Errno::EBUSY));
    // Bad fd / unknown gpu → EINVAL.
    a.drm_fd = 9999;
    assert_eq!(kio(kfd, AMDKFD_IOC_ACQUIRE_VM, &mut a), Err(Errno::EINVAL));
    a = kfd_ioctl_acquire_vm_args { drm_fd: other.as_raw_fd() as u32, gpu_id: 0xdead };
    assert_eq!(kio(kfd, AMDKFD_IOC_ACQUIRE_VM, &mut a), Err(Errno::EINVAL));
}

#[test]
fn alloc_map_free_rules() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    // size 0 → EINVAL
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: 0x1000_0000,
        size: 0,
        gpu_id: e.gpus[0],
        flags: VRAM,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EINVAL));
    // more than the VRAM → ENOMEM
    a.size = gpus::all()[0].vram_size + 4096;
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::ENOMEM));

    let b = alloc(0, 1 << 20, VRAM);
    // CPU writes through the render-node mapping...
    // SAFETY: `b.va` is mapped read-write for `b.size` bytes.
    unsafe { std::ptr::write_bytes(b.va as *mut u8, 0x5a, b.size as usize) };
    assert_eq!(map(&b, &e.gpus), Ok(()));
    // ...are seen through the GPUVM of both GPUs (peer mapping).
    for gpu in &e.gpus {
        let p = process::current();
        let st = p.state.lock();
        let vm = st.pdd(*gpu).unwrap().vm.read();
        let mut out = [0u8; 16];
        sdma::Packet::decode(&[0]).unwrap();
        super::sdma::read_va(&vm, b.va + 4096, &mut out).unwrap();
        assert_eq!(out, [0x5a; 16]);
    }
    assert_eq!(free(&b), Err(Errno::EBUSY));
    // Bogus handle: MAP → ENOMEM, FREE → EINVAL; owner gpu unknown → EINVAL.
    let bogus = Buf { handle: (e.gpus[0] as u64) << 32 | 0xfff_fff, va: 0, size: 0 };
    assert_eq!(map(&bogus, &e.gpus), Err(Errno::ENOMEM));
    assert_eq!(free(&bogus), Err(Errno::EINVAL));
    let bogus2 = Buf { handle: 0xdead_0000_0000, va: 0, size: 0 };
    assert_eq!(map(&bogus2, &e.gpus), Err(Errno::EINVAL));
    // n_devices == 0 → EINVAL
    assert_eq!(map(&b, &[]), Err(Errno::EINVAL));
    // Restartable: an unknown peer after a good one leaves n_success = 1.
    let c = alloc(0, 4096, GTT);
    let devs = [e.gpus[0], 0xbeef];
    let mut m = kfd_ioctl_map_memory_to_gpu_args {
        handle: c.handle,
        device_ids_array_ptr: devs.as_ptr() as u64,
        n_devices: 2,
        n_success: 0,
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut m), Err(Errno::EINVAL));
    assert_eq!(m.n_success, 1);
    // Overlapping VA on the same GPU → EINVAL.
    let mut d = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: c.va,
        size: 4096,
        gpu_id: e.gpus[0],
        flags: GTT,
        ..Default::default()
    };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut d).unwrap();
    let dbuf = Buf { handle: d.handle, va: c.va, size: 4096 };
    assert_eq!(map(&dbuf, &e.gpus[..1]), Err(Errno::EINVAL));
    assert_eq!(free(&dbuf), Ok(()));
    // Unmap then free work.
    assert_eq!(unmap(&b, &e.gpus), Ok(()));
    assert_eq!(free(&b), Ok(()));
    assert_eq!(unmap(&c, &e.gpus[..1]), Ok(()));
    assert_eq!(free(&c), Ok(()));
    // Non-PUBLIC VRAM is not NO_CPU_ACCESS: libhsakmt's PROT_NONE private mapping is accepted
    // (amdgpu_gem_object_mmap's thunk workaround), a readable private one is COW (EINVAL).
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: 0,
        size: 4096,
        gpu_id: e.gpus[0],
        flags: KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
        ..Default::default()
    };
    kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let r = mmap(
        std::ptr::null_mut(),
        4096,
        libc::PROT_NONE,
        libc::MAP_PRIVATE,
        e.render[0].as_raw_fd(),
        a.mmap_offset as i64,
    );
    assert!(r.is_ok(), "{r:?}");
    // SAFETY: the mapping just made, 4096 bytes.
    unsafe { libc::munmap(r.unwrap(), 4096) };
    let r = mmap(
        std::ptr::null_mut(),
        4096,
        libc::PROT_READ,
        libc::MAP_PRIVATE,
        e.render[0].as_raw_fd(),
        a.mmap_offset as i64,
    );
    assert_eq!(r.err(), Some(Errno::EINVAL));
    // ...and a VA-less BO cannot be GPU-mapped (EINVAL).
    let nova = Buf { handle: a.handle, va: 0, size: 4096 };
    assert_eq!(map(&nova, &e.gpus[..1]), Err(Errno::EINVAL));
    assert_eq!(free(&nova), Ok(()));
}

/// `amdgpu_amdkfd_reserve_mem_limit`: USERPTR BOs count the user range against the
/// system-memory limit (kfdtest `KFDMemoryTest.MMapLarge` registers 1 TiB until it is refused),
/// GTT BOs against both it and TTM's; freeing gives the reservation back.
#[test]
fn userptr_and_gtt_count_against_the_system_memory_limit() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let used = || {
        let p = process::current();
        let st = p.state.lock();
        (st.mem_limit.system_used, st.mem_limit.ttm_used)
    };
    let before = used();
    let (max_system, max_ttm) = process::mem_limits();
    assert!(max_system > 0 && max_system < u64::MAX && max_ttm > 0 && max_ttm < u64::MAX);
    // amdgpu_amdkfd_gpuvm_init_mem_limits: from total RAM (not free RAM, which moves with the
    // page cache), less 1/64 and 1 GiB, or halved below 2 GiB.
    // SAFETY: `si` is a valid sysinfo struct for the kernel to fill.
    let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::sysinfo(&mut si) }, 0);
    let total = (si.totalram - si.totalhigh) as u64 * si.mem_unit as u64;
    assert_eq!((max_system, max_ttm), (total - total / 64 - (1 << 30), total / 2));
    assert_eq!(process::mem_limits_for(64 << 30), ((64u64 << 30) - (1 << 30) - (1 << 30), 32 << 30));
    assert_eq!(process::mem_limits_for(1 << 30), (((1u64 << 30) - (1 << 24)) / 2, 1 << 29));
    // A range larger than half the limit: one registration fits, two do not.
    let len = (max_system / 2 + (1 << 20)).next_multiple_of(4096);
    let user = sys_mmap(
        std::ptr::null_mut(),
        len as usize,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        -1,
        0,
    )
    .unwrap() as u64;
    let register = |va: u64| {
        let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: va,
            size: len,
            mmap_offset: user,
            gpu_id: e.gpus[0],
            flags: KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
            ..Default::default()
        };
        kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).map(|()| Buf { handle: a.handle, va, size: len })
    };
    let va = reserve(2 * len);
    let first = register(va).unwrap();
    assert_eq!(used(), (before.0 + len, before.1));
    assert_eq!(register(va + len).err(), Some(Errno::ENOMEM));
    assert_eq!(free(&first), Ok(()));
    let second = register(va + len).unwrap();
    assert_eq!(free(&second), Ok(()));
    // GTT beyond TTM's limit is refused before any memory is made.
    let mut g = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: 0x7000_0000_0000,
        size: max_ttm.max(max_system) + (1 << 20),
        gpu_id: e.gpus[0],
        flags: GTT,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut g), Err(Errno::ENOMEM));
    // Nothing is left counted.
    assert_eq!(used(), before);
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(user as *mut c_void, len as usize) };
}

#[test]
fn dmabuf_export_import_same_process() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let b = alloc(0, 8192, VRAM);
    // SAFETY: mapped read-write.
    unsafe { std::ptr::write_bytes(b.va as *mut u8, 0x77, 8192) };
    let mut x = kfd_ioctl_export_dmabuf_args { handle: b.handle, flags: libc::O_CLOEXEC as u32, dmabuf_fd: 0 };
    kio(kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut x).unwrap();
    // SAFETY: the fd was just created for us.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(x.dmabuf_fd as RawFd) };
    let mut info = kfd_ioctl_get_dmabuf_info_args { dmabuf_fd: dmabuf.as_raw_fd() as u32, ..Default::default() };
    kio(kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info).unwrap();
    assert_eq!((info.size, info.gpu_id), (8192, e.gpus[0]));
    assert_eq!(info.flags, KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC);
    let va2 = reserve(8192);
    let mut im = kfd_ioctl_import_dmabuf_args {
        va_addr: va2,
        gpu_id: e.gpus[1],
        dmabuf_fd: dmabuf.as_raw_fd() as u32,
        handle: 0,
    };
    kio(kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut im).unwrap();
    let imp = Buf { handle: im.handle, va: va2, size: 8192 };
    map(&imp, &e.gpus[1..2]).unwrap();
    {
        let p = process::current();
        let st = p.state.lock();
        let vm = st.pdd(e.gpus[1]).unwrap().vm.read();
        let mut out = [0u8; 8];
        super::sdma::read_va(&vm, va2 + 100, &mut out).unwrap();
        assert_eq!(out, [0x77; 8]);
    }
    // Not a dma-buf → EINVAL; bad fd → EBADF.
    let plain = sys::memfd("not-a-bo", 4096).unwrap();
    info.dmabuf_fd = plain.as_raw_fd() as u32;
    assert_eq!(kio(kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info), Err(Errno::EINVAL));
    info.dmabuf_fd = 9999;
    assert_eq!(kio(kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info), Err(Errno::EBADF));
    unmap(&imp, &e.gpus[1..2]).unwrap();
    free(&imp).unwrap();
    free(&b).unwrap();
}

#[test]
fn sdma_copy_fence_trap_wait() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let slots = event_page() as *mut u64;
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_sdma(0);
    // Source on GPU 0, destination on GPU 1 (peer), 3 MiB crossing two destination BOs.
    let src = alloc(0, 3 << 20, VRAM);
    // dst_b sits right after dst_a in VA (its own BO): the copy crosses a mapping boundary.
    let dst_region = reserve(3 << 20);
    let dst_a = alloc_at(1, dst_region, 2 << 20, VRAM);
    let dst_b = alloc_at(1, dst_region + (2 << 20), 1 << 20, VRAM);
    let b_cpu = dst_b.va;
    // SAFETY: mapped read-write.
    unsafe {
        for i in 0..(3 << 20) {
            *((src.va + i) as *mut u8) = (i * 7 % 251) as u8;
        }
    }
    map(&src, &e.gpus).unwrap();
    map(&dst_a, &e.gpus).unwrap();
    map(&dst_b, &e.gpus).unwrap();
    let signal = alloc(0, 4096, GTT);
    map(&signal, &e.gpus).unwrap();

    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, dst_a.va, src.va, 3 << 20);
    sdma::fence(&mut dw, signal.va, 0x1234).unwrap();
    sdma::fence(&mut dw, slots as u64 + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
    sdma::trap(&mut dw, ev.event_id).unwrap();
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    // SAFETY: mapped memory.
    unsafe {
        assert_eq!(*(signal.va as *const u32), 0x1234);
        for i in (0..(2u64 << 20)).step_by(4093) {
            assert_eq!(*((dst_a.va + i) as *const u8), (i * 7 % 251) as u8);
        }
        for i in (0..(1u64 << 20)).step_by(4093) {
            assert_eq!(*((b_cpu + i) as *const u8), (((2 << 20) + i) * 7 % 251) as u8);
        }
        // The slot was acknowledged (reset to -1) and rptr caught up.
        assert_eq!(*slots.add(ev.event_slot_index as usize), u64::MAX);
        assert_eq!(*(q.ptrs.va as *const u64), q.wptr);
    }
    // Auto-reset: a second wait times out.
    let (r, res, _) = wait(&[ev.event_id], 0);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT));
    // Unmapping the ring while the queue lives → EBUSY.
    assert_eq!(unmap(&q.ring, &e.gpus[..1]), Err(Errno::EBUSY));
    let ring = Buf { handle: q.ring.handle, va: q.ring.va, size: q.ring.size };
    q.destroy();
    assert_eq!(unmap(&ring, &e.gpus[..1]), Ok(()));
}

/// COPY_LINEAR with the broadcast bit is 9 dwords: one source, two destinations (here one on
/// each GPU, as kfdtest `KFDQMTest.P2PTest`); the FENCE and TRAP after it run as packets.
#[test]
fn sdma_copy_linear_broadcast_two_destinations() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let slots = event_page() as *mut u64;
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_sdma(0);
    let src = alloc(0, 8192, GTT);
    let d0 = alloc(0, 8192, VRAM);
    let d1 = alloc(1, 8192, VRAM);
    for b in [&src, &d0, &d1] {
        map(b, &e.gpus[..2]).unwrap();
    }
    // SAFETY: mapped read-write.
    unsafe {
        for i in 0..8192u64 {
            *((src.va + i) as *mut u8) = (i * 13 % 251) as u8;
        }
    }
    let mut dw = Vec::new();
    sdma::Packet::CopyLinearBroadcast { count: 8000, src: src.va, dst: [d0.va, d1.va] }.encode(&mut dw);
    assert_eq!(dw.len(), 9);
    sdma::fence(&mut dw, src.va + 8188, 0xfeed).unwrap();
    sdma::fence(&mut dw, slots as u64 + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
    sdma::trap(&mut dw, ev.event_id).unwrap();
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    // SAFETY: mapped memory.
    unsafe {
        for i in 0..8000u64 {
            let want = (i * 13 % 251) as u8;
            assert_eq!((*((d0.va + i) as *const u8), *((d1.va + i) as *const u8)), (want, want), "byte {i}");
        }
        // Bytes past `count` untouched; the FENCE after the packet ran.
        assert_eq!(*((d1.va + 8000) as *const u8), 0);
        assert_eq!(*((src.va + 8188) as *const u32), 0xfeed);
    }
    let (ring, ptrs) = q.destroy();
    for b in [ring, ptrs] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
    for b in [src, d0, d1] {
        unmap(&b, &e.gpus[..2]).unwrap();
        free(&b).unwrap();
    }
}

#[test]
fn sdma_fault_raises_memory_event() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    assert!(mem_ev.event_id >= 0x8000_0000);
    let mut q = create_sdma(1);
    let dst = alloc(1, 4096, GTT);
    map(&dst, &e.gpus[1..2]).unwrap();
    let unmapped = reserve(1 << 20) + 0x3000;
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, dst.va, unmapped + 0x10, 64);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!((d.va, d.gpu_id, d.failure.NotPresent), (unmapped, e.gpus[1], 1));
    // The queue stopped: further work is not executed.
    let mut dw = Vec::new();
    sdma::fence(&mut dw, dst.va, 7).unwrap();
    q.submit(&dw);
    std::thread::sleep(std::time::Duration::from_millis(20));
    // SAFETY: mapped.
    assert_eq!(unsafe { *(dst.va as *const u32) }, 0);
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    q.destroy();
}

/// A POLL_REGMEM reaching an engine that has idled long enough for its backoff to grow (3 ms:
/// past LINGER, short of QUIET, so the doorbell is no fault and no ioctl kicks the engine) is
/// re-read at the poll period from the first pause on, as the hardware re-reads at the packet's
/// interval, and the engine threads sleep without timer slack: the CPU's store to the word then
/// releases the packets behind it. Checks the pauses the engine chose, not elapsed time.
#[test]
fn sdma_poll_regmem_after_idle_rereads_within_the_poll_period() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mut q = create_sdma(0);
    let mem = alloc(0, 4096, GTT);
    map(&mem, &e.gpus[..1]).unwrap();
    let (word, out) = (mem.va, mem.va + 64);
    let out_now = || {
        // SAFETY: mapped memory the engine writes with FENCE.
        unsafe { std::ptr::read_volatile(out as *const u32) }
    };
    let mut dw = Vec::new();
    sdma::fence(&mut dw, out, 1).unwrap();
    q.submit(&dw);
    wait_until("the first FENCE", || out_now() == 1);
    std::thread::sleep(std::time::Duration::from_millis(3));
    let mut dw = Vec::new();
    sdma::poll_regmem_ge(&mut dw, word, 1, u32::MAX).unwrap();
    sdma::fence(&mut dw, out, 2).unwrap();
    q.submit(&dw);
    // Time for the engine to find the poll (after at most 2 ms of backoff) and pause on it.
    std::thread::sleep(std::time::Duration::from_millis(8));
    assert_eq!(out_now(), 1, "the FENCE behind the unsatisfied poll ran");
    // SAFETY: mapped memory; the engine polls it.
    unsafe { std::ptr::write_volatile(word as *mut u32, 1) };
    wait_until("the FENCE behind the poll", || out_now() == 2);
    let (pause, slack) = process::current().engine.poll_timing();
    assert!(!pause.is_zero(), "the engine never paused on the poll");
    assert!(pause <= super::sdma::POLL_PERIOD, "a pause of {pause:?} while a poll waited");
    assert!(slack <= super::sdma::TIMER_SLACK_NS, "engine timer slack {slack} ns");
    let (ring, ptrs) = q.destroy();
    for b in [ring, ptrs] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
    unmap(&mem, &e.gpus[..1]).unwrap();
    free(&mem).unwrap();
}

/// Polls `cond` every millisecond for up to 5 s.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t = std::time::Instant::now();
    while !cond() {
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// UPDATE_QUEUE with a NULL ring address disables the queue (`pqm_update_queue_properties`):
/// a doorbell rung meanwhile runs nothing and the read pointer stays; an update with the ring
/// again resumes it. kfdtest `KFDQMTest.DisableSdmaQueueByUpdateWithNullAddress`.
#[test]
fn update_queue_null_ring_disables_until_restored() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let mut q = create_sdma(0);
    let dst = alloc(0, 4096, GTT);
    map(&dst, &e.gpus[..1]).unwrap();
    // SAFETY: dst and the rptr slot are CPU-mapped.
    let word = |i: usize| unsafe { std::ptr::read_volatile((dst.va as *const u32).add(i)) };
    let rptr_va = q.ptrs.va;
    // SAFETY: as above.
    let rptr = || unsafe { std::ptr::read_volatile(rptr_va as *const u64) };
    let mut dw = Vec::new();
    sdma::fence(&mut dw, dst.va, 1).unwrap();
    q.submit(&dw);
    wait_until("the first FENCE", || word(0) == 1);

    // Disable: NULL ring, size 0 (the kernel clamps its own copy to KFD_MIN_QUEUE_RING_SIZE;
    // UPDATE_QUEUE is _IOW, so the caller's struct is left as it was).
    let mut u = kfd_ioctl_update_queue_args {
        queue_id: q.queue_id,
        queue_percentage: 100,
        queue_priority: 15,
        ..Default::default()
    };
    assert_eq!(kio(kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u), Ok(()));
    assert_eq!((u.ring_base_address, u.ring_size), (0, 0), "UPDATE_QUEUE wrote back");
    let before = rptr();
    let mut dw = Vec::new();
    sdma::fence(&mut dw, dst.va + 4, 2).unwrap();
    q.submit(&dw);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!((word(1), rptr()), (0, before), "a disabled queue ran a packet");

    // A ring that is not one GPU mapping of that size → EFAULT; an unknown queue → EFAULT.
    let mut bad = kfd_ioctl_update_queue_args { ring_base_address: dst.va, ring_size: 65536, ..u };
    assert_eq!(kio(kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut bad), Err(Errno::EFAULT));
    let mut unknown = kfd_ioctl_update_queue_args { queue_id: 999, ..u };
    assert_eq!(kio(kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut unknown), Err(Errno::EFAULT));

    // Enable with the ring again: the waiting FENCE runs and the rptr catches up.
    u.ring_base_address = q.ring.va;
    u.ring_size = q.ring.size as u32;
    assert_eq!(kio(kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u), Ok(()));
    wait_until("the FENCE after re-enabling", || word(1) == 2);
    wait_until("the rptr", || rptr() == q.wptr);
    // The ring's queue_refcount is still held: unmapping it → EBUSY.
    assert_eq!(unmap(&q.ring, &e.gpus[..1]), Err(Errno::EBUSY));
    let (ring, ptrs) = q.destroy();
    for b in [ring, ptrs, dst] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// `AMDKFD_IOC_SET_XNACK_MODE` on the process (-1 queries); returns the mode after the call.
fn set_xnack(mode: i32) -> Result<i32, Errno> {
    let mut a = kfd_ioctl_set_xnack_mode_args { xnack_enabled: mode };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_XNACK_MODE, &mut a)?;
    Ok(if mode < 0 { a.xnack_enabled } else { set_xnack(-1)? })
}

#[test]
fn sdma_with_xnack_reaches_pageable_memory_and_faults_on_read_only() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    assert_eq!(set_xnack(-1), Ok(0));
    // Not while the process has a queue (EBUSY).
    let q = create_sdma(0);
    assert_eq!(set_xnack(1), Err(Errno::EBUSY));
    q.destroy();
    assert_eq!(set_xnack(1), Ok(1));
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let slots = event_page() as *mut u64;
    let mut q = create_sdma(0);
    // malloc'd source and destination, no BO behind either; a GTT BO between them.
    let src: Vec<u8> = (0..3 * 4096 + 100).map(|i| (i * 13 % 251) as u8).collect();
    let mut dst = vec![0u8; src.len()];
    let bo = alloc(0, 4 * 4096, GTT);
    map(&bo, &e.gpus[..1]).unwrap();
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, bo.va, src.as_ptr() as u64, src.len() as u64);
    sdma::copy_linear(&mut dw, dst.as_mut_ptr() as u64, bo.va, src.len() as u64);
    sdma::fence(&mut dw, slots as u64 + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
    sdma::trap(&mut dw, ev.event_id).unwrap();
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert!(dst == src, "pageable → GTT → pageable round trip");
    // A write to a read-only page of the process is a ReadOnly VM fault.
    // SAFETY: a fresh anonymous page, unmapped below.
    let ro = unsafe {
        libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    };
    assert_ne!(ro, libc::MAP_FAILED);
    let ro = ro as u64;
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, ro + 8, bo.va, 16);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!((d.va, d.gpu_id, d.failure.ReadOnly, d.failure.NotPresent), (ro, e.gpus[0], 1, 0));
    q.destroy();
    // The GTT BO is GPU 0's mapping only (and CPU-mapped at the same VA): GPU 1 does not reach it
    // through XNACK (svm_range_check_vm), its copy faults NotPresent.
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_sdma(1);
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, dst.as_mut_ptr() as u64, bo.va, 64);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!((d.va, d.gpu_id, d.failure.NotPresent), (bo.va, e.gpus[1], 1));
    q.destroy();
    for id in [mem_ev.event_id, ev.event_id] {
        let mut d = kfd_ioctl_destroy_event_args { event_id: id, pad: 0 };
        kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    }
    unmap(&bo, &e.gpus[..1]).unwrap();
    free(&bo).unwrap();
    // SAFETY: the page mapped above, no longer used.
    unsafe { libc::munmap(ro as *mut c_void, 4096) };
    assert_eq!(set_xnack(0), Ok(0));
    // XNACK off: the same malloc'd source faults (NotPresent).
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_sdma(0);
    let bo = alloc(0, 4096, GTT);
    map(&bo, &e.gpus[..1]).unwrap();
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, bo.va, src.as_ptr() as u64, 64);
    q.submit(&dw);
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert_eq!(evs[0].memory_exception_data().failure.NotPresent, 1);
    q.destroy();
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    unmap(&bo, &e.gpus[..1]).unwrap();
    free(&bo).unwrap();
}

#[test]
fn create_queue_checks_buffers() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let ring = alloc(0, 65536, GTT);
    let ptrs = alloc(0, 8192, GTT);
    map(&ring, &e.gpus[..1]).unwrap();
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: ring.va,
        ring_size: 32768,
        gpu_id: e.gpus[0],
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        read_pointer_address: ptrs.va,
        write_pointer_address: ptrs.va + 8,
        ..Default::default()
    };
    // rptr/wptr not GPU-mapped → EINVAL
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q), Err(Errno::EINVAL));
    map(&ptrs, &e.gpus[..1]).unwrap();
    // rptr/wptr mapping is two pages, not one → EINVAL
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q), Err(Errno::EINVAL));
    // priority > 15, ring size not a power of two, bad type
    q.queue_priority = 16;
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q), Err(Errno::EINVAL));
    q.queue_priority = 0;
    q.ring_size = 65535;
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q), Err(Errno::EINVAL));
    // The refcounts taken by failed attempts were released.
    assert_eq!(unmap(&ring, &e.gpus[..1]), Ok(()));
    assert_eq!(unmap(&ptrs, &e.gpus[..1]), Ok(()));
    free(&ring).unwrap();
    free(&ptrs).unwrap();
}

#[test]
fn wait_timeout_set_reset() {
    let _g = SERIAL.lock().unwrap();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, false);
    let t = std::time::Instant::now();
    let (r, res, _) = wait(&[ev.event_id], 30);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT));
    assert!(t.elapsed() >= std::time::Duration::from_millis(29));
    let mut s = kfd_ioctl_set_event_args { event_id: ev.event_id, pad: 0 };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_EVENT, &mut s).unwrap();
    // Manual reset: stays signaled across waits until RESET_EVENT.
    assert_eq!(wait(&[ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    assert_eq!(wait(&[ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    let mut rs = kfd_ioctl_reset_event_args { event_id: ev.event_id, pad: 0 };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_RESET_EVENT, &mut rs).unwrap();
    assert_eq!(wait(&[ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT);
    // Unknown event → EINVAL with FAIL.
    let (r, res, _) = wait(&[0x7777], 0);
    assert_eq!((r, res), (Err(Errno::EINVAL), KFD_IOC_WAIT_RESULT_FAIL));
    // A waiter on another thread is woken by SET_EVENT.
    let id = ev.event_id;
    let h = std::thread::spawn(move || wait(&[id], 5000));
    std::thread::sleep(std::time::Duration::from_millis(20));
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_EVENT, &mut s).unwrap();
    let (r, res, _) = h.join().unwrap();
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
}

#[test]
fn event_age_activates_a_wait_for_sets_since_the_age_the_waiter_saw() {
    // kfd_events.c (KFD 1.14): a SIGNAL event's age starts at 1 and grows at every set; a wait
    // that passes a nonzero last_event_age completes at once if the age moved, and reads the
    // new age back; age 0 waits as before and reads nothing back.
    let _g = SERIAL.lock().unwrap();
    let complete = KFD_IOC_WAIT_RESULT_COMPLETE;
    let timeout = KFD_IOC_WAIT_RESULT_TIMEOUT;
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let id = ev.event_id;
    let mut s = kfd_ioctl_set_event_args { event_id: id, pad: 0 };
    let set = |s: &mut kfd_ioctl_set_event_args| kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_EVENT, s).unwrap();
    assert_eq!(wait_aged(id, 1, 0), (Ok(()), timeout, 1));
    set(&mut s);
    assert_eq!(wait_aged(id, 1, 0), (Ok(()), complete, 2));
    // That wait consumed the auto-reset signal; the age has not moved since.
    assert_eq!(wait_aged(id, 2, 0), (Ok(()), timeout, 2));
    // Two sets while nobody waits: one signal, two ages; a stale age completes even after the
    // signal is consumed.
    set(&mut s);
    set(&mut s);
    assert_eq!(wait(&[id], 0).1, complete);
    assert_eq!(wait_aged(id, 2, 0), (Ok(()), complete, 4));
    assert_eq!(wait_aged(id, 4, 0), (Ok(()), timeout, 4));
    // Age 0: an ordinary wait, nothing read back.
    assert_eq!(wait_aged(id, 0, 20), (Ok(()), timeout, 0));
    set(&mut s);
    assert_eq!(wait_aged(id, 0, 0), (Ok(()), complete, 0));
    // A waiter holding the current age sleeps until the next set and reads it.
    let h = std::thread::spawn(move || wait_aged(id, 5, 5000));
    std::thread::sleep(std::time::Duration::from_millis(20));
    set(&mut s);
    assert_eq!(h.join().unwrap(), (Ok(()), complete, 6));
    // Only SIGNAL events have an age: a MEMORY event ignores last_event_age.
    let mem = create_event(KFD_IOC_EVENT_MEMORY, true);
    assert_eq!(wait_aged(mem.event_id, 7, 0), (Ok(()), timeout, 7));
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem.event_id, pad: 0 };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    d.event_id = id;
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
}

// ------------------------------------------------------------------------------------------
// Render node
// ------------------------------------------------------------------------------------------

use kfd_ioctl::amdgpu::*;
use kfd_ioctl::drm::*;

#[test]
fn drm_version_caps_info() {
    let _g = SERIAL.lock().unwrap();
    let r = env().render[0].as_raw_fd();
    let mut name = [0u8; 16];
    // SAFETY: drm_version is plain data + pointers we own.
    let mut v: drm_version = unsafe { std::mem::zeroed() };
    v.name = name.as_mut_ptr() as *mut libc::c_char;
    v.name_len = 16;
    kio(r, DRM_IOCTL_VERSION, &mut v).unwrap();
    assert_eq!((v.version_major, v.name_len), (3, 6));
    assert_eq!(&name[..6], b"amdgpu");
    let mut c = drm_get_cap { capability: DRM_CAP_SYNCOBJ_TIMELINE as u64, value: 0 };
    kio(r, DRM_IOCTL_GET_CAP, &mut c).unwrap();
    assert_eq!(c.value, 1);
    let mut sc = drm_set_client_cap { capability: 2, value: 1 };
    assert_eq!(kio(r, DRM_IOCTL_SET_CLIENT_CAP, &mut sc), Err(Errno::EACCES));
    let mut dev = drm_amdgpu_info_device::default();
    let mut q = drm_amdgpu_info {
        return_pointer: &mut dev as *mut _ as u64,
        return_size: std::mem::size_of_val(&dev) as u32,
        query: AMDGPU_INFO_DEV_INFO,
        query_args: [0; 4],
    };
    kio(r, DRM_IOCTL_AMDGPU_INFO, &mut q).unwrap();
    assert_eq!((dev.device_id, dev.family), (gpus::all()[0].device_id, AMDGPU_FAMILY_AI));
    q.return_size = 0;
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_INFO, &mut q), Err(Errno::EINVAL));
    let mut reg = 0u32;
    let mut q = drm_amdgpu_info {
        return_pointer: &mut reg as *mut _ as u64,
        return_size: 4,
        query: AMDGPU_INFO_READ_MMR_REG,
        query_args: [0x263e, 1, 0xffff_ffff, 0],
    };
    kio(r, DRM_IOCTL_AMDGPU_INFO, &mut q).unwrap();
    assert_ne!(reg, 0);
}

/// `AMDKFD_IOC_SVM` with `attrs` (the request's size counts them, as libhsakmt issues it); the
/// attributes as they came back.
fn svm(
    op: u32,
    start: u64,
    size: u64,
    attrs: &[kfd_ioctl_svm_attribute],
) -> Result<Vec<kfd_ioctl_svm_attribute>, Errno> {
    svm_n(op, start, size, attrs, attrs.len() as u32)
}

/// As [`svm`], with `nattr` as given (may claim more attributes than the request carries).
fn svm_n(
    op: u32,
    start: u64,
    size: u64,
    attrs: &[kfd_ioctl_svm_attribute],
    nattr: u32,
) -> Result<Vec<kfd_ioctl_svm_attribute>, Errno> {
    let mut buf: Vec<u32> = vec![start as u32, (start >> 32) as u32, size as u32, (size >> 32) as u32, op, nattr];
    for a in attrs {
        buf.extend([a.type_, a.value]);
    }
    let req = AMDKFD_IOC_SVM + ((attrs.len() as c_ulong * 8) << 16);
    ioctl(env().kfd.as_raw_fd(), req, buf.as_mut_ptr() as *mut c_void)?;
    Ok(buf[6..].chunks(2).map(|c| kfd_ioctl_svm_attribute { type_: c[0], value: c[1] }).collect())
}

fn sa(type_: u32, value: u32) -> kfd_ioctl_svm_attribute {
    kfd_ioctl_svm_attribute { type_, value }
}

/// `n` fresh anonymous read-write pages.
fn anon(n: u64) -> u64 {
    // SAFETY: a fresh private anonymous mapping at a kernel-chosen address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            (n * 4096) as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p as u64
}

/// Unmaps pages [`anon`] made, telling the model as the interposed `munmap` does.
fn unanon(va: u64, n: u64) {
    // SAFETY: pages this test mapped and no longer uses.
    assert_eq!(unsafe { libc::munmap(va as *mut c_void, (n * 4096) as usize) }, 0);
    super::svm::cpu_unmapped(va, n * 4096);
}

/// Every node advertises HSA_CAP_SVMAPI_SUPPORTED (topology and the sysfs `capability`
/// libhsakmt parses), and AMDKFD_IOC_SVM keeps `kfd_svm.c`'s rules: default attributes where no
/// range is (XNACK off: no access), SET then GET reads back, a GET over ranges that differ
/// reports UNDEFINED / the common flags / the smallest granularity, a SET over part of a range
/// splits it; the errors of `kfd_ioctl_svm`, `svm_range_check_attr`, `svm_range_is_valid`; a BO
/// cannot be allocated over a range (EADDRINUSE); unmapped pages leave their ranges.
#[test]
fn svm_ranges_keep_kfd_svm_attribute_rules() {
    use crate::topology::cap;
    let _g = SERIAL.lock().unwrap();
    let e = env();
    assert_eq!(set_xnack(-1), Ok(0));
    let topo = crate::topology::current();
    for g in &topo.gpus {
        assert_ne!(g.capability & cap::SVMAPI_SUPPORTED, 0, "node {} lacks SVM", g.node_id);
        let props = crate::sysfs::node_properties(topo, g.node_id);
        let c: u32 = props.lines().find_map(|l| l.strip_prefix("capability ")).unwrap().trim().parse().unwrap();
        assert_eq!(c, g.capability);
    }
    let (g0, g1) = (e.gpus[0], e.gpus[1]);
    let va = anon(16);
    let all = [
        sa(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0),
        sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
        sa(KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0),
        sa(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0),
        sa(KFD_IOCTL_SVM_ATTR_ACCESS, g0),
        sa(KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0),
    ];
    let get = |start: u64, pages: u64| svm(KFD_IOCTL_SVM_OP_GET_ATTR, start, pages * 4096, &all).unwrap();
    let u = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
    let dflt = KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_COHERENT;
    let r = get(va, 16);
    assert_eq!(
        r.iter().map(|a| (a.type_, a.value)).collect::<Vec<_>>(),
        vec![(0, u), (1, u), (5, dflt), (7, 9), (KFD_IOCTL_SVM_ATTR_NO_ACCESS, g0), (6, !dflt)]
    );
    // Register pages 4..12 with GPU 0 access, prefetch to GPU 0, GPU_EXEC, granularity 0x40 → 0x3f.
    let set = [
        sa(KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g0),
        sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0),
        sa(KFD_IOCTL_SVM_ATTR_SET_FLAGS, KFD_IOCTL_SVM_FLAG_GPU_EXEC),
        sa(KFD_IOCTL_SVM_ATTR_GRANULARITY, 0x40),
        sa(KFD_IOCTL_SVM_ATTR_ACCESS, g0),
    ];
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, va + 4 * 4096, 8 * 4096, &set).unwrap();
    let r = get(va + 4 * 4096, 8);
    assert_eq!((r[0].value, r[1].value, r[2].value, r[3].value), (g0, g0, dflt | KFD_IOCTL_SVM_FLAG_GPU_EXEC, 0x3f));
    assert_eq!((r[4].type_, r[4].value), (KFD_IOCTL_SVM_ATTR_ACCESS, g0));
    // A GPU not given access reads NO_ACCESS; ACCESS_IN_PLACE reads back as such.
    let q = svm(KFD_IOCTL_SVM_OP_GET_ATTR, va + 4 * 4096, 4096, &[sa(KFD_IOCTL_SVM_ATTR_ACCESS, g1)]).unwrap();
    assert_eq!(q[0].type_, KFD_IOCTL_SVM_ATTR_NO_ACCESS);
    // Pages 6..8 get ACCESS_IN_PLACE on GPU 1, prefetch to system memory and granularity 2:
    // the range splits in three.
    let mid = [
        sa(KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, g1),
        sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
        sa(KFD_IOCTL_SVM_ATTR_GRANULARITY, 2),
        sa(KFD_IOCTL_SVM_ATTR_CLR_FLAGS, KFD_IOCTL_SVM_FLAG_COHERENT),
    ];
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, va + 6 * 4096, 2 * 4096, &mid).unwrap();
    let svms = process::current().state.lock().svms.clone();
    // The ranges within the 16 pages, as (first, last) page offsets from `va`.
    let mine = || -> Vec<(u64, u64)> {
        let base = va >> 12;
        let rs = svms.ranges();
        rs.iter().filter(|r| r.start >= base && r.last < base + 16).map(|r| (r.start - base, r.last - base)).collect()
    };
    assert_eq!(mine(), vec![(4, 5), (6, 7), (8, 11)]);
    let q = svm(KFD_IOCTL_SVM_OP_GET_ATTR, va + 6 * 4096, 2 * 4096, &[sa(KFD_IOCTL_SVM_ATTR_ACCESS, g1)]).unwrap();
    assert_eq!(q[0].type_, KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE);
    // Over all three: prefetch differs → UNDEFINED, preferred shared, flags AND / OR, min
    // granularity, GPU 1 not in place everywhere → NO_ACCESS. Pages without a range count for nothing.
    let r = get(va, 16);
    assert_eq!((r[0].value, r[1].value, r[3].value), (g0, u, 2));
    assert_eq!(
        (r[2].value, r[5].value),
        (KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_GPU_EXEC, !(dflt | KFD_IOCTL_SVM_FLAG_GPU_EXEC))
    );
    let q = svm(KFD_IOCTL_SVM_OP_GET_ATTR, va, 16 * 4096, &[sa(KFD_IOCTL_SVM_ATTR_ACCESS, g1)]).unwrap();
    assert_eq!(q[0].type_, KFD_IOCTL_SVM_ATTR_NO_ACCESS);

    // Errors, each changing nothing.
    let before = svms.ranges();
    let bad = |op, start, size, attrs: &[kfd_ioctl_svm_attribute]| svm(op, start, size, attrs).err();
    let set_op = KFD_IOCTL_SVM_OP_SET_ATTR;
    assert_eq!(bad(set_op, va + 1, 4096, &set), Some(Errno::EINVAL), "misaligned start");
    assert_eq!(bad(set_op, va, 100, &set), Some(Errno::EINVAL), "misaligned size");
    assert_eq!(bad(set_op, 0, 4096, &set), Some(Errno::EINVAL), "NULL start");
    assert_eq!(bad(set_op, va, 4096, &[sa(KFD_IOCTL_SVM_ATTR_ACCESS, 0xdead)]), Some(Errno::EINVAL), "unknown GPU");
    assert_eq!(
        bad(set_op, va, 4096, &[sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, u)]),
        Some(Errno::EINVAL),
        "prefetch UNDEFINED"
    );
    assert_eq!(bad(set_op, va, 4096, &[sa(8, 0)]), Some(Errno::EINVAL), "unknown attribute");
    let get_op = KFD_IOCTL_SVM_OP_GET_ATTR;
    assert_eq!(bad(get_op, va, 4096, &[sa(KFD_IOCTL_SVM_ATTR_NO_ACCESS, g0)]), Some(Errno::EINVAL));
    assert_eq!(bad(get_op, va, 4096, &[sa(KFD_IOCTL_SVM_ATTR_ACCESS, 0xdead)]), Some(Errno::EINVAL));
    assert_eq!(svm_n(set_op, va, 4096, &set[..1], 3).err(), Some(Errno::EINVAL), "nattr past the request");
    let hole = reserve(4 * 4096);
    // SAFETY: the reservation is ours; its middle page is unmapped to make a hole.
    unsafe { libc::munmap((hole + 4096) as *mut c_void, 4096) };
    assert_eq!(bad(set_op, hole, 4 * 4096, &set), Some(Errno::EFAULT), "a page with no VMA");
    assert_eq!(bad(get_op, hole, 4 * 4096, &all), Some(Errno::EFAULT));
    // An unknown op is +EINVAL, returned as a value (`svm_ioctl`'s `r = EINVAL`).
    let mut buf: Vec<u32> = vec![va as u32, (va >> 32) as u32, 4096, 0, 7, 0];
    assert_eq!(ioctl(e.kfd.as_raw_fd(), AMDKFD_IOC_SVM, buf.as_mut_ptr() as *mut c_void), Ok(Errno::EINVAL as c_int));
    // A BO mapped in the range on any GPU: EADDRINUSE; a BO over a range: EADDRINUSE too.
    let bo = alloc(0, 4096, GTT);
    map(&bo, &e.gpus[1..2]).unwrap();
    assert_eq!(bad(set_op, bo.va, 4096, &set), Some(Errno::EADDRINUSE));
    assert_eq!(bad(get_op, bo.va, 4096, &all), Some(Errno::EADDRINUSE));
    unmap(&bo, &e.gpus[1..2]).unwrap();
    free(&bo).unwrap();
    assert_eq!(svms.ranges(), before);
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: va + 5 * 4096,
        size: 4096,
        gpu_id: g0,
        flags: GTT,
        ..Default::default()
    };
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EADDRINUSE));
    // Unmapping pages 5..7 takes them out of their ranges; GET over them is EFAULT.
    unanon(va + 5 * 4096, 2);
    assert_eq!(mine(), vec![(4, 4), (7, 7), (8, 11)]);
    assert_eq!(bad(get_op, va + 5 * 4096, 4096, &all), Some(Errno::EFAULT));
    unanon(va, 5);
    unanon(va + 7 * 4096, 9);
    assert_eq!(mine(), vec![]);
}

/// A range whose pages libc unmapped where the interposer cannot see it (glibc's `free` of a
/// large block, as of libhsakmt's CWSR areas) is gone for ALLOC once its VA is reserved
/// `PROT_NONE` again (how libhsakmt reserves a BO's VA), as the kernel's MMU notifier would have
/// removed it at the unmap; while its pages are the process's memory, ALLOC over it stays
/// EADDRINUSE.
#[test]
fn alloc_over_an_svm_range_libc_unmapped_and_reserved_again() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let va = anon(4);
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, va, 4 * 4096, &[sa(KFD_IOCTL_SVM_ATTR_GRANULARITY, 9)]).unwrap();
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: va + 4096,
        size: 4096,
        gpu_id: e.gpus[0],
        flags: GTT,
        ..Default::default()
    };
    assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a), Err(Errno::EADDRINUSE));
    // Unmapped without telling the model, then the same VA reserved PROT_NONE (MAP_FIXED).
    // SAFETY: pages this test mapped; the new mapping replaces them at the same address.
    let p = unsafe {
        libc::munmap(va as *mut c_void, 4 * 4096);
        libc::mmap(
            va as *mut c_void,
            4 * 4096,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    assert_eq!(p as u64, va);
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    free(&Buf { handle: a.handle, va: va + 4096, size: 4096 }).unwrap();
    unanon(va, 4);
}

/// A GPU reaches a range's pages only with ACCESS or ACCESS_IN_PLACE (XNACK off: mapped at
/// SET_ATTR, `svm_range_validate_and_map`), writes only without GPU_RO; a GPU without access
/// faults NotPresent there, a write to a GPU_RO range faults ReadOnly. Bytes checked.
#[test]
fn svm_range_reached_by_sdma_only_with_access() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    assert_eq!(set_xnack(-1), Ok(0));
    let (g0, g1) = (e.gpus[0], e.gpus[1]);
    let src = anon(2);
    let dst = anon(2);
    // SAFETY: the pages were just mapped read-write.
    let (s, d) = unsafe {
        (std::slice::from_raw_parts_mut(src as *mut u8, 8192), std::slice::from_raw_parts_mut(dst as *mut u8, 8192))
    };
    for (i, b) in s.iter_mut().enumerate() {
        *b = (i * 7 % 253) as u8;
    }
    let reg = |va: u64, extra: &[kfd_ioctl_svm_attribute]| {
        let mut a = vec![sa(KFD_IOCTL_SVM_ATTR_ACCESS, g0), sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)];
        a.extend_from_slice(extra);
        svm(KFD_IOCTL_SVM_OP_SET_ATTR, va, 8192, &a).unwrap();
    };
    reg(src, &[]);
    reg(dst, &[]);
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let slots = event_page();
    let destroy_event = |id: u32| {
        let mut x = kfd_ioctl_destroy_event_args { event_id: id, pad: 0 };
        kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut x).unwrap();
    };
    // Copies on GPU `gpu_idx`; Some(the memory exception) if it faulted, None if it signalled.
    let copy = |gpu_idx: usize, to: u64, from: u64, len: u64| {
        let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
        let mut q = create_sdma(gpu_idx);
        let mut dw = Vec::new();
        sdma::copy_linear(&mut dw, to, from, len);
        sdma::fence(&mut dw, slots + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
        sdma::trap(&mut dw, ev.event_id).unwrap();
        q.submit(&dw);
        let (r, res, _) = wait(&[ev.event_id], 2000);
        let out = if (r, res) == (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE) {
            None
        } else {
            let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
            assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE), "neither done nor faulted");
            Some(evs[0].memory_exception_data())
        };
        q.destroy();
        destroy_event(mem_ev.event_id);
        out
    };
    assert!(copy(0, dst, src, 8192).is_none());
    assert!(d == s, "GPU 0 copies range to range");
    // GPU 1 has no access: its read of the source faults NotPresent at the source.
    let m = copy(1, dst, src, 64).expect("a VM fault");
    assert_eq!((m.va, m.gpu_id, m.failure.NotPresent), (src, g1, 1));
    // GPU_RO on the destination: GPU 0's write faults ReadOnly, the bytes stay.
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, dst, 8192, &[sa(KFD_IOCTL_SVM_ATTR_SET_FLAGS, KFD_IOCTL_SVM_FLAG_GPU_RO)]).unwrap();
    d.fill(0x5a);
    let m = copy(0, dst, src, 64).expect("a VM fault");
    assert_eq!((m.va, m.gpu_id, m.failure.ReadOnly), (dst, g0, 1));
    assert!(d.iter().all(|&b| b == 0x5a));
    // NO_ACCESS takes GPU 0's reach away.
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, src, 8192, &[sa(KFD_IOCTL_SVM_ATTR_NO_ACCESS, g0)]).unwrap();
    svm(KFD_IOCTL_SVM_OP_SET_ATTR, dst, 8192, &[sa(KFD_IOCTL_SVM_ATTR_CLR_FLAGS, KFD_IOCTL_SVM_FLAG_GPU_RO)]).unwrap();
    assert_eq!(copy(0, dst, src, 64).expect("a VM fault").va, src);
    destroy_event(ev.event_id);
    unanon(src, 2);
    unanon(dst, 2);
}

/// Reads what an SMI client fd has (waits up to 1 s for the first byte).
fn smi_read(fd: RawFd) -> String {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd, then a read into a local buffer.
    unsafe { libc::poll(&mut p, 1, 1000) };
    let mut b = [0u8; 4096];
    let n = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), b.len(), libc::MSG_DONTWAIT) };
    if n <= 0 {
        return String::new();
    }
    String::from_utf8_lossy(&b[..n as usize]).into_owned()
}

/// A prefetch to a GPU sends that GPU's SMI clients MIGRATE_START then MIGRATE_END (fields as
/// `kfd_smi_event_migration_start` prints them: pages, from → to, prefetch:preferred, trigger
/// PREFETCH); none for a prefetch to where the pages are, none for a client that did not enable
/// the events; with two GPUs accessing the range (no common xGMI hive) the best location is
/// system memory (`svm_range_best_prefetch_location`), so nothing moves.
#[test]
fn svm_prefetch_sends_smi_migration_events() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    assert_eq!(set_xnack(-1), Ok(0));
    let (g0, g1) = (e.gpus[0], e.gpus[1]);
    let open = |gpu: u32, mask: u64| {
        let mut a = kfd_ioctl_smi_events_args { gpuid: gpu, anon_fd: 0 };
        kio(e.kfd.as_raw_fd(), AMDKFD_IOC_SMI_EVENTS, &mut a).unwrap();
        // SAFETY: the fd the ioctl just returned is ours.
        let fd = unsafe { OwnedFd::from_raw_fd(a.anon_fd as RawFd) };
        // SAFETY: writes 8 bytes from a local.
        assert_eq!(unsafe { libc::write(fd.as_raw_fd(), (&mask as *const u64).cast(), 8) }, 8);
        fd
    };
    let mig = (1u64 << (KFD_SMI_EVENT_MIGRATE_START - 1)) | (1u64 << (KFD_SMI_EVENT_MIGRATE_END - 1));
    let c0 = open(g0, mig);
    let quiet = open(g0, 1 << (KFD_SMI_EVENT_VMFAULT - 1));
    let va = anon(4);
    let pid = std::process::id();
    let set = |attrs: &[kfd_ioctl_svm_attribute]| svm(KFD_IOCTL_SVM_OP_SET_ATTR, va, 4 * 4096, attrs).unwrap();
    set(&[sa(KFD_IOCTL_SVM_ATTR_ACCESS, g0), sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)]);
    set(&[sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0)]);
    let text = smi_read(c0.as_raw_fd());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text:?}");
    let f: Vec<&str> = lines[0].split(' ').collect();
    assert_eq!(f[0], "5");
    assert_eq!(
        (f[2], f[3], f[4], f[5], f[6]),
        (
            &*format!("-{pid}"),
            &*format!("@{:x}(4)", va >> 12),
            &*format!("0->{g0:x}"),
            &*format!("{g0:x}:ffffffff"),
            "0"
        )
    );
    assert!(lines[1].starts_with("6 ") && lines[1].ends_with(&format!("@{:x}(4) 0->{g0:x} 0", va >> 12)));
    assert_eq!(smi_read(quiet.as_raw_fd()), "");
    // Already there: no migration.
    set(&[sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0)]);
    assert_eq!(smi_read(c0.as_raw_fd()), "");
    // Back to system memory: GPU 0's clients see 0 ← GPU 0.
    set(&[sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)]);
    let back = smi_read(c0.as_raw_fd());
    assert!(back.starts_with("5 ") && back.contains(&format!(" {g0:x}->0 ")), "a migration to system memory: {back:?}");
    // GPU 1 also has access: a prefetch to GPU 0 moves the pages only when GPU 1 can reach
    // GPU 0's VRAM coherently (one xGMI hive); else they stay in system memory.
    let c1 = open(g1, mig);
    set(&[sa(KFD_IOCTL_SVM_ATTR_ACCESS, g1), sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0)]);
    let hive = gpus::same_hive(&gpus::all()[0], &gpus::all()[1]);
    assert_eq!(smi_read(c0.as_raw_fd()).lines().count(), if hive { 2 } else { 0 });
    assert_eq!(smi_read(c1.as_raw_fd()), "");
    let r = svm(KFD_IOCTL_SVM_OP_GET_ATTR, va, 4 * 4096, &[sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)]).unwrap();
    assert_eq!(r[0].value, g0, "the attribute is kept; the pages stay");
    // A closed client is dropped at the next event, not written to.
    drop(c1);
    set(&[sa(KFD_IOCTL_SVM_ATTR_NO_ACCESS, g1), sa(KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g1)]);
    unanon(va, 4);
}

/// A compute queue's CWSR area may be SVM memory (libhsakmt registers it so when the node has
/// the SVM API): ranges over it that GPU_ALWAYS_MAPPED and reached by the queue's GPU
/// (`kfd_queue_buffer_svm_get`); else EINVAL.
#[test]
fn cwsr_area_in_an_always_mapped_svm_range() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let g = &gpus::all()[0];
    let sizes = g.queue_sizes.unwrap();
    let ring = alloc(0, AQL_SLOTS * 64, GTT);
    let ptrs = alloc(0, 4096, GTT);
    let eop = alloc(0, 4096, VRAM);
    for b in [&ring, &ptrs, &eop] {
        map(b, &e.gpus[..1]).unwrap();
    }
    let total = sizes.total_cwsr(g.num_xcc);
    let area = anon(total / 4096);
    let fake = Buf { handle: 0, va: area, size: total };
    let args = aql_args(0, &ring, &ptrs, &eop, &fake);
    let create = || {
        let mut a = args;
        kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut a).map(|_| a.queue_id)
    };
    assert_eq!(create(), Err(Errno::EINVAL), "no range");
    let reg = |flags: u32| {
        svm(
            KFD_IOCTL_SVM_OP_SET_ATTR,
            area,
            total,
            &[sa(KFD_IOCTL_SVM_ATTR_SET_FLAGS, flags), sa(KFD_IOCTL_SVM_ATTR_ACCESS, e.gpus[0])],
        )
        .unwrap()
    };
    reg(KFD_IOCTL_SVM_FLAG_GPU_EXEC);
    assert_eq!(create(), Err(Errno::EINVAL), "not GPU_ALWAYS_MAPPED");
    reg(KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED);
    let id = create().unwrap();
    let svms = process::current().state.lock().svms.clone();
    let held = |v| svms.ranges().iter().filter(|r| r.start == area >> 12).all(|r| r.queue_refcount == v);
    assert!(held(1));
    let mut d = kfd_ioctl_destroy_queue_args { queue_id: id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
    assert!(held(0));
    unanon(area, total / 4096);
    for b in [&ring, &ptrs, &eop] {
        unmap(b, &e.gpus[..1]).unwrap();
        free(b).unwrap();
    }
}

/// AMDGPU_INFO_RAS_ENABLED_FEATURES and the node's RAS capability bits come from one RAS state
/// (`amdgpu_info_ioctl`, `kfd_topology_add_device`): an MI210 with memory and SRAM ECC.
#[test]
fn ras_query_agrees_with_topology_capability() {
    use crate::topology::{cap, ras};
    let _g = SERIAL.lock().unwrap();
    for (i, g) in crate::topology::current().gpus.iter().enumerate() {
        let r = env().render[i].as_raw_fd();
        let mut v = 0u64;
        let mut q = drm_amdgpu_info {
            return_pointer: &mut v as *mut _ as u64,
            return_size: 8,
            query: AMDGPU_INFO_RAS_ENABLED_FEATURES,
            query_args: [0; 4],
        };
        kio(r, DRM_IOCTL_AMDGPU_INFO, &mut q).unwrap();
        let (enabled, features) = ((v >> 32) as u32, v as u32);
        let has = |bit| g.capability & bit != 0;
        assert_eq!(has(cap::SRAM_EDCSUPPORTED), enabled & ras::GFX != 0);
        assert_eq!(has(cap::MEM_EDCSUPPORTED), enabled & ras::UMC != 0);
        assert_eq!(has(cap::RASEVENTNOTIFY), enabled != 0);
        assert_eq!(features & !enabled, 0, "a feature outside ras_enabled");
        assert_eq!((enabled, features & 0x7f), (0x67fff, 0x6f));
        // kfdtest's KFDRASTest reads the low 32 bits: UMC, SDMA and GFX are on.
        let mut lo = 0u32;
        q.return_pointer = &mut lo as *mut _ as u64;
        q.return_size = 4;
        kio(r, DRM_IOCTL_AMDGPU_INFO, &mut q).unwrap();
        assert_eq!(lo, features);
        assert_eq!(lo & (ras::UMC | ras::SDMA | ras::GFX), ras::UMC | ras::SDMA | ras::GFX);
    }
    // RAS off (neither ECC bit): no RAS context, the query answers EINVAL.
    let mut g = crate::topology::Gpu::mi210(0);
    g.capability &= !(cap::MEM_EDCSUPPORTED | cap::SRAM_EDCSUPPORTED | cap::RASEVENTNOTIFY);
    assert_eq!(g.ras_enabled_features(), None);
    // Memory ECC only: UMC and DF, no GFX (SRAM_EDCSUPPORTED stays clear).
    g.capability |= cap::MEM_EDCSUPPORTED;
    assert_eq!(g.ras_enabled(), ras::UMC | ras::DF);
}

#[test]
fn gem_create_prime_gem_va_and_sdma_through_gem_mapping() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let r = e.render[0].as_raw_fd();
    let mut c = drm_amdgpu_gem_create::new(drm_amdgpu_gem_create_in {
        bo_size: 65536,
        alignment: 4096,
        domains: AMDGPU_GEM_DOMAIN_VRAM,
        domain_flags: 0,
    });
    kio(r, DRM_IOCTL_AMDGPU_GEM_CREATE, &mut c).unwrap();
    let h = c.output().handle;
    assert_eq!(h, 1);
    let mut m = drm_amdgpu_gem_mmap::new(h);
    kio(r, DRM_IOCTL_AMDGPU_GEM_MMAP, &mut m).unwrap();
    let cpu = mmap(
        std::ptr::null_mut(),
        65536,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        r,
        m.output().addr_ptr as i64,
    )
    .unwrap() as u64;
    // SAFETY: mapped above.
    unsafe { std::ptr::write_bytes(cpu as *mut u8, 0x3c, 65536) };
    // GEM_VA the BO into the file's VM (= the KFD VM of GPU 0) at a fresh VA.
    let va = reserve(65536);
    let mut gva = drm_amdgpu_gem_va {
        handle: h,
        operation: AMDGPU_VA_OP_MAP,
        flags: AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
        va_address: va,
        offset_in_bo: 0,
        map_size: 65536,
        ..Default::default()
    };
    kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut gva).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut gva), Err(Errno::EINVAL), "overlap");
    // SDMA on GPU 0 copies from the GEM mapping into a KFD BO.
    let dst = alloc(0, 65536, GTT);
    map(&dst, &e.gpus[..1]).unwrap();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let slots = event_page() as *mut u64;
    let mut q = create_sdma(0);
    let mut dw = Vec::new();
    sdma::copy_linear(&mut dw, dst.va, va, 65536);
    sdma::fence(&mut dw, slots as u64 + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
    sdma::trap(&mut dw, ev.event_id).unwrap();
    q.submit(&dw);
    assert_eq!(wait(&[ev.event_id], 5000).1, KFD_IOC_WAIT_RESULT_COMPLETE);
    // SAFETY: CPU-mapped.
    assert_eq!(unsafe { *((dst.va + 65535) as *const u8) }, 0x3c);
    q.destroy();
    // PRIME export → import on GPU 1's render node gives a handle; same fd twice → same handle.
    let mut ph = drm_prime_handle { handle: h, flags: DRM_CLOEXEC | DRM_RDWR, fd: -1 };
    kio(r, DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut ph).unwrap();
    // SAFETY: fresh fd.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(ph.fd) };
    let r1 = e.render[1].as_raw_fd();
    let mut im = drm_prime_handle { handle: 0, flags: 0, fd: dmabuf.as_raw_fd() };
    kio(r1, DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut im).unwrap();
    let h1 = im.handle;
    kio(r1, DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut im).unwrap();
    assert_eq!(im.handle, h1);
    // UNMAP of a VA with no mapping of this BO → ENOENT; GEM_CLOSE twice → EINVAL.
    gva.operation = AMDGPU_VA_OP_UNMAP;
    kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut gva).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut gva), Err(Errno::ENOENT));
    let mut gc = drm_gem_close { handle: h, pad: 0 };
    kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc), Err(Errno::EINVAL));
    let mut gc = drm_gem_close { handle: h1, pad: 0 };
    kio(r1, DRM_IOCTL_GEM_CLOSE, &mut gc).unwrap();
}

#[test]
fn syncobj_signal_wait_export_import() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let r = e.render[0].as_raw_fd();
    let mut c = drm_syncobj_create { handle: 0, flags: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_CREATE, &mut c).unwrap();
    let h = c.handle;
    let hs = [h];
    let now = sys::clock_ns(libc::CLOCK_MONOTONIC) as i64;
    let mut w = drm_syncobj_wait {
        handles: hs.as_ptr() as u64,
        timeout_nsec: now,
        count_handles: 1,
        flags: 0,
        first_signaled: 0,
        pad: 0,
        deadline_nsec: 0,
    };
    assert_eq!(kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut w), Err(Errno::EINVAL), "no fence, no WAIT_FOR_SUBMIT");
    w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    w.timeout_nsec = now + 10_000_000;
    assert_eq!(kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut w), Err(Errno::ETIME));
    // Export, import on the other render node, signal there, wait here.
    let mut x = drm_syncobj_handle { handle: h, flags: DRM_CLOEXEC, fd: -1, pad: 0, point: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &mut x).unwrap();
    // SAFETY: fresh fd.
    let sfd = unsafe { OwnedFd::from_raw_fd(x.fd) };
    let r1 = e.render[1].as_raw_fd();
    let mut i = drm_syncobj_handle { handle: 0, flags: 0, fd: sfd.as_raw_fd(), pad: 0, point: 0 };
    kio(r1, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &mut i).unwrap();
    let h1 = [i.handle];
    let signaller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut a = drm_syncobj_array { handles: h1.as_ptr() as u64, count_handles: 1, pad: 0 };
        kio(r1, DRM_IOCTL_SYNCOBJ_SIGNAL, &mut a).unwrap();
    });
    w.timeout_nsec = sys::clock_ns(libc::CLOCK_MONOTONIC) as i64 + 5_000_000_000;
    kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut w).unwrap();
    signaller.join().unwrap();
    // Timeline: signal point 5, wait for 3 ok, query 5.
    let pts = [5u64];
    let mut ts = drm_syncobj_timeline_array {
        handles: hs.as_ptr() as u64,
        points: pts.as_ptr() as u64,
        count_handles: 1,
        flags: 0,
    };
    kio(r, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &mut ts).unwrap();
    let wp = [3u64];
    let mut tw = drm_syncobj_timeline_wait {
        handles: hs.as_ptr() as u64,
        points: wp.as_ptr() as u64,
        timeout_nsec: 0,
        count_handles: 1,
        flags: 0,
        first_signaled: 9,
        pad: 0,
        deadline_nsec: 0,
    };
    kio(r, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &mut tw).unwrap();
    assert_eq!(tw.first_signaled, 0);
    let mut out = [0u64];
    let mut qa = drm_syncobj_timeline_array {
        handles: hs.as_ptr() as u64,
        points: out.as_mut_ptr() as u64,
        count_handles: 1,
        flags: 0,
    };
    kio(r, DRM_IOCTL_SYNCOBJ_QUERY, &mut qa).unwrap();
    assert_eq!(out[0], 5);
    let mut d = drm_syncobj_destroy { handle: h, pad: 0 };
    kio(r, DRM_IOCTL_SYNCOBJ_DESTROY, &mut d).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_SYNCOBJ_DESTROY, &mut d), Err(Errno::EINVAL));
}

/// COPY_LINEAR_SUB_WIND through the GPUVM: 3D blocks at odd offsets and pitches (sub-window
/// tiles of 1- to 16-byte elements), a pitch too wide for the packet (per-row COPY_LINEAR), and
/// bytes outside the block left alone.
#[test]
fn sdma_copy_sub_window_3d() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let slots = event_page() as *mut u64;
    let mut q = create_sdma(0);
    let src = alloc(0, 4 << 20, VRAM);
    let dst = alloc(0, 4 << 20, GTT);
    map(&src, &e.gpus).unwrap();
    map(&dst, &e.gpus).unwrap();
    let pat = |i: u64| (i * 13 % 251) as u8;
    // SAFETY: both BOs are CPU-mapped read-write for 4 MiB.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts_mut(src.va as *mut u8, 4 << 20),
            std::slice::from_raw_parts_mut(dst.va as *mut u8, 4 << 20),
        )
    };
    for (i, b) in s.iter_mut().enumerate() {
        *b = pat(i as u64);
    }
    // (src offset, src pitch, dst offset, dst pitch, width, height, depth, sub-window?)
    type Case = (u64, u64, u64, u64, u64, u64, u64, bool);
    let cases: [Case; 4] = [
        (0, 256, 0, 512, 256, 8, 3, true),
        (3, 1000, 5, 1200, 997, 7, 2, true),
        (16, 64 << 10, 32, 4096, 4096, 4, 1, true),
        (0, 70 << 10, 4, 80 << 10, 100, 5, 1, false),
    ];
    for (so, sp, doff, dp, w, h, dd) in cases.iter().map(|c| (c.0, c.1, c.2, c.3, c.4, c.5, c.6)) {
        d.fill(0xee);
        let ss = sp * (h + 1);
        let ds = dp * (h + 2);
        let srcp = sdma::Pitched { addr: src.va + so, pitch: sp, slice: ss };
        let dstp = sdma::Pitched { addr: dst.va + doff, pitch: dp, slice: ds };
        let pkts: Vec<_> = sdma::copy_3d(dstp, srcp, w, h, dd).collect();
        let sub = pkts.iter().all(|p| matches!(p, sdma::Packet::CopySubWindow { .. }));
        let mut dw = Vec::new();
        for p in &pkts {
            p.encode(&mut dw);
        }
        assert_eq!(sdma::decode_all(&dw).unwrap(), pkts, "encode/decode round trip");
        sdma::fence(&mut dw, slots as u64 + ev.event_slot_index as u64 * 8, ev.event_id).unwrap();
        sdma::trap(&mut dw, ev.event_id).unwrap();
        q.submit(&dw);
        let (r, res, _) = wait(&[ev.event_id], 5000);
        assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
        for z in 0..dd {
            for y in 0..h {
                let row = (doff + z * ds + y * dp) as usize;
                for x in 0..w {
                    assert_eq!(d[row + x as usize], pat(so + z * ss + y * sp + x), "({x},{y},{z}) of {w}x{h}x{dd}");
                }
                // The byte after the row is untouched (the next row's start when dst pitch == width).
                if w < dp {
                    assert_eq!(d[row + w as usize], 0xee);
                }
            }
        }
        assert_eq!(d[..doff as usize].iter().filter(|b| **b != 0xee).count(), 0);
        assert_eq!(sub, cases.iter().find(|c| c.0 == so && c.1 == sp).unwrap().7);
    }
    q.destroy();
}

/// An AQL compute queue (CREATE_QUEUE type COMPUTE_AQL) with the EOP buffer and CWSR area the
/// node's sizes ask for, and its doorbell mapped; `slots` 64-byte packets.
struct Aql {
    ring: Buf,
    ptrs: Buf,
    eop: Buf,
    cwsr: Buf,
    doorbell: *mut u64,
    queue_id: u32,
    gpu_id: u32,
    wptr: u64,
}

const AQL_SLOTS: u64 = 64;

fn aql_args(gpu_idx: usize, ring: &Buf, ptrs: &Buf, eop: &Buf, cwsr: &Buf) -> kfd_ioctl_create_queue_args {
    let e = env();
    let sizes = gpus::all()[gpu_idx].queue_sizes.unwrap();
    kfd_ioctl_create_queue_args {
        ring_base_address: ring.va,
        ring_size: ring.size as u32,
        gpu_id: e.gpus[gpu_idx],
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        queue_percentage: 100,
        queue_priority: 7,
        read_pointer_address: ptrs.va,
        write_pointer_address: ptrs.va + 8,
        eop_buffer_address: eop.va,
        eop_buffer_size: sizes.eop_buffer_size as u64,
        ctx_save_restore_address: cwsr.va,
        ctx_save_restore_size: sizes.cwsr_size,
        ctl_stack_size: sizes.ctl_stack_size,
        ..Default::default()
    }
}

fn create_aql(gpu_idx: usize) -> Aql {
    let e = env();
    let g = &gpus::all()[gpu_idx];
    let sizes = g.queue_sizes.unwrap();
    let ring = alloc(gpu_idx, AQL_SLOTS * 64, GTT);
    let ptrs = alloc(gpu_idx, 4096, GTT);
    let eop = alloc(gpu_idx, sizes.eop_buffer_size as u64, VRAM);
    let cwsr = alloc(gpu_idx, sizes.total_cwsr(g.num_xcc), GTT);
    for b in [&ring, &ptrs, &eop, &cwsr] {
        map(b, &e.gpus[gpu_idx..=gpu_idx]).unwrap();
    }
    // Every slot starts INVALID (as ROCr fills a new ring).
    for i in 0..AQL_SLOTS {
        // SAFETY: the ring is CPU-mapped read-write.
        unsafe { *((ring.va + i * 64) as *mut u16) = 1 };
    }
    let mut q = aql_args(gpu_idx, &ring, &ptrs, &eop, &cwsr);
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    Aql {
        ring,
        ptrs,
        eop,
        cwsr,
        doorbell: map_doorbell(q.doorbell_offset),
        queue_id: q.queue_id,
        gpu_id: e.gpus[gpu_idx],
        wptr: 0,
    }
}

impl Aql {
    /// Writes a packet (body first, header last with release) and rings the doorbell.
    fn submit(&mut self, header: u16, body: &[u8; 64]) {
        let at = self.ring.va + (self.wptr % AQL_SLOTS) * 64;
        // SAFETY: the ring is CPU-mapped read-write; the slot is free (INVALID).
        unsafe {
            std::ptr::copy_nonoverlapping(body[2..].as_ptr(), (at + 2) as *mut u8, 62);
            (*(at as *const std::sync::atomic::AtomicU16)).store(header, std::sync::atomic::Ordering::Release);
        }
        self.wptr += 1;
        self.ring_doorbell();
    }

    /// Publishes the write index (the queue's write pointer, `write_dispatch_id`), then rings
    /// the doorbell with the last packet's index, as ROCr does.
    fn ring_doorbell(&self) {
        // SAFETY: the pointers page and the doorbell are mapped.
        unsafe {
            (*((self.ptrs.va + 8) as *const std::sync::atomic::AtomicU64))
                .store(self.wptr, std::sync::atomic::Ordering::Release);
            std::ptr::write_volatile(self.doorbell, self.wptr - 1);
        }
    }

    fn rptr(&self) -> u64 {
        // SAFETY: mapped.
        unsafe { std::ptr::read_volatile(self.ptrs.va as *const u64) }
    }

    fn destroy(self) {
        let mut d = kfd_ioctl_destroy_queue_args { queue_id: self.queue_id, pad: 0 };
        kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
        let gpu = [gpus::by_id(self.gpu_id).unwrap().gpu_id];
        for b in [self.ring, self.ptrs, self.eop, self.cwsr] {
            unmap(&b, &gpu).unwrap();
            free(&b).unwrap();
        }
    }
}

/// A GTT page for signals, mapped on GPU `gpu_idx` and the CPU.
fn signal_page(gpu_idx: usize) -> Buf {
    let b = alloc(gpu_idx, 4096, GTT);
    map(&b, &env().gpus[gpu_idx..=gpu_idx]).unwrap();
    b
}

fn signal_page_free(b: Buf, gpu_idx: usize) {
    unmap(&b, &env().gpus[gpu_idx..=gpu_idx]).unwrap();
    free(&b).unwrap();
}

/// Waits (bounded) until `signal` is 0 and the queue's read index is `rptr`.
fn wait_completed(q: &Aql, signal: u64, rptr: u64) {
    let t = std::time::Instant::now();
    while signal_load(signal) != 0 || q.rptr() != rptr {
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "packets never ran");
        std::thread::yield_now();
    }
}

fn barrier_body(deps: &[u64], completion: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (i, d) in deps.iter().enumerate() {
        b[8 + i * 8..16 + i * 8].copy_from_slice(&d.to_le_bytes());
    }
    b[56..].copy_from_slice(&completion.to_le_bytes());
    b
}

/// A one-dimensional AQL kernel dispatch of one workgroup of 64 work-items: kernel descriptor
/// `kd`, completion signal `completion`.
fn dispatch_body(kd: u64, completion: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[2..4].copy_from_slice(&1u16.to_le_bytes());
    b[4..6].copy_from_slice(&64u16.to_le_bytes());
    b[6..8].copy_from_slice(&1u16.to_le_bytes());
    b[8..10].copy_from_slice(&1u16.to_le_bytes());
    b[12..16].copy_from_slice(&64u32.to_le_bytes());
    b[16..20].copy_from_slice(&1u32.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[32..40].copy_from_slice(&kd.to_le_bytes());
    b[56..64].copy_from_slice(&completion.to_le_bytes());
    b
}

/// An `amd_signal_t` at `va`: value, event mailbox, event id.
fn signal_init(va: u64, value: i64, mailbox: u64, event_id: u32) {
    // SAFETY: `va` is a CPU-mapped GTT BO with room for the 64-byte signal.
    unsafe {
        *(va as *mut i64) = 1; // kind: user
        *((va + 8) as *mut i64) = value;
        *((va + 16) as *mut u64) = mailbox;
        *((va + 24) as *mut u32) = event_id;
    }
}

fn signal_load(va: u64) -> i64 {
    // SAFETY: as signal_init.
    unsafe { (*((va + 8) as *const std::sync::atomic::AtomicI64)).load(std::sync::atomic::Ordering::Acquire) }
}

#[test]
fn aql_create_checks_eop_and_cwsr_sizes() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let g = &gpus::all()[0];
    let sizes = g.queue_sizes.unwrap();
    // MI210 (gfx90a, 104 CUs): ctl stack 0x9000, CWSR 0x9000 + 104 * 0x95000, EOP 4 KiB.
    assert_eq!(sizes.ctl_stack_size, 0x9000);
    assert_eq!(sizes.cwsr_size, 0x9000 + 104 * 0x95000);
    assert_eq!(sizes.eop_buffer_size, 4096);
    let ring = alloc(0, AQL_SLOTS * 64, GTT);
    let ptrs = alloc(0, 4096, GTT);
    let eop = alloc(0, 4096, VRAM);
    let cwsr = alloc(0, sizes.total_cwsr(g.num_xcc), GTT);
    for b in [&ring, &ptrs, &eop, &cwsr] {
        map(b, &e.gpus[..1]).unwrap();
    }
    let good = aql_args(0, &ring, &ptrs, &eop, &cwsr);
    for bad in [
        kfd_ioctl_create_queue_args { eop_buffer_size: 8192, ..good },
        kfd_ioctl_create_queue_args { ctl_stack_size: 0, ..good },
        kfd_ioctl_create_queue_args { ctx_save_restore_size: sizes.cwsr_size + 4096, ..good },
        kfd_ioctl_create_queue_args { ctx_save_restore_address: eop.va, ..good },
    ] {
        let mut a = bad;
        assert_eq!(kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut a), Err(Errno::EINVAL));
    }
    let mut a = good;
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    // The EOP buffer and CWSR area are held by the queue like its ring.
    assert_eq!(unmap(&cwsr, &e.gpus[..1]), Err(Errno::EBUSY));
    assert_eq!(unmap(&eop, &e.gpus[..1]), Err(Errno::EBUSY));
    let mut d = kfd_ioctl_destroy_queue_args { queue_id: a.queue_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
    for b in [&ring, &ptrs, &eop, &cwsr] {
        unmap(b, &e.gpus[..1]).unwrap();
        free(b).unwrap();
    }
}

#[test]
fn aql_barrier_and_waits_then_completes_with_event() {
    let _g = SERIAL.lock().unwrap();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_aql(0);
    let sig = signal_page(0);
    let (dep, done, dep_or) = (sig.va, sig.va + 64, sig.va + 128);
    signal_init(dep, 1, 0, 0);
    signal_init(done, 1, slots + ev.event_slot_index as u64 * 8, ev.event_id);
    q.submit(3 | 1 << 8, &barrier_body(&[0, dep], done));
    // The dependency is not 0: nothing completes.
    let (r, res, _) = wait(&[ev.event_id], 30);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT));
    assert_eq!((q.rptr(), signal_load(done)), (0, 1));
    // Set later (by the host here): the barrier passes, the completion signal goes 1 -> 0 and
    // raises the event; the slot is INVALID again and the read index published.
    // SAFETY: mapped.
    unsafe { (*((dep + 8) as *const std::sync::atomic::AtomicI64)).store(0, std::sync::atomic::Ordering::Release) };
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert_eq!((q.rptr(), signal_load(done)), (1, 0));
    // SAFETY: mapped.
    assert_eq!(unsafe { *(q.ring.va as *const u16) }, 1);
    // BARRIER_OR: one of two dependencies at 0 is enough.
    signal_init(dep, 5, 0, 0);
    signal_init(dep_or, 0, 0, 0);
    signal_init(done, 1, slots + ev.event_slot_index as u64 * 8, ev.event_id);
    q.submit(5, &barrier_body(&[dep, dep_or], done));
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert_eq!((q.rptr(), signal_load(done)), (2, 0));
    q.destroy();
    signal_page_free(sig, 0);
}

#[test]
fn aql_invalid_header_stalls_until_written() {
    let _g = SERIAL.lock().unwrap();
    let mut q = create_aql(0);
    let sig = signal_page(0);
    signal_init(sig.va, 1, 0, 0);
    // The doorbell announces a packet whose header is still INVALID: the queue waits.
    q.wptr += 1;
    q.ring_doorbell();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!((q.rptr(), signal_load(sig.va)), (0, 1));
    // Header written: the packet runs.
    let body = barrier_body(&[], sig.va);
    // SAFETY: slot 0 of the mapped ring.
    unsafe {
        std::ptr::copy_nonoverlapping(body[2..].as_ptr(), (q.ring.va + 2) as *mut u8, 62);
        (*(q.ring.va as *const std::sync::atomic::AtomicU16)).store(3, std::sync::atomic::Ordering::Release);
    }
    wait_completed(&q, sig.va, 1);
    q.destroy();
    signal_page_free(sig, 0);
}

#[test]
fn aql_bad_packet_and_faulting_dispatch_stop_the_queue() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let sig = signal_page(1);
    // A packet of type AGENT_DISPATCH (4): an invalid packet for this queue, a fault at it.
    let mut q = create_aql(1);
    signal_init(sig.va, 1, 0, 0);
    q.submit(4, &barrier_body(&[], sig.va));
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!((d.va, d.gpu_id, d.failure.NotPresent), (q.ring.va & !0xfff, e.gpus[1], 1));
    // Stopped: a later good packet does not run.
    q.submit(3, &barrier_body(&[], sig.va));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!((q.rptr(), signal_load(sig.va)), (0, 1));
    q.destroy();
    // A fresh MEMORY event for the next fault (this one stays set).
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    // A dispatch whose kernel descriptor is not mapped: a VM fault at the descriptor's page.
    let mut q = create_aql(1);
    let kd = reserve(1 << 20) + 0x5000;
    q.submit(2, &dispatch_body(kd, sig.va));
    let (r, res, evs) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let d = evs[0].memory_exception_data();
    assert_eq!((d.va, d.gpu_id, d.failure.NotPresent), (kd & !0xfff, e.gpus[1], 1));
    assert_eq!((q.rptr(), signal_load(sig.va)), (0, 1));
    q.destroy();
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    signal_page_free(sig, 1);
}

#[test]
fn aql_vendor_barrier_value_and_pm4_cache_ib() {
    let _g = SERIAL.lock().unwrap();
    let mut q = create_aql(0);
    let sig = signal_page(0);
    let (watched, done, ib) = (sig.va, sig.va + 64, sig.va + 2048);
    signal_init(watched, 5, 0, 0);
    signal_init(done, 2, 0, 0);
    // BARRIER_VALUE (vendor packet, AmdFormat 2): wait until (value & 0xff) < 3.
    let mut b = [0u8; 64];
    b[2] = 2;
    b[8..16].copy_from_slice(&watched.to_le_bytes());
    b[16..24].copy_from_slice(&3i64.to_le_bytes());
    b[24..32].copy_from_slice(&0xffi64.to_le_bytes());
    b[32..36].copy_from_slice(&2u32.to_le_bytes());
    b[56..64].copy_from_slice(&done.to_le_bytes());
    q.submit(0, &b);
    // A PM4 IB (AmdFormat 1) holding an ACQUIRE_MEM (7 dwords): a cache operation, nothing to do.
    let acquire = [0xc005_5800u32, 0, 0x2884_0000, 0xffff_ffff, 0xff, 0, 0];
    for (i, d) in acquire.iter().enumerate() {
        // SAFETY: mapped.
        unsafe { *((ib + i as u64 * 4) as *mut u32) = *d };
    }
    let mut p = [0u8; 64];
    p[2] = 1;
    p[4..8].copy_from_slice(&0xc002_3f00u32.to_le_bytes());
    p[8..16].copy_from_slice(&ib.to_le_bytes());
    p[16..20].copy_from_slice(&(0x0080_0000u32 | 7).to_le_bytes());
    p[56..64].copy_from_slice(&done.to_le_bytes());
    q.submit(0, &p);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!((q.rptr(), signal_load(done)), (0, 2));
    // SAFETY: mapped.
    unsafe {
        (*((watched + 8) as *const std::sync::atomic::AtomicI64)).store(0x102, std::sync::atomic::Ordering::Release)
    };
    wait_completed(&q, done, 2);
    q.destroy();
    signal_page_free(sig, 0);
}

// ------------------------------------------------------------------------------------------
// PM4 compute queues
// ------------------------------------------------------------------------------------------

use super::pm4::{self as pm4, packet3};

/// A PM4 compute queue (KFD_IOC_QUEUE_TYPE_COMPUTE) with its buffers; `wptr` in dwords.
struct Pm4 {
    ring: Buf,
    ptrs: Buf,
    eop: Buf,
    cwsr: Buf,
    doorbell: *mut u64,
    queue_id: u32,
    gpu_idx: usize,
    wptr: u64,
}

const PM4_RING: u64 = 4096;

fn create_pm4(gpu_idx: usize) -> Pm4 {
    let e = env();
    let g = &gpus::all()[gpu_idx];
    let sizes = g.queue_sizes.unwrap();
    let ring = alloc(gpu_idx, PM4_RING, GTT);
    let ptrs = alloc(gpu_idx, 4096, GTT);
    let eop = alloc(gpu_idx, sizes.eop_buffer_size as u64, VRAM);
    let cwsr = alloc(gpu_idx, sizes.total_cwsr(g.num_xcc), GTT);
    for b in [&ring, &ptrs, &eop, &cwsr] {
        map(b, &e.gpus[gpu_idx..=gpu_idx]).unwrap();
    }
    let mut q = aql_args(gpu_idx, &ring, &ptrs, &eop, &cwsr);
    q.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE;
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    Pm4 { ring, ptrs, eop, cwsr, doorbell: map_doorbell(q.doorbell_offset), queue_id: q.queue_id, gpu_idx, wptr: 0 }
}

impl Pm4 {
    /// Writes `dw` at the write pointer (wrapping), then the 64-bit write pointer and the
    /// doorbell, as kfdtest's `PM4Queue::SubmitPacket` on gfx9.
    fn submit(&mut self, dw: &[u32]) {
        let n = PM4_RING / 4;
        for d in dw {
            // SAFETY: the ring is CPU-mapped read-write.
            unsafe { *((self.ring.va + (self.wptr % n) * 4) as *mut u32) = *d };
            self.wptr += 1;
        }
        // SAFETY: the pointers page and the doorbell are mapped.
        unsafe {
            *((self.ptrs.va + 8) as *mut u64) = self.wptr;
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            std::ptr::write_volatile(self.doorbell, self.wptr);
        }
    }

    /// The CP's read-pointer report: a 32-bit dword offset into the ring.
    fn rptr(&self) -> u32 {
        // SAFETY: mapped.
        unsafe { std::ptr::read_volatile(self.ptrs.va as *const u32) }
    }

    fn destroy(self) {
        let mut d = kfd_ioctl_destroy_queue_args { queue_id: self.queue_id, pad: 0 };
        kio(env().kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
        for b in [self.ring, self.ptrs, self.eop, self.cwsr] {
            unmap(&b, &env().gpus[self.gpu_idx..=self.gpu_idx]).unwrap();
            free(&b).unwrap();
        }
    }
}

/// WRITE_DATA to memory (dst_sel 5, wr_confirm), as kfdtest's `PM4WriteDataPacket`.
fn pm4_write_data(addr: u64, data: &[u32]) -> Vec<u32> {
    let mut v = vec![
        packet3(pm4::PACKET3_WRITE_DATA, data.len() as u32 + 2),
        5 << 8 | 1 << 20,
        addr as u32,
        (addr >> 32) as u32,
    ];
    v.extend_from_slice(data);
    v
}

/// RELEASE_MEM end-of-pipe writing the low 32 bits of `data` to `addr`, with an interrupt of
/// context `ctx` (int_sel 2) or none (int_sel 3), as kfdtest's `PM4ReleaseMemoryPacket` (AI).
fn pm4_release_mem(addr: u64, data: u32, interrupt: bool, ctx: u32) -> Vec<u32> {
    let int_sel = if interrupt { 2 } else { 3 };
    vec![
        packet3(pm4::PACKET3_RELEASE_MEM, 6),
        0x14 | 5 << 8 | 1 << 15 | 1 << 17,
        1 << 29 | int_sel << 24,
        addr as u32,
        (addr >> 32) as u32,
        data,
        0,
        ctx,
    ]
}

/// WAIT_REG_MEM on memory: until the dword at `addr` equals `reference`.
fn pm4_wait_mem_eq(addr: u64, reference: u32) -> Vec<u32> {
    vec![packet3(pm4::PACKET3_WAIT_REG_MEM, 5), 3 | 1 << 4, addr as u32, (addr >> 32) as u32, reference, u32::MAX, 4]
}

fn pm4_indirect_buffer(addr: u64, dwords: u32) -> Vec<u32> {
    vec![packet3(pm4::PACKET3_INDIRECT_BUFFER, 2), addr as u32, (addr >> 32) as u32, dwords | 1 << 23]
}

fn pm4_set_sh_reg(reg: u32, values: &[u32]) -> Vec<u32> {
    let mut v = vec![packet3(pm4::PACKET3_SET_SH_REG, values.len() as u32), reg - pm4::SH_REG_START];
    v.extend_from_slice(values);
    v
}

/// A dispatch as kfdtest's `Dispatch::BuildIb` programs one: COMPUTE_START_* 0 and
/// COMPUTE_NUM_THREAD_* 1 (one work-item a workgroup), the program at `code_va`, RSRC1
/// 0x000c0084 and `rsrc2`, then the SET_SH_REG packets in `extra`, then DISPATCH_DIRECT of
/// `grid_x` workgroups.
fn pm4_dispatch(code_va: u64, rsrc2: u32, extra: &[u32], grid_x: u32) -> Vec<u32> {
    use super::pm4::reg;
    let pgm = code_va >> 8;
    let mut v = pm4_set_sh_reg(reg::COMPUTE_START_X, &[0, 0, 0, 1, 1, 1, 0, 0]);
    v.extend(pm4_set_sh_reg(reg::COMPUTE_PGM_LO, &[pgm as u32, (pgm >> 32) as u32, 0, 0, 0, 0]));
    v.extend(pm4_set_sh_reg(reg::COMPUTE_PGM_RSRC1, &[0x000c_0084, rsrc2]));
    v.extend_from_slice(extra);
    v.extend([packet3(pm4::PACKET3_DISPATCH_DIRECT, 3), grid_x, 1, 1, 0x21]);
    v
}

/// Writes `dw` to `b` (CPU-mapped) from its start.
fn put_dwords(b: &Buf, dw: &[u32]) {
    for (i, d) in dw.iter().enumerate() {
        // SAFETY: CPU-mapped read-write, within the BO.
        unsafe { std::ptr::write_volatile((b.va + i as u64 * 4) as *mut u32, *d) };
    }
}

fn dword(va: u64) -> u32 {
    // SAFETY: callers pass CPU-mapped addresses.
    unsafe { std::ptr::read_volatile(va as *const u32) }
}

/// WRITE_DATA runs, RELEASE_MEM writes the event's slot and raises its event (the kfdtest
/// `Wait4PacketConsumption(event)` path), NOP padding (count 0x3fff) and a type-2 filler are one
/// dword each, and the read pointer reports the dword offset the CP reached.
#[test]
fn pm4_write_data_and_release_mem_event() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_pm4(0);
    let dst = alloc(0, 4096, GTT);
    map(&dst, &e.gpus[..1]).unwrap();
    let mut dw = vec![0xffff_1002, 0x8000_0000];
    dw.extend(pm4_write_data(dst.va, &[0x1111, 0x2222]));
    dw.extend(pm4_release_mem(slots + ev.event_slot_index as u64 * 8, ev.event_id, true, ev.event_id));
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert_eq!((dword(dst.va), dword(dst.va + 4), dword(dst.va + 8)), (0x1111, 0x2222, 0));
    wait_until("the rptr report", || q.rptr() as u64 == q.wptr);
    // The ring wraps: packets past its end land at its start; the rptr wraps with them.
    let n = PM4_RING / 4;
    while q.wptr % n != n - 2 {
        q.submit(&[0xffff_1002]);
    }
    q.submit(&pm4_write_data(dst.va + 8, &[0x3333]));
    wait_until("the wrapped WRITE_DATA", || dword(dst.va + 8) == 0x3333);
    wait_until("the wrapped rptr", || q.rptr() as u64 == q.wptr % n);
    assert!((q.rptr() as u64) < n);
    q.destroy();
    unmap(&dst, &e.gpus[..1]).unwrap();
    free(&dst).unwrap();
}

/// WAIT_REG_MEM holds the queue until the host writes the word: on the ring, and inside an
/// indirect buffer, which resumes after the wait instead of running again from its start.
#[test]
fn pm4_wait_reg_mem_released_by_the_host_in_ring_and_ib() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mut q = create_pm4(1);
    let mem = alloc(1, 4096, GTT);
    let ib = alloc(1, 4096, GTT);
    map(&mem, &e.gpus[1..2]).unwrap();
    map(&ib, &e.gpus[1..2]).unwrap();
    let (flag, x, y, count) = (mem.va, mem.va + 4, mem.va + 8, mem.va + 12);
    let mut ibw = pm4_write_data(x, &[1]);
    ibw.extend(pm4_wait_mem_eq(flag, 2));
    ibw.extend(pm4_write_data(y, &[2]));
    put_dwords(&ib, &ibw);
    let mut dw = pm4_wait_mem_eq(flag, 1);
    dw.extend(pm4_indirect_buffer(ib.va, ibw.len() as u32));
    dw.extend(pm4_write_data(count, &[3]));
    q.submit(&dw);
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!((dword(x), q.rptr()), (0, 0), "ran past an unsatisfied WAIT_REG_MEM");
    // SAFETY: mapped.
    unsafe { std::ptr::write_volatile(flag as *mut u32, 1) };
    wait_until("the IB's first WRITE_DATA", || dword(x) == 1);
    // The IB waits inside: its second write and the ring packet after it wait too; the rptr
    // stays at the INDIRECT_BUFFER packet (7 dwords in).
    // SAFETY: mapped.
    unsafe { std::ptr::write_volatile(x as *mut u32, 0) };
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!((dword(y), dword(count), q.rptr()), (0, 0, 7));
    // SAFETY: mapped.
    unsafe { std::ptr::write_volatile(flag as *mut u32, 2) };
    wait_until("the rest of the IB and the ring", || dword(count) == 3);
    assert_eq!((dword(x), dword(y)), (0, 2), "the IB ran again from its start");
    assert_eq!(q.rptr() as u64, q.wptr);
    q.destroy();
    for b in [mem, ib] {
        unmap(&b, &e.gpus[1..2]).unwrap();
        free(&b).unwrap();
    }
}

/// A kfdtest-style dispatch (`Dispatch::BuildIb`): an indirect buffer holding ACQUIRE_MEM, the
/// COMPUTE_* registers by SET_SH_REG, DISPATCH_DIRECT, then RELEASE_MEM into a NOP's payload and
/// a WAIT_REG_MEM on it; on the ring the INDIRECT_BUFFER and a RELEASE_MEM raising the event.
/// The kernel: `out[tgid_x] = user_data[2] + tgid_x`, 5 workgroups of one work-item.
#[test]
fn pm4_dispatch_direct_in_indirect_buffer_raises_event() {
    use super::pm4::reg;
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q = create_pm4(0);
    let code = alloc(0, 4096, GTT);
    let out = alloc(0, 4096, GTT);
    let ib = alloc(0, 4096, GTT);
    for b in [&code, &out, &ib] {
        map(b, &e.gpus[..1]).unwrap();
    }
    // v_mov_b32 v1, s2; v_add_u32 v1, s4, v1; v_mov_b32 v3, s4; v_lshlrev_b32 v3, 2, v3;
    // global_store_dword v3, v1, s[0:1]; s_endpgm (llvm-mc -mcpu=gfx90a -show-encoding).
    put_dwords(&code, &[0x7e02_0202, 0x6802_0204, 0x7e06_0204, 0x2406_0682, 0xdc70_8000, 0x0000_0103, 0xbf81_0000]);
    let mut user = [0u32; 16];
    (user[0], user[1], user[2]) = (out.va as u32, (out.va >> 32) as u32, 1000);
    // USER_SGPR 4, TRAP_PRESENT, TGID_X_EN, TIDIG_COMP_CNT 1, EXCP_EN_MSB 1.
    let rsrc2 = 4 << 1 | 1 << 6 | 1 << 7 | 1 << 11 | 1 << 13;
    let fence = ib.va + 2048;
    let mut regs = pm4_set_sh_reg(reg::COMPUTE_PGM_RSRC3, &[9]);
    regs.extend(pm4_set_sh_reg(reg::COMPUTE_TMPRING_SIZE, &[0]));
    regs.extend(pm4_set_sh_reg(reg::COMPUTE_USER_DATA_0, &user));
    let mut w = vec![packet3(pm4::PACKET3_ACQUIRE_MEM, 5), 0x28c0_0000, u32::MAX, 0, 0, 0, 4];
    w.extend(pm4_dispatch(code.va, rsrc2, &regs, 5));
    w.extend(pm4_release_mem(fence, 0xdead_beef, false, 0));
    w.extend(pm4_wait_mem_eq(fence, 0xdead_beef));
    put_dwords(&ib, &w);
    let mut dw = pm4_indirect_buffer(ib.va, w.len() as u32);
    dw.extend(pm4_release_mem(slots + ev.event_slot_index as u64 * 8, ev.event_id, true, ev.event_id));
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 10_000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    let got: Vec<u32> = (0..6).map(|i| dword(out.va + i * 4)).collect();
    assert_eq!(got, [1000, 1001, 1002, 1003, 1004, 0]);
    assert_eq!(dword(fence), 0xdead_beef);
    wait_until("the rptr", || q.rptr() as u64 == q.wptr);
    q.destroy();
    for b in [code, out, ib] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// ALLOC_QUEUE_GWS (`pqm_set_gws`): one queue per process and GPU holds the GWS (EBUSY for a
/// second), an unknown queue is EINVAL, DESTROY_QUEUE gives it back, `num_gws` 0 takes it back
/// (EINVAL when none is held). The holder's dispatches run with the GPU's GWS: a PM4 dispatch's
/// `ds_gws_init` (count 3) and `ds_gws_sema_v` on resource 37 (M0[21:16]) leave 4 there.
#[test]
fn alloc_queue_gws_gives_the_gpu_gws_to_one_queue() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let kfd = e.kfd.as_raw_fd();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mut q1 = create_pm4(0);
    let q2 = create_pm4(0);
    let gws = |queue_id: u32, num_gws: u32| {
        let mut a = kfd_ioctl_alloc_queue_gws_args { queue_id, num_gws, first_gws: 7, pad: 0 };
        kio(kfd, AMDKFD_IOC_ALLOC_QUEUE_GWS, &mut a).map(|_| a.first_gws)
    };
    assert_eq!(gws(9999, 64), Err(Errno::EINVAL));
    assert_eq!(gws(q1.queue_id, 64), Ok(0));
    assert_eq!(gws(q2.queue_id, 64), Err(Errno::EBUSY));
    let code = alloc(0, 4096, GTT);
    map(&code, &e.gpus[..1]).unwrap();
    // v_mov_b32 v0, 3; s_mov_b32 m0, 0x250000; ds_gws_init v0 gds; ds_gws_sema_v gds; s_endpgm
    // (llvm-mc -mcpu=gfx90a -show-encoding).
    put_dwords(&code, &[0x7e00_0283, 0xbefc_00ff, 0x0025_0000, 0xd933_0000, 0, 0xd935_0000, 0, 0xbf81_0000]);
    let mut dw = pm4_dispatch(code.va, 1 << 7, &[], 1);
    dw.extend(pm4_release_mem(slots + ev.event_slot_index as u64 * 8, ev.event_id, true, ev.event_id));
    q1.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 10_000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    assert_eq!(gpus::all()[0].gws.resource(37), (4, 0));
    wait_until("the rptr", || q1.rptr() as u64 == q1.wptr);
    q1.destroy();
    assert_eq!(gws(q2.queue_id, 64), Ok(0));
    assert_eq!(gws(q2.queue_id, 0), Ok(0));
    assert_eq!(gws(q2.queue_id, 0), Err(Errno::EINVAL));
    q2.destroy();
    unmap(&code, &e.gpus[..1]).unwrap();
    free(&code).unwrap();
}

/// DESTROY_QUEUE of a PM4 queue whose dispatch never ends (kfdtest `KFDCWSRTest.InterruptRestore`:
/// `s_branch` to itself over 0x10000 workgroups) returns at once: the CP preempts the queue and
/// its waves are dropped with it (`destroy_queue_cpsch`). Nothing after the dispatch runs and no
/// VM fault is reported.
#[test]
fn pm4_destroy_queue_ends_an_endless_dispatch() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let slots = event_page();
    let ev = create_event(KFD_IOC_EVENT_SIGNAL, true);
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_pm4(0);
    let code = alloc(0, 4096, GTT);
    let after = alloc(0, 4096, GTT);
    for b in [&code, &after] {
        map(b, &e.gpus[..1]).unwrap();
    }
    // LOOP: s_branch LOOP; s_endpgm
    put_dwords(&code, &[0xbf82_ffff, 0xbf81_0000]);
    let mut dw = pm4_dispatch(code.va, 1 << 7, &[], 0x10000);
    dw.extend(pm4_write_data(after.va, &[7]));
    dw.extend(pm4_release_mem(slots + ev.event_slot_index as u64 * 8, ev.event_id, true, ev.event_id));
    q.submit(&dw);
    let (r, res, _) = wait(&[ev.event_id], 300);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_TIMEOUT), "an endless dispatch completed");
    let t0 = std::time::Instant::now();
    q.destroy();
    assert!(t0.elapsed() < std::time::Duration::from_secs(5), "destroy took {:?}", t0.elapsed());
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(dword(after.va), 0);
    assert_eq!(wait(&[mem_ev.event_id], 0).1, KFD_IOC_WAIT_RESULT_TIMEOUT, "a VM fault was reported");
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    for b in [code, after] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// A packet the model does not know stops the queue with a VM fault (MEMORY event), as an
/// unknown AQL packet: the program sees a failed GPU, not a hang.
#[test]
fn pm4_unknown_packet_faults() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let mem_ev = create_event(KFD_IOC_EVENT_MEMORY, false);
    let mut q = create_pm4(0);
    let dst = alloc(0, 4096, GTT);
    map(&dst, &e.gpus[..1]).unwrap();
    // DRAW_INDEX_AUTO (0x2d): graphics, not an MEC packet.
    let mut dw = vec![packet3(0x2d, 1), 3, 0];
    dw.extend(pm4_write_data(dst.va, &[9]));
    q.submit(&dw);
    let (r, res, _) = wait(&[mem_ev.event_id], 5000);
    assert_eq!((r, res), (Ok(()), KFD_IOC_WAIT_RESULT_COMPLETE));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(dword(dst.va), 0);
    let mut d = kfd_ioctl_destroy_event_args { event_id: mem_ev.event_id, pad: 0 };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_DESTROY_EVENT, &mut d).unwrap();
    q.destroy();
    unmap(&dst, &e.gpus[..1]).unwrap();
    free(&dst).unwrap();
}

/// A tracer's PEEKDATA/POKEDATA of a VRAM BO the tracee maps `PROT_NONE, MAP_PRIVATE` (as
/// libhsakmt maps VRAM without HostAccess) reaches the BO, as amdgpu's `ttm_bo_vm_access` does:
/// the word poked is what an SDMA copy of the BO then reads. (kfdtest
/// `KFDMemoryTest.PtraceAccessInvisibleVram`.)
#[test]
fn ptrace_peek_poke_of_a_prot_none_vram_mapping_reaches_the_bo() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
    let va = reserve(2 << 20);
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: va,
        size: 2 << 20,
        gpu_id: e.gpus[0],
        flags,
        ..Default::default()
    };
    kio(e.kfd.as_raw_fd(), AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
    let vram = Buf { handle: a.handle, va, size: 2 << 20 };
    let p = mmap(
        va as *mut c_void,
        2 << 20,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_FIXED,
        e.render[0].as_raw_fd(),
        a.mmap_offset as i64,
    );
    assert_eq!(p.map(|p| p as u64), Ok(va));
    let out = alloc(0, 4096, GTT);
    map(&vram, &e.gpus[..1]).unwrap();
    map(&out, &e.gpus[..1]).unwrap();
    let word = va + (1 << 20) - 8;
    let mut q = create_sdma(0);
    let copy = |q: &mut Sdma, seq: u32| {
        let mut dw = Vec::new();
        sdma::copy_linear(&mut dw, out.va, word, 8);
        sdma::fence(&mut dw, out.va + 64, seq).unwrap();
        q.submit(&dw);
        // SAFETY: `out` is mapped read-write.
        wait_until("the SDMA fence", || unsafe { *((out.va + 64) as *const u32) } == seq);
        // SAFETY: `out` is mapped read-write.
        unsafe { *(out.va as *const u64) }
    };
    // The GPU writes the word (a constant fill), then a stopped child is traced.
    let mut dw = Vec::new();
    sdma::const_fill(&mut dw, word, 0xdead_beef, 8).unwrap();
    q.submit(&dw);
    assert_eq!(copy(&mut q, 1), 0xdead_beef_dead_beef);
    with_stopped_tracee(|child| {
        // SAFETY: the interposed ptrace on our stopped tracee; PEEK writes no caller memory.
        let peek = unsafe { ptrace::ptrace(libc::PTRACE_PEEKDATA, child, word as *mut c_void, std::ptr::null_mut()) };
        assert_eq!(peek.map(|w| w as u64), Ok(0xdead_beef_dead_beef));
        let data = 0xcafe_babe_cafe_babe_u64 as *mut c_void;
        // SAFETY: as above.
        assert_eq!(unsafe { ptrace::ptrace(libc::PTRACE_POKEDATA, child, word as *mut c_void, data) }, Ok(0));
        // Not a BO mapping (our reservation's guard: unmapped) → the kernel's EIO stands.
        // SAFETY: as above.
        let r = unsafe { ptrace::ptrace(libc::PTRACE_POKEDATA, child, 8 as *mut c_void, std::ptr::null_mut()) };
        assert_eq!(r, Err(Errno::EIO));
    });
    assert_eq!(copy(&mut q, 2), 0xcafe_babe_cafe_babe);
    let (ring, ptrs) = q.destroy();
    for b in [ring, ptrs, vram, out] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// A GEM BO of `size` bytes in `domain` on render file `r`: CPU-mapped read-write and GEM_VA'd
/// at a fresh VA of the file's VM → (handle, CPU address, GPU VA).
fn gem_bo(r: RawFd, size: u64, domain: u64) -> (u32, u64, u64) {
    let mut c = drm_amdgpu_gem_create::new(drm_amdgpu_gem_create_in {
        bo_size: size,
        alignment: 4096,
        domains: domain,
        domain_flags: 0,
    });
    kio(r, DRM_IOCTL_AMDGPU_GEM_CREATE, &mut c).unwrap();
    let h = c.output().handle;
    let mut m = drm_amdgpu_gem_mmap::new(h);
    kio(r, DRM_IOCTL_AMDGPU_GEM_MMAP, &mut m).unwrap();
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let cpu = mmap(std::ptr::null_mut(), size as usize, prot, libc::MAP_SHARED, r, m.output().addr_ptr as i64).unwrap()
        as u64;
    let va = reserve(size);
    let flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE;
    let mut gva = drm_amdgpu_gem_va {
        handle: h,
        operation: AMDGPU_VA_OP_MAP,
        flags,
        va_address: va,
        map_size: size,
        ..Default::default()
    };
    kio(r, DRM_IOCTL_AMDGPU_GEM_VA, &mut gva).unwrap();
    (h, cpu, va)
}

/// DRM_AMDGPU_CS of one SDMA IB (`ib_bytes` at `ib_va`, DMA ring `ring`) with `extra` chunks
/// → the sequence number.
fn cs_submit(
    r: RawFd,
    ctx: u32,
    bo_list: u32,
    ring: u32,
    ib_va: u64,
    ib_bytes: u32,
    extra: &[(u32, &[u8])],
) -> Result<u64, Errno> {
    let ib =
        drm_amdgpu_cs_chunk_ib { va_start: ib_va, ib_bytes, ip_type: AMDGPU_HW_IP_DMA, ring, ..Default::default() };
    let ib_bytes_of = sys::as_bytes(std::slice::from_ref(&ib));
    let mut chunks = vec![drm_amdgpu_cs_chunk {
        chunk_id: AMDGPU_CHUNK_ID_IB,
        length_dw: 8,
        chunk_data: ib_bytes_of.as_ptr() as u64,
    }];
    for (id, data) in extra {
        chunks.push(drm_amdgpu_cs_chunk {
            chunk_id: *id,
            length_dw: data.len() as u32 / 4,
            chunk_data: data.as_ptr() as u64,
        });
    }
    let ptrs: Vec<u64> = chunks.iter().map(|c| c as *const _ as u64).collect();
    let mut a = drm_amdgpu_cs_in {
        ctx_id: ctx,
        bo_list_handle: bo_list,
        num_chunks: ptrs.len() as u32,
        flags: 0,
        chunks: ptrs.as_ptr() as u64,
    };
    kio(r, DRM_IOCTL_AMDGPU_CS, &mut a)?;
    Ok(a.ctx_id as u64 | (a.bo_list_handle as u64) << 32)
}

/// DRM_AMDGPU_WAIT_CS of `seq` with a relative timeout → busy (`out.status`).
fn wait_cs(r: RawFd, ctx: u32, ring: u32, seq: u64, timeout: Duration) -> Result<bool, Errno> {
    let deadline = sys::clock_ns(libc::CLOCK_MONOTONIC) + timeout.as_nanos() as u64;
    let mut w = drm_amdgpu_wait_cs_in {
        handle: seq,
        timeout: deadline,
        ip_type: AMDGPU_HW_IP_DMA,
        ip_instance: 0,
        ring,
        ctx_id: ctx,
    };
    kio(r, DRM_IOCTL_AMDGPU_WAIT_CS, &mut w)?;
    Ok(w.handle != 0)
}

/// amdgpu command submission on a DMA ring (kfdtest `KFDEvictTest` submits SDMA NOPs this way):
/// contexts, BO lists, CS, WAIT_CS and their errors; the job runs its IB through the file's VM,
/// in entity order behind a POLL_REGMEM the test holds, writes the user fence and signals its
/// SYNCOBJ_OUT only when done.
#[test]
fn cs_runs_sdma_ibs_in_order_with_fences() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let r = e.render[0].as_raw_fd();
    // CTX: ids from 1; FREE of an unknown id and a bad priority → EINVAL.
    let mut c = [AMDGPU_CTX_OP_ALLOC_CTX, 0, 0, 0];
    kio(r, DRM_IOCTL_AMDGPU_CTX, &mut c).unwrap();
    let ctx = c[0];
    assert!(ctx >= 1);
    let mut bad = [AMDGPU_CTX_OP_ALLOC_CTX, 0, 0, 7];
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_CTX, &mut bad), Err(Errno::EINVAL));
    let mut q = [AMDGPU_CTX_OP_QUERY_STATE2, 0, ctx, 0];
    kio(r, DRM_IOCTL_AMDGPU_CTX, &mut q).unwrap();
    let (ib_h, ib_cpu, ib_va) = gem_bo(r, 4096, AMDGPU_GEM_DOMAIN_GTT);
    let (data_h, data_cpu, data_va) = gem_bo(r, 65536, AMDGPU_GEM_DOMAIN_VRAM);
    let (uf_h, uf_cpu, _) = gem_bo(r, 4096, AMDGPU_GEM_DOMAIN_GTT);
    // BO_LIST: unknown GEM handle → ENOENT; CREATE → 1..; UPDATE of an unknown list → ENOENT.
    let create = |handles: &[u32]| {
        let entries: Vec<_> =
            handles.iter().map(|&bo_handle| drm_amdgpu_bo_list_entry { bo_handle, bo_priority: 0 }).collect();
        let mut l = drm_amdgpu_bo_list_in {
            operation: AMDGPU_BO_LIST_OP_CREATE,
            list_handle: 0,
            bo_number: entries.len() as u32,
            bo_info_size: 8,
            bo_info_ptr: entries.as_ptr() as u64,
        };
        kio(r, DRM_IOCTL_AMDGPU_BO_LIST, &mut l).map(|()| l.operation)
    };
    let list = create(&[ib_h, data_h]).unwrap();
    assert!(list >= 1);
    assert_eq!(create(&[999]), Err(Errno::ENOENT));
    let mut l = drm_amdgpu_bo_list_in {
        operation: AMDGPU_BO_LIST_OP_UPDATE,
        list_handle: 77,
        bo_number: 0,
        ..Default::default()
    };
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_BO_LIST, &mut l), Err(Errno::ENOENT));

    // Job 1 (ring 0): wait until the test writes 1 at data+0x1000, then fill 4 KiB with 0x11.
    let mut dw = Vec::new();
    sdma::poll_regmem_eq(&mut dw, data_va + 0x1000, 1, u32::MAX).unwrap();
    sdma::const_fill(&mut dw, data_va, 0x1111_1111, 4096).unwrap();
    // Job 2 (ring 0, after job 1): copy the filled page to data+0x2000.
    let second = dw.len();
    sdma::copy_linear(&mut dw, data_va + 0x2000, data_va, 4096);
    let third = dw.len();
    // SAFETY: the IB BO is CPU-mapped read-write; nothing runs it yet.
    unsafe { std::ptr::copy_nonoverlapping(dw.as_ptr(), ib_cpu as *mut u32, dw.len()) };
    let mut sc = drm_syncobj_create { handle: 0, flags: DRM_SYNCOBJ_CREATE_SIGNALED };
    kio(r, DRM_IOCTL_SYNCOBJ_CREATE, &mut sc).unwrap();
    let out = drm_amdgpu_cs_chunk_sem { handle: sc.handle };
    let uf = drm_amdgpu_cs_chunk_fence { handle: uf_h, offset: 64 };
    let s1 = cs_submit(
        r,
        ctx,
        list,
        0,
        ib_va,
        second as u32 * 4,
        &[(AMDGPU_CHUNK_ID_SYNCOBJ_OUT, sys::as_bytes(std::slice::from_ref(&out)))],
    )
    .unwrap();
    let s2 = cs_submit(
        r,
        ctx,
        list,
        0,
        ib_va + second as u64 * 4,
        (third - second) as u32 * 4,
        &[(AMDGPU_CHUNK_ID_FENCE, sys::as_bytes(std::slice::from_ref(&uf)))],
    )
    .unwrap();
    assert_eq!((s1, s2), (1, 2));
    // Held: both busy, nothing written, the syncobj unsignaled (replaced at submission).
    assert_eq!(wait_cs(r, ctx, 0, s2, Duration::from_millis(50)), Ok(true));
    assert_eq!(wait_cs(r, ctx, 0, s1, Duration::ZERO), Ok(true));
    let word = |off: u64| unsafe { *((data_cpu + off) as *const u32) };
    assert_eq!((word(0), word(0x2000)), (0, 0));
    let hs = [sc.handle];
    let mut sw = drm_syncobj_wait {
        handles: hs.as_ptr() as u64,
        timeout_nsec: 0,
        count_handles: 1,
        flags: DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
        ..Default::default()
    };
    assert_eq!(kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut sw), Err(Errno::ETIME));
    // SAFETY: the data BO is CPU-mapped read-write.
    unsafe { *((data_cpu + 0x1000) as *mut u32) = 1 };
    assert_eq!(wait_cs(r, ctx, 0, s2, Duration::from_secs(5)), Ok(false));
    assert_eq!(wait_cs(r, ctx, 0, s1, Duration::ZERO), Ok(false));
    assert_eq!(
        (word(0), word(0xffc), word(0x2000), word(0x2ffc)),
        (0x1111_1111, 0x1111_1111, 0x1111_1111, 0x1111_1111)
    );
    // SAFETY: the user fence BO is CPU-mapped.
    assert_eq!(unsafe { *((uf_cpu + 64) as *const u64) }, s2);
    sw.timeout_nsec = i64::MAX;
    kio(r, DRM_IOCTL_SYNCOBJ_WAIT, &mut sw).unwrap();
    // A sequence number not yet given, an unknown context, a ring the GPU lacks → EINVAL.
    assert_eq!(wait_cs(r, ctx, 0, 3, Duration::ZERO), Err(Errno::EINVAL));
    assert_eq!(wait_cs(r, ctx + 100, 0, 1, Duration::ZERO), Err(Errno::EINVAL));
    assert_eq!(wait_cs(r, ctx, 64, 1, Duration::ZERO), Err(Errno::EINVAL));
    // CS errors: unknown context or list, a COMPUTE IB (not modelled), no chunk.
    assert_eq!(cs_submit(r, ctx + 100, 0, 0, ib_va, 4, &[]), Err(Errno::EINVAL));
    assert_eq!(cs_submit(r, ctx, 77, 0, ib_va, 4, &[]), Err(Errno::ENOENT));
    assert_eq!(cs_submit(r, ctx, 0, 99, ib_va, 4, &[]), Err(Errno::EINVAL));
    let mut none = drm_amdgpu_cs_in { ctx_id: ctx, ..Default::default() };
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_CS, &mut none), Err(Errno::EINVAL));
    // Ring 1 numbers its own jobs from 1.
    assert_eq!(cs_submit(r, ctx, 0, 1, ib_va + second as u64 * 4, (third - second) as u32 * 4, &[]), Ok(1));
    assert_eq!(wait_cs(r, ctx, 1, 1, Duration::from_secs(5)), Ok(false));
    let mut l = drm_amdgpu_bo_list_in { operation: AMDGPU_BO_LIST_OP_DESTROY, list_handle: list, ..Default::default() };
    kio(r, DRM_IOCTL_AMDGPU_BO_LIST, &mut l).unwrap();
    let mut f = [AMDGPU_CTX_OP_FREE_CTX, 0, ctx, 0];
    kio(r, DRM_IOCTL_AMDGPU_CTX, &mut f).unwrap();
    assert_eq!(kio(r, DRM_IOCTL_AMDGPU_CTX, &mut f), Err(Errno::EINVAL));
    for h in [ib_h, data_h, uf_h] {
        let mut gc = drm_gem_close { handle: h, pad: 0 };
        kio(r, DRM_IOCTL_GEM_CLOSE, &mut gc).unwrap();
    }
}

/// SET_TRAP_HANDLER of the second-level handler `tba` and its `tma` on `gpu_id` (0, 0: none).
fn set_trap_handler(gpu_id: u32, tba: u64, tma: u64) {
    let mut th = kfd_ioctl_set_trap_handler_args { tba_addr: tba, tma_addr: tma, gpu_id, pad: 0 };
    kio(env().kfd.as_raw_fd(), AMDKFD_IOC_SET_TRAP_HANDLER, &mut th).unwrap();
}

/// kfdtest `KFDDBGTest.HitTrapEvent` on the model: a process debugging itself gets
/// `EC_QUEUE_NEW` on its PM4 queue without a byte on its file (not subscribed), then, once it
/// subscribes to `EC_QUEUE_WAVE_TRAP`, the byte and the event of a wave whose `s_trap 1` ran
/// the second-level handler (which sends `MSG_INTERRUPT` with its doorbell and trap code 2);
/// QUERY_DEBUG_EVENT reports the queue's whole status and clears what it was told to; the wave
/// goes on past the `s_trap`; a second enable is EALREADY, ops after DISABLE are EINVAL, and the
/// hardware ops want the runtime enabled (EPERM).
#[test]
fn dbg_trap_self_debug_reports_a_wave_trap_of_its_pm4_queue() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let me = std::process::id();
    let kfd = e.kfd.as_raw_fd();
    let bufs: Vec<Buf> = (0..4).map(|_| alloc(0, 4096, GTT)).collect();
    for b in &bufs {
        map(b, &e.gpus[..1]).unwrap();
    }
    let (code, handler, tma, done) = (&bufs[0], &bufs[1], &bufs[2], &bufs[3]);
    // s_trap 1; s_endpgm
    put_dwords(code, &[0xbf92_0001, 0xbf81_0000]);
    // ttmp2 = exec_lo; exec_lo = 1 << 31; s_sendmsg MSG_GET_DOORBELL; ttmp3 = exec_lo & 0x3ff;
    // exec_lo = ttmp2; m0 = ttmp3 | 0x800; s_sendmsg MSG_INTERRUPT; ttmp[0:1] += 4 (48 bits);
    // s_rfe_b64 ttmp[0:1] (llvm-mc -mcpu=gfx90a -show-encoding).
    put_dwords(
        handler,
        &[
            0xbeee_007e,
            0xbefe_00ff,
            0x8000_0000,
            0xbf90_000a,
            0x866f_ff7e,
            0x3ff,
            0xbefe_006e,
            0x876f_ff6f,
            0x800,
            0xbefc_006f,
            0xbf90_0001,
            0x806c_846c,
            0x826d_806d,
            0x866d_ff6d,
            0xffff,
            0xbe80_1f6c,
        ],
    );
    set_trap_handler(e.gpus[0], handler.va, tma.va);
    let mut rt = kfd_ioctl_runtime_enable_args::default();
    kio(kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut rt).unwrap();
    // Not debugged yet: ops other than ENABLE are EINVAL.
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |_| {}).0, Err(Errno::EINVAL));
    let mut fds = [0; 2];
    // SAFETY: a fresh pipe.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) }, 0);
    // SAFETY: both ends are ours.
    let (rd, _wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut info = kfd_runtime_info { r_debug: 7, runtime_state: 9, ttmp_setup: 9 };
    let enable = |a: &mut kfd_ioctl_dbg_trap_args| {
        a.set_u64(8, &mut info as *mut kfd_runtime_info as u64);
        a.set_u32(16, 16);
        a.set_u32(20, rd.as_raw_fd() as u32);
    };
    // Runtime disabled: enabling works, the hardware ops are EPERM.
    let (r, a) = dbg_trap(me, KFD_IOC_DBG_TRAP_ENABLE, enable);
    assert_eq!((r, a.u32_at(16)), (Ok(()), 16));
    assert_eq!((info.r_debug, info.runtime_state, info.ttmp_setup), (0, DEBUG_RUNTIME_STATE_DISABLED, 0));
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_SET_FLAGS, |_| {}).0, Err(Errno::EPERM));
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_ENABLE, |_| {}).0, Err(Errno::EALREADY));
    // RUNTIME_ENABLE under the debugger raises EC_PROCESS_RUNTIME and waits for the answer;
    // the debugger is this process too, so answer from another thread.
    assert_eq!(
        dbg_trap(me, KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED, |a| a.set_u64(0, kfd_ec_mask(EC_PROCESS_RUNTIME))).0,
        Ok(())
    );
    let rdfd = rd.as_raw_fd();
    let answer = std::thread::spawn(move || {
        assert!(readable(rdfd, 5000), "no byte for EC_PROCESS_RUNTIME");
        drain(rdfd);
        let (r, q) =
            dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |a| a.set_u64(0, kfd_ec_mask(EC_PROCESS_RUNTIME)));
        assert_eq!((r, q.u64_at(0)), (Ok(()), kfd_ec_mask(EC_PROCESS_RUNTIME)));
        std::thread::sleep(Duration::from_millis(50));
        dbg_trap(me, KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT, |a| a.set_u64(0, kfd_ec_mask(EC_PROCESS_RUNTIME))).0.unwrap();
    });
    let t0 = std::time::Instant::now();
    rt = kfd_ioctl_runtime_enable_args { r_debug: 0x1234, mode_mask: 3, capabilities_mask: 0 };
    kio(kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut rt).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(50), "RUNTIME_ENABLE returned before the debugger's answer");
    answer.join().unwrap();
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED, |a| a.set_u64(0, 0)).0, Ok(()));
    let mut q = create_pm4(0);
    assert!(!readable(rdfd, 0), "a byte for an exception nobody subscribed to");
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |_| {}).0, Err(Errno::EAGAIN));
    let trap = kfd_ec_mask(EC_QUEUE_WAVE_TRAP);
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED, |a| a.set_u64(0, trap)).0, Ok(()));
    assert!(!readable(rdfd, 0), "EC_QUEUE_NEW is pending but not subscribed");
    // GC 9.4.2 cannot trap on wave start: EACCES, the supported mask comes back.
    let (r, o) = dbg_trap(me, KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, |a| {
        a.set_u32(4, KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START);
        a.set_u32(8, KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START);
    });
    assert_eq!((r, o.u32_at(8) & KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START, o.u32_at(8)), (Err(Errno::EACCES), 0, 0x1ff));
    let mut dw = pm4_dispatch(code.va, 1 << 7, &[], 1);
    dw.extend(pm4_write_data(done.va, &[1]));
    q.submit(&dw);
    assert!(readable(rdfd, 10_000), "no byte for the wave's trap");
    let (r, ev) = dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |a| a.set_u64(0, trap));
    assert_eq!(r, Ok(()));
    assert_eq!(ev.u64_at(0), trap | kfd_ec_mask(EC_QUEUE_NEW), "the queue's whole status");
    assert_eq!((ev.u32_at(8), ev.u32_at(12)), (e.gpus[0], q.queue_id));
    assert_eq!(
        dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |a| a.set_u64(0, trap)).0,
        Err(Errno::EAGAIN),
        "cleared"
    );
    wait_until("the wave past its trap", || dword(done.va) == 1);
    // Snapshots (pqm_get_queue_snapshot, kfd_dbg_trap_device_snapshot): the count with no room,
    // then the entries; an entry size of 0 is EINVAL.
    let (r, n) = dbg_trap(me, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, |a| a.set_u32(20, 64));
    assert_eq!((r, n.u32_at(16), n.u32_at(20)), (Ok(()), 1, 64));
    let mut qs = [kfd_queue_snapshot_entry::default(); 2];
    let (r, _) = dbg_trap(me, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, |a| {
        a.set_u64(8, qs.as_mut_ptr() as u64);
        a.set_u32(16, 2);
        a.set_u32(20, 64);
    });
    assert_eq!(r, Ok(()));
    assert_eq!(
        (qs[0].queue_id, qs[0].gpu_id, qs[0].ring_base_address, qs[0].ring_size, qs[0].queue_type),
        (q.queue_id, e.gpus[0], q.ring.va, PM4_RING as u32, KFD_IOC_QUEUE_TYPE_COMPUTE)
    );
    assert_eq!(qs[0].exception_status, kfd_ec_mask(EC_QUEUE_NEW));
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT, |_| {}).0, Err(Errno::EINVAL));
    let mut ds = vec![kfd_dbg_device_info_entry::default(); e.gpus.len()];
    let (r, n) = dbg_trap(me, KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT, |a| {
        a.set_u64(8, ds.as_mut_ptr() as u64);
        a.set_u32(16, ds.len() as u32);
        a.set_u32(20, 120);
    });
    assert_eq!((r, n.u32_at(16)), (Ok(()), e.gpus.len() as u32));
    assert_eq!(ds.iter().map(|d| d.gpu_id).collect::<Vec<_>>(), e.gpus);
    assert!(ds.iter().all(|d| d.exception_status == 0 && d.capability & 0x2000_0000 != 0));
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_DISABLE, |_| {}).0, Ok(()));
    assert_eq!(dbg_trap(me, KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT, |_| {}).0, Err(Errno::EINVAL));
    q.destroy();
    rt = kfd_ioctl_runtime_enable_args::default();
    kio(kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut rt).unwrap();
    set_trap_handler(e.gpus[0], 0, 0);
    for b in bufs {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// PC sampling's host traps (`kfd_pc_sample_handler` → `trigger_pc_sample_trap`) reach the
/// process's second-level trap handler while its session is started, and only then: none
/// before START, none after STOP. Each one enters with `ttmp1` = PC[47:32] | trap id 4 << 16 |
/// HT, `ttmp0` a PC inside the running loop, the SPI's workgroup id in `ttmp8`, and HW_ID naming
/// wave slot 0 of SIMD 0 (the slot the trigger's round robin visits for these waves), on both
/// workgroups (the trigger goes to every CU). STOP waits for a wave the test holds in the
/// handler.
#[test]
fn pc_sampling_host_traps_reach_the_trap_handler_only_while_started() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    if !perfmon_capable() {
        // tests/sim_kfd.rs checks the EACCES.
        eprintln!("skipped: no CAP_PERFMON or CAP_SYS_ADMIN");
        return;
    }
    let kfd = e.kfd.as_raw_fd();
    let (code, handler, flag, done) =
        (alloc(0, 4096, GTT), alloc(0, 4096, GTT), alloc(0, 4096, GTT), alloc(0, 4096, GTT));
    let tma = alloc(0, 1 << 16, GTT);
    for b in [&code, &handler, &flag, &done, &tma] {
        map(b, &e.gpus[..1]).unwrap();
    }
    // LOOP: s_load_dword s2, s[0:1], 0 glc; s_waitcnt lgkmcnt(0); s_cmp_eq_u32 s2, 0;
    // s_cbranch_scc1 LOOP; s_endpgm (llvm-mc -mcpu=gfx90a -show-encoding).
    put_dwords(&code, &[0xc003_0080, 0, 0xbf8c_c07f, 0xbf06_8002, 0xbf85_fffb, 0xbf81_0000]);
    // ttmp2 = atomic_add(tma[0], 1); record at tma + 16 + 16 * ttmp2: ttmp0, ttmp1, HW_ID,
    // ttmp8; s_dcache_wb; spin while tma[1] == 1 (the test's hold); ttmp1 &= 0xffff;
    // STATUS = ttmp12; s_rfe_b64 ttmp[0:1].
    put_dwords(
        &handler,
        &[
            0xbeee_0081,
            0xc20b_1bbd,
            0,
            0xbf8c_c07f,
            0x8e6e_846e,
            0x8070_6e7a,
            0x8271_807b,
            0xb8ef_f804,
            0xc043_1b38,
            0x10,
            0xc043_1b78,
            0x14,
            0xc043_1bf8,
            0x18,
            0xc043_1d38,
            0x1c,
            0xc084_0000,
            0,
            0xbf8c_c07f,
            0xc003_1bbd,
            0x4,
            0xbf8c_c07f,
            0xbf06_816e,
            0xbf85_fffb,
            0x866d_ff6d,
            0xffff,
            0xb978_f802,
            0xbe80_1f6c,
        ],
    );
    set_trap_handler(e.gpus[0], handler.va, tma.va);
    let mut q = create_pm4(0);
    let user_data = pm4_set_sh_reg(super::pm4::reg::COMPUTE_USER_DATA_0, &[flag.va as u32, (flag.va >> 32) as u32]);
    // Two workgroups of one wave; 2 user SGPRs.
    let mut dw = pm4_dispatch(code.va, 2 << 1, &user_data, 2);
    dw.extend(pm4_write_data(done.va, &[1]));
    q.submit(&dw);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(dword(tma.va), 0, "a host trap before any session");
    // Every 100 µs: the round robin (8 slots × 4 SIMDs) comes back to these waves' slot every 3.2 ms.
    let mut info = kfd_pc_sample_info {
        interval: 100,
        interval_min: 1,
        interval_max: u64::MAX,
        method: KFD_IOCTL_PCS_METHOD_HOSTTRAP,
        ..Default::default()
    };
    let (r, a) = pc_sample(kfd, KFD_IOCTL_PCS_OP_CREATE, e.gpus[0], 0, Some(&mut info));
    assert_eq!(r, Ok(()));
    let id = a.trace_id;
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(dword(tma.va), 0, "a host trap before START");
    assert_eq!(pc_sample(kfd, KFD_IOCTL_PCS_OP_START, e.gpus[0], id, None).0, Ok(()));
    wait_until("8 samples", || dword(tma.va) >= 8);
    // Hold the next wave that takes a host trap in the handler: STOP returns only after it
    // left (`remap_queue`), so that the tool may free the buffer the handler writes.
    let hold = |v: u32| {
        // SAFETY: the TMA buffer is CPU-mapped; its second dword is the handler's hold word.
        unsafe { std::ptr::write_volatile((tma.va + 4) as *mut u32, v) }
    };
    hold(1);
    let held = dword(tma.va) + 1;
    wait_until("a wave in the handler", || dword(tma.va) >= held);
    let stop = std::thread::spawn(move || pc_sample(kfd, KFD_IOCTL_PCS_OP_STOP, e.gpus[0], id, None).0);
    std::thread::sleep(Duration::from_millis(50));
    assert!(!stop.is_finished(), "STOP returned while a wave was in the handler");
    hold(0);
    assert_eq!(stop.join().unwrap(), Ok(()));
    let n = dword(tma.va);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(dword(tma.va), n, "host traps after STOP");
    let ttmp1 = ((code.va >> 32) as u32 & 0xffff) | 4 << 16 | 1 << 24;
    let mut wgs = std::collections::BTreeSet::new();
    for k in 0..n as u64 {
        let r = tma.va + 16 + 16 * k;
        let (pc, t1, hw_id, wg) = (dword(r), dword(r + 4), dword(r + 8), dword(r + 12));
        assert_eq!(t1, ttmp1, "sample {k}: ttmp1");
        assert!((code.va as u32..code.va as u32 + 20).contains(&pc), "sample {k}: pc {pc:#x} outside the loop");
        assert_eq!(hw_id & 0x3f, 0, "sample {k}: wave slot and SIMD");
        wgs.insert(wg);
    }
    assert_eq!(wgs.into_iter().collect::<Vec<_>>(), vec![0, 1], "workgroups sampled");
    put_dwords(&flag, &[1]);
    wait_until("the kernel's end", || dword(done.va) == 1);
    assert_eq!(pc_sample(kfd, KFD_IOCTL_PCS_OP_DESTROY, e.gpus[0], id, None).0, Ok(()));
    q.destroy();
    set_trap_handler(e.gpus[0], 0, 0);
    for b in [code, handler, flag, done, tma] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}

/// A wave of an AQL dispatch starts with the dispatch id (the packet's index in the queue) in
/// `ttmp6-7` where the process has a trap handler ("save the dispatch ID in trap temporaries
/// 6 & 7"): the fourth packet's kernel traps, and its handler stores ttmp6 and ttmp7.
#[test]
fn aql_dispatch_id_reaches_the_trap_handler_in_ttmp6_7() {
    let _g = SERIAL.lock().unwrap();
    let e = env();
    let (kd, handler, tma) = (alloc(0, 4096, GTT), alloc(0, 4096, GTT), alloc(0, 4096, GTT));
    for b in [&kd, &handler, &tma] {
        map(b, &e.gpus[..1]).unwrap();
    }
    // Kernel descriptor: code at +256 (kernel_code_entry_byte_offset); s_trap 1; s_endpgm.
    let mut img = [0u32; 66];
    img[4] = 256;
    img[64] = 0xbf92_0001;
    img[65] = 0xbf81_0000;
    put_dwords(&kd, &img);
    // tma[0] = ttmp6; tma[1] = ttmp7; ttmp[0:1] += 4 (past the s_trap); s_rfe_b64.
    put_dwords(
        &handler,
        &[0xc043_1cbd, 0, 0xc043_1cfd, 4, 0xbf8c_c07f, 0x806c_846c, 0x826d_806d, 0x866d_ff6d, 0xffff, 0xbe80_1f6c],
    );
    put_dwords(&tma, &[u32::MAX, u32::MAX]);
    set_trap_handler(e.gpus[0], handler.va, tma.va);
    let sig = signal_page(0);
    signal_init(sig.va, 1, 0, 0);
    let mut q = create_aql(0);
    for _ in 0..3 {
        q.submit(3, &barrier_body(&[], 0));
    }
    q.submit(2, &dispatch_body(kd.va, sig.va));
    wait_completed(&q, sig.va, 4);
    assert_eq!((dword(tma.va), dword(tma.va + 4)), (3, 0), "ttmp6, ttmp7 of dispatch 3");
    q.destroy();
    signal_page_free(sig, 0);
    set_trap_handler(e.gpus[0], 0, 0);
    for b in [kd, handler, tma] {
        unmap(&b, &e.gpus[..1]).unwrap();
        free(&b).unwrap();
    }
}
