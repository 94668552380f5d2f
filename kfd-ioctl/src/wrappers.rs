//! Thin safe wrappers: one type per kind of file descriptor, one method per ioctl.
//!
//! [`Kfd`] is the `/dev/kfd` fd; [`RenderNode`] is an amdgpu render node (`/dev/dri/renderD*`),
//! the DRM file a GPU's VM is acquired on. Each method names the ioctl it makes; a failing call
//! returns the kernel's errno unchanged (`EINTR` and `EAGAIN` are retried: [`ioctl`]).

use crate::amdgpu::*;
use crate::drm::*;
use crate::kfd::*;
use nix::errno::Errno;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Issues `ioctl(fd, req, arg)`, restarting it while it fails with `EINTR` or `EAGAIN`: the one
/// place every KFD and render-node ioctl of the runtime goes through.
///
/// This is the kernel contract libhsakmt (`kmtIoctl`, `libhsakmt.c`) and libdrm (`drmIoctl`)
/// follow: an ioctl interrupted by a signal (`-ERESTARTSYS` in the kernel, `EINTR` here when the
/// handler has no `SA_RESTART`) or told to try again (`EAGAIN`, e.g. an eviction in progress)
/// has done nothing and is issued again with the same arguments. Every other errno is returned
/// unchanged. (The syncobj waits take an absolute deadline, so a restart keeps it; WAIT_EVENTS
/// takes a relative one, which a restart starts again, as with libhsakmt.)
///
/// # Safety
/// `req` must be a request whose argument is a `T` (the kernel reads and writes
/// `_IOC_SIZE(req)` bytes at `arg`), and any user pointers inside `*arg` must be valid for it.
pub unsafe fn ioctl<T>(fd: RawFd, req: Ioctl, arg: &mut T) -> Result<libc::c_int, Errno> {
    loop {
        // SAFETY: the caller guarantees that `arg` matches `req`; `arg` is a live `&mut T`.
        let r = unsafe { libc::ioctl(fd, req as _, arg as *mut T) };
        match Errno::result(r) {
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            other => return other,
        }
    }
}

fn open_dev(path: &str) -> Result<OwnedFd, Errno> {
    let c = CString::new(path).map_err(|_| Errno::EINVAL)?;
    // SAFETY: `c` is a NUL-terminated path; open(2) takes no other pointers.
    let fd = Errno::result(unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) })?;
    // SAFETY: `fd` was just returned by open(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `/dev/kfd` file: the process's handle on the KFD (one per process; a child after fork must
/// open its own, the kernel answers `EBADF` to the parent's).
#[derive(Debug)]
pub struct Kfd {
    fd: OwnedFd,
}

impl Kfd {
    /// Opens `/dev/kfd` read-write, close-on-exec.
    pub fn open() -> Result<Self, Errno> {
        Ok(Self { fd: open_dev("/dev/kfd")? })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn call<T>(&self, req: Ioctl, arg: &mut T) -> Result<(), Errno> {
        // SAFETY: every caller below pairs `req` with its uapi argument struct `T`, and any user
        // pointers it carries point into live buffers borrowed for the call.
        unsafe { ioctl(self.fd(), req, arg) }.map(drop)
    }

    /// `AMDKFD_IOC_GET_VERSION` → (major, minor).
    pub fn get_version(&self) -> Result<(u32, u32), Errno> {
        let mut a = kfd_ioctl_get_version_args::default();
        self.call(AMDKFD_IOC_GET_VERSION, &mut a)?;
        Ok((a.major_version, a.minor_version))
    }

    /// `AMDKFD_IOC_SET_XNACK_MODE`: sets XNACK (GPU retry faults, so pageable memory access)
    /// on (1) or off (0) for every GPU of the process, or queries it (-1); returns the mode.
    /// Errors (`kfd_ioctl_set_xnack_mode`): EBUSY (the process has queues), EPERM (a GPU
    /// without per-process XNACK, or a kernel without SVM).
    pub fn set_xnack_mode(&self, mode: i32) -> Result<bool, Errno> {
        let mut a = kfd_ioctl_set_xnack_mode_args { xnack_enabled: mode };
        self.call(AMDKFD_IOC_SET_XNACK_MODE, &mut a)?;
        Ok(a.xnack_enabled != 0)
    }

    /// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`: the apertures of every GPU of this process.
    pub fn get_process_apertures(&self) -> Result<Vec<kfd_process_device_apertures>, Errno> {
        let mut a = kfd_ioctl_get_process_apertures_new_args::default();
        self.call(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a)?;
        let mut v = vec![kfd_process_device_apertures::default(); a.num_of_nodes as usize];
        a.kfd_process_device_apertures_ptr = v.as_mut_ptr() as u64;
        self.call(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a)?;
        v.truncate(a.num_of_nodes as usize);
        Ok(v)
    }

    /// `AMDKFD_IOC_ACQUIRE_VM`: makes the VM of `drm` the compute VM of `gpu_id`.
    pub fn acquire_vm(&self, drm: &RenderNode, gpu_id: u32) -> Result<(), Errno> {
        let mut a = kfd_ioctl_acquire_vm_args { drm_fd: drm.fd() as u32, gpu_id };
        self.call(AMDKFD_IOC_ACQUIRE_VM, &mut a)
    }

    /// `AMDKFD_IOC_RUNTIME_ENABLE` (KFD ≥ 1.14).
    pub fn runtime_enable(&self, r_debug: u64, mode_mask: u32) -> Result<u32, Errno> {
        let mut a = kfd_ioctl_runtime_enable_args { r_debug, mode_mask, capabilities_mask: 0 };
        self.call(AMDKFD_IOC_RUNTIME_ENABLE, &mut a)?;
        Ok(a.capabilities_mask)
    }

    /// `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`: fills `args.handle` and `args.mmap_offset`.
    pub fn alloc_memory_of_gpu(&self, args: &mut kfd_ioctl_alloc_memory_of_gpu_args) -> Result<(), Errno> {
        self.call(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args)
    }

    /// `AMDKFD_IOC_FREE_MEMORY_OF_GPU` (`EBUSY` while the BO is GPU-mapped).
    pub fn free_memory_of_gpu(&self, handle: u64) -> Result<(), Errno> {
        let mut a = kfd_ioctl_free_memory_of_gpu_args { handle };
        self.call(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &mut a)
    }

    /// `AMDKFD_IOC_MAP_MEMORY_TO_GPU` on every GPU of `gpu_ids`, restarting after the ones
    /// already mapped. On failure returns the errno and how many devices were mapped.
    pub fn map_memory_to_gpu(&self, handle: u64, gpu_ids: &[u32]) -> Result<(), (Errno, u32)> {
        let mut ids = gpu_ids.to_vec();
        let mut a = kfd_ioctl_map_memory_to_gpu_args {
            handle,
            device_ids_array_ptr: ids.as_mut_ptr() as u64,
            n_devices: ids.len() as u32,
            n_success: 0,
        };
        self.call(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a).map_err(|e| (e, a.n_success))
    }

    /// `AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU` on every GPU of `gpu_ids`.
    pub fn unmap_memory_from_gpu(&self, handle: u64, gpu_ids: &[u32]) -> Result<(), (Errno, u32)> {
        let mut ids = gpu_ids.to_vec();
        let mut a = kfd_ioctl_unmap_memory_from_gpu_args {
            handle,
            device_ids_array_ptr: ids.as_mut_ptr() as u64,
            n_devices: ids.len() as u32,
            n_success: 0,
        };
        self.call(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut a).map_err(|e| (e, a.n_success))
    }

    /// `AMDKFD_IOC_EXPORT_DMABUF`: a dma-buf fd for the BO (`O_CLOEXEC` set).
    pub fn export_dmabuf(&self, handle: u64) -> Result<OwnedFd, Errno> {
        let mut a = kfd_ioctl_export_dmabuf_args { handle, flags: libc::O_CLOEXEC as u32, dmabuf_fd: 0 };
        self.call(AMDKFD_IOC_EXPORT_DMABUF, &mut a)?;
        // SAFETY: the kernel installed a new fd for us in `dmabuf_fd`.
        Ok(unsafe { OwnedFd::from_raw_fd(a.dmabuf_fd as RawFd) })
    }

    /// `AMDKFD_IOC_GET_DMABUF_INFO` (no metadata): (size in bytes, gpu_id, alloc flags).
    pub fn get_dmabuf_info(&self, dmabuf_fd: RawFd) -> Result<(u64, u32, u32), Errno> {
        let mut a = kfd_ioctl_get_dmabuf_info_args { dmabuf_fd: dmabuf_fd as u32, ..Default::default() };
        self.call(AMDKFD_IOC_GET_DMABUF_INFO, &mut a)?;
        Ok((a.size, a.gpu_id, a.flags))
    }

    /// `AMDKFD_IOC_IMPORT_DMABUF` at `va_addr` on `gpu_id` → BO handle (not GPU-mapped yet).
    pub fn import_dmabuf(&self, dmabuf_fd: RawFd, gpu_id: u32, va_addr: u64) -> Result<u64, Errno> {
        let mut a = kfd_ioctl_import_dmabuf_args { va_addr, handle: 0, gpu_id, dmabuf_fd: dmabuf_fd as u32 };
        self.call(AMDKFD_IOC_IMPORT_DMABUF, &mut a)?;
        Ok(a.handle)
    }

    /// `AMDKFD_IOC_AVAILABLE_MEMORY`, bytes.
    pub fn available_memory(&self, gpu_id: u32) -> Result<u64, Errno> {
        let mut a = kfd_ioctl_get_available_memory_args { gpu_id, ..Default::default() };
        self.call(AMDKFD_IOC_AVAILABLE_MEMORY, &mut a)?;
        Ok(a.available)
    }

    /// `AMDKFD_IOC_GET_CLOCK_COUNTERS`.
    pub fn get_clock_counters(&self, gpu_id: u32) -> Result<kfd_ioctl_get_clock_counters_args, Errno> {
        let mut a = kfd_ioctl_get_clock_counters_args { gpu_id, ..Default::default() };
        self.call(AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut a)?;
        Ok(a)
    }

    /// `AMDKFD_IOC_CREATE_QUEUE`: fills `queue_id` and `doorbell_offset`.
    pub fn create_queue(&self, args: &mut kfd_ioctl_create_queue_args) -> Result<(), Errno> {
        self.call(AMDKFD_IOC_CREATE_QUEUE, args)
    }

    /// `AMDKFD_IOC_DESTROY_QUEUE`.
    pub fn destroy_queue(&self, queue_id: u32) -> Result<(), Errno> {
        let mut a = kfd_ioctl_destroy_queue_args { queue_id, pad: 0 };
        self.call(AMDKFD_IOC_DESTROY_QUEUE, &mut a)
    }

    /// `AMDKFD_IOC_CREATE_EVENT`: fills `event_id`, `event_slot_index`, `event_page_offset`...
    pub fn create_event(&self, args: &mut kfd_ioctl_create_event_args) -> Result<(), Errno> {
        self.call(AMDKFD_IOC_CREATE_EVENT, args)
    }

    /// `AMDKFD_IOC_DESTROY_EVENT`.
    pub fn destroy_event(&self, event_id: u32) -> Result<(), Errno> {
        let mut a = kfd_ioctl_destroy_event_args { event_id, pad: 0 };
        self.call(AMDKFD_IOC_DESTROY_EVENT, &mut a)
    }

    /// `AMDKFD_IOC_SET_EVENT`.
    pub fn set_event(&self, event_id: u32) -> Result<(), Errno> {
        let mut a = kfd_ioctl_set_event_args { event_id, pad: 0 };
        self.call(AMDKFD_IOC_SET_EVENT, &mut a)
    }

    /// `AMDKFD_IOC_RESET_EVENT`.
    pub fn reset_event(&self, event_id: u32) -> Result<(), Errno> {
        let mut a = kfd_ioctl_reset_event_args { event_id, pad: 0 };
        self.call(AMDKFD_IOC_RESET_EVENT, &mut a)
    }

    /// `AMDKFD_IOC_WAIT_EVENTS` on `events` (exception data is written back into them);
    /// `timeout_ms` 0 tests, [`KFD_EVENT_TIMEOUT_INFINITE`] never expires → `KFD_IOC_WAIT_RESULT_*`.
    pub fn wait_events(
        &self,
        events: &mut [kfd_event_data],
        wait_for_all: bool,
        timeout_ms: u32,
    ) -> Result<u32, Errno> {
        let mut a = kfd_ioctl_wait_events_args {
            events_ptr: events.as_mut_ptr() as u64,
            num_events: events.len() as u32,
            wait_for_all: wait_for_all as u32,
            timeout: timeout_ms,
            wait_result: 0,
        };
        self.call(AMDKFD_IOC_WAIT_EVENTS, &mut a)?;
        Ok(a.wait_result)
    }
}

/// An amdgpu render node, `/dev/dri/renderD<minor>`.
#[derive(Debug)]
pub struct RenderNode {
    fd: OwnedFd,
    minor: u32,
}

impl RenderNode {
    /// Opens `/dev/dri/renderD<minor>` read-write, close-on-exec.
    pub fn open(minor: u32) -> Result<Self, Errno> {
        Ok(Self { fd: open_dev(&format!("/dev/dri/renderD{minor}"))?, minor })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn minor(&self) -> u32 {
        self.minor
    }

    fn call<T>(&self, req: Ioctl, arg: &mut T) -> Result<(), Errno> {
        // SAFETY: every caller below pairs `req` with its uapi argument struct `T`.
        unsafe { ioctl(self.fd(), req, arg) }.map(drop)
    }

    /// `DRM_IOCTL_PRIME_FD_TO_HANDLE` → GEM handle.
    pub fn prime_fd_to_handle(&self, dmabuf_fd: RawFd) -> Result<u32, Errno> {
        let mut a = drm_prime_handle { handle: 0, flags: 0, fd: dmabuf_fd };
        self.call(DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut a)?;
        Ok(a.handle)
    }

    /// `DRM_IOCTL_PRIME_HANDLE_TO_FD` → dma-buf fd (`O_CLOEXEC|O_RDWR`).
    pub fn prime_handle_to_fd(&self, handle: u32) -> Result<OwnedFd, Errno> {
        let mut a = drm_prime_handle { handle, flags: DRM_CLOEXEC | DRM_RDWR, fd: -1 };
        self.call(DRM_IOCTL_PRIME_HANDLE_TO_FD, &mut a)?;
        // SAFETY: the kernel installed a new fd for us.
        Ok(unsafe { OwnedFd::from_raw_fd(a.fd) })
    }

    /// `DRM_IOCTL_GEM_CLOSE`.
    pub fn gem_close(&self, handle: u32) -> Result<(), Errno> {
        let mut a = drm_gem_close { handle, pad: 0 };
        self.call(DRM_IOCTL_GEM_CLOSE, &mut a)
    }

    /// `DRM_IOCTL_AMDGPU_GEM_CREATE` → GEM handle.
    pub fn gem_create(&self, bo_size: u64, alignment: u64, domains: u64, domain_flags: u64) -> Result<u32, Errno> {
        let mut a = drm_amdgpu_gem_create::new(drm_amdgpu_gem_create_in { bo_size, alignment, domains, domain_flags });
        self.call(DRM_IOCTL_AMDGPU_GEM_CREATE, &mut a)?;
        Ok(a.output().handle)
    }

    /// `DRM_IOCTL_AMDGPU_GEM_MMAP` → the offset to `mmap` this render node at.
    pub fn gem_mmap_offset(&self, handle: u32) -> Result<u64, Errno> {
        let mut a = drm_amdgpu_gem_mmap::new(handle);
        self.call(DRM_IOCTL_AMDGPU_GEM_MMAP, &mut a)?;
        Ok(a.output().addr_ptr)
    }

    /// `DRM_IOCTL_AMDGPU_GEM_VA`: `operation` is `AMDGPU_VA_OP_*`, `flags` `AMDGPU_VM_PAGE_*`.
    pub fn gem_va(&self, args: &mut drm_amdgpu_gem_va) -> Result<(), Errno> {
        self.call(DRM_IOCTL_AMDGPU_GEM_VA, args)
    }

    /// `DRM_IOCTL_SYNCOBJ_CREATE` (`flags`: `DRM_SYNCOBJ_CREATE_SIGNALED` or 0) → syncobj handle.
    pub fn syncobj_create(&self, flags: u32) -> Result<u32, Errno> {
        let mut a = drm_syncobj_create { handle: 0, flags };
        self.call(DRM_IOCTL_SYNCOBJ_CREATE, &mut a)?;
        Ok(a.handle)
    }

    /// `DRM_IOCTL_SYNCOBJ_DESTROY`.
    pub fn syncobj_destroy(&self, handle: u32) -> Result<(), Errno> {
        let mut a = drm_syncobj_destroy { handle, pad: 0 };
        self.call(DRM_IOCTL_SYNCOBJ_DESTROY, &mut a)
    }

    /// `DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE`: imports a syncobj fd (the fd stays the caller's).
    /// Not a syncobj fd → `EINVAL`.
    pub fn syncobj_fd_to_handle(&self, fd: RawFd) -> Result<u32, Errno> {
        let mut a = drm_syncobj_handle { fd, ..Default::default() };
        self.call(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &mut a)?;
        Ok(a.handle)
    }

    /// `DRM_IOCTL_SYNCOBJ_SIGNAL` (binary: attaches a signaled fence) or `_RESET` (`reset`:
    /// drops the fence) on `handles`.
    pub fn syncobj_signal_or_reset(&self, handles: &[u32], reset: bool) -> Result<(), Errno> {
        let mut a = drm_syncobj_array { handles: handles.as_ptr() as u64, count_handles: handles.len() as u32, pad: 0 };
        self.call(if reset { DRM_IOCTL_SYNCOBJ_RESET } else { DRM_IOCTL_SYNCOBJ_SIGNAL }, &mut a)
    }

    /// `DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL`: `handles[i]` reaches `points[i]` (same length).
    pub fn syncobj_timeline_signal(&self, handles: &[u32], points: &[u64]) -> Result<(), Errno> {
        assert_eq!(handles.len(), points.len());
        let mut a = drm_syncobj_timeline_array {
            handles: handles.as_ptr() as u64,
            points: points.as_ptr() as u64,
            count_handles: handles.len() as u32,
            flags: 0,
        };
        self.call(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &mut a)
    }

    /// `DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT` on `handles[i]` at `points[i]` (0 = binary) until the
    /// absolute `CLOCK_MONOTONIC` time `timeout_abs_ns` (0: poll) → index of the first signaled
    /// one. `flags`: `DRM_SYNCOBJ_WAIT_FLAGS_*`. Not yet signaled at the deadline → `ETIME`.
    pub fn syncobj_timeline_wait(
        &self,
        handles: &[u32],
        points: &[u64],
        timeout_abs_ns: i64,
        flags: u32,
    ) -> Result<u32, Errno> {
        assert_eq!(handles.len(), points.len());
        let mut a = drm_syncobj_timeline_wait {
            handles: handles.as_ptr() as u64,
            points: points.as_ptr() as u64,
            timeout_nsec: timeout_abs_ns,
            count_handles: handles.len() as u32,
            flags,
            ..Default::default()
        };
        self.call(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &mut a)?;
        Ok(a.first_signaled)
    }

    /// `DRM_IOCTL_AMDGPU_INFO` for a query whose answer is a `T`.
    pub fn info<T: Default>(&self, query: u32, query_args: [u32; 4]) -> Result<T, Errno> {
        let mut out = T::default();
        let mut a = drm_amdgpu_info {
            return_pointer: &mut out as *mut T as u64,
            return_size: std::mem::size_of::<T>() as u32,
            query,
            query_args,
        };
        self.call(DRM_IOCTL_AMDGPU_INFO, &mut a)?;
        Ok(out)
    }
}
