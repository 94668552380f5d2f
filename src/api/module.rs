//! Modules and execution control (clr `hip_module.cpp`, `hip_platform.cpp`): what hipcc-built
//! programs call from their constructors (`__hipRegisterFatBinary`, `__hipRegisterFunction`,
//! `__hipRegisterVar`, ...) and at every `<<<...>>>` (`__hipPushCallConfiguration`,
//! `__hipPopCallConfiguration`, `hipLaunchKernel`), and the module API (`hipModuleLoad*`,
//! `hipModuleGetFunction`, `hipModuleLaunchKernel`, `hipFuncGetAttributes`, ...).
//!
//! Registration and module loading parse the code objects for real (src/kernels/module.rs). Every launch
//! validates its arguments with the error codes AMD's hip-tests expect (ROCm 7:
//! `Unit_hipLaunchKernel_Negative_Parameters`, `hip_module_launch_kernel_common.hh`), then runs
//! asynchronously on the device's AQL queue in stream order (src/kernels/aql.rs), or becomes a kernel
//! node of the stream's capture. A kernel that faults makes later synchronisation return
//! `hipErrorIllegalAddress`, as a faulting copy does. Device globals are real: the
//! code object's segments are loaded into device memory on first use of a symbol
//! (`hipGetSymbolAddress`, `hipMemcpyToSymbol`, `hipModuleGetGlobal`), relocated, with their
//! initial values.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, current_device, event_of, rt_dev, stream_of, write_out};
use crate::core::runtime::{runtime, Runtime};
use crate::kernels::aql::{Args, KernelNode};
use crate::kernels::module::{
    registry, validate_launch, CodeObjectError, Function, Image, ImageBytes, LaunchDims, Registry, BUNDLE_MAGIC,
    COMPRESSED_MAGIC, ELF_MAGIC,
};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::Arc;

/// `__CudaFatBinaryWrapper` as hip-clang emits it in `.hipFatBinSegment`.
#[repr(C)]
struct FatBinaryWrapper {
    magic: c_uint,
    version: c_uint,
    binary: *const c_void,
    dummy1: *mut c_void,
}

/// `__hipFatMAGIC2`, "HIPF".
const HIP_FAT_MAGIC: c_uint = 0x4849_5046;

/// The image (offload bundle or ELF) at `p`, whose length only its own headers tell.
///
/// # Safety
/// `p` is non-null and points to readable bytes: a complete image, or anything that does not
/// start with a bundle or ELF magic (read byte by byte until it differs, so a short C string
/// such as `""` is never read past its NUL).
pub(crate) unsafe fn image_at<'a>(p: *const u8) -> Result<&'a [u8], CodeObjectError> {
    for n in 1..=COMPRESSED_MAGIC.len() {
        // SAFETY: the first n-1 bytes matched a magic, so (per the contract) byte n-1 exists.
        let seen = unsafe { std::slice::from_raw_parts(p, n) };
        if ![BUNDLE_MAGIC, ELF_MAGIC, COMPRESSED_MAGIC].iter().any(|m| m.starts_with(seen)) {
            return Err(CodeObjectError::NotAnImage);
        }
    }
    let mut len = 64;
    loop {
        // SAFETY: the image's headers said it is at least `len` bytes long (the contract).
        let d = unsafe { std::slice::from_raw_parts(p, len) };
        match crate::kernels::module::image_len(d) {
            Ok(n) if n <= len => return Ok(&d[..n]),
            Ok(n) | Err(CodeObjectError::NeedMore(n)) if n > len => len = n,
            Ok(_) => unreachable!(),
            Err(e) => return Err(e),
        }
    }
}

pub(crate) fn cstr<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null NUL-terminated string from the caller (HIP API contract).
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

// ---------------------------------------------------------------------------------------------
// Registration (hip-clang's module constructor and destructor)
// ---------------------------------------------------------------------------------------------

/// `void** __hipRegisterFatBinary(const void* data)`: `data` is hip-clang's
/// `__CudaFatBinaryWrapper` (magic `0x48495046` "HIPF", version 1, the offload bundle in
/// `.hip_fatbin`). Returns the handle the program passes to the other registration calls, or
/// null (logged) for a bad wrapper or an unusable bundle. Code objects are chosen per device
/// and parsed on first use; the runtime is not initialised here (clr defers too). A compressed
/// bundle (`CCOB`) is registered without code objects (its kernels report
/// `hipErrorNoBinaryForGpu`) and said so on stderr.
///
/// # Safety
/// `data` is null or points to a wrapper whose bundle stays mapped until
/// `__hipUnregisterFatBinary`.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let Ok(w) = crate::api::common::read_in(data as *const FatBinaryWrapper) else { return std::ptr::null_mut() };
    if w.magic != HIP_FAT_MAGIC || w.version != 1 || w.binary.is_null() {
        eprintln!("hipkfd: cannot register fat binary: magic {:#x} version {}", w.magic, w.version);
        return std::ptr::null_mut();
    }
    let binary = w.binary as usize;
    // Parsing never unwinds into the program's constructor.
    let image = std::panic::catch_unwind(|| {
        // SAFETY: hip-clang's wrapper points to the bundle in the program's `.hip_fatbin`,
        // mapped for as long as the program or library is (the contract above).
        unsafe { image_at(binary as *const u8) }.and_then(|d| Image::new(ImageBytes::Static(d)))
    });
    let image = match image {
        Ok(Ok(i)) => i,
        Ok(Err(e)) => {
            eprintln!("hipkfd: fat binary at {binary:#x}: {e}");
            Image::empty()
        }
        Err(_) => {
            eprintln!("hipkfd: fat binary at {binary:#x}: unreadable");
            Image::empty()
        }
    };
    registry().lock().add_fatbin(image) as *mut *mut c_void
}

/// `void __hipUnregisterFatBinary(void** modules)`: forgets the fat binary and the functions and
/// variables registered from it (their handles become invalid). Unknown handles are ignored.
#[no_mangle]
pub extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    registry().lock().remove_fatbin(modules as usize);
}

/// `void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
/// const char* deviceName, unsigned int threadLimit, uint3* tid, uint3* bid, dim3* blockDim,
/// dim3* gridDim, int* wSize)`: records the kernel `deviceName` of fat binary `modules` under
/// its host stub's address (what `hipLaunchKernel` receives). The first registration of an
/// address wins (clr); null or unknown arguments are ignored (logged).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    hostFunction: *const c_void,
    deviceFunction: *mut c_char,
    deviceName: *const c_char,
    threadLimit: c_uint,
    tid: *mut c_void,
    bid: *mut c_void,
    blockDim: *mut dim3,
    gridDim: *mut dim3,
    wSize: *mut c_int,
) {
    let _ = (deviceFunction, threadLimit, tid, bid, blockDim, gridDim, wSize);
    let ok = match cstr(deviceName) {
        Some(name) if !hostFunction.is_null() => {
            registry().lock().add_host_function(modules as usize, hostFunction as usize, name)
        }
        _ => false,
    };
    if !ok {
        crate::core::log::hipkfd_log!("__hipRegisterFunction({modules:p}, {hostFunction:p}) ignored");
    }
}

fn register_var(modules: *mut *mut c_void, var: *mut c_void, hostVar: *const c_char, size: usize) {
    let ok = match cstr(hostVar) {
        Some(name) if !var.is_null() => registry().lock().add_var(
            var as usize,
            crate::kernels::module::Var { name: name.to_string(), size, fatbin: modules as usize },
        ),
        _ => false,
    };
    if !ok {
        crate::core::log::hipkfd_log!("registration of device variable {var:p} ignored");
    }
}

/// `void __hipRegisterVar(void** modules, void* var, char* hostVar, char* deviceVar, int ext,
/// size_t size, int constant, int global)`: records a `__device__` / `__constant__` variable
/// under its host shadow's address (`hipGetSymbolSize` answers from it).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __hipRegisterVar(
    modules: *mut *mut c_void,
    var: *mut c_void,
    hostVar: *mut c_char,
    deviceVar: *mut c_char,
    ext: c_int,
    size: usize,
    constant: c_int,
    global: c_int,
) {
    let _ = (deviceVar, ext, constant, global);
    register_var(modules, var, hostVar, size);
}

/// `void __hipRegisterSurface(void** modules, void* var, char* hostVar, char* deviceVar, int
/// type, int ext)`: recorded as a variable (surfaces are not supported otherwise).
#[no_mangle]
pub extern "C" fn __hipRegisterSurface(
    modules: *mut *mut c_void,
    var: *mut c_void,
    hostVar: *mut c_char,
    deviceVar: *mut c_char,
    type_: c_int,
    ext: c_int,
) {
    let _ = (deviceVar, type_, ext);
    register_var(modules, var, hostVar, 0);
}

/// `void __hipRegisterTexture(void** modules, void* var, char* hostVar, char* deviceVar, int
/// type, int norm, int ext)`: recorded as a variable (textures are not supported otherwise).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __hipRegisterTexture(
    modules: *mut *mut c_void,
    var: *mut c_void,
    hostVar: *mut c_char,
    deviceVar: *mut c_char,
    type_: c_int,
    norm: c_int,
    ext: c_int,
) {
    let _ = (deviceVar, type_, norm, ext);
    register_var(modules, var, hostVar, 0);
}

/// `void __hipRegisterManagedVar(void* hipModule, void** pointer, void* init_value, const char*
/// name, size_t size, unsigned align)`: records a `__managed__` variable and points `*pointer`
/// at host memory holding `init_value` (what clr does with deferred loading), so host code reads
/// and writes it; kernels cannot see it until managed memory and code loading exist.
///
/// # Safety
/// `pointer` is null or writable; `init_value` is null or readable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterManagedVar(
    hipModule: *mut c_void,
    pointer: *mut *mut c_void,
    init_value: *mut c_void,
    name: *const c_char,
    size: usize,
    align: c_uint,
) {
    let (Some(name), false, false) = (cstr(name), pointer.is_null(), init_value.is_null() && size > 0) else {
        crate::core::log::hipkfd_log!("__hipRegisterManagedVar({pointer:p}) ignored");
        return;
    };
    let init: &[u8] = if size == 0 {
        &[]
    } else {
        // SAFETY: non-null and readable for `size` bytes (the contract).
        unsafe { std::slice::from_raw_parts(init_value as *const u8, size) }
    };
    if let Some(addr) = registry().lock().add_managed(hipModule as usize, name, init, align as usize) {
        let _ = write_out(pointer, addr as *mut c_void);
    }
}

// ---------------------------------------------------------------------------------------------
// Call configuration (`<<<grid, block, shared, stream>>>`)
// ---------------------------------------------------------------------------------------------

/// One pushed launch configuration, with the arguments `hipSetupArgument` packs.
struct Exec {
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
    args: Vec<u8>,
}

thread_local! {
    /// The calling thread's configuration stack (clr `hip::tls.exec_stack_`).
    static EXEC: RefCell<Vec<Exec>> = const { RefCell::new(Vec::new()) };
}

fn push_exec(grid: dim3, block: dim3, shared: usize, stream: hipStream_t) {
    EXEC.with(|e| e.borrow_mut().push(Exec { grid, block, shared, stream, args: vec![] }));
}

/// The top configuration. Errors: `hipErrorMissingConfiguration` when none was pushed (clr's
/// stack would be popped empty).
fn pop_exec() -> Result<Exec, hipError_t> {
    EXEC.with(|e| e.borrow_mut().pop()).ok_or(hipError_t::hipErrorMissingConfiguration)
}

/// `hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
/// hipStream_t stream)`: pushes a launch configuration on the calling thread's stack (hip-clang
/// emits it for `<<<...>>>`; the kernel stub pops it). Always `hipSuccess`.
#[no_mangle]
pub extern "C" fn __hipPushCallConfiguration(
    gridDim: dim3,
    blockDim: dim3,
    sharedMem: usize,
    stream: hipStream_t,
) -> hipError_t {
    push_exec(gridDim, blockDim, sharedMem, stream);
    hipError_t::hipSuccess
}

/// `hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
/// hipStream_t* stream)`: pops the thread's last configuration into the four out-pointers.
/// Errors: `hipErrorInvalidValue` for a null pointer (nothing popped),
/// `hipErrorMissingConfiguration` when the stack is empty.
#[no_mangle]
pub extern "C" fn __hipPopCallConfiguration(
    gridDim: *mut dim3,
    blockDim: *mut dim3,
    sharedMem: *mut usize,
    stream: *mut hipStream_t,
) -> hipError_t {
    api(|| {
        check(!gridDim.is_null() && !blockDim.is_null() && !sharedMem.is_null() && !stream.is_null())?;
        let e = pop_exec()?;
        write_out(gridDim, e.grid)?;
        write_out(blockDim, e.block)?;
        write_out(sharedMem, e.shared)?;
        write_out(stream, e.stream)
    })
}

/// `hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t
/// stream)`: the legacy form of [`__hipPushCallConfiguration`], for `hipSetupArgument` and
/// `hipLaunchByPtr`.
#[no_mangle]
pub extern "C" fn hipConfigureCall(gridDim: dim3, blockDim: dim3, sharedMem: usize, stream: hipStream_t) -> hipError_t {
    push_exec(gridDim, blockDim, sharedMem, stream);
    hipError_t::hipSuccess
}

/// `hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset)`: copies `size`
/// bytes of `arg` to `offset` of the top configuration's argument buffer (clr
/// `PlatformState::setupArgument`). Errors: `hipErrorInvalidValue` (null `arg` with a size, or
/// an offset past 4 KiB, the kernarg limit), `hipErrorMissingConfiguration`.
#[no_mangle]
pub extern "C" fn hipSetupArgument(arg: *const c_void, size: usize, offset: usize) -> hipError_t {
    api(|| {
        check(size == 0 || !arg.is_null())?;
        let end = offset.checked_add(size).filter(|e| *e <= 4096).ok_or(hipError_t::hipErrorInvalidValue)?;
        let bytes = crate::api::common::slice_in(arg as *const u8, size).unwrap_or(&[]);
        EXEC.with(|e| {
            let mut e = e.borrow_mut();
            let top = e.last_mut().ok_or(hipError_t::hipErrorMissingConfiguration)?;
            if top.args.len() < end {
                top.args.resize(end, 0);
            }
            top.args[offset..end].copy_from_slice(bytes);
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Launches
// ---------------------------------------------------------------------------------------------

fn dims(grid: dim3, block: dim3, shared: usize) -> LaunchDims {
    LaunchDims { grid: [grid.x, grid.y, grid.z], block: [block.x, block.y, block.z], shared }
}

/// The function a `hipLaunchKernel`-style pointer names: a hipcc kernel's host stub, or (as
/// newer clr accepts) a `hipFunction_t`. Errors: `hipErrorInvalidDeviceFunction`.
pub(crate) fn host_function(f: *const c_void) -> Result<Arc<Function>, hipError_t> {
    let r = registry().lock();
    r.host_function(f as usize).or_else(|| r.function(f as usize)).ok_or(hipError_t::hipErrorInvalidDeviceFunction)
}

/// The device of a launch's stream. Errors: `bad_stream` for an unknown or destroyed stream.
fn launch_device(rt: &Runtime, stream: hipStream_t, bad_stream: hipError_t) -> Result<usize, hipError_t> {
    stream_of(rt, stream).map(|s| s.dev).map_err(|_| bad_stream)
}

/// The checks every launch shares once its geometry is valid (clr `ihipModuleLaunchKernel`):
/// [`validate_launch`] against the stream's device `dev`; then the launch, with its own copy of
/// the arguments, goes to the stream (src/kernels/aql.rs) or, on a capturing stream, into the capture's
/// graph as a kernel node (`Runtime::enqueue`). A kernel launched on another device's stream
/// runs on that stream's device, as clr's `ihipLaunchKernel` does (`hip::Stream::DeviceId`;
/// hip-tests `hipMemcpyPeerAsync.cc` launch on a stream made before `hipSetDevice`).
#[allow(clippy::too_many_arguments)]
fn launch(
    rt: &Runtime,
    dev: usize,
    f: &Arc<Function>,
    d: &LaunchDims,
    stream: hipStream_t,
    args: Args,
    params: hipKernelNodeParams,
    events: Around,
) -> Result<(), hipError_t> {
    let props = &rt.devices[dev].props;
    validate_launch(f, props, d, args.given())?;
    let s = stream_of(rt, stream)?;
    let node = KernelNode::new(f.clone(), params, args, &crate::core::device_props::arch_name(props))?;
    let record = |e: &Option<Arc<crate::core::event::Event>>| match e {
        Some(e) => rt.enqueue(&s, crate::graph::Op::EventRecord(Arc::downgrade(e))),
        None => Ok(()),
    };
    record(&events[0])?;
    rt.enqueue(&s, crate::graph::Op::Kernel(Arc::new(node)))?;
    record(&events[1])
}

/// Events recorded just before and just after a launch (`hipExtLaunchKernel`).
type Around = [Option<Arc<crate::core::event::Event>>; 2];

/// The start and stop events of `hipExtLaunchKernel`/`hipExtModuleLaunchKernel`, each optional
/// (null). Errors: `hipErrorInvalidValue` for an unknown event.
fn launch_events(start: hipEvent_t, stop: hipEvent_t) -> Result<Around, hipError_t> {
    let ev = |e: hipEvent_t| match e.is_null() {
        true => Ok(None),
        false => event_of(e).map(Some).map_err(|_| hipError_t::hipErrorInvalidValue),
    };
    Ok([ev(start)?, ev(stop)?])
}

/// The kernel-node parameters of a launch (what a capture records).
fn node_params(func: *const c_void, grid: [c_uint; 3], block: [c_uint; 3], shared: usize) -> hipKernelNodeParams {
    hipKernelNodeParams {
        blockDim: dim3 { x: block[0], y: block[1], z: block[2] },
        extra: std::ptr::null_mut(),
        func: func as *mut c_void,
        gridDim: dim3 { x: grid[0], y: grid[1], z: grid[2] },
        kernelParams: std::ptr::null_mut(),
        sharedMemBytes: shared as u32,
    }
}

/// `hipLaunchKernel` and `hipExtLaunchKernel` (clr `ihipLaunchKernel`, ROCm 7).
fn launch_kernel(
    f: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
    events: Around,
) -> Result<(), hipError_t> {
    if f.is_null() {
        return Err(hipError_t::hipErrorInvalidDeviceFunction);
    }
    let rt = runtime()?;
    let dev = launch_device(rt, stream, hipError_t::hipErrorInvalidValue)?;
    let func = host_function(f)?;
    let d = dims(grid, block, shared);
    let p = &rt.devices[dev].props;
    if !d.valid_for(p) {
        return Err(hipError_t::hipErrorInvalidConfiguration);
    }
    let params = node_params(f, d.grid, d.block, shared);
    launch(rt, dev, &func, &d, stream, Args::Params(args), params, events)
}

/// `hipError_t hipLaunchKernel(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
/// void** args, size_t sharedMemBytes, hipStream_t stream)`: what `<<<...>>>` and
/// `hipLaunchKernelGGL` end in. Errors (hip-tests `Unit_hipLaunchKernel_Negative_Parameters`,
/// ROCm 7): `hipErrorInvalidDeviceFunction` (null or unregistered function),
/// `hipErrorInvalidValue` (destroyed stream; `sharedMemBytes` over `sharedMemPerBlock`; no
/// `args` for a kernel with parameters), `hipErrorInvalidConfiguration` (a zero dimension, a
/// block dimension or block size over the device's limits, a grid over `maxGridSize`),
/// `hipErrorInvalidResourceHandle` (stream of another device), `hipErrorNoBinaryForGpu`,
/// `hipErrorLaunchFailure` (block over the kernel's launch bounds), `hipErrorIllegalAddress`
/// (after a GPU fault).
#[no_mangle]
pub extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    api(|| launch_kernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, Default::default()))
}

/// `hipError_t hipExtLaunchKernel(const void* function_address, dim3 numBlocks, dim3
/// dimBlocks, void** args, size_t sharedMemBytes, hipStream_t stream, hipEvent_t startEvent,
/// hipEvent_t stopEvent, int flags)`: [`hipLaunchKernel`] with `startEvent` recorded just before
/// the kernel and `stopEvent` just after it (each when non-null; nothing is recorded when the
/// launch is refused). Errors: `hipErrorInvalidValue` for an unknown event, else as
/// [`hipLaunchKernel`].
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipExtLaunchKernel(
    function_address: *const c_void,
    numBlocks: dim3,
    dimBlocks: dim3,
    args: *mut *mut c_void,
    sharedMemBytes: usize,
    stream: hipStream_t,
    startEvent: hipEvent_t,
    stopEvent: hipEvent_t,
    flags: c_int,
) -> hipError_t {
    let _ = flags;
    api(|| {
        let events = launch_events(startEvent, stopEvent)?;
        launch_kernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, events)
    })
}

/// `hipError_t hipLaunchCooperativeKernel(const void* f, dim3 gridDim, dim3 blockDimX, void**
/// kernelParams, unsigned int sharedMemBytes, hipStream_t stream)`. Errors (clr
/// `hipLaunchCooperativeKernel_common`, hip-tests `Unit_hipLaunchCooperativeKernel_Negative_*`):
/// `hipErrorContextIsDestroyed` (destroyed stream), `hipErrorInvalidDeviceFunction`,
/// `hipErrorInvalidConfiguration` (geometry as [`hipLaunchKernel`]),
/// `hipErrorCooperativeLaunchTooLarge` (`sharedMemBytes` over the LDS), then as
/// [`hipLaunchKernel`]. The grid is not limited to what fits on the device at once (the
/// simulated GPU runs workgroups one after another).
#[no_mangle]
pub extern "C" fn hipLaunchCooperativeKernel(
    f: *const c_void,
    gridDim: dim3,
    blockDimX: dim3,
    kernelParams: *mut *mut c_void,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let dev = launch_device(rt, stream, hipError_t::hipErrorContextIsDestroyed)?;
        if f.is_null() {
            return Err(hipError_t::hipErrorInvalidDeviceFunction);
        }
        let func = host_function(f)?;
        let d = dims(gridDim, blockDimX, sharedMemBytes as usize);
        let p = &rt.devices[dev].props;
        if !d.valid_for(p) {
            return Err(hipError_t::hipErrorInvalidConfiguration);
        }
        if d.shared > p.sharedMemPerBlock {
            return Err(hipError_t::hipErrorCooperativeLaunchTooLarge);
        }
        let params = node_params(f, d.grid, d.block, d.shared);
        launch(rt, dev, &func, &d, stream, Args::Params(kernelParams), params, Default::default())
    })
}

/// Reads `extra[]` (`HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE,
/// &size, HIP_LAUNCH_PARAM_END`): the argument buffer it names (`Args::None` for a null or empty
/// one). Errors: `hipErrorInvalidValue` for any other shape (clr `ihipLaunchKernelCommand`).
pub(crate) fn extra_args<'a>(extra: *mut *mut c_void) -> Result<Args<'a>, hipError_t> {
    let at = |i: usize| crate::api::common::read_in(extra.wrapping_add(i) as *const *mut c_void);
    if at(0)? != HIP_LAUNCH_PARAM_BUFFER_POINTER
        || at(2)? != HIP_LAUNCH_PARAM_BUFFER_SIZE
        || at(4)? != HIP_LAUNCH_PARAM_END
    {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    let size = crate::api::common::read_in(at(3)? as *const usize).unwrap_or(0);
    let buf = at(1)?;
    if buf.is_null() || size == 0 {
        return Ok(Args::None);
    }
    Ok(Args::Buffer(crate::api::common::slice_in(buf as *const u8, size)?))
}

/// `hipModuleLaunchKernel` and `hipModuleLaunchCooperativeKernel` (clr ROCm 7): the stream
/// (`bad_stream`), the geometry (`bad_dims`), dynamic LDS (`hipErrorInvalidValue`), the stream's
/// device (`hipErrorInvalidResourceHandle`), the function (`hipErrorInvalidResourceHandle`),
/// the arguments, then [`launch`].
#[allow(clippy::too_many_arguments)]
fn module_launch(
    f: hipFunction_t,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    stream: hipStream_t,
    (bad_stream, bad_dims): (hipError_t, hipError_t),
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    events: Around,
    expected: Option<usize>,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let dev = launch_device(rt, stream, bad_stream)?;
        let d = LaunchDims { grid, block, shared: shared as usize };
        let p = &rt.devices[dev].props;
        if !d.valid_for(p) {
            return Err(bad_dims);
        }
        if d.shared > p.sharedMemPerBlock {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        if dev != expected.unwrap_or_else(current_device) {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        let func = registry().lock().function(f as usize).ok_or(hipError_t::hipErrorInvalidResourceHandle)?;
        if !kernelParams.is_null() && !extra.is_null() {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let args = if !kernelParams.is_null() {
            Args::Params(kernelParams)
        } else if !extra.is_null() {
            extra_args(extra)?
        } else {
            Args::None
        };
        let params = node_params(f as *const c_void, d.grid, d.block, d.shared);
        launch(rt, dev, &func, &d, stream, args, params, events)
    })
}

/// `hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int
/// gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned
/// int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream, void** kernelParams, void**
/// extra)`: grid in blocks. Errors (hip-tests `ModuleLaunchKernelNegativeParameters`, clr ROCm
/// 7): `hipErrorContextIsDestroyed` (destroyed stream), `hipErrorInvalidValue` (a zero
/// dimension, a dimension over the device's limits, `sharedMemBytes` over `sharedMemPerBlock`,
/// both `kernelParams` and `extra`, a malformed `extra`, no arguments for a kernel with
/// parameters), `hipErrorInvalidResourceHandle` (null, unknown or unloaded `f`; a stream of
/// another device), `hipErrorLaunchFailure` (block over the kernel's launch bounds),
/// `hipErrorIllegalAddress` (after a GPU fault).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    let codes = (hipError_t::hipErrorContextIsDestroyed, hipError_t::hipErrorInvalidValue);
    let (grid, block) = ([gridDimX, gridDimY, gridDimZ], [blockDimX, blockDimY, blockDimZ]);
    module_launch(f, grid, block, sharedMemBytes, stream, codes, kernelParams, extra, Default::default(), None)
}

/// `hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX, ...,
/// unsigned int sharedMemBytes, hipStream_t stream, void** kernelParams)`: as
/// [`hipModuleLaunchKernel`] without `extra`; an invalid stream is `hipErrorInvalidValue` and
/// an invalid geometry `hipErrorInvalidConfiguration` (clr `hipModuleLaunchCooperativeKernel`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipModuleLaunchCooperativeKernel(
    f: hipFunction_t,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
) -> hipError_t {
    let codes = (hipError_t::hipErrorInvalidValue, hipError_t::hipErrorInvalidConfiguration);
    let (grid, block) = ([gridDimX, gridDimY, gridDimZ], [blockDimX, blockDimY, blockDimZ]);
    let null = std::ptr::null_mut();
    module_launch(f, grid, block, sharedMemBytes, stream, codes, kernelParams, null, Default::default(), None)
}

/// `hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, ...,
/// uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream, void** kernelParams,
/// void** extra, hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags)` (`hip_ext.h`):
/// [`hipModuleLaunchKernel`] with the grid in work-items, each block dimension cut to the
/// grid's (clr `ihipModuleLaunchKernel`), and `startEvent`/`stopEvent` recorded around the
/// kernel as [`hipExtLaunchKernel`] records them. Errors: `hipErrorInvalidValue` (invalid stream
/// or event, a zero dimension, a grid that is not whole blocks: clr runs a partial last block
/// for kernels built without uniform work-groups, which hipkfd's launches do not have), else as
/// `hipModuleLaunchKernel`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipExtModuleLaunchKernel(
    f: hipFunction_t,
    globalWorkSizeX: u32,
    globalWorkSizeY: u32,
    globalWorkSizeZ: u32,
    localWorkSizeX: u32,
    localWorkSizeY: u32,
    localWorkSizeZ: u32,
    sharedMemBytes: usize,
    hStream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    startEvent: hipEvent_t,
    stopEvent: hipEvent_t,
    flags: u32,
) -> hipError_t {
    let _ = flags;
    let global = [globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ];
    let mut local = [localWorkSizeX, localWorkSizeY, localWorkSizeZ];
    let mut grid = [0; 3];
    for i in 0..3 {
        if global[i] == 0 || local[i] == 0 {
            return hipError_t::hipErrorInvalidValue;
        }
        local[i] = local[i].min(global[i]);
        if !global[i].is_multiple_of(local[i]) {
            return hipError_t::hipErrorInvalidValue;
        }
        grid[i] = global[i] / local[i];
    }
    let Ok(shared) = c_uint::try_from(sharedMemBytes) else { return hipError_t::hipErrorInvalidValue };
    let events = match launch_events(startEvent, stopEvent) {
        Ok(events) => events,
        Err(e) => return e,
    };
    let codes = (hipError_t::hipErrorInvalidValue, hipError_t::hipErrorInvalidValue);
    module_launch(f, grid, local, shared, hStream, codes, kernelParams, extra, events, None)
}

/// `hipError_t hipLaunchByPtr(const void* func)`: launches `func` with the configuration and
/// arguments of `hipConfigureCall` + `hipSetupArgument` (popped). Errors:
/// `hipErrorMissingConfiguration`, `hipErrorInvalidDeviceFunction`, `hipErrorInvalidValue`
/// (geometry), then as [`hipModuleLaunchKernel`].
#[no_mangle]
pub extern "C" fn hipLaunchByPtr(func: *const c_void) -> hipError_t {
    api(|| {
        let e = pop_exec()?;
        let rt = runtime()?;
        let dev = launch_device(rt, e.stream, hipError_t::hipErrorContextIsDestroyed)?;
        let f = host_function(func)?;
        let d = dims(e.grid, e.block, e.shared);
        if !d.valid_for(&rt.devices[dev].props) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let params = node_params(func, d.grid, d.block, d.shared);
        launch(rt, dev, &f, &d, e.stream, Args::Buffer(&e.args), params, Default::default())
    })
}

// ---------------------------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------------------------

/// Loads an image as a module for the current device. Errors: the image's
/// ([`CodeObjectError::hip`]), `hipErrorNoBinaryForGpu` when it has no code object for the
/// current device, `hipErrorInvalidImage` when that code object does not parse.
fn load_module(module: *mut hipModule_t, bytes: Vec<u8>) -> Result<(), hipError_t> {
    let (rt, d) = rt_dev()?;
    let image = Image::new(ImageBytes::Owned(bytes)).map_err(|e| {
        crate::core::log::hipkfd_log!("module: {e}");
        e.hip()
    })?;
    let arch = crate::core::device_props::arch_name(&rt.devices[d].props);
    image.code_object(&arch).map_err(|e| match e {
        hipError_t::hipErrorInvalidKernelFile => hipError_t::hipErrorInvalidImage,
        e => e,
    })?;
    let h = registry().lock().add_module(image);
    write_out(module, h as hipModule_t).inspect_err(|_| {
        registry().lock().remove_module(h);
    })
}

/// `hipError_t hipModuleLoad(hipModule_t* module, const char* fname)`: loads a code object file
/// (an offload bundle from `hipcc --genco`, or a bare AMDGPU ELF). Errors (hip-tests
/// `Unit_hipModuleLoad_Negative_*`): `hipErrorInvalidValue` (null `module`, null or empty
/// `fname`), `hipErrorFileNotFound` (unreadable file), `hipErrorInvalidImage` (not a code
/// object, empty), `hipErrorNoBinaryForGpu` (none for the current device),
/// `hipErrorNotSupported` (compressed bundle).
#[no_mangle]
pub extern "C" fn hipModuleLoad(module: *mut hipModule_t, fname: *const c_char) -> hipError_t {
    api(|| {
        check(!module.is_null())?;
        let path = cstr(fname).filter(|s| !s.is_empty()).ok_or(hipError_t::hipErrorInvalidValue)?;
        let bytes = std::fs::read(path).map_err(|_| hipError_t::hipErrorFileNotFound)?;
        load_module(module, bytes)
    })
}

/// `hipError_t hipModuleLoadData(hipModule_t* module, const void* image)`: loads a code object
/// from memory (its length is read from its headers; the bytes are copied). Errors:
/// `hipErrorInvalidValue` (null argument), then as [`hipModuleLoad`].
#[no_mangle]
pub extern "C" fn hipModuleLoadData(module: *mut hipModule_t, image: *const c_void) -> hipError_t {
    api(|| {
        check(!module.is_null() && !image.is_null())?;
        // SAFETY: non-null image from the caller, who promises a complete code object (HIP API
        // contract); anything else is rejected by its first bytes.
        let d = unsafe { image_at(image as *const u8) }.map_err(|e| e.hip())?;
        load_module(module, d.to_vec())
    })
}

/// `hipError_t hipModuleLoadDataEx(hipModule_t* module, const void* image, unsigned int
/// numOptions, hipJitOption* options, void** optionsValues)`: [`hipModuleLoadData`]; the JIT
/// options are ignored, as AMD's runtime does.
#[no_mangle]
pub extern "C" fn hipModuleLoadDataEx(
    module: *mut hipModule_t,
    image: *const c_void,
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionsValues: *mut *mut c_void,
) -> hipError_t {
    let _ = (numOptions, options, optionsValues);
    hipModuleLoadData(module, image)
}

/// `hipError_t hipModuleUnload(hipModule_t module)`: unloads a module; its functions' handles
/// become invalid. Errors: `hipErrorInvalidResourceHandle` (null), `hipErrorNotFound` (unknown
/// or already unloaded, hip-tests on AMD).
#[no_mangle]
pub extern "C" fn hipModuleUnload(module: hipModule_t) -> hipError_t {
    api(|| {
        if module.is_null() {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        if registry().lock().remove_module(module as usize) {
            Ok(())
        } else {
            Err(hipError_t::hipErrorNotFound)
        }
    })
}

/// `hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char*
/// kname)`: the kernel `kname` (its mangled name, or the plain one for `extern "C"`) of the
/// module, for the current device; the same handle on every call. Errors (hip-tests
/// `Unit_hipModuleGetFunction_Negative_Parameters`): `hipErrorInvalidValue` (null `function`,
/// null or empty `kname`), `hipErrorInvalidResourceHandle` (null module), `hipErrorNotFound`
/// (unknown module, no such kernel, a `__device__` function).
#[no_mangle]
pub extern "C" fn hipModuleGetFunction(
    function: *mut hipFunction_t,
    module: hipModule_t,
    kname: *const c_char,
) -> hipError_t {
    api(|| {
        check(!function.is_null())?;
        let name = cstr(kname).filter(|s| !s.is_empty()).ok_or(hipError_t::hipErrorInvalidValue)?;
        if module.is_null() {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        let (rt, d) = rt_dev()?;
        let arch = crate::core::device_props::arch_name(&rt.devices[d].props);
        let f = registry().lock().module_function(module as usize, &arch, name)?;
        write_out(function, Registry::handle_of(&f) as hipFunction_t)
    })
}

/// `hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t hmod, const
/// char* name)`: the device address and size of a module global on the current device (the
/// module's code object is loaded into its memory on first use, globals with their initial
/// values). Either output may be null. Errors: `hipErrorInvalidValue` (both outputs null, null
/// or empty name), `hipErrorInvalidResourceHandle` (null module), `hipErrorNotFound` (unknown
/// module or global), the load's.
#[no_mangle]
pub extern "C" fn hipModuleGetGlobal(
    dptr: *mut hipDeviceptr_t,
    bytes: *mut usize,
    hmod: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    api(|| {
        check(!dptr.is_null() || !bytes.is_null())?;
        let name = cstr(name).filter(|s| !s.is_empty()).ok_or(hipError_t::hipErrorInvalidValue)?;
        if hmod.is_null() {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        let (rt, d) = rt_dev()?;
        let m = registry().lock().module(hmod as usize).ok_or(hipError_t::hipErrorNotFound)?;
        let arch = crate::core::device_props::arch_name(&rt.devices[d].props);
        let co = m.image.code_object(&arch).map_err(|_| hipError_t::hipErrorNotFound)?;
        let size = co.global(name).ok_or(hipError_t::hipErrorNotFound)?.size as usize;
        if !dptr.is_null() {
            let (co, base) = m.image.load(rt, d)?;
            let g = co.global(name).ok_or(hipError_t::hipErrorNotFound)?;
            write_out(dptr, (base + g.address) as hipDeviceptr_t)?;
        }
        if !bytes.is_null() {
            write_out(bytes, size)?;
        }
        Ok(())
    })
}

/// The registered variable behind a host shadow. Errors: `hipErrorInvalidSymbol`.
fn var_of(symbol: *const c_void) -> Result<crate::kernels::module::Var, hipError_t> {
    registry().lock().var(symbol as usize).ok_or(hipError_t::hipErrorInvalidSymbol)
}

/// The device address and size of a registered `__device__` variable on the current device,
/// loading its fat binary's code object there on first use. Errors: `hipErrorInvalidSymbol`
/// (not registered, or not in the code object), the load's.
fn symbol(symbol: *const c_void) -> Result<(u64, usize), hipError_t> {
    let v = var_of(symbol)?;
    let image = registry().lock().fatbin(v.fatbin).ok_or(hipError_t::hipErrorInvalidSymbol)?;
    let (rt, d) = rt_dev()?;
    let (co, base) = image.load(rt, d)?;
    let g = co.global(&v.name).ok_or(hipError_t::hipErrorInvalidSymbol)?;
    Ok((base + g.address, v.size))
}

/// `hipError_t hipGetSymbolAddress(void** devPtr, const void* symbol)`: the device address of a
/// `__device__` variable on the current device. Errors: `hipErrorInvalidValue` (null
/// `devPtr`), `hipErrorInvalidSymbol`.
#[no_mangle]
pub extern "C" fn hipGetSymbolAddress(devPtr: *mut *mut c_void, symbol: *const c_void) -> hipError_t {
    api(|| {
        check(!devPtr.is_null())?;
        write_out(devPtr, self::symbol(symbol)?.0 as *mut c_void)
    })
}

/// clr's direction check of the symbol copies (`hipMemcpy{To,From}Symbol[Async]_common`): to a
/// symbol only host-to-device or device-to-device, from one only device-to-host or
/// device-to-device (`hipMemcpyDefault` is refused). Errors: `hipErrorInvalidMemcpyDirection`.
fn symbol_kind(kind: hipMemcpyKind, to_symbol: bool) -> Result<(), hipError_t> {
    let k = |x: hipMemcpyKind| kind == x;
    let host_side = if to_symbol { hipMemcpyKind::hipMemcpyHostToDevice } else { hipMemcpyKind::hipMemcpyDeviceToHost };
    if k(host_side) || k(hipMemcpyKind::hipMemcpyDeviceToDevice) || k(hipMemcpyKind::hipMemcpyDeviceToDeviceNoCU) {
        Ok(())
    } else {
        Err(hipError_t::hipErrorInvalidMemcpyDirection)
    }
}

/// The direction check, then the device range of a symbol copy.
fn symbol_copy_range(
    sym: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
    to_symbol: bool,
) -> Result<u64, hipError_t> {
    symbol_kind(kind, to_symbol)?;
    symbol_range(sym, size, offset)
}

/// The symbol copies: the direction check and the symbol's device range, then the copy between
/// it and `other` (the source when `to_symbol`, else the destination) as `hipMemcpy` does
/// (`sync`) or `hipMemcpyAsync` on `stream`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn symbol_copy(
    sym: *const c_void,
    other: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
    to_symbol: bool,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    match symbol_copy_range(sym, size, offset, kind, to_symbol) {
        Ok(dev) => {
            let (dst, src) = match to_symbol {
                true => (dev as *mut c_void, other),
                false => (other as *mut c_void, dev as *const c_void),
            };
            crate::api::memory::memcpy(dst, src, size, kind, stream, sync)
        }
        Err(e) => api(|| Err(e)),
    }
}

/// The device range `[offset, offset + size)` of a symbol. Errors: `hipErrorInvalidSymbol`,
/// `hipErrorInvalidValue` when the range leaves the variable.
pub(crate) fn symbol_range(sym: *const c_void, size: usize, offset: usize) -> Result<u64, hipError_t> {
    let (addr, len) = symbol(sym)?;
    check(offset.checked_add(size).is_some_and(|e| e <= len))?;
    Ok(addr + offset as u64)
}

/// `hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes, size_t
/// offset, hipMemcpyKind kind)`: `hipMemcpy` to the variable's device memory at `offset`.
/// Errors: `hipErrorInvalidMemcpyDirection` (`kind` not host-to-device or device-to-device),
/// `hipErrorInvalidSymbol`, `hipErrorInvalidValue` (range past the variable), then `hipMemcpy`'s.
#[no_mangle]
pub extern "C" fn hipMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    symbol_copy(symbol, src, sizeBytes, offset, kind, true, std::ptr::null_mut(), true)
}

/// `hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t
/// offset, hipMemcpyKind kind)`: `hipMemcpy` from the variable's device memory at `offset`.
/// Errors as [`hipMemcpyToSymbol`].
#[no_mangle]
pub extern "C" fn hipMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    symbol_copy(symbol, dst, sizeBytes, offset, kind, false, std::ptr::null_mut(), true)
}

/// `hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes,
/// size_t offset, hipMemcpyKind kind, hipStream_t stream)`: as [`hipMemcpyToSymbol`], ordered
/// on `stream` (`hipMemcpyAsync`).
#[no_mangle]
pub extern "C" fn hipMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    symbol_copy(symbol, src, sizeBytes, offset, kind, true, stream, false)
}

/// `hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes, size_t
/// offset, hipMemcpyKind kind, hipStream_t stream)`: as [`hipMemcpyFromSymbol`], ordered on
/// `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    sizeBytes: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    symbol_copy(symbol, dst, sizeBytes, offset, kind, false, stream, false)
}

/// `hipError_t hipGetSymbolSize(size_t* size, const void* symbol)`: the size of a registered
/// `__device__` variable. Errors: `hipErrorInvalidValue` (null `size`), `hipErrorInvalidSymbol`.
#[no_mangle]
pub extern "C" fn hipGetSymbolSize(size: *mut usize, symbol: *const c_void) -> hipError_t {
    api(|| {
        check(!size.is_null())?;
        write_out(size, var_of(symbol)?.size)
    })
}

/// `hipError_t hipGetFuncBySymbol(hipFunction_t* functionPtr, const void* symbolPtr)`: the
/// `hipFunction_t` of a hipcc kernel. Errors: `hipErrorInvalidValue` (null `functionPtr`),
/// `hipErrorInvalidDeviceFunction` (not a registered kernel).
#[no_mangle]
pub extern "C" fn hipGetFuncBySymbol(functionPtr: *mut hipFunction_t, symbolPtr: *const c_void) -> hipError_t {
    api(|| {
        check(!functionPtr.is_null())?;
        let f = registry().lock().host_function(symbolPtr as usize).ok_or(hipError_t::hipErrorInvalidDeviceFunction)?;
        write_out(functionPtr, Registry::handle_of(&f) as hipFunction_t)
    })
}

// ---------------------------------------------------------------------------------------------
// Function attributes
// ---------------------------------------------------------------------------------------------

/// The kernel info of `f` on the current device, with the device's properties.
fn kernel_on_current(
    f: &Function,
) -> Result<(crate::kernels::module::KernelInfo, &'static hipDeviceProp_t), hipError_t> {
    let (rt, d) = rt_dev()?;
    let props = &rt.devices[d].props;
    let (co, i) = f.kernel(&crate::core::device_props::arch_name(props))?;
    Ok((co.kernels[i].clone(), props))
}

/// The attributes clr reports (`hipFuncGetAttributes` from the kernel's work-group info).
fn attributes(k: &crate::kernels::module::KernelInfo, p: &hipDeviceProp_t) -> hipFuncAttributes {
    let lds = k.group_segment_fixed_size as usize;
    hipFuncAttributes {
        binaryVersion: p.major * 10 + p.minor,
        cacheModeCA: 0,
        constSizeBytes: 0,
        localSizeBytes: k.private_segment_fixed_size as usize,
        maxDynamicSharedSizeBytes: p.sharedMemPerBlock.saturating_sub(lds) as c_int,
        maxThreadsPerBlock: k.max_flat_workgroup_size as c_int,
        numRegs: k.vgpr_count as c_int,
        preferredShmemCarveout: 0,
        ptxVersion: p.major * 10 + p.minor,
        sharedSizeBytes: lds,
    }
}

/// `hipError_t hipFuncGetAttributes(struct hipFuncAttributes* attr, const void* func)`: a hipcc
/// kernel's attributes from its code object metadata (`maxThreadsPerBlock` =
/// `.max_flat_workgroup_size`, `sharedSizeBytes` = static LDS, `localSizeBytes` = scratch per
/// work-item, `numRegs` = VGPRs, `binaryVersion`/`ptxVersion` = major × 10 + minor of the ISA).
/// Errors: `hipErrorInvalidValue` (null `attr`), `hipErrorInvalidDeviceFunction` (null or
/// unregistered `func`), `hipErrorNoBinaryForGpu`.
#[no_mangle]
pub extern "C" fn hipFuncGetAttributes(attr: *mut hipFuncAttributes, func: *const c_void) -> hipError_t {
    api(|| {
        check(!attr.is_null())?;
        let f = host_function(func)?;
        let (k, p) = kernel_on_current(&f)?;
        write_out(attr, attributes(&k, p))
    })
}

/// `hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attrib, hipFunction_t
/// hfunc)`: one attribute of a `hipFunction_t` (values as [`hipFuncGetAttributes`]). Errors:
/// `hipErrorInvalidValue` (null `value`, unknown `attrib`), `hipErrorInvalidHandle` (null or
/// unknown `hfunc`), `hipErrorNoBinaryForGpu`.
#[no_mangle]
pub extern "C" fn hipFuncGetAttribute(
    value: *mut c_int,
    attrib: hipFunction_attribute,
    hfunc: hipFunction_t,
) -> hipError_t {
    api(|| {
        check(!value.is_null())?;
        let f = registry().lock().function(hfunc as usize).ok_or(hipError_t::hipErrorInvalidHandle)?;
        let (k, p) = kernel_on_current(&f)?;
        let a = attributes(&k, p);
        use hipFunction_attribute as A;
        let v = match attrib {
            A::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => a.maxThreadsPerBlock,
            A::HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => a.sharedSizeBytes as c_int,
            A::HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => a.constSizeBytes as c_int,
            A::HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => a.localSizeBytes as c_int,
            A::HIP_FUNC_ATTRIBUTE_NUM_REGS => a.numRegs,
            A::HIP_FUNC_ATTRIBUTE_PTX_VERSION => a.ptxVersion,
            A::HIP_FUNC_ATTRIBUTE_BINARY_VERSION => a.binaryVersion,
            A::HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA => a.cacheModeCA,
            A::HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => a.maxDynamicSharedSizeBytes,
            A::HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => a.preferredShmemCarveout,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        write_out(value, v)
    })
}

/// `hipError_t hipFuncSetAttribute(const void* func, hipFuncAttribute attr, int value)`:
/// validated as clr does, then a no-op (the dynamic-LDS limit and carveout only matter to the
/// launch path, which does not exist yet). Errors: `hipErrorInvalidDeviceFunction` (null or
/// unregistered `func`), `hipErrorInvalidValue` (unknown `attr`; dynamic LDS below 0 or over
/// what the kernel leaves; carveout outside -1..=100).
#[no_mangle]
pub extern "C" fn hipFuncSetAttribute(func: *const c_void, attr: hipFuncAttribute, value: c_int) -> hipError_t {
    api(|| {
        if func.is_null() {
            return Err(hipError_t::hipErrorInvalidDeviceFunction);
        }
        check((0..=hipFuncAttribute::hipFuncAttributeMax.0).contains(&attr.0))?;
        let (k, p) = kernel_on_current(&*host_function(func)?)?;
        match attr {
            hipFuncAttribute::hipFuncAttributeMaxDynamicSharedMemorySize => {
                check(value >= 0 && value <= attributes(&k, p).maxDynamicSharedSizeBytes)
            }
            hipFuncAttribute::hipFuncAttributePreferredSharedMemoryCarveout => check((-1..=100).contains(&value)),
            _ => Ok(()),
        }
    })
}

/// `hipError_t hipFuncSetCacheConfig(const void* func, hipFuncCache_t config)`: validated, then
/// a no-op (AMD devices have no L1/LDS split to choose). Errors: `hipErrorInvalidDeviceFunction`
/// (null or unregistered `func`), `hipErrorInvalidValue` (unknown `config`).
#[no_mangle]
pub extern "C" fn hipFuncSetCacheConfig(func: *const c_void, config: hipFuncCache_t) -> hipError_t {
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        runtime()?;
        if func.is_null() {
            return Err(hipError_t::hipErrorInvalidDeviceFunction);
        }
        check((0..=3).contains(&config.0))?;
        host_function(func).map(|_| ())
    })
}

/// `hipError_t hipFuncSetSharedMemConfig(const void* func, hipSharedMemConfig config)`:
/// validated, then a no-op (clr: "No way to set shared memory config yet"). Errors as
/// [`hipFuncSetCacheConfig`].
#[no_mangle]
pub extern "C" fn hipFuncSetSharedMemConfig(func: *const c_void, config: hipSharedMemConfig) -> hipError_t {
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        runtime()?;
        if func.is_null() {
            return Err(hipError_t::hipErrorInvalidDeviceFunction);
        }
        check((0..=2).contains(&config.0))?;
        host_function(func).map(|_| ())
    })
}

/// HIP ≤ 5.x's `hip_ext.h` declares `hipExtModuleLaunchKernel` as a C++ function, so binaries
/// built against it call this mangled name (exported by ROCm 5.2's `libamdhip64.so.5`, node
/// `hip_4.2`): [`hipExtModuleLaunchKernel`].
#[export_name = "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipExtModuleLaunchKernel_cxx(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
    flags: u32,
) -> hipError_t {
    hipExtModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, kernelParams, extra, start, stop, flags)
}

/// HIP ≤ 5.x's C++ `hipHccModuleLaunchKernel` (deprecated; ROCm 5.2 exports this mangled name,
/// node `hip_4.2`): [`hipExtModuleLaunchKernel`] with no flags.
#[export_name = "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipHccModuleLaunchKernel_cxx(
    f: hipFunction_t,
    gx: u32,
    gy: u32,
    gz: u32,
    lx: u32,
    ly: u32,
    lz: u32,
    shared: usize,
    stream: hipStream_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    hipExtModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, kernelParams, extra, start, stop, 0)
}

/// The multi-device launches (clr `ihipLaunchCooperativeKernelMultiDevice` and
/// `ihipModuleLaunchCooperativeKernelMultiDevice`): checks the whole list first (1 to the device
/// count of launches, `flags` within `hipCooperativeLaunchMultiDeviceNoPreSync |
/// NoPostSync`, a non-null stream per launch, each on another device, non-empty blocks),
/// waits for the streams unless `NoPreSync`, launches each kernel on its stream
/// (`cooperative`: as `hipLaunchCooperativeKernel`, else as `hipLaunchKernel`), then, unless
/// `NoPostSync`, waits for them again. Multi-grid synchronisation across devices inside the
/// kernels is not provided (each launch's grid synchronises on its own device). Errors:
/// `hipErrorInvalidValue`, `hipErrorInvalidResourceHandle` (a null stream),
/// `hipErrorInvalidDevice` (two launches on one device), `hipErrorInvalidConfiguration`, then
/// the launches'.
fn multi_device_launch(list: *mut hipLaunchParams, numDevices: c_int, flags: c_uint, cooperative: bool) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        check(!list.is_null() && numDevices > 0 && numDevices as usize <= rt.devices.len() && flags <= 3)?;
        let launches = crate::api::common::slice_in(list, numDevices as usize)?.to_vec();
        let mut streams: Vec<Arc<crate::core::stream::Stream>> = vec![];
        for l in &launches {
            if l.stream.is_null() {
                return Err(hipError_t::hipErrorInvalidResourceHandle);
            }
            let s = stream_of(rt, l.stream).map_err(|_| hipError_t::hipErrorInvalidValue)?;
            if l.blockDim.x as u64 * l.blockDim.y as u64 * l.blockDim.z as u64 == 0 {
                return Err(hipError_t::hipErrorInvalidConfiguration);
            }
            if streams.iter().any(|o| o.dev == s.dev) {
                return Err(hipError_t::hipErrorInvalidDevice);
            }
            streams.push(s);
        }
        let sync_all = || streams.iter().try_for_each(|s| rt.stream_sync(s));
        if flags & 1 == 0 {
            sync_all()?;
        }
        for l in &launches {
            let shared = c_uint::try_from(l.sharedMem).map_err(|_| hipError_t::hipErrorInvalidValue)?;
            let e = match cooperative {
                true => hipLaunchCooperativeKernel(l.func, l.gridDim, l.blockDim, l.args, shared, l.stream),
                false => hipLaunchKernel(l.func, l.gridDim, l.blockDim, l.args, l.sharedMem, l.stream),
            };
            if e != hipError_t::hipSuccess {
                return Err(e);
            }
        }
        if flags & 2 == 0 {
            sync_all()?;
        }
        Ok(())
    })
}

/// `hipLaunchCooperativeKernelMultiDevice(hipLaunchParams* launchParamsList, int numDevices,
/// unsigned int flags)`: one cooperative launch per device (see `multi_device_launch`).
#[no_mangle]
pub extern "C" fn hipLaunchCooperativeKernelMultiDevice(
    launchParamsList: *mut hipLaunchParams,
    numDevices: c_int,
    flags: c_uint,
) -> hipError_t {
    multi_device_launch(launchParamsList, numDevices, flags, true)
}

/// `hipExtLaunchMultiKernelMultiDevice(hipLaunchParams* launchParamsList, int numDevices,
/// unsigned int flags)`: one launch per device, each kernel its own (see `multi_device_launch`).
#[no_mangle]
pub extern "C" fn hipExtLaunchMultiKernelMultiDevice(
    launchParamsList: *mut hipLaunchParams,
    numDevices: c_int,
    flags: c_uint,
) -> hipError_t {
    multi_device_launch(launchParamsList, numDevices, flags, false)
}

// ---------------------------------------------------------------------------------------------
// ROCm 6.5 / 7.1 additions: extensible launches, function counts, kernel names
// ---------------------------------------------------------------------------------------------

/// What a launch's attribute list asks for (clr `hipLaunchKernelExC` / `hipDrvLaunchKernelEx`).
#[derive(Default)]
struct LaunchAttrs {
    /// `hipLaunchAttributeCooperative` with a non-zero value.
    cooperative: bool,
    /// `hipLaunchAttributeClusterDimension` (1×1×1 when absent).
    cluster: [u32; 3],
}

/// Reads `n` launch attributes. `zero_cluster` is the error of a cluster dimension of 0 where
/// clr checks it inside the loop (`hipLaunchKernelExC`; `None`: after it, the caller's).
/// Errors: `hipErrorInvalidValue` (null `attrs` with `n > 0`, an attribute that is not
/// cooperative, cluster dimension or dynamic data prefetch, a null prefetch configuration),
/// `hipErrorNotSupported` (dynamic data prefetch: gfx90a has no prefetch regions,
/// `hipDeviceAttributeMaxDynDataPrefetchRegions` is 0, clr `validateDynDataPrefetchConfig`),
/// `zero_cluster`. A cooperative attribute ends the list, as in clr.
fn launch_attrs(
    attrs: *const hipLaunchAttribute,
    n: c_uint,
    zero_cluster: Option<hipError_t>,
) -> Result<LaunchAttrs, hipError_t> {
    let mut out = LaunchAttrs { cooperative: false, cluster: [1; 3] };
    if n == 0 {
        return Ok(out);
    }
    let list = crate::api::common::slice_in(attrs, n as usize)?;
    use hipLaunchAttributeID as A;
    for a in list {
        // SAFETY: reading plain-old-data members of the caller's 64-byte value union.
        let (pad, cooperative) = unsafe { (a.val.pad, a.val.cooperative) };
        let word = |i: usize| {
            u32::from_ne_bytes([pad[4 * i] as u8, pad[4 * i + 1] as u8, pad[4 * i + 2] as u8, pad[4 * i + 3] as u8])
        };
        match a.id {
            A::hipLaunchAttributeCooperative => {
                if cooperative != 0 {
                    out.cooperative = true;
                    return Ok(out);
                }
            }
            A::hipLaunchAttributeClusterDimension => {
                out.cluster = [word(0), word(1), word(2)];
                if let Some(e) = zero_cluster.filter(|_| out.cluster.contains(&0)) {
                    return Err(e);
                }
            }
            A::hipLaunchAttributeExtDynDataPrefetch => {
                let p = u64::from_ne_bytes(std::array::from_fn(|i| pad[i] as u8));
                check(p != 0)?;
                return Err(hipError_t::hipErrorNotSupported);
            }
            _ => return Err(hipError_t::hipErrorInvalidValue),
        }
    }
    Ok(out)
}

/// A cluster other than one block: gfx90a has no thread-block clusters
/// (`hipDeviceAttributeClusterLaunch` 0), so the launch cannot honour it. Errors:
/// `hipErrorInvalidClusterSize`.
fn check_cluster(c: [u32; 3]) -> Result<(), hipError_t> {
    if c == [1, 1, 1] {
        Ok(())
    } else {
        Err(hipError_t::hipErrorInvalidClusterSize)
    }
}

/// `hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* fPtr, void** args)`:
/// [`hipLaunchKernel`] of the hipcc kernel `fPtr` (or a `hipFunction_t`) with `config`'s grid,
/// block (work-items), `dynamicSmemBytes` and stream, and `config->attrs[numAttrs]`: a non-zero
/// `hipLaunchAttributeCooperative` makes it [`hipLaunchCooperativeKernel`] (clr takes the first
/// one and looks no further); `hipLaunchAttributeClusterDimension` must be 1×1×1. Errors (clr
/// `hipLaunchKernelExC`, in its order): `hipErrorInvalidDeviceFunction` (null `fPtr`),
/// `hipErrorInvalidConfiguration` (null `config`, a zero cluster dimension),
/// `hipErrorInvalidValue` (another attribute; null `attrs`), `hipErrorNotSupported` (dynamic
/// data prefetch), `hipErrorInvalidClusterSize` (a cluster of more than one block), then the
/// launch's.
#[no_mangle]
pub extern "C" fn hipLaunchKernelExC(
    config: *const hipLaunchConfig_t,
    fPtr: *const c_void,
    args: *mut *mut c_void,
) -> hipError_t {
    api(|| {
        if fPtr.is_null() {
            return Err(hipError_t::hipErrorInvalidDeviceFunction);
        }
        let c = crate::api::common::read_in(config).map_err(|_| hipError_t::hipErrorInvalidConfiguration)?;
        let a = launch_attrs(c.attrs, c.numAttrs, Some(hipError_t::hipErrorInvalidConfiguration))?;
        if a.cooperative {
            let shared = c_uint::try_from(c.dynamicSmemBytes).map_err(|_| hipError_t::hipErrorInvalidValue)?;
            return match hipLaunchCooperativeKernel(fPtr, c.gridDim, c.blockDim, args, shared, c.stream) {
                hipError_t::hipSuccess => Ok(()),
                e => Err(e),
            };
        }
        check_cluster(a.cluster)?;
        launch_kernel(fPtr, c.gridDim, c.blockDim, args, c.dynamicSmemBytes, c.stream, Default::default())
    })
}

/// `hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void**
/// kernelParams, void** extra)`: [`hipModuleLaunchKernel`] with `config`'s grid (blocks),
/// block, `sharedMemBytes` and `hStream`, and its attributes as [`hipLaunchKernelExC`] reads them
/// (a cooperative one makes it [`hipModuleLaunchCooperativeKernel`]'s launch). Errors (clr
/// `hipDrvLaunchKernelEx`, in its order): `hipErrorInvalidResourceHandle` (null `f`),
/// `hipErrorInvalidValue` (null `config`), `hipErrorContextIsDestroyed` (destroyed stream),
/// `hipErrorInvalidConfiguration` (a zero or oversized geometry, a zero cluster dimension),
/// `hipErrorInvalidValue` (another attribute), `hipErrorNotSupported` (dynamic data
/// prefetch), `hipErrorInvalidClusterSize`, then [`hipModuleLaunchKernel`]'s.
#[no_mangle]
pub extern "C" fn hipDrvLaunchKernelEx(
    config: *const HIP_LAUNCH_CONFIG,
    f: hipFunction_t,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    api(|| {
        if f.is_null() {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        let c = crate::api::common::read_in(config)?;
        let rt = runtime()?;
        let codes = (hipError_t::hipErrorContextIsDestroyed, hipError_t::hipErrorInvalidConfiguration);
        let dev = launch_device(rt, c.hStream, codes.0)?;
        let (grid, block) = ([c.gridDimX, c.gridDimY, c.gridDimZ], [c.blockDimX, c.blockDimY, c.blockDimZ]);
        if !(LaunchDims { grid, block, shared: 0 }).valid_for(&rt.devices[dev].props) {
            return Err(codes.1);
        }
        let a = launch_attrs(c.attrs, c.numAttrs, None)?;
        if a.cluster.contains(&0) {
            return Err(hipError_t::hipErrorInvalidConfiguration);
        }
        if !a.cooperative {
            check_cluster(a.cluster)?;
        }
        let null = Default::default();
        match module_launch(f, grid, block, c.sharedMemBytes, c.hStream, codes, kernelParams, extra, null, None) {
            hipError_t::hipSuccess => Ok(()),
            e => Err(e),
        }
    })
}

/// `hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams*
/// launchParamsList, unsigned int numDevices, unsigned int flags)`: one cooperative
/// [`hipModuleLaunchCooperativeKernel`] per entry, entry `i` on a stream of device `i` (clr
/// launches grid `i` on device `i`), all with the same grid, block and `sharedMemBytes`;
/// waits for the streams before (unless `hipCooperativeLaunchMultiDeviceNoPreSync`) and after
/// (unless `NoPostSync`). Multi-grid synchronisation inside the kernels is not provided. Errors
/// (clr `ihipModuleLaunchCooperativeKernelMultiDevice`, in its order): `hipErrorInvalidValue`
/// (null list, a destroyed stream, `numDevices` 0 or over the device count, unknown `flags`),
/// `hipErrorInvalidConfiguration` (an empty block), `hipErrorInvalidResourceHandle` (a null
/// stream), `hipErrorInvalidDevice` (two entries on one device), `hipErrorInvalidValue`
/// (different geometries or LDS sizes), then the launches' (`hipErrorInvalidResourceHandle`
/// for entry `i` not on device `i`); a launch that fails ends the list, as in clr.
#[no_mangle]
pub extern "C" fn hipModuleLaunchCooperativeKernelMultiDevice(
    launchParamsList: *mut hipFunctionLaunchParams,
    numDevices: c_uint,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        check(!launchParamsList.is_null())?;
        check(numDevices > 0 && numDevices as usize <= rt.devices.len() && flags <= 3)?;
        let list = crate::api::common::slice_in(launchParamsList, numDevices as usize)?.to_vec();
        let mut streams: Vec<Arc<crate::core::stream::Stream>> = vec![];
        for l in &list {
            stream_of(rt, l.hStream).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        }
        for l in &list {
            if l.blockDimX as u64 * l.blockDimY as u64 * l.blockDimZ as u64 == 0 {
                return Err(hipError_t::hipErrorInvalidConfiguration);
            }
            if l.hStream.is_null() {
                return Err(hipError_t::hipErrorInvalidResourceHandle);
            }
            let s = stream_of(rt, l.hStream)?;
            if streams.iter().any(|o| o.dev == s.dev) {
                return Err(hipError_t::hipErrorInvalidDevice);
            }
            streams.push(s);
        }
        let geometry = |l: &hipFunctionLaunchParams| {
            (l.gridDimX, l.gridDimY, l.gridDimZ, l.blockDimX, l.blockDimY, l.blockDimZ, l.sharedMemBytes)
        };
        check(list.windows(2).all(|w| geometry(&w[0]) == geometry(&w[1])))?;
        let sync_all = || streams.iter().try_for_each(|s| rt.stream_sync(s));
        if flags & 1 == 0 {
            sync_all()?;
        }
        let codes = (hipError_t::hipErrorInvalidValue, hipError_t::hipErrorInvalidConfiguration);
        let mut result = Ok(());
        for (i, l) in list.iter().enumerate() {
            let (grid, block) = ([l.gridDimX, l.gridDimY, l.gridDimZ], [l.blockDimX, l.blockDimY, l.blockDimZ]);
            let null = std::ptr::null_mut();
            let e = module_launch(
                l.function,
                grid,
                block,
                l.sharedMemBytes,
                l.hStream,
                codes,
                l.kernelParams,
                null,
                Default::default(),
                Some(i),
            );
            if e != hipError_t::hipSuccess {
                result = Err(e);
                break;
            }
        }
        if flags & 2 == 0 {
            sync_all()?;
        }
        result
    })
}

/// `hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t mod)`: how many kernels
/// (`__global__` functions; not `__device__` ones) the module has for the current device.
/// Errors (clr `hipModuleGetFunctionCount`, hip-tests `Unit_hipModuleGetFunctionCount_*`):
/// `hipErrorInvalidHandle` (null `mod`), `hipErrorNotFound` (unknown or unloaded module),
/// `hipErrorInvalidValue` (null `count`).
#[no_mangle]
pub extern "C" fn hipModuleGetFunctionCount(count: *mut c_uint, mod_: hipModule_t) -> hipError_t {
    api(|| {
        if mod_.is_null() {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        let (rt, d) = rt_dev()?;
        let arch = crate::core::device_props::arch_name(&rt.devices[d].props);
        let n = registry().lock().module_function_count(mod_ as usize, &arch)?;
        check(!count.is_null())?;
        write_out(count, n as c_uint)
    })
}

/// `hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin)`: loads a fat
/// binary from memory (a clang offload bundle, as `hipcc --genco` writes, or a bare code
/// object); clr loads it as [`hipModuleLoadData`] does. Errors as [`hipModuleLoadData`]
/// (`hipErrorInvalidValue` for null arguments).
#[no_mangle]
pub extern "C" fn hipModuleLoadFatBinary(module: *mut hipModule_t, fatbin: *const c_void) -> hipError_t {
    hipModuleLoadData(module, fatbin)
}

/// `const char* hipKernelNameRef(const hipFunction_t f)`: the (mangled) name of a module or
/// hipcc kernel, valid while it stays loaded. Null for a null, unknown or unloaded `f` (clr
/// returns null for null). No error is recorded.
#[no_mangle]
pub extern "C" fn hipKernelNameRef(f: hipFunction_t) -> *const c_char {
    let Some(func) = registry().lock().function(f as usize) else { return std::ptr::null() };
    func.c_name.as_ptr()
}

/// `const char* hipKernelNameRefByPtr(const void* hostFunction, hipStream_t stream)`: the
/// (mangled) name a hipcc kernel was registered with (`__hipRegisterFunction`'s `deviceName`),
/// for its host stub; `stream` is not used (clr). Null for a null or unregistered stub.
#[no_mangle]
pub extern "C" fn hipKernelNameRefByPtr(hostFunction: *const c_void, stream: hipStream_t) -> *const c_char {
    let _ = stream;
    let Some(func) = registry().lock().host_function(hostFunction as usize) else { return std::ptr::null() };
    func.c_name.as_ptr()
}
