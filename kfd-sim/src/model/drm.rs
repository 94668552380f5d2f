//! Render-node (`/dev/dri/renderD*`) ioctls and mmap: linux `drm_ioctl.c` (dispatch),
//! `drm_gem.c` (GEM_CLOSE, mmap), `drm_prime.c` (PRIME), `drm_syncobj.c` (SYNCOBJ_*),
//! `amdgpu_gem.c` (GEM_CREATE/MMAP/VA/METADATA/USERPTR/OP), `amdgpu_kms.c` (INFO),
//! `amdgpu_ctx.c` (CTX).
//!
//! State is per render file (`drm_file`): GEM handles, syncobj handles and the file's VM. A
//! KFD `ACQUIRE_VM` with this file makes its VM the pdd's VM, so GEM_VA and KFD mappings edit
//! one address space (KFD ≥ 1.15).

use super::bo::{Bo, FileKey};
use super::cs::{self, CsState};
use super::gpus::{self, GpuInfo};
use super::gpuvm::{Gpuvm, Mapping};
use super::process::bo_from_dmabuf;
use super::process::{self, ProcState};
use super::syncobj::{self, Syncobj, SyncobjTable};
use super::sys::as_bytes;
use super::sys::{self, PAGE_SIZE};
use super::with_args;
use kfd_ioctl::amdgpu::*;
use kfd_ioctl::drm::*;
use kfd_ioctl::kfd::{
    KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, KFD_IOC_ALLOC_MEM_FLAGS_GTT, KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
    KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
};
use libc::{c_int, c_ulong, c_void};
use nix::errno::Errno;
use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::RawFd;
use std::sync::Arc;

type R = Result<c_int, Errno>;

/// amdgpu KMS driver version (`KMS_DRIVER_MAJOR/MINOR/PATCHLEVEL`); libdrm_amdgpu requires 3.x.
const KMS_DRIVER_MAJOR: i32 = 3;
const KMS_DRIVER_MINOR: i32 = 57;
/// `AMDGPU_VA_RESERVED_BOTTOM` / top reservation and the 48-bit VM (`amdgpu_vm.h`).
const AMDGPU_VA_RESERVED_BOTTOM: u64 = 1 << 16;
const AMDGPU_VA_RESERVED_TOP: u64 = 2 << 20;
const AMDGPU_GMC_HOLE_START: u64 = 0x0000_8000_0000_0000;
const AMDGPU_GMC_HOLE_END: u64 = 0xffff_8000_0000_0000;
const AMDGPU_GMC_HOLE_MASK: u64 = 0x0000_ffff_ffff_ffff;
const VM_SIZE: u64 = 1 << 48;
/// `AMDGPU_VM_MTYPE_MASK` (bits 5..8) and `AMDGPU_VM_PAGE_NOALLOC`.
const AMDGPU_VM_MTYPE_MASK: u32 = 0xf << 5;
const AMDGPU_VM_PAGE_NOALLOC: u32 = 1 << 9;

/// Per render-file state (`drm_file` + `amdgpu_fpriv`).
pub struct DrmFile {
    pub minor: u32,
    /// The file's VM (`fpriv->vm`); after ACQUIRE_VM also the KFD pdd's VM.
    pub vm: Arc<RwLock<Gpuvm>>,
    /// GEM handles (`file->object_idr`), from 1.
    pub handles: BTreeMap<u32, Arc<Bo>>,
    /// The reverse of `handles` (`Arc::as_ptr` → handle; one handle per BO and file, as
    /// `drm_prime_lookup_buf_handle` keeps it): the handle holds the BO, so the address is its.
    handle_by_bo: HashMap<usize, u32>,
    /// Mappings made with GEM_VA: start → handle (removed when the handle closes).
    pub gem_maps: BTreeMap<u64, u32>,
    pub syncobjs: SyncobjTable,
    /// Contexts and BO lists (`cs.rs`).
    pub cs: CsState,
}

impl DrmFile {
    pub fn new(minor: u32) -> DrmFile {
        DrmFile {
            minor,
            vm: Arc::new(RwLock::new(Gpuvm::default())),
            handles: BTreeMap::new(),
            handle_by_bo: HashMap::new(),
            gem_maps: BTreeMap::new(),
            syncobjs: SyncobjTable::default(),
            cs: CsState::default(),
        }
    }

    /// Handle of `bo` in this file, if any (`drm_prime_lookup_buf_handle`).
    fn handle_of(&self, bo: &Arc<Bo>) -> Option<u32> {
        self.handle_by_bo.get(&(Arc::as_ptr(bo) as usize)).copied()
    }

    /// Drops handle `h` (`drm_gem_handle_delete`); its BO, or None for an unknown handle.
    fn remove_handle(&mut self, h: u32) -> Option<Arc<Bo>> {
        let bo = self.handles.remove(&h)?;
        self.handle_by_bo.remove(&(Arc::as_ptr(&bo) as usize));
        Some(bo)
    }

    /// `drm_gem_handle_create`: lowest free handle ≥ 1.
    fn new_handle(&mut self, bo: Arc<Bo>) -> u32 {
        let id = super::lowest_free_id(&self.handles);
        self.handle_by_bo.insert(Arc::as_ptr(&bo) as usize, id);
        self.handles.insert(id, bo);
        id
    }
}

fn file(st: &mut ProcState, key: FileKey, minor: u32) -> &mut DrmFile {
    st.drm_files.entry(key).or_insert_with(|| DrmFile::new(minor))
}

/// `drm_ioctl`: nr < 0x40 core, 0x40.. driver; unknown → EINVAL; ioctls without
/// `DRM_RENDER_ALLOW` on a render node → EACCES. Copies `min(user, kernel)` bytes in/out
/// along the directions both commands share.
pub fn drm_ioctl(key: FileKey, minor: u32, req: c_ulong, arg: u64) -> R {
    let p = process::current();
    let gpu = gpus::by_minor(minor).ok_or(Errno::ENODEV)?;
    let nr = (req & 0xff) as u8;
    // Effective direction = user's ∩ kernel's.
    let h = |kreq: c_ulong| -> c_ulong { (kreq & !(3 << 30)) | (((req >> 30) & (kreq >> 30) & 3) << 30) };
    macro_rules! call {
        ($kreq:expr, $name:literal, $f:expr) => {
            with_args(concat!("DRM_IOCTL_", $name), req, h($kreq), arg, $f)
        };
    }
    match nr as u32 {
        0x00 => call!(DRM_IOCTL_VERSION, "VERSION", |a: &mut drm_version| drm_version_ioctl(a)),
        0x01 | 0x0d => {
            let name = if nr == 0x01 { "DRM_IOCTL_GET_UNIQUE" } else { "DRM_IOCTL_SET_CLIENT_CAP" };
            super::trace_line::<()>(name, None, Err(Errno::EACCES), None);
            Err(Errno::EACCES)
        }
        0x09 => call!(DRM_IOCTL_GEM_CLOSE, "GEM_CLOSE", |a: &mut drm_gem_close| {
            drm_gem_close_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x0c => call!(DRM_IOCTL_GET_CAP, "GET_CAP", |a: &mut drm_get_cap| drm_getcap(a)),
        0x2d => call!(DRM_IOCTL_PRIME_HANDLE_TO_FD, "PRIME_HANDLE_TO_FD", |a: &mut drm_prime_handle| {
            drm_prime_handle_to_fd_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x2e => call!(DRM_IOCTL_PRIME_FD_TO_HANDLE, "PRIME_FD_TO_HANDLE", |a: &mut drm_prime_handle| {
            drm_prime_fd_to_handle_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0xbf => call!(DRM_IOCTL_SYNCOBJ_CREATE, "SYNCOBJ_CREATE", |a: &mut drm_syncobj_create| {
            syncobj_create(file(&mut p.state.lock(), key, minor), a)
        }),
        0xc0 => call!(DRM_IOCTL_SYNCOBJ_DESTROY, "SYNCOBJ_DESTROY", |a: &mut drm_syncobj_destroy| {
            if a.pad != 0 {
                return Err(Errno::EINVAL);
            }
            file(&mut p.state.lock(), key, minor).syncobjs.handles.remove(&a.handle).ok_or(Errno::EINVAL)?;
            Ok(0)
        }),
        0xc1 => call!(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, "SYNCOBJ_HANDLE_TO_FD", |a: &mut drm_syncobj_handle| {
            syncobj_handle_to_fd(file(&mut p.state.lock(), key, minor), a)
        }),
        0xc2 => call!(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, "SYNCOBJ_FD_TO_HANDLE", |a: &mut drm_syncobj_handle| {
            syncobj_fd_to_handle(file(&mut p.state.lock(), key, minor), a)
        }),
        0xc3 => call!(DRM_IOCTL_SYNCOBJ_WAIT, "SYNCOBJ_WAIT", |a: &mut drm_syncobj_wait| {
            let objs = syncobj_lookup(&p, key, minor, a.handles, a.count_handles)?;
            let points = vec![0u64; objs.len()];
            let r = syncobj_wait(&objs, &points, a.flags, a.timeout_nsec, false)?;
            a.first_signaled = r;
            Ok(0)
        }),
        0xc4 | 0xc5 => {
            let (name, signal) =
                if nr == 0xc4 { ("DRM_IOCTL_SYNCOBJ_RESET", false) } else { ("DRM_IOCTL_SYNCOBJ_SIGNAL", true) };
            with_args(name, req, h(DRM_IOCTL_SYNCOBJ_RESET), arg, |a: &mut drm_syncobj_array| {
                if a.pad != 0 {
                    return Err(Errno::EINVAL);
                }
                let objs = syncobj_lookup(&p, key, minor, a.handles, a.count_handles)?;
                for o in objs {
                    if signal {
                        o.signal()
                    } else {
                        o.reset()
                    }
                }
                Ok(0)
            })
        }
        0xca => call!(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, "SYNCOBJ_TIMELINE_WAIT", |a: &mut drm_syncobj_timeline_wait| {
            let objs = syncobj_lookup(&p, key, minor, a.handles, a.count_handles)?;
            let points = read_u64s(a.points, a.count_handles)?;
            let r = syncobj_wait(&objs, &points, a.flags, a.timeout_nsec, true)?;
            a.first_signaled = r;
            Ok(0)
        }),
        0xcb => call!(DRM_IOCTL_SYNCOBJ_QUERY, "SYNCOBJ_QUERY", |a: &mut drm_syncobj_timeline_array| {
            if a.flags & !DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED != 0 {
                return Err(Errno::EINVAL);
            }
            let objs = syncobj_lookup(&p, key, minor, a.handles, a.count_handles)?;
            let v: Vec<u64> = objs.iter().map(|o| o.point()).collect();
            sys::copy_to_user(a.points, as_bytes(&v)).map_err(|_| Errno::EFAULT)?;
            Ok(0)
        }),
        0xcc => call!(DRM_IOCTL_SYNCOBJ_TRANSFER, "SYNCOBJ_TRANSFER", |a: &mut drm_syncobj_transfer| {
            if a.pad != 0 {
                return Err(Errno::EINVAL);
            }
            let mut st = p.state.lock();
            let f = file(&mut st, key, minor);
            let src = f.syncobjs.get(a.src_handle).map_err(|_| Errno::ENOENT)?;
            let dst = f.syncobjs.get(a.dst_handle).map_err(|_| Errno::ENOENT)?;
            if !src.is_signaled(a.src_point) {
                return Err(Errno::EINVAL);
            }
            dst.signal_point(a.dst_point);
            Ok(0)
        }),
        0xcd => {
            call!(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, "SYNCOBJ_TIMELINE_SIGNAL", |a: &mut drm_syncobj_timeline_array| {
                if a.flags != 0 {
                    return Err(Errno::EINVAL);
                }
                let objs = syncobj_lookup(&p, key, minor, a.handles, a.count_handles)?;
                let points = read_u64s(a.points, a.count_handles)?;
                for (o, pt) in objs.iter().zip(points) {
                    o.signal_point(pt);
                }
                Ok(0)
            })
        }
        0x40 => call!(DRM_IOCTL_AMDGPU_GEM_CREATE, "AMDGPU_GEM_CREATE", |a: &mut drm_amdgpu_gem_create| {
            amdgpu_gem_create_ioctl(&mut p.state.lock(), key, gpu, a)
        }),
        0x41 => call!(DRM_IOCTL_AMDGPU_GEM_MMAP, "AMDGPU_GEM_MMAP", |a: &mut drm_amdgpu_gem_mmap| {
            amdgpu_gem_mmap_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x42 => with_args("DRM_IOCTL_AMDGPU_CTX", req, h(DRM_IOCTL_AMDGPU_CTX), arg, |a: &mut [u32; 4]| {
            cs::ctx_ioctl(file(&mut p.state.lock(), key, minor), a)
        }),
        0x43 => call!(DRM_IOCTL_AMDGPU_BO_LIST, "AMDGPU_BO_LIST", |a: &mut drm_amdgpu_bo_list_in| {
            cs::bo_list_ioctl(file(&mut p.state.lock(), key, minor), a)
        }),
        0x44 => call!(DRM_IOCTL_AMDGPU_CS, "AMDGPU_CS", |a: &mut drm_amdgpu_cs_in| {
            cs::cs_ioctl(file(&mut p.state.lock(), key, minor), gpu, a)
        }),
        0x49 => call!(DRM_IOCTL_AMDGPU_WAIT_CS, "AMDGPU_WAIT_CS", |a: &mut drm_amdgpu_wait_cs_in| {
            // The fence is waited for without the process lock.
            let fence = cs::wait_cs_fence(file(&mut p.state.lock(), key, minor), gpu, a)?;
            cs::wait_cs(fence, a)
        }),
        0x45 => call!(DRM_IOCTL_AMDGPU_INFO, "AMDGPU_INFO", |a: &mut drm_amdgpu_info| amdgpu_info_ioctl(&p, gpu, a)),
        0x46 => call!(DRM_IOCTL_AMDGPU_GEM_METADATA, "AMDGPU_GEM_METADATA", |a: &mut drm_amdgpu_gem_metadata| {
            amdgpu_gem_metadata_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x48 => call!(DRM_IOCTL_AMDGPU_GEM_VA, "AMDGPU_GEM_VA", |a: &mut drm_amdgpu_gem_va| {
            amdgpu_gem_va_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x50 => call!(DRM_IOCTL_AMDGPU_GEM_OP, "AMDGPU_GEM_OP", |a: &mut drm_amdgpu_gem_op| {
            amdgpu_gem_op_ioctl(&mut p.state.lock(), key, minor, a)
        }),
        0x51 => call!(DRM_IOCTL_AMDGPU_GEM_USERPTR, "AMDGPU_GEM_USERPTR", |a: &mut drm_amdgpu_gem_userptr| {
            amdgpu_gem_userptr_ioctl(&mut p.state.lock(), key, gpu, a)
        }),
        _ => {
            let name = kfd_ioctl::ioctl_name(req).unwrap_or("DRM_IOCTL_?");
            super::trace_line::<()>(name, None, Err(Errno::EINVAL), None);
            Err(Errno::EINVAL)
        }
    }
}

// ------------------------------------------------------------------------------------------
// Core DRM
// ------------------------------------------------------------------------------------------

/// `drm_copy_field`: copies `min(len, value.len())` bytes, reports the full length.
fn copy_field(buf: *mut libc::c_char, len: &mut usize, value: &str) -> Result<(), Errno> {
    let n = (*len).min(value.len());
    *len = value.len();
    if n > 0 && !buf.is_null() {
        sys::copy_to_user(buf as u64, &value.as_bytes()[..n]).map_err(|_| Errno::EFAULT)?;
    }
    Ok(())
}

/// `drm_version`: "amdgpu" 3.57.0.
fn drm_version_ioctl(a: &mut drm_version) -> R {
    a.version_major = KMS_DRIVER_MAJOR;
    a.version_minor = KMS_DRIVER_MINOR;
    a.version_patchlevel = 0;
    let mut l = a.name_len as usize;
    copy_field(a.name, &mut l, "amdgpu")?;
    a.name_len = l as _;
    let mut l = a.date_len as usize;
    copy_field(a.date, &mut l, "20150101")?;
    a.date_len = l as _;
    let mut l = a.desc_len as usize;
    copy_field(a.desc, &mut l, "AMD GPU")?;
    a.desc_len = l as _;
    Ok(0)
}

/// `drm_getcap`.
fn drm_getcap(a: &mut drm_get_cap) -> R {
    a.value = match a.capability as u32 {
        0x6 /* DRM_CAP_TIMESTAMP_MONOTONIC */ => 1,
        DRM_CAP_PRIME => DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT,
        DRM_CAP_SYNCOBJ | DRM_CAP_SYNCOBJ_TIMELINE => 1,
        0x1 /* DRM_CAP_DUMB_BUFFER */ => 1,
        _ => return Err(Errno::EINVAL),
    };
    Ok(0)
}

/// `drm_gem_close_ioctl`: unknown handle → EINVAL. The last handle of a BO in this file drops
/// its GEM_VA mappings (`amdgpu_gem_object_close` → `amdgpu_vm_bo_del`).
fn drm_gem_close_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_gem_close) -> R {
    let f = file(st, key, minor);
    f.remove_handle(a.handle).ok_or(Errno::EINVAL)?;
    let starts: Vec<u64> = f.gem_maps.iter().filter(|(_, h)| **h == a.handle).map(|(s, _)| *s).collect();
    let mut vm = f.vm.write();
    for s in starts {
        vm.remove(s);
        f.gem_maps.remove(&s);
    }
    Ok(0)
}

/// `drm_prime_handle_to_fd_ioctl`: flags other than `DRM_CLOEXEC | DRM_RDWR` → EINVAL, unknown
/// handle → ENOENT, USERPTR → EPERM (`amdgpu_gem_prime_export`), at the fd limit EMFILE. The fd
/// is a new open file of the memfd ([`Bo::export_fd`]).
fn drm_prime_handle_to_fd_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_prime_handle) -> R {
    if a.flags & !(DRM_CLOEXEC | DRM_RDWR) != 0 {
        return Err(Errno::EINVAL);
    }
    let f = file(st, key, minor);
    let bo = f.handles.get(&a.handle).ok_or(Errno::ENOENT)?;
    a.fd = bo.export_fd(a.flags & DRM_CLOEXEC != 0)?;
    Ok(0)
}

/// `drm_prime_fd_to_handle_ioctl`: bad fd → EBADF, not a model dma-buf → EINVAL; the same
/// dma-buf imported twice in a file gets the same handle.
fn drm_prime_fd_to_handle_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_prime_handle) -> R {
    let bo = bo_from_dmabuf(st, a.fd as RawFd)?;
    st.alloc_mmap_offset(&bo)?;
    bo.allow(key);
    let f = file(st, key, minor);
    a.handle = match f.handle_of(&bo) {
        Some(h) => h,
        None => f.new_handle(bo),
    };
    Ok(0)
}

// ------------------------------------------------------------------------------------------
// Syncobj
// ------------------------------------------------------------------------------------------

fn syncobj_create(f: &mut DrmFile, a: &mut drm_syncobj_create) -> R {
    if a.flags & !DRM_SYNCOBJ_CREATE_SIGNALED != 0 {
        return Err(Errno::EINVAL);
    }
    let s = Syncobj::new(a.flags & DRM_SYNCOBJ_CREATE_SIGNALED != 0)?;
    a.handle = f.syncobjs.insert(s);
    Ok(0)
}

fn syncobj_handle_to_fd(f: &mut DrmFile, a: &mut drm_syncobj_handle) -> R {
    let allowed =
        DRM_CLOEXEC | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE;
    if a.pad != 0 || a.flags & !allowed != 0 {
        return Err(Errno::EINVAL);
    }
    let s = f.syncobjs.get(a.handle)?;
    let cloexec = a.flags & DRM_CLOEXEC != 0;
    if a.flags & DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE != 0 {
        // drm_syncobj_export_sync_file: the fence at `point` must exist.
        if !s.is_signaled(a.point) {
            return Err(Errno::EINVAL);
        }
        a.fd = syncobj::make_sync_file(cloexec)?;
        return Ok(0);
    }
    if a.point != 0 {
        return Err(Errno::EINVAL);
    }
    a.fd = s.export(cloexec)?;
    Ok(0)
}

fn syncobj_fd_to_handle(f: &mut DrmFile, a: &mut drm_syncobj_handle) -> R {
    let allowed = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE;
    if a.pad != 0 || a.flags & !allowed != 0 {
        return Err(Errno::EINVAL);
    }
    if a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE != 0 {
        // drm_syncobj_import_sync_file_fence: a signaled fence lands in the existing syncobj.
        if !syncobj::is_sync_file(a.fd) {
            return Err(Errno::EINVAL);
        }
        let s = f.syncobjs.get(a.handle).map_err(|_| Errno::ENOENT)?;
        s.signal_point(a.point);
        return Ok(0);
    }
    if a.point != 0 {
        return Err(Errno::EINVAL);
    }
    let s = Syncobj::import(a.fd)?;
    a.handle = f.syncobjs.insert(s);
    Ok(0)
}

/// `n` u64s copied in from user address `ptr` (EFAULT).
pub(crate) fn read_u64s(ptr: u64, n: u32) -> Result<Vec<u64>, Errno> {
    let mut v = vec![0u64; n as usize];
    sys::copy_from_user(sys::as_bytes_mut(&mut v), ptr).map_err(|_| Errno::EFAULT)?;
    Ok(v)
}

/// `drm_syncobj_array_find`: count 0 → EINVAL, unknown handle → ENOENT.
fn syncobj_lookup(
    p: &Arc<process::Process>,
    key: FileKey,
    minor: u32,
    ptr: u64,
    n: u32,
) -> Result<Vec<Arc<Syncobj>>, Errno> {
    if n == 0 {
        return Err(Errno::EINVAL);
    }
    if n > 1 << 16 {
        return Err(Errno::ENOMEM);
    }
    let mut hs = vec![0u32; n as usize];
    // SAFETY: viewing our own u32 buffer as bytes.
    let b = unsafe { std::slice::from_raw_parts_mut(hs.as_mut_ptr() as *mut u8, hs.len() * 4) };
    sys::copy_from_user(b, ptr).map_err(|_| Errno::EFAULT)?;
    let mut st = p.state.lock();
    let f = file(&mut st, key, minor);
    hs.iter().map(|h| f.syncobjs.get(*h).map_err(|_| Errno::ENOENT)).collect()
}

/// `drm_syncobj_wait_ioctl` / `drm_syncobj_timeline_wait_ioctl` (process lock not held).
fn syncobj_wait(
    objs: &[Arc<Syncobj>],
    points: &[u64],
    flags: u32,
    timeout_nsec: i64,
    timeline: bool,
) -> Result<u32, Errno> {
    let mut valid = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    if timeline {
        valid |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;
    }
    if flags & !valid != 0 {
        return Err(Errno::EINVAL);
    }
    syncobj::wait(
        objs,
        points,
        flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL != 0,
        flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT != 0,
        timeout_nsec,
    )
}

// ------------------------------------------------------------------------------------------
// amdgpu GEM
// ------------------------------------------------------------------------------------------

/// `amdgpu_gem_create_ioctl`: unknown create flags or domains → EINVAL; size 0 → EINVAL;
/// VRAM larger than the device → ENOMEM. The BO is a memfd like KFD BOs.
fn amdgpu_gem_create_ioctl(
    st: &mut ProcState,
    key: FileKey,
    gpu: &'static GpuInfo,
    a: &mut drm_amdgpu_gem_create,
) -> R {
    let i = a.input();
    let known = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED
        | AMDGPU_GEM_CREATE_NO_CPU_ACCESS
        | AMDGPU_GEM_CREATE_CPU_GTT_USWC
        | AMDGPU_GEM_CREATE_VRAM_CLEARED
        | AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS
        | AMDGPU_GEM_CREATE_VM_ALWAYS_VALID
        | AMDGPU_GEM_CREATE_EXPLICIT_SYNC
        | (1 << 8) /* VRAM_WIPE_ON_RELEASE */
        | (1 << 10) /* ENCRYPTED */
        | (1 << 11) /* PREEMPTIBLE */
        | (1 << 12) /* DISCARDABLE */
        | (1 << 13) /* COHERENT */
        | (1 << 14) /* UNCACHED */
        | (1 << 15) /* EXT_COHERENT */;
    if i.domain_flags & !known != 0 || i.domains & !AMDGPU_GEM_DOMAIN_MASK != 0 {
        return Err(Errno::EINVAL);
    }
    if i.domain_flags & (1 << 10) != 0 {
        // !amdgpu_is_tmz(adev)
        return Err(Errno::EINVAL);
    }
    if i.bo_size == 0 {
        return Err(Errno::EINVAL);
    }
    let vram = i.domains & AMDGPU_GEM_DOMAIN_VRAM != 0;
    if vram && sys::page_align(i.bo_size) > gpu.vram_size {
        return Err(Errno::ENOMEM);
    }
    let cpu_access = i.domain_flags & AMDGPU_GEM_CREATE_NO_CPU_ACCESS == 0;
    let kfd_flags = if vram { KFD_IOC_ALLOC_MEM_FLAGS_VRAM } else { KFD_IOC_ALLOC_MEM_FLAGS_GTT }
        | if vram && cpu_access { KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC } else { 0 }
        | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
        | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
    let mut bo = Bo::new_memfd(gpu.gpu_id, kfd_flags, i.bo_size)?;
    bo.cpu_access = cpu_access;
    let bo = Arc::new(bo);
    st.alloc_mmap_offset(&bo)?;
    st.remember_bo(&bo);
    bo.allow(key);
    let h = file(st, key, gpu.drm_render_minor).new_handle(bo);
    *a = drm_amdgpu_gem_create { out: drm_amdgpu_gem_create_out { handle: h, _pad: 0 } };
    Ok(0)
}

/// `amdgpu_gem_mmap_ioctl`: unknown handle → ENOENT; USERPTR or NO_CPU_ACCESS → EPERM.
fn amdgpu_gem_mmap_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_amdgpu_gem_mmap) -> R {
    let h = a.input().handle;
    let bo = file(st, key, minor).handles.get(&h).cloned().ok_or(Errno::ENOENT)?;
    if bo.is_userptr() || !bo.cpu_access {
        return Err(Errno::EPERM);
    }
    let off = st.alloc_mmap_offset(&bo)?;
    *a = drm_amdgpu_gem_mmap { out: drm_amdgpu_gem_mmap_out { addr_ptr: off } };
    Ok(0)
}

/// `amdgpu_gem_userptr_ioctl`: address and size page aligned (EINVAL), pages present (EFAULT).
fn amdgpu_gem_userptr_ioctl(
    st: &mut ProcState,
    key: FileKey,
    gpu: &'static GpuInfo,
    a: &mut drm_amdgpu_gem_userptr,
) -> R {
    const VALID: u32 = 0xf; // READ_ONLY | ANONONLY | VALIDATE | REGISTER
    if (a.addr | a.size) & (PAGE_SIZE - 1) != 0 || a.size == 0 {
        return Err(Errno::EINVAL);
    }
    if a.flags & !VALID != 0 {
        return Err(Errno::EINVAL);
    }
    if !sys::is_mapped(a.addr, a.size) {
        return Err(Errno::EFAULT);
    }
    let bo = Arc::new(Bo::new_userptr(gpu.gpu_id, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, a.addr, a.size));
    a.handle = file(st, key, gpu.drm_render_minor).new_handle(bo);
    Ok(0)
}

/// `amdgpu_gem_op_ioctl`: GET_GEM_CREATE_INFO (0) writes the create parameters at `value`;
/// SET_PLACEMENT (1) accepted; unknown handle ENOENT, unknown op EINVAL.
fn amdgpu_gem_op_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_amdgpu_gem_op) -> R {
    let bo = file(st, key, minor).handles.get(&a.handle).cloned().ok_or(Errno::ENOENT)?;
    match a.op {
        0 => {
            let domains = if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 {
                AMDGPU_GEM_DOMAIN_VRAM
            } else {
                AMDGPU_GEM_DOMAIN_GTT
            };
            let info = drm_amdgpu_gem_create_in {
                bo_size: bo.size,
                alignment: PAGE_SIZE,
                domains,
                domain_flags: if bo.cpu_access { 0 } else { AMDGPU_GEM_CREATE_NO_CPU_ACCESS },
            };
            sys::copy_to_user(a.value, as_bytes(std::slice::from_ref(&info))).map_err(|_| Errno::EFAULT)?;
            Ok(0)
        }
        1 => {
            if bo.is_userptr() {
                return Err(Errno::EPERM);
            }
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// `amdgpu_gem_metadata_ioctl`: unknown handle → ENOENT; SET with more than 256 bytes → EINVAL;
/// unknown op → EINVAL.
fn amdgpu_gem_metadata_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_amdgpu_gem_metadata) -> R {
    let bo = file(st, key, minor).handles.get(&a.handle).cloned().ok_or(Errno::ENOENT)?;
    let mut md = bo.metadata.lock();
    match a.op {
        AMDGPU_GEM_METADATA_OP_GET_METADATA => {
            a.data.tiling_info = md.tiling_info;
            a.data.flags = md.flags;
            a.data.data_size_bytes = md.data.len() as u32;
            let mut words = [0u32; 64];
            for (i, c) in md.data.chunks(4).enumerate() {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                words[i] = u32::from_le_bytes(w);
            }
            a.data.data = words;
            Ok(0)
        }
        AMDGPU_GEM_METADATA_OP_SET_METADATA => {
            if a.data.data_size_bytes as usize > 256 {
                return Err(Errno::EINVAL);
            }
            md.tiling_info = a.data.tiling_info;
            md.flags = a.data.flags;
            md.data = as_bytes(&a.data.data)[..a.data.data_size_bytes as usize].to_vec();
            Ok(0)
        }
        _ => Err(Errno::EINVAL),
    }
}

/// `amdgpu_gem_va_ioctl` + `amdgpu_vm_bo_map/unmap/clear_mappings/replace_map`.
///
/// va below `AMDGPU_VA_RESERVED_BOTTOM`, in the GMC hole, or past the VM end → EINVAL; unknown
/// flags or operation → EINVAL; unknown handle → ENOENT. MAP: unaligned or empty or beyond the BO
/// → EINVAL, overlap → EINVAL. UNMAP: no mapping of that BO starting at `va` → ENOENT; a mapping
/// holding a user queue's buffers → EBUSY. CLEAR: removes everything in the range (splitting).
fn amdgpu_gem_va_ioctl(st: &mut ProcState, key: FileKey, minor: u32, a: &mut drm_amdgpu_gem_va) -> R {
    let valid = AMDGPU_VM_DELAY_UPDATE
        | AMDGPU_VM_PAGE_READABLE
        | AMDGPU_VM_PAGE_WRITEABLE
        | AMDGPU_VM_PAGE_EXECUTABLE
        | AMDGPU_VM_MTYPE_MASK
        | AMDGPU_VM_PAGE_NOALLOC;
    let prt = AMDGPU_VM_DELAY_UPDATE | AMDGPU_VM_PAGE_PRT;
    if a.va_address < AMDGPU_VA_RESERVED_BOTTOM {
        return Err(Errno::EINVAL);
    }
    if (AMDGPU_GMC_HOLE_START..AMDGPU_GMC_HOLE_END).contains(&a.va_address) {
        return Err(Errno::EINVAL);
    }
    a.va_address &= AMDGPU_GMC_HOLE_MASK;
    if a.va_address.checked_add(a.map_size).is_none_or(|e| e > VM_SIZE - AMDGPU_VA_RESERVED_TOP) {
        return Err(Errno::EINVAL);
    }
    if (a.flags & !valid != 0) && (a.flags & !prt != 0) {
        return Err(Errno::EINVAL);
    }
    if !(AMDGPU_VA_OP_MAP..=AMDGPU_VA_OP_REPLACE).contains(&a.operation) {
        return Err(Errno::EINVAL);
    }
    if a.flags & AMDGPU_VM_PAGE_PRT != 0 {
        // Partially-resident textures are not modelled: accept and map nothing.
        return Ok(0);
    }
    let f = file(st, key, minor);
    let bo = if a.operation != AMDGPU_VA_OP_CLEAR {
        Some(f.handles.get(&a.handle).cloned().ok_or(Errno::ENOENT)?)
    } else {
        None
    };
    let vm = f.vm.clone();
    let mut vm = vm.write();
    let map = |vm: &mut Gpuvm, f: &mut DrmFile, bo: &Arc<Bo>| -> R {
        let (va, off, size) = (a.va_address, a.offset_in_bo, a.map_size);
        if (va | off | size) & (PAGE_SIZE - 1) != 0 || size == 0 || off.checked_add(size).is_none_or(|e| e > bo.size) {
            return Err(Errno::EINVAL);
        }
        if va + size > VM_SIZE || vm.overlaps(va, size) {
            return Err(Errno::EINVAL);
        }
        vm.insert(Mapping {
            start: va,
            len: size,
            bo: bo.clone(),
            bo_offset: off,
            writable: a.flags & AMDGPU_VM_PAGE_WRITEABLE != 0,
            executable: a.flags & AMDGPU_VM_PAGE_EXECUTABLE != 0,
            queue_refcount: 0,
        });
        f.gem_maps.insert(va, a.handle);
        Ok(0)
    };
    match a.operation {
        AMDGPU_VA_OP_MAP => map(&mut vm, f, bo.as_ref().unwrap()),
        AMDGPU_VA_OP_UNMAP => {
            let bo = bo.unwrap();
            match vm.lookup(a.va_address) {
                Some(m) if m.start == a.va_address && Arc::ptr_eq(&m.bo, &bo) => {
                    if m.queue_refcount > 0 {
                        return Err(Errno::EBUSY);
                    }
                }
                _ => return Err(Errno::ENOENT),
            }
            vm.remove(a.va_address);
            f.gem_maps.remove(&a.va_address);
            Ok(0)
        }
        AMDGPU_VA_OP_CLEAR => {
            clear_range(&mut vm, f, a.va_address, a.map_size)?;
            Ok(0)
        }
        _ => {
            // REPLACE
            let bo = bo.unwrap();
            if (a.va_address | a.offset_in_bo | a.map_size) & (PAGE_SIZE - 1) != 0 || a.map_size == 0 {
                return Err(Errno::EINVAL);
            }
            clear_range(&mut vm, f, a.va_address, a.map_size)?;
            map(&mut vm, f, &bo)
        }
    }
}

/// `amdgpu_vm_bo_clear_mappings`: removes `[va, va+size)`, keeping the parts of partially
/// covered mappings outside the range.
fn clear_range(vm: &mut Gpuvm, f: &mut DrmFile, va: u64, size: u64) -> Result<(), Errno> {
    if (va | size) & (PAGE_SIZE - 1) != 0 {
        return Err(Errno::EINVAL);
    }
    let end = va + size;
    let hit: Vec<Mapping> = vm.range(va, size).cloned().collect();
    if hit.iter().any(|m| m.queue_refcount > 0) {
        return Err(Errno::EBUSY);
    }
    for m in hit {
        vm.remove(m.start);
        let handle = f.gem_maps.remove(&m.start);
        if m.start < va {
            let mut head = m.clone();
            head.len = va - m.start;
            vm.insert(head);
            if let Some(h) = handle {
                f.gem_maps.insert(m.start, h);
            }
        }
        if m.end() > end {
            let mut tail = m.clone();
            tail.start = end;
            tail.len = m.end() - end;
            tail.bo_offset = m.bo_offset + (end - m.start);
            vm.insert(tail);
            if let Some(h) = handle {
                f.gem_maps.insert(end, h);
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// AMDGPU_INFO
// ------------------------------------------------------------------------------------------

fn put<T: Copy>(a: &drm_amdgpu_info, v: &T) -> R {
    let bytes = as_bytes(std::slice::from_ref(v));
    let n = bytes.len().min(a.return_size as usize);
    sys::copy_to_user(a.return_pointer, &bytes[..n]).map_err(|_| Errno::EFAULT)?;
    Ok(0)
}

/// System RAM in bytes (GTT size is derived from it).
fn system_ram() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, psz) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages.max(0) as u64) * (psz.max(0) as u64)
}

/// `amdgpu_info_ioctl`: `return_size == 0` or null pointer → EINVAL; answers are copied
/// `min(return_size, sizeof answer)`. Values describe an MI210-class gfx90a.
fn amdgpu_info_ioctl(p: &Arc<process::Process>, gpu: &'static GpuInfo, a: &mut drm_amdgpu_info) -> R {
    if a.return_size == 0 || a.return_pointer == 0 {
        return Err(Errno::EINVAL);
    }
    let gtt = system_ram() * 3 / 4;
    let vis = if gpu.large_bar { gpu.vram_size } else { 256 << 20 };
    match a.query {
        AMDGPU_INFO_ACCEL_WORKING => put(a, &1u32),
        AMDGPU_INFO_HW_IP_INFO => {
            let (ty, inst) = a.query_hw_ip();
            if ty >= AMDGPU_HW_IP_NUM || inst != 0 {
                return Err(Errno::EINVAL);
            }
            let mut r = drm_amdgpu_info_hw_ip { ib_start_alignment: 32, ib_size_alignment: 32, ..Default::default() };
            match ty {
                AMDGPU_HW_IP_GFX => {
                    r.hw_ip_version_major = 9;
                    r.hw_ip_version_minor = 4;
                    // MI200 parts have no graphics rings.
                    r.available_rings = 0;
                }
                AMDGPU_HW_IP_COMPUTE => {
                    r.hw_ip_version_major = 9;
                    r.hw_ip_version_minor = 4;
                    r.available_rings = 0xff;
                }
                AMDGPU_HW_IP_DMA => {
                    r.hw_ip_version_major = 4;
                    r.hw_ip_version_minor = 4;
                    r.ib_start_alignment = 256;
                    r.ib_size_alignment = 4;
                    let n = gpu.sdma_engines();
                    r.available_rings = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
                }
                _ => {
                    r.ib_start_alignment = 0;
                    r.ib_size_alignment = 0;
                }
            }
            put(a, &r)
        }
        AMDGPU_INFO_HW_IP_COUNT => {
            let (ty, _) = a.query_hw_ip();
            let n: u32 = match ty {
                AMDGPU_HW_IP_GFX | AMDGPU_HW_IP_COMPUTE | AMDGPU_HW_IP_DMA => 1,
                t if t < AMDGPU_HW_IP_NUM => 0,
                _ => return Err(Errno::EINVAL),
            };
            put(a, &n)
        }
        AMDGPU_INFO_TIMESTAMP => put(a, &sys::gpu_clock()),
        AMDGPU_INFO_FW_VERSION => {
            let q = a.query_fw();
            let ver = match q.fw_type {
                0..=2 => 0,
                AMDGPU_INFO_FW_GMC => 0,
                AMDGPU_INFO_FW_GFX_ME | AMDGPU_INFO_FW_GFX_PFP | AMDGPU_INFO_FW_GFX_CE => 0,
                AMDGPU_INFO_FW_GFX_RLC => 0x11,
                AMDGPU_INFO_FW_GFX_MEC => 0x4d,
                AMDGPU_INFO_FW_SMC => 0x0044_4700,
                AMDGPU_INFO_FW_SDMA => 0x8,
                0x09..=0x1a => 0,
                _ => return Err(Errno::EINVAL),
            };
            put(a, &drm_amdgpu_info_firmware { ver, feature: 0 })
        }
        AMDGPU_INFO_NUM_BYTES_MOVED | 0x1e /* NUM_EVICTIONS-like counters */ | AMDGPU_INFO_NUM_EVICTIONS | AMDGPU_INFO_VRAM_LOST_COUNTER => put(a, &0u64),
        AMDGPU_INFO_VRAM_USAGE | AMDGPU_INFO_VIS_VRAM_USAGE => {
            let st = p.state.lock();
            let used = st.pdd(gpu.gpu_id).map(|d| d.vram_usage).unwrap_or(0);
            put(a, &used)
        }
        AMDGPU_INFO_GTT_USAGE => put(a, &0u64),
        AMDGPU_INFO_VRAM_GTT => put(a, &drm_amdgpu_info_vram_gtt { vram_size: gpu.vram_size, vram_cpu_accessible_size: vis, gtt_size: gtt }),
        AMDGPU_INFO_MEMORY => {
            let st = p.state.lock();
            let used = st.pdd(gpu.gpu_id).map(|d| d.vram_usage).unwrap_or(0);
            drop(st);
            let heap = |total: u64, usage: u64| drm_amdgpu_heap_info {
                total_heap_size: total,
                usable_heap_size: total,
                heap_usage: usage,
                max_allocation: total * 3 / 4,
            };
            put(a, &drm_amdgpu_memory_info { vram: heap(gpu.vram_size, used), cpu_accessible_vram: heap(vis, used.min(vis)), gtt: heap(gtt, 0) })
        }
        AMDGPU_INFO_DEV_INFO => put(a, &dev_info(gpu)),
        AMDGPU_INFO_READ_MMR_REG => {
            let [off, count, _inst, _flags] = a.read_mmr_reg();
            if count > 128 {
                return Err(Errno::EINVAL);
            }
            let mut regs = Vec::with_capacity(count as usize);
            for i in 0..count {
                regs.push(match off + i {
                    0x263e => 0x2a11_4042, // GB_ADDR_CONFIG
                    0x2004..=0x2007 => 0, // GRBM_STATUS*
                    0x0e50 => 0, // SRBM_STATUS
                    _ => return Err(Errno::EINVAL),
                });
            }
            let bytes = as_bytes(&regs);
            let n = bytes.len().min(a.return_size as usize);
            sys::copy_to_user(a.return_pointer, &bytes[..n]).map_err(|_| Errno::EFAULT)?;
            Ok(0)
        }
        AMDGPU_INFO_SENSOR => {
            // sensor_info.type in query_args[0]; GFX_SCLK/MCLK (MHz), temperature (m°C), power (W).
            let v: u32 = match a.query_args[0] {
                1 => 1700, // GFX_SCLK
                2 => 1600, // GFX_MCLK
                3 => 40_000, // GPU_TEMP
                4 => 90,   // GPU_LOAD... values are plausible, not measured
                5 => 100,
                _ => return Err(Errno::EINVAL),
            };
            put(a, &v)
        }
        AMDGPU_INFO_VBIOS => Err(Errno::EINVAL),
        // ras_enabled << 32 | ras->features, from the same RAS state as the node's EDC and
        // RASEVENTNOTIFY capability bits; EINVAL without a RAS context (RAS off).
        AMDGPU_INFO_RAS_ENABLED_FEATURES => put(a, &gpu.ras_enabled_features.ok_or(Errno::EINVAL)?),
        AMDGPU_INFO_VIDEO_CAPS => Err(Errno::EINVAL),
        AMDGPU_INFO_GDS_CONFIG => put(a, &[0u32; 8]),
        _ => Err(Errno::EINVAL),
    }
}

/// `AMDGPU_INFO_DEV_INFO` for a gfx90a (MI210 class) device.
fn dev_info(gpu: &GpuInfo) -> drm_amdgpu_info_device {
    let cus = (gpu.simd_count / 4).max(1);
    let se = 8u32;
    let cu_per_sh = cus.div_ceil(se);
    // cu_bitmap[se % 4][sh + se / 4] as amdgpu_info_ioctl lays it out (one SH per SE).
    let mut cu_bitmap = [[0u32; 4]; 4];
    let mut left = cus;
    for i in 0..se as usize {
        let n = left.min(cu_per_sh);
        cu_bitmap[i % 4][i / 4] = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        left -= n;
    }
    drm_amdgpu_info_device {
        device_id: gpu.device_id,
        chip_rev: 1,
        external_rev: 0x3d,
        pci_rev: 2,
        family: AMDGPU_FAMILY_AI,
        num_shader_engines: se,
        num_shader_arrays_per_engine: 1,
        gpu_counter_freq: 100_000,
        max_engine_clock: gpu.max_engine_clk_fcompute as u64 * 1000,
        max_memory_clock: 1_600_000,
        cu_active_number: cus,
        cu_ao_mask: 0,
        cu_bitmap,
        enabled_rb_pipes_mask: 0xffff,
        num_rb_pipes: 16,
        num_hw_gfx_contexts: 8,
        _pad: 0,
        ids_flags: 0,
        virtual_address_offset: AMDGPU_VA_RESERVED_BOTTOM,
        virtual_address_max: AMDGPU_GMC_HOLE_START - AMDGPU_VA_RESERVED_TOP,
        virtual_address_alignment: PAGE_SIZE as u32,
        pte_fragment_size: 2 << 20,
        gart_page_size: PAGE_SIZE as u32,
        ce_ram_size: 0,
        vram_type: AMDGPU_VRAM_TYPE_HBM,
        vram_bit_width: 4096,
        vce_harvest_config: 0,
        gc_double_offchip_lds_buf: 1,
        prim_buf_gpu_addr: 0,
        pos_buf_gpu_addr: 0,
        cntl_sb_buf_gpu_addr: 0,
        param_buf_gpu_addr: 0,
        prim_buf_size: 0,
        pos_buf_size: 0,
        cntl_sb_buf_size: 0,
        param_buf_size: 0,
        wave_front_size: 64,
        num_shader_visible_vgprs: 512,
        num_cu_per_sh: cu_per_sh,
        num_tcc_blocks: 16,
        gs_vgt_table_depth: 32,
        gs_prim_buffer_depth: 1792,
        max_gs_waves_per_vgt: 32,
        _pad1: 0,
        cu_ao_bitmap: [[0; 4]; 4],
        high_va_offset: AMDGPU_GMC_HOLE_END,
        high_va_max: AMDGPU_GMC_HOLE_END | (AMDGPU_GMC_HOLE_START - AMDGPU_VA_RESERVED_TOP),
        pa_sc_tile_steering_override: 0,
        tcc_disabled_mask: 0,
    }
}

// ------------------------------------------------------------------------------------------
// mmap
// ------------------------------------------------------------------------------------------

/// `drm_gem_mmap` + `amdgpu_gem_object_mmap` on a render node: the offset must fall inside one
/// BO's range (else EINVAL), the BO must be allowed for this file (EACCES), CPU-accessible and
/// not USERPTR (EPERM). A private mapping that can become writable is refused by TTM (EINVAL);
/// `PROT_NONE` private mappings are accepted (the thunk workaround in `amdgpu_gem_object_mmap`).
/// # Safety
/// As [`super::mmap`].
pub unsafe fn drm_mmap(
    key: FileKey,
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    offset: u64,
) -> Result<*mut c_void, Errno> {
    let p = process::current();
    let st = p.state.lock();
    let (start, bo) = st.bo_at_offset(offset, len as u64).ok_or(Errno::EINVAL)?;
    if !bo.is_allowed(key) {
        return Err(Errno::EACCES);
    }
    if bo.is_userptr() || !bo.cpu_access {
        return Err(Errno::EPERM);
    }
    if flags & libc::MAP_SHARED == 0 && prot != libc::PROT_NONE {
        return Err(Errno::EINVAL);
    }
    // SAFETY: our caller upholds the MAP_FIXED contract for `addr`.
    unsafe { bo.memfd().ok_or(Errno::EINVAL)?.map_for_user(addr, len, prot, flags, offset - start, false) }
}
