//! Libraries and the JIT linker (clr `hip_library.cpp`, `hip_module.cpp`): `hipLibraryLoadData`,
//! `hipLibraryLoadFromFile`, `hipLibraryUnload`, `hipLibraryGetKernel`,
//! `hipLibraryGetKernelCount` (ROCm 7.2), and `hipLinkCreate`, `hipLinkAddData`,
//! `hipLinkAddFile`, `hipLinkComplete`, `hipLinkDestroy` (ROCm 6.4).
//!
//! A library is a code object loaded lazily, as clr's `LibraryContainer`: the load only keeps
//! the image, and the first query builds it into a module for the device current then
//! (src/kernels/module.rs, [`Library`]); a `hipKernel_t` is that module's `hipFunction_t`, so the
//! module launch and attribute calls take it.
//!
//! clr's `hipLink*` links SPIR-V only (`hipJitInputSpirv`; the CUDA and LLVM input kinds are
//! `hipErrorInvalidValue`, as hip-tests `Unit_hipLinkAddFile_hipLinkAddData_with_cuda_only_inputTypes`
//! wants), through comgr's SPIR-V translator. We have no comgr and the toolchains we run have no
//! translator: the link API validates and keeps its inputs as clr does (with
//! `crate::kernels::rtc::Link`, hiprtc's linker), and `hipLinkComplete` of SPIR-V fails with
//! clr's link-failure code, `hipErrorInvalidConfiguration`. (hiprtc's `hiprtcLink*`, in
//! src/api/rtc.rs, links LLVM bitcode.)
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, rt_dev, write_out, Handles};
use crate::api::module::{cstr, image_at};
use crate::kernels::module::{registry, remove_library, Library, Registry};
use crate::kernels::rtc::{Link, LinkInput};
use parking_lot::Mutex;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Libraries
// ---------------------------------------------------------------------------------------------

/// Registers a library of `image` and writes its handle.
fn add_library(library: *mut hipLibrary_t, image: Result<Vec<u8>, hipError_t>) -> Result<(), hipError_t> {
    let h = registry().lock().add_library(Library::new(image));
    write_out(library, h as hipLibrary_t).inspect_err(|_| {
        remove_library(h);
    })
}

/// `hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption*
/// jitOptions, void** jitOptionsValues, unsigned int numJitOptions, hipLibraryOption*
/// libraryOptions, void** libraryOptionValues, unsigned int numLibraryOptions)`: a library of
/// the code object at `code` (an offload bundle or a bare AMDGPU ELF, as
/// [`hipModuleLoadData`](crate::api::module::hipModuleLoadData) takes; copied now). Loading is
/// lazy, as clr's: an image that is no code object loads, and its first query reports
/// `hipErrorInvalidImage` (hip-tests `Unit_library_negative`). Library options are ignored, as
/// in clr. Errors: `hipErrorInvalidValue` (null `library` or `code`; JIT options, which AMD does
/// not support).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipLibraryLoadData(
    library: *mut hipLibrary_t,
    code: *const c_void,
    jitOptions: *mut hipJitOption,
    jitOptionsValues: *mut *mut c_void,
    numJitOptions: c_uint,
    libraryOptions: *mut hipLibraryOption,
    libraryOptionValues: *mut *mut c_void,
    numLibraryOptions: c_uint,
) -> hipError_t {
    let _ = (jitOptions, jitOptionsValues, libraryOptions, libraryOptionValues, numLibraryOptions);
    api(|| {
        check(!library.is_null() && !code.is_null() && numJitOptions == 0)?;
        // SAFETY: non-null image from the caller, who promises a complete code object (HIP API
        // contract); anything else is rejected by its first bytes.
        let image = unsafe { image_at(code as *const u8) }.map(|d| d.to_vec()).map_err(|e| e.hip());
        add_library(library, image)
    })
}

/// `hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* fileName, ...)`: a
/// library of the code object file `fileName` (read now; built lazily as
/// [`hipLibraryLoadData`]). Errors: `hipErrorInvalidValue` (null `library`, null or missing
/// file, JIT options); a file that cannot be read or is no code object fails its first query
/// (`hipErrorFileNotFound`, `hipErrorInvalidImage`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipLibraryLoadFromFile(
    library: *mut hipLibrary_t,
    fileName: *const c_char,
    jitOptions: *mut hipJitOption,
    jitOptionsValues: *mut *mut c_void,
    numJitOptions: c_uint,
    libraryOptions: *mut hipLibraryOption,
    libraryOptionValues: *mut *mut c_void,
    numLibraryOptions: c_uint,
) -> hipError_t {
    let _ = (jitOptions, jitOptionsValues, libraryOptions, libraryOptionValues, numLibraryOptions);
    api(|| {
        check(!library.is_null() && numJitOptions == 0)?;
        let path =
            cstr(fileName).filter(|p| std::path::Path::new(p).exists()).ok_or(hipError_t::hipErrorInvalidValue)?;
        let image = std::fs::read(path).map_err(|_| hipError_t::hipErrorFileNotFound);
        add_library(library, image)
    })
}

/// `hipError_t hipLibraryUnload(hipLibrary_t library)`: forgets the library and unloads its
/// module; its kernels' handles become invalid. Errors: `hipErrorInvalidResourceHandle` (null,
/// unknown or unloaded: clr frees whatever it is given).
#[no_mangle]
pub extern "C" fn hipLibraryUnload(library: hipLibrary_t) -> hipError_t {
    api(|| {
        if library.is_null() || !remove_library(library as usize) {
            return Err(hipError_t::hipErrorInvalidResourceHandle);
        }
        Ok(())
    })
}

/// The library behind a handle, built for the current device: its module and the target id
/// it was built for. Errors: `hipErrorInvalidValue` (null, unknown or unloaded handle), the
/// build's ([`Library::build`]).
fn built(library: hipLibrary_t) -> Result<(usize, String), hipError_t> {
    let l = registry().lock().library(library as usize).ok_or(hipError_t::hipErrorInvalidValue)?;
    let (rt, d) = rt_dev()?;
    l.build(&crate::core::device_props::arch_name(&rt.devices[d].props))
}

/// `hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library)`: how many
/// kernels the library has (built on first use). Errors (clr): `hipErrorInvalidValue` (null
/// `count`, null or unknown `library`), the build's (`hipErrorInvalidImage`,
/// `hipErrorNoBinaryForGpu`, ...).
#[no_mangle]
pub extern "C" fn hipLibraryGetKernelCount(count: *mut c_uint, library: hipLibrary_t) -> hipError_t {
    api(|| {
        check(!count.is_null() && !library.is_null())?;
        let (m, device) = built(library)?;
        let n = registry().lock().module_function_count(m, &device)?;
        write_out(count, n as c_uint)
    })
}

/// `hipError_t hipLibraryGetKernel(hipKernel_t* pKernel, hipLibrary_t library, const char*
/// name)`: the kernel `name` (mangled, or plain for `extern "C"`) of the library, the same
/// handle on every call; a `hipFunction_t` for the module launch and attribute calls. Errors
/// (clr, hip-tests `Unit_library_negative`): `hipErrorInvalidValue` (a null argument, unknown
/// `library`), the build's (`hipErrorInvalidImage` for an image that is no code object),
/// `hipErrorNotFound` (no such kernel).
#[no_mangle]
pub extern "C" fn hipLibraryGetKernel(
    pKernel: *mut hipKernel_t,
    library: hipLibrary_t,
    name: *const c_char,
) -> hipError_t {
    api(|| {
        check(!pKernel.is_null() && !library.is_null() && !name.is_null())?;
        let name = cstr(name).ok_or(hipError_t::hipErrorNotFound)?;
        let (m, device) = built(library)?;
        let f = registry().lock().module_function(m, &device, name)?;
        write_out(pKernel, Registry::handle_of(&f) as hipKernel_t)
    })
}

// ---------------------------------------------------------------------------------------------
// The JIT linker
// ---------------------------------------------------------------------------------------------

static LINKS: Handles<Mutex<Link>> = Handles::new();

/// The link behind a handle (clr `LinkProgram::isLinkerValid`). Errors: `bad` for null or one
/// not live.
fn link_state(state: hipLinkState_t, bad: hipError_t) -> Result<Arc<Mutex<Link>>, hipError_t> {
    LINKS.get(state as usize).ok_or(bad)
}

/// The input kinds clr refuses (the CUDA ones and LLVM bitcode): `hipErrorInvalidValue`.
fn refused_kind(t: hipJitInputType) -> bool {
    (hipJitInputType::hipJitInputCubin.0..=hipJitInputType::hipJitInputNvvm.0).contains(&t.0)
        || (hipJitInputType::hipJitInputLLVMBitcode.0..=hipJitInputType::hipJitInputLLVMArchivesOfBundledBitcode.0)
            .contains(&t.0)
}

/// Adds `data` to a link as input kind `t` (only `hipJitInputSpirv` is one clr links).
/// Errors: `hipErrorInvalidConfiguration` (another kind, or bytes that are neither a SPIR-V
/// module nor a clang offload bundle: clr's `AddLinkerData` failing).
fn link_add(l: &Mutex<Link>, t: hipJitInputType, name: String, data: Vec<u8>) -> Result<(), hipError_t> {
    if t != hipJitInputType::hipJitInputSpirv {
        return Err(hipError_t::hipErrorInvalidConfiguration);
    }
    l.lock().add(name, LinkInput::Spirv, data).map_err(|_| hipError_t::hipErrorInvalidConfiguration)
}

/// `hipError_t hipLinkCreate(unsigned int numOptions, hipJitOption* options, void**
/// optionValues, hipLinkState_t* stateOut)`: a new link. Options read (clr
/// `LinkProgram::AddLinkerOptions`): `hipJitOptionIRtoISAOptExt` (an array of codegen option
/// strings) with `hipJitOptionIRtoISAOptCountExt` (their count). Errors (clr `hipLinkCreate`):
/// `hipErrorInvalidValue` (null `stateOut`; null arrays with `numOptions > 0`; any CUDA-only
/// option, `hipJitOptionMaxRegisters` .. `hipJitOptionNumOptions`),
/// `hipErrorInvalidConfiguration` (a count without a non-null string array, a null string).
#[no_mangle]
pub extern "C" fn hipLinkCreate(
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
    stateOut: *mut hipLinkState_t,
) -> hipError_t {
    api(|| {
        check(!stateOut.is_null())?;
        let n = numOptions as usize;
        check(n == 0 || (!options.is_null() && !optionValues.is_null()))?;
        let opts = if n == 0 { vec![] } else { crate::api::common::slice_in(options, n)?.to_vec() };
        let vals = if n == 0 { vec![] } else { crate::api::common::slice_in(optionValues, n)?.to_vec() };
        check(opts.iter().all(|o| !(0..=hipJitOption::hipJitOptionNumOptions.0).contains(&o.0)))?;
        let (mut isa, mut isa_count) = (std::ptr::null_mut::<*const c_char>(), 0usize);
        for (o, v) in opts.iter().zip(&vals) {
            match *o {
                hipJitOption::hipJitOptionIRtoISAOptExt => isa = *v as *mut *const c_char,
                hipJitOption::hipJitOptionIRtoISAOptCountExt => isa_count = *v as usize,
                _ => {}
            }
        }
        let mut codegen = vec![String::from("-O3")];
        if isa_count > 0 {
            let bad = hipError_t::hipErrorInvalidConfiguration;
            let args = crate::api::common::slice_in(isa as *const *const c_char, isa_count).map_err(|_| bad)?;
            for a in args {
                codegen.push(crate::api::common::cstr_in(*a).map_err(|_| bad)?.to_string_lossy().into_owned());
            }
        }
        let handle = LINKS.insert(Arc::new(Mutex::new(Link::new(codegen))));
        write_out(stateOut, handle as hipLinkState_t).inspect_err(|_| {
            LINKS.remove(handle);
        })
    })
}

/// `hipError_t hipLinkAddData(hipLinkState_t state, hipJitInputType type, void* data, size_t
/// size, const char* name, unsigned int numOptions, hipJitOption* options, void**
/// optionValues)`: adds `size` bytes (copied) of a SPIR-V module, bare or in a clang offload
/// bundle; `name` (may be null) names it in the log; per-input options are ignored, as in clr.
/// Errors (clr, in its order): `hipErrorInvalidImage` (null `data`, `size` 0),
/// `hipErrorInvalidValue` (a CUDA or LLVM input kind), `hipErrorInvalidHandle` (null or
/// destroyed `state`), `hipErrorInvalidConfiguration` (another kind, bytes of no such module).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipLinkAddData(
    state: hipLinkState_t,
    r#type: hipJitInputType,
    data: *mut c_void,
    size: usize,
    name: *const c_char,
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
) -> hipError_t {
    let _ = (numOptions, options, optionValues);
    api(|| {
        if data.is_null() || size == 0 {
            return Err(hipError_t::hipErrorInvalidImage);
        }
        check(!refused_kind(r#type))?;
        let l = link_state(state, hipError_t::hipErrorInvalidHandle)?;
        let name = cstr(name).unwrap_or("LinkerProgram").to_string();
        let bytes = crate::api::common::slice_in(data as *const u8, size)?.to_vec();
        link_add(&l, r#type, name, bytes)
    })
}

/// `hipError_t hipLinkAddFile(hipLinkState_t state, hipJitInputType type, const char* path,
/// unsigned int numOptions, hipJitOption* options, void** optionValues)`: [`hipLinkAddData`]
/// with the file's bytes. Errors (clr, in its order): `hipErrorInvalidHandle` (null `state`),
/// `hipErrorInvalidValue` (a CUDA or LLVM input kind, a destroyed `state`),
/// `hipErrorInvalidConfiguration` (null path, a file that cannot be read or holds no SPIR-V,
/// another kind).
#[no_mangle]
pub extern "C" fn hipLinkAddFile(
    state: hipLinkState_t,
    r#type: hipJitInputType,
    path: *const c_char,
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
) -> hipError_t {
    let _ = (numOptions, options, optionValues);
    api(|| {
        if state.is_null() {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        check(!refused_kind(r#type))?;
        let l = link_state(state, hipError_t::hipErrorInvalidValue)?;
        let bad = hipError_t::hipErrorInvalidConfiguration;
        let path = cstr(path).ok_or(bad)?;
        let bytes = std::fs::read(path).map_err(|_| bad)?;
        link_add(&l, r#type, path.to_string(), bytes)
    })
}

/// `hipError_t hipLinkComplete(hipLinkState_t state, void** hipBinOut, size_t* sizeOut)`: links
/// what was added into a code object for the current device, for `hipModuleLoadData`, valid
/// until the next call on this link or [`hipLinkDestroy`]. SPIR-V cannot be linked here (no
/// SPIR-V translator, see the module docs), so with inputs this fails. Errors (clr):
/// `hipErrorInvalidValue` (null `hipBinOut` or `sizeOut`, null or destroyed `state`),
/// `hipErrorInvalidConfiguration` (the link failed: nothing added, SPIR-V inputs; the reason is
/// logged with `HIPKFD_LOG=1`).
#[no_mangle]
pub extern "C" fn hipLinkComplete(
    state: hipLinkState_t,
    hipBinOut: *mut *mut c_void,
    sizeOut: *mut usize,
) -> hipError_t {
    api(|| {
        check(!hipBinOut.is_null() && !sizeOut.is_null())?;
        let l = link_state(state, hipError_t::hipErrorInvalidValue)?;
        let arch = rt_dev().ok().map(|(rt, d)| crate::core::device_props::arch_name(&rt.devices[d].props));
        let mut g = l.lock();
        let (code, size) = match g.complete(arch) {
            Ok(code) => (code.as_ptr() as *mut c_void, code.len()),
            Err(_) => {
                crate::core::log::hipkfd_log!("hipLinkComplete: {}", g.log());
                return Err(hipError_t::hipErrorInvalidConfiguration);
            }
        };
        write_out(hipBinOut, code)?;
        write_out(sizeOut, size)
    })
}

/// `hipError_t hipLinkDestroy(hipLinkState_t state)`: frees the link and its code object (a
/// module loaded from it stays loaded). Errors: `hipErrorInvalidValue` (null or destroyed
/// `state`, hip-tests `Unit_hipLinkAPIs_hipLinkDestroy_Negative`).
#[no_mangle]
pub extern "C" fn hipLinkDestroy(state: hipLinkState_t) -> hipError_t {
    api(|| LINKS.remove(state as usize).map(drop).ok_or(hipError_t::hipErrorInvalidValue))
}
