//! Stream-ordered memory allocation (HIP "Stream Ordered Memory Allocator" group; clr
//! `hip_mempool.cpp`): `hipMallocAsync`, `hipFreeAsync`, memory pools. The pools are
//! src/mem/mempool.rs; pools and their allocations are shared between processes through a memfd and
//! IPC handles (`hipMemPoolExportToShareableHandle` … `hipMemPoolImportPointer`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, read_in, rocm5_caller, rt_dev, slice_in, stream_of, write_out};
use crate::core::runtime::{runtime, Runtime};
use crate::core::stream::Stream;
use crate::mem::mempool::{attr, AttrValue, MemPool};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

fn pool_of(rt: &Runtime, p: hipMemPool_t) -> Result<Arc<MemPool>, hipError_t> {
    check(!p.is_null())?;
    rt.mempool_of(p as usize)
}

/// The device ordinal a memory location names (a pool's, a graph allocation's, an access
/// descriptor's). Errors: `hipErrorInvalidValue` (not a device, not a visible one).
pub(crate) fn location_device(l: &hipMemLocation) -> Result<usize, hipError_t> {
    check(l.r#type == hipMemLocationType::hipMemLocationTypeDevice)?;
    runtime()?.device(l.id).map(|d| d.ordinal).map_err(|_| hipError_t::hipErrorInvalidValue)
}

fn handle(p: &Arc<MemPool>) -> hipMemPool_t {
    Arc::as_ptr(p) as hipMemPool_t
}

/// The stream of an async allocation call: a bad handle is `hipErrorInvalidHandle` here (clr).
fn alloc_stream(rt: &Runtime, stream: hipStream_t) -> Result<Arc<Stream>, hipError_t> {
    stream_of(rt, stream).map_err(|e| match e {
        hipError_t::hipErrorContextIsDestroyed => hipError_t::hipErrorInvalidHandle,
        e => e,
    })
}

fn malloc_async(dev_ptr: *mut *mut c_void, size: usize, pool: Option<hipMemPool_t>, stream: hipStream_t) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null() && pool.is_none_or(|p| !p.is_null()))?;
        let (rt, _) = rt_dev()?;
        let s = alloc_stream(rt, stream)?;
        if size == 0 {
            return write_out(dev_ptr, std::ptr::null_mut());
        }
        let p = match pool {
            Some(p) => pool_of(rt, p)?,
            None => rt.mempool_current(s.dev),
        };
        write_out(dev_ptr, std::ptr::null_mut())?;
        if crate::graph::mem::capturing(&s) {
            return write_out(dev_ptr, capture_alloc(rt, &p, size, &s)? as *mut c_void);
        }
        let base = rt.mempool_alloc(&p, size as u64, &s)?;
        write_out(dev_ptr, base as *mut c_void)
    })
}

/// `hipMallocAsync` on a capturing stream: an allocation node of `p`'s device, with the pool's
/// access for the other devices (clr `capturehipMallocAsync`) → its address.
fn capture_alloc(rt: &Runtime, p: &MemPool, size: usize, s: &Arc<Stream>) -> Result<u64, hipError_t> {
    let params = hipMemAllocNodeParams {
        poolProps: hipMemPoolProps {
            allocType: hipMemAllocationType::hipMemAllocationTypePinned,
            handleTypes: hipMemAllocationHandleType::default(),
            location: hipMemLocation { r#type: hipMemLocationType::hipMemLocationTypeDevice, id: p.dev as c_int },
            win32SecurityAttributes: std::ptr::null_mut(),
            maxSize: 0,
            reserved: [0; 56],
        },
        accessDescs: std::ptr::null(),
        accessDescCount: 0,
        bytesize: size,
        dptr: std::ptr::null_mut(),
    };
    let access = (0..rt.devices.len()).filter(|&d| d != p.dev && rt.mempool_get_access(p, d) != 0).collect();
    let a = rt.graph_mem_reserve(p.dev, access, params)?;
    let va = a.va;
    match crate::graph::capture_op(s, crate::graph::Op::MemAlloc(a))? {
        None => Ok(va),
        // The capture ended meanwhile: allocate as outside a capture.
        Some(_) => rt.mempool_alloc(p, size as u64, s),
    }
}

/// `hipMallocAsync`: `size` bytes of device memory from the current pool of `stream`'s device,
/// usable in `stream`'s order (reusing a block freed earlier on it, or one whose work is done).
/// `size == 0` gives null. Errors (clr): `hipErrorInvalidValue` (null `dev_ptr`),
/// `hipErrorInvalidHandle` (destroyed stream), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMallocAsync(dev_ptr: *mut *mut c_void, size: usize, stream: hipStream_t) -> hipError_t {
    malloc_async(dev_ptr, size, None, stream)
}

/// `hipMallocFromPoolAsync`: as `hipMallocAsync` from `mem_pool`. Errors: also
/// `hipErrorInvalidValue` for a null or destroyed pool.
#[no_mangle]
pub extern "C" fn hipMallocFromPoolAsync(
    dev_ptr: *mut *mut c_void,
    size: usize,
    mem_pool: hipMemPool_t,
    stream: hipStream_t,
) -> hipError_t {
    malloc_async(dev_ptr, size, Some(mem_pool), stream)
}

/// `hipFreeAsync`: returns pool memory to its pool in `stream`'s order (reusable by later work
/// on `stream` at once, elsewhere once `stream`'s earlier work is done). Other device memory is
/// freed after `stream`'s work (clr falls back to `hipFree`). Errors (clr):
/// `hipErrorInvalidValue` (null, not an allocation's base), `hipErrorInvalidHandle` (destroyed
/// stream).
#[no_mangle]
pub extern "C" fn hipFreeAsync(dev_ptr: *mut c_void, stream: hipStream_t) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null())?;
        let (rt, _) = rt_dev()?;
        let s = alloc_stream(rt, stream)?;
        // While `s` captures: a free node (clr `capturehipFreeAsync`); memory other than graph
        // memory is freed when it runs, as here.
        match crate::graph::capture_op(&s, crate::graph::Op::MemFree(dev_ptr as u64))? {
            None => Ok(()),
            Some(_) => rt.mempool_free(dev_ptr as u64, &s),
        }
    })
}

/// `hipMemPoolCreate`: a pool of device memory whose reserved high-water mark stays within
/// `maxSize` bytes, as clr's (0: no limit; ROCm 7 `hipMemPoolProps`; a ROCm 5 caller's pool has
/// no limit). Errors (clr, in order):
/// `hipErrorInvalidValue` (null arguments, `allocType` other than pinned, a location that is not
/// a visible device), `hipErrorStreamCaptureUnsupported` (this thread captures in Global or
/// ThreadLocal mode, or another in Global mode; the captures go on).
#[no_mangle]
pub extern "C" fn hipMemPoolCreate(mem_pool: *mut hipMemPool_t, pool_props: *const hipMemPoolProps) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null())?;
        let props = read_in(pool_props)?;
        check(props.allocType == hipMemAllocationType::hipMemAllocationTypePinned)?;
        let dev = location_device(&props.location)?;
        let rt = runtime()?;
        crate::graph::check_no_capture()?;
        // ROCm 5's hipMemPoolProps has reserved bytes where maxSize is.
        let max_size = if rocm5_caller() { 0 } else { props.maxSize as u64 };
        write_out(mem_pool, handle(&rt.mempool_create(dev, props.handleTypes.0, max_size)))
    })
}

/// `hipMemPoolDestroy`: frees the pool's kept blocks (after their work) and forgets it.
/// Errors (clr): `hipErrorInvalidValue` (null, destroyed, a device's default pool).
#[no_mangle]
pub extern "C" fn hipMemPoolDestroy(mem_pool: hipMemPool_t) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        rt.mempool_destroy(&pool_of(rt, mem_pool)?)
    })
}

/// `hipDeviceGetDefaultMemPool`. Errors: `hipErrorInvalidValue` (null),
/// `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDeviceGetDefaultMemPool(mem_pool: *mut hipMemPool_t, device: c_int) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null())?;
        let rt = runtime()?;
        let d = rt.device(device)?.ordinal;
        write_out(mem_pool, handle(&rt.mempool_default(d)))
    })
}

/// `hipDeviceGetMemPool`: the pool `hipMallocAsync` uses on `device`. Errors (clr):
/// `hipErrorInvalidValue` (null, bad device).
#[no_mangle]
pub extern "C" fn hipDeviceGetMemPool(mem_pool: *mut hipMemPool_t, device: c_int) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null())?;
        let rt = runtime()?;
        let d = rt.device(device).map_err(|_| hipError_t::hipErrorInvalidValue)?.ordinal;
        write_out(mem_pool, handle(&rt.mempool_current(d)))
    })
}

/// `hipDeviceSetMemPool`. Errors (clr): `hipErrorInvalidValue` (null or unknown pool, bad
/// device), `hipErrorInvalidDevice` (the pool belongs to another device).
#[no_mangle]
pub extern "C" fn hipDeviceSetMemPool(device: c_int, mem_pool: hipMemPool_t) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        let d = rt.device(device).map_err(|_| hipError_t::hipErrorInvalidValue)?.ordinal;
        rt.mempool_set_current(d, p)
    })
}

/// `hipMemPoolTrimTo`: releases kept blocks whose work is done until at most
/// `min_bytes_to_hold` bytes stay reserved. Errors: `hipErrorInvalidValue` (null or unknown
/// pool).
#[no_mangle]
pub extern "C" fn hipMemPoolTrimTo(mem_pool: hipMemPool_t, min_bytes_to_hold: usize) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        rt.mempool_trim(&*pool_of(rt, mem_pool)?, min_bytes_to_hold as u64);
        Ok(())
    })
}

fn is_int_attr(a: hipMemPoolAttr) -> bool {
    (attr::REUSE_FOLLOW_EVENT_DEPENDENCIES..=attr::REUSE_ALLOW_INTERNAL_DEPENDENCIES).contains(&a.0)
}

/// `hipMemPoolSetAttribute`: `value` points to an `int` (reuse flags) or a `uint64_t`
/// (release threshold; the high marks accept only 0, a reset). Errors (clr
/// `MemoryPool::SetAttribute`): `hipErrorInvalidValue` (null, unknown pool, read-only or
/// unknown attribute, a non-zero high mark).
#[no_mangle]
pub extern "C" fn hipMemPoolSetAttribute(
    mem_pool: hipMemPool_t,
    attr: hipMemPoolAttr,
    value: *mut c_void,
) -> hipError_t {
    api(|| {
        check(!value.is_null())?;
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        let v = if is_int_attr(attr) {
            AttrValue::Int(read_in(value as *const i32)?)
        } else {
            AttrValue::U64(read_in(value as *const u64)?)
        };
        rt.mempool_set_attr(&p, attr.0, v)
    })
}

/// `hipMemPoolGetAttribute`: writes an `int` (reuse flags) or a `uint64_t` (threshold and the
/// reserved/used byte counters, current and high). Errors: `hipErrorInvalidValue` (null,
/// unknown pool or attribute).
#[no_mangle]
pub extern "C" fn hipMemPoolGetAttribute(
    mem_pool: hipMemPool_t,
    attr: hipMemPoolAttr,
    value: *mut c_void,
) -> hipError_t {
    api(|| {
        check(!value.is_null())?;
        let rt = runtime()?;
        match rt.mempool_get_attr(&*pool_of(rt, mem_pool)?, attr.0)? {
            AttrValue::Int(i) => write_out(value as *mut i32, i),
            AttrValue::U64(u) => write_out(value as *mut u64, u),
        }
    })
}

/// `hipMemPoolSetAccess`: records each device's access to the pool's memory (peer devices reach
/// it as they reach `hipMalloc` memory, through `hipDeviceEnablePeerAccess`). Errors (clr, in
/// its order): `hipErrorInvalidValue` (null), `hipErrorInvalidDevice` (more entries than
/// devices, a bad device, `ProtNone`), `hipErrorInvalidValue` (unknown flags, a location that
/// is not a device).
#[no_mangle]
pub extern "C" fn hipMemPoolSetAccess(
    mem_pool: hipMemPool_t,
    desc_list: *const hipMemAccessDesc,
    count: usize,
) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null() && !desc_list.is_null())?;
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        if count > rt.devices.len() {
            return Err(hipError_t::hipErrorInvalidDevice);
        }
        for d in slice_in(desc_list, count)? {
            check(d.location.r#type == hipMemLocationType::hipMemLocationTypeDevice)?;
            let dev = rt.device(d.location.id)?.ordinal;
            if d.flags == hipMemAccessFlags::hipMemAccessFlagsProtNone {
                return Err(hipError_t::hipErrorInvalidDevice);
            }
            check(
                d.flags == hipMemAccessFlags::hipMemAccessFlagsProtRead
                    || d.flags == hipMemAccessFlags::hipMemAccessFlagsProtReadWrite,
            )?;
            rt.mempool_set_access(&p, dev, d.flags.0)?;
        }
        Ok(())
    })
}

/// `hipMemPoolGetAccess`: a device's access to the pool (`ReadWrite` for the pool's own device,
/// `None` for others until set). Errors (clr): `hipErrorInvalidValue` (null, unknown pool, a
/// location that is not a visible device).
#[no_mangle]
pub extern "C" fn hipMemPoolGetAccess(
    flags: *mut hipMemAccessFlags,
    mem_pool: hipMemPool_t,
    location: *mut hipMemLocation,
) -> hipError_t {
    api(|| {
        check(!flags.is_null())?;
        let loc = read_in(location as *const hipMemLocation)?;
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        let dev = location_device(&loc)?;
        write_out(flags, hipMemAccessFlags(rt.mempool_get_access(&p, dev)))
    })
}

// ---- sharing pools between processes (clr `hip_mempool.cpp`) ---------------------------------

/// `hipMemPoolExportToShareableHandle`: writes the pool's POSIX fd (an `int`) to
/// `*shared_handle`: a memfd describing the pool, the same fd on every export, open until the
/// pool is destroyed; send it to another process (`SCM_RIGHTS`), which imports it with
/// `hipMemPoolImportFromShareableHandle`. Errors (clr; hip-tests
/// `hipMemPoolExportToShareableHandle.cc`): `hipErrorInvalidValue` (null handle or pool, nonzero
/// `flags`, a handle type other than the pool's `handleTypes` or `hipMemHandleTypeNone`),
/// `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMemPoolExportToShareableHandle(
    shared_handle: *mut c_void,
    mem_pool: hipMemPool_t,
    handle_type: hipMemAllocationHandleType,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null() && !shared_handle.is_null() && flags == 0)?;
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        check(handle_type.0 == p.handle_types && handle_type != hipMemAllocationHandleType::hipMemHandleTypeNone)?;
        let fd = rt.mempool_export(&p)?;
        write_out(shared_handle as *mut c_int, fd)
    })
}

/// `hipMemPoolImportFromShareableHandle`: a pool of this process standing for the exporter's
/// (its device and access flags), from the fd `hipMemPoolExportToShareableHandle` gave, passed
/// as the pointer's value (its low 32 bits, as clr reads it); the fd stays the caller's.
/// Errors (clr): `hipErrorInvalidValue` (null `mem_pool` or handle, nonzero `flags`,
/// `hipMemHandleTypeNone`), `hipErrorOutOfMemory` (not a pool's handle).
#[no_mangle]
pub extern "C" fn hipMemPoolImportFromShareableHandle(
    mem_pool: *mut hipMemPool_t,
    shared_handle: *mut c_void,
    handle_type: hipMemAllocationHandleType,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null() && !shared_handle.is_null() && flags == 0)?;
        check(handle_type != hipMemAllocationHandleType::hipMemHandleTypeNone)?;
        let rt = runtime()?;
        let p = rt.mempool_import(shared_handle as usize as u32 as c_int)?;
        write_out(mem_pool, handle(&p))
    })
}

/// `hipMemPoolExportPointer`: the 64-byte IPC description of `ptr` (an allocation of a pool,
/// or any `hipMalloc` memory, as clr allows), for `hipMemPoolImportPointer` in a process that
/// imported the pool: the handle `hipIpcGetMemHandle` gives (src/share/ipc.rs). Errors (clr):
/// `hipErrorInvalidValue` (null arguments), `hipErrorOutOfMemory` (not device memory of this
/// process).
#[no_mangle]
pub extern "C" fn hipMemPoolExportPointer(export_data: *mut hipMemPoolPtrExportData, ptr: *mut c_void) -> hipError_t {
    api(|| {
        check(!export_data.is_null() && !ptr.is_null())?;
        let h = runtime()?.ipc_get_mem_handle(ptr as u64).map_err(|_| hipError_t::hipErrorOutOfMemory)?;
        write_out(export_data, hipMemPoolPtrExportData { reserved: h.to_bytes() })
    })
}

/// `hipMemPoolImportPointer`: maps the allocation `export_data` describes into this process (on
/// `mem_pool`'s device) and returns its pointer; in the exporting process, its own pointer.
/// Free it with `hipFree`/`hipFreeAsync` (before the exporter frees it). Errors (clr):
/// `hipErrorInvalidValue` (null arguments, unknown pool), `hipErrorOutOfMemory` (not a pointer
/// export, exporter gone, allocation freed).
#[no_mangle]
pub extern "C" fn hipMemPoolImportPointer(
    ptr: *mut *mut c_void,
    mem_pool: hipMemPool_t,
    export_data: *mut hipMemPoolPtrExportData,
) -> hipError_t {
    api(|| {
        check(!mem_pool.is_null() && !export_data.is_null() && !ptr.is_null())?;
        let rt = runtime()?;
        let p = pool_of(rt, mem_pool)?;
        let data = read_in(export_data)?;
        let h = crate::share::ipc::Handle::parse(&data.reserved, crate::share::ipc::KIND_MEM)
            .ok_or(hipError_t::hipErrorOutOfMemory)?;
        let v = rt.mempool_import_pointer(&p, &h)?;
        write_out(ptr, v as *mut c_void)
    })
}
