//! Textures and surfaces (HIP "Texture Management" and "Surface Object" groups; clr
//! `hip_texture.cpp`, `hip_surface.cpp`, `hipModuleGetTexRef` of `hip_module.cpp`).
//!
//! hipkfd has no image path: its devices report `hipDeviceAttributeImageSupport` = 0
//! (src/core/device_props.rs), as a device without `imageSupport_` does in clr. Every entry point
//! here exists with AMD's signature, checks its arguments as clr does and in clr's order (with
//! clr's error codes), and then answers `hipErrorNotSupported`, clr's answer on such a device. No
//! texture or surface object is ever made, so nothing is written through an out-pointer and no
//! state changes. Where clr looks a texture reference up in its registries first
//! (`getStatGlobalVar`, `getDynTexGlobalVar`) only the null reference is answered as clr does:
//! no reference can be bound here, whichever registry holds it.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, cstr_in, read_in, unsupported as no_images};
use crate::core::runtime::runtime;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// An entry point whose only argument checks are `args_ok` (`hipErrorInvalidValue` when false),
/// then clr's `info.imageSupport_` check on a device without images ([`no_images`]).
fn refuse(args_ok: bool) -> hipError_t {
    api(|| {
        check(args_ok)?;
        no_images()
    })
}

/// The texture object a texture reference holds, as clr's texref getters read it before asking
/// for its resource. Errors: `hipErrorInvalidValue` when none is bound (always, here).
fn bound_object(texRef: *const textureReference) -> Result<(), hipError_t> {
    check(!read_in(texRef)?.textureObject.is_null())
}

// ---------------------------------------------------------------------------------------------
// Texture objects
// ---------------------------------------------------------------------------------------------

/// `hipCreateTextureObject(hipTextureObject_t* pTexObject, const hipResourceDesc* pResDesc,
/// const hipTextureDesc* pTexDesc, const struct hipResourceViewDesc* pResViewDesc)`: would make
/// a texture object sampling `pResDesc` with `pTexDesc`. clr (`ihipCreateTextureObject`) checks
/// image support before its arguments, so every call, null pointers included, answers
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipCreateTextureObject(
    pTexObject: *mut hipTextureObject_t,
    pResDesc: *const hipResourceDesc,
    pTexDesc: *const hipTextureDesc,
    pResViewDesc: *const hipResourceViewDesc,
) -> hipError_t {
    let _ = (pTexObject, pResDesc, pTexDesc, pResViewDesc);
    api(no_images)
}

/// `hipDestroyTextureObject(hipTextureObject_t textureObject)`: null is a no-op that succeeds
/// (clr `ihipDestroyTextureObject`); any other handle cannot be one of ours:
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipDestroyTextureObject(textureObject: hipTextureObject_t) -> hipError_t {
    api(|| if textureObject.is_null() { Ok(()) } else { no_images() })
}

/// `hipGetTextureObjectResourceDesc(hipResourceDesc* pResDesc, hipTextureObject_t
/// textureObject)`. Errors: `hipErrorInvalidValue` (either null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGetTextureObjectResourceDesc(
    pResDesc: *mut hipResourceDesc,
    textureObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pResDesc.is_null() && !textureObject.is_null())
}

/// `hipGetTextureObjectResourceViewDesc(struct hipResourceViewDesc* pResViewDesc,
/// hipTextureObject_t textureObject)`. Errors: `hipErrorInvalidValue` (either null), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGetTextureObjectResourceViewDesc(
    pResViewDesc: *mut hipResourceViewDesc,
    textureObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pResViewDesc.is_null() && !textureObject.is_null())
}

/// `hipGetTextureObjectTextureDesc(hipTextureDesc* pTexDesc, hipTextureObject_t
/// textureObject)`. Errors: `hipErrorInvalidValue` (either null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGetTextureObjectTextureDesc(
    pTexDesc: *mut hipTextureDesc,
    textureObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pTexDesc.is_null() && !textureObject.is_null())
}

/// `hipTexObjectCreate(hipTextureObject_t* pTexObject, const HIP_RESOURCE_DESC* pResDesc, const
/// HIP_TEXTURE_DESC* pTexDesc, const HIP_RESOURCE_VIEW_DESC* pResViewDesc)`: the driver API's
/// [`hipCreateTextureObject`]. Errors: `hipErrorInvalidValue` (`pTexObject`, `pResDesc` or
/// `pTexDesc` null), else `hipErrorNotSupported`. (clr answers `hipSuccess` without making an
/// object for a pitch-2D resource of width or height 0; here that is `hipErrorNotSupported` too,
/// so no caller holds an unset handle.)
#[no_mangle]
pub extern "C" fn hipTexObjectCreate(
    pTexObject: *mut hipTextureObject_t,
    pResDesc: *const HIP_RESOURCE_DESC,
    pTexDesc: *const HIP_TEXTURE_DESC,
    pResViewDesc: *const HIP_RESOURCE_VIEW_DESC,
) -> hipError_t {
    let _ = pResViewDesc;
    refuse(!pTexObject.is_null() && !pResDesc.is_null() && !pTexDesc.is_null())
}

/// `hipTexObjectDestroy(hipTextureObject_t texObject)`: as [`hipDestroyTextureObject`].
#[no_mangle]
pub extern "C" fn hipTexObjectDestroy(texObject: hipTextureObject_t) -> hipError_t {
    hipDestroyTextureObject(texObject)
}

/// `hipTexObjectGetResourceDesc(HIP_RESOURCE_DESC* pResDesc, hipTextureObject_t texObject)`.
/// Errors: `hipErrorInvalidValue` (either null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexObjectGetResourceDesc(
    pResDesc: *mut HIP_RESOURCE_DESC,
    texObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pResDesc.is_null() && !texObject.is_null())
}

/// `hipTexObjectGetResourceViewDesc(HIP_RESOURCE_VIEW_DESC* pResViewDesc, hipTextureObject_t
/// texObject)`. Errors: `hipErrorInvalidValue` (either null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexObjectGetResourceViewDesc(
    pResViewDesc: *mut HIP_RESOURCE_VIEW_DESC,
    texObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pResViewDesc.is_null() && !texObject.is_null())
}

/// `hipTexObjectGetTextureDesc(HIP_TEXTURE_DESC* pTexDesc, hipTextureObject_t texObject)`.
/// Errors: `hipErrorInvalidValue` (either null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexObjectGetTextureDesc(
    pTexDesc: *mut HIP_TEXTURE_DESC,
    texObject: hipTextureObject_t,
) -> hipError_t {
    refuse(!pTexDesc.is_null() && !texObject.is_null())
}

// ---------------------------------------------------------------------------------------------
// Texture references (deprecated in HIP)
// ---------------------------------------------------------------------------------------------

/// `hipBindTexture(size_t* offset, const textureReference* tex, const void* devPtr, const
/// hipChannelFormatDesc* desc, size_t size)`: would bind `size` bytes at `devPtr`. Errors, in
/// clr's order: `hipErrorInvalidSymbol` (`tex` null: no registered texture), `hipErrorNotFound`
/// (`devPtr` null), `hipErrorInvalidValue` (`desc` null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipBindTexture(
    offset: *mut usize,
    tex: *const textureReference,
    devPtr: *const c_void,
    desc: *const hipChannelFormatDesc,
    size: usize,
) -> hipError_t {
    let _ = (offset, size);
    api(|| {
        if tex.is_null() {
            return Err(hipError_t::hipErrorInvalidSymbol);
        }
        if devPtr.is_null() {
            return Err(hipError_t::hipErrorNotFound);
        }
        check(!desc.is_null())?;
        no_images()
    })
}

/// `hipBindTexture2D(size_t* offset, const textureReference* tex, const void* devPtr, const
/// hipChannelFormatDesc* desc, size_t width, size_t height, size_t pitch)`: would bind a pitched
/// 2D block. Errors, in clr's order: `hipErrorUnknown` (`tex` null), `hipErrorNotFound`
/// (`devPtr` null), `hipErrorInvalidValue` (`desc` null, `pitch` 0), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipBindTexture2D(
    offset: *mut usize,
    tex: *const textureReference,
    devPtr: *const c_void,
    desc: *const hipChannelFormatDesc,
    width: usize,
    height: usize,
    pitch: usize,
) -> hipError_t {
    let _ = (offset, width, height);
    api(|| {
        if tex.is_null() {
            return Err(hipError_t::hipErrorUnknown);
        }
        if devPtr.is_null() {
            return Err(hipError_t::hipErrorNotFound);
        }
        check(!desc.is_null() && pitch != 0)?;
        no_images()
    })
}

/// `hipBindTextureToArray(const textureReference* tex, hipArray_const_t array, const
/// hipChannelFormatDesc* desc)`. Errors: `hipErrorInvalidValue` (any null), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipBindTextureToArray(
    tex: *const textureReference,
    array: hipArray_const_t,
    desc: *const hipChannelFormatDesc,
) -> hipError_t {
    refuse(!tex.is_null() && !array.is_null() && !desc.is_null())
}

/// `hipBindTextureToMipmappedArray(const textureReference* tex, hipMipmappedArray_const_t
/// mipmappedArray, const hipChannelFormatDesc* desc)`. Errors, in clr's order:
/// `hipErrorInvalidSymbol` (`tex` null: no registered texture), `hipErrorInvalidValue`
/// (`mipmappedArray` or `desc` null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipBindTextureToMipmappedArray(
    tex: *const textureReference,
    mipmappedArray: hipMipmappedArray_const_t,
    desc: *const hipChannelFormatDesc,
) -> hipError_t {
    api(|| {
        if tex.is_null() {
            return Err(hipError_t::hipErrorInvalidSymbol);
        }
        check(!mipmappedArray.is_null() && !desc.is_null())?;
        no_images()
    })
}

/// `hipUnbindTexture(const textureReference* tex)`. Errors: `hipErrorInvalidValue` (null),
/// else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipUnbindTexture(tex: *const textureReference) -> hipError_t {
    refuse(!tex.is_null())
}

/// `hipGetTextureReference(const textureReference** texref, const void* symbol)`. Errors:
/// `hipErrorInvalidValue` (`texref` null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGetTextureReference(texref: *mut *const textureReference, symbol: *const c_void) -> hipError_t {
    let _ = symbol;
    refuse(!texref.is_null())
}

/// `hipGetTextureAlignmentOffset(size_t* offset, const textureReference* texref)`. Errors, in
/// clr's order: `hipErrorInvalidTexture` (`texref` null), `hipErrorInvalidValue` (`offset`
/// null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGetTextureAlignmentOffset(offset: *mut usize, texref: *const textureReference) -> hipError_t {
    api(|| {
        if texref.is_null() {
            return Err(hipError_t::hipErrorInvalidTexture);
        }
        check(!offset.is_null())?;
        no_images()
    })
}

/// `hipModuleGetTexRef(textureReference** texRef, hipModule_t hmod, const char* name)`: would
/// give the texture reference `name` of a module. Errors, in clr's order:
/// `hipErrorInvalidValue` (`texRef` or `name` null, `name` empty), `hipErrorInvalidHandle`
/// (`hmod` null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipModuleGetTexRef(
    texRef: *mut *mut textureReference,
    hmod: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    api(|| {
        check(!texRef.is_null())?;
        check(!cstr_in(name)?.is_empty())?;
        if hmod.is_null() {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        no_images()
    })
}

/// `hipDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements, const hipChannelFormatDesc*
/// fmtDesc, int device)`: the widest 1D texture of `fmtDesc` elements over linear memory; with
/// no textures there is none. Errors, in clr's order: `hipErrorInvalidValue` (a pointer null),
/// `hipErrorInvalidDevice`, `hipErrorInvalidValue` (an element of 0 bytes: `(x+y+z+w)/8` = 0),
/// else `hipErrorNotSupported` (clr divides `maxTexture1DLinear` by the element size).
#[no_mangle]
pub extern "C" fn hipDeviceGetTexture1DLinearMaxWidth(
    maxWidthInElements: *mut usize,
    fmtDesc: *const hipChannelFormatDesc,
    device: c_int,
) -> hipError_t {
    api(|| {
        check(!maxWidthInElements.is_null() && !fmtDesc.is_null())?;
        runtime()?.device(device)?;
        let f = read_in(fmtDesc)?;
        check((i64::from(f.x) + i64::from(f.y) + i64::from(f.z) + i64::from(f.w)) / 8 != 0)?;
        no_images()
    })
}

/// `hipTexRefGetAddress(hipDeviceptr_t* dev_ptr, const textureReference* texRef)`. Errors:
/// `hipErrorInvalidValue` (a pointer null, or no texture object in `texRef`: clr reads the
/// object's resource first), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetAddress(dev_ptr: *mut hipDeviceptr_t, texRef: *const textureReference) -> hipError_t {
    api(|| {
        check(!dev_ptr.is_null())?;
        bound_object(texRef)?;
        no_images()
    })
}

/// `hipTexRefGetArray(hipArray_t* pArray, const textureReference* texRef)`. Errors: as
/// [`hipTexRefGetAddress`].
#[no_mangle]
pub extern "C" fn hipTexRefGetArray(pArray: *mut hipArray_t, texRef: *const textureReference) -> hipError_t {
    api(|| {
        check(!pArray.is_null())?;
        bound_object(texRef)?;
        no_images()
    })
}

/// `hipTexRefGetBorderColor(float* pBorderColor, const textureReference* texRef)`. Errors:
/// `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetBorderColor(pBorderColor: *mut f32, texRef: *const textureReference) -> hipError_t {
    refuse(!pBorderColor.is_null() && !texRef.is_null())
}

/// `hipTexRefGetFilterMode(enum hipTextureFilterMode* pfm, const textureReference* texRef)`.
/// Errors: `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetFilterMode(
    pfm: *mut hipTextureFilterMode,
    texRef: *const textureReference,
) -> hipError_t {
    refuse(!pfm.is_null() && !texRef.is_null())
}

/// `hipTexRefGetFlags(unsigned int* pFlags, const textureReference* texRef)`. Errors:
/// `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetFlags(pFlags: *mut c_uint, texRef: *const textureReference) -> hipError_t {
    refuse(!pFlags.is_null() && !texRef.is_null())
}

/// `hipTexRefGetFormat(hipArray_Format* pFormat, int* pNumChannels, const textureReference*
/// texRef)`. Errors: `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetFormat(
    pFormat: *mut hipArray_Format,
    pNumChannels: *mut c_int,
    texRef: *const textureReference,
) -> hipError_t {
    refuse(!pFormat.is_null() && !pNumChannels.is_null() && !texRef.is_null())
}

/// `hipTexRefGetMaxAnisotropy(int* pmaxAnsio, const textureReference* texRef)`. Errors:
/// `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetMaxAnisotropy(pmaxAnsio: *mut c_int, texRef: *const textureReference) -> hipError_t {
    refuse(!pmaxAnsio.is_null() && !texRef.is_null())
}

/// `hipTexRefGetMipmapFilterMode(enum hipTextureFilterMode* pfm, const textureReference*
/// texRef)`. Errors: `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetMipmapFilterMode(
    pfm: *mut hipTextureFilterMode,
    texRef: *const textureReference,
) -> hipError_t {
    refuse(!pfm.is_null() && !texRef.is_null())
}

/// `hipTexRefGetMipmapLevelBias(float* pbias, const textureReference* texRef)`. Errors:
/// `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetMipmapLevelBias(pbias: *mut f32, texRef: *const textureReference) -> hipError_t {
    refuse(!pbias.is_null() && !texRef.is_null())
}

/// `hipTexRefGetMipmapLevelClamp(float* pminMipmapLevelClamp, float* pmaxMipmapLevelClamp,
/// const textureReference* texRef)`. Errors: `hipErrorInvalidValue` (a pointer null), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetMipmapLevelClamp(
    pminMipmapLevelClamp: *mut f32,
    pmaxMipmapLevelClamp: *mut f32,
    texRef: *const textureReference,
) -> hipError_t {
    refuse(!pminMipmapLevelClamp.is_null() && !pmaxMipmapLevelClamp.is_null() && !texRef.is_null())
}

/// `hipTexRefGetMipMappedArray(hipMipmappedArray_t* pArray, const textureReference* texRef)`.
/// Errors: `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetMipMappedArray(
    pArray: *mut hipMipmappedArray_t,
    texRef: *const textureReference,
) -> hipError_t {
    refuse(!pArray.is_null() && !texRef.is_null())
}

/// `hipTexRefGetAddressMode(enum hipTextureAddressMode* pam, const textureReference* texRef,
/// int dim)`: clr checks image support before `dim`. Errors: `hipErrorInvalidValue` (a
/// pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefGetAddressMode(
    pam: *mut hipTextureAddressMode,
    texRef: *const textureReference,
    dim: c_int,
) -> hipError_t {
    let _ = dim;
    refuse(!pam.is_null() && !texRef.is_null())
}

/// `hipTexRefSetFormat(textureReference* texRef, hipArray_Format fmt, int
/// NumPackedComponents)`. Errors: `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetFormat(
    texRef: *mut textureReference,
    fmt: hipArray_Format,
    NumPackedComponents: c_int,
) -> hipError_t {
    let _ = (fmt, NumPackedComponents);
    refuse(!texRef.is_null())
}

/// `hipTexRefSetFlags(textureReference* texRef, unsigned int Flags)` (`HIP_TRSF_*`). Errors:
/// `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetFlags(texRef: *mut textureReference, Flags: c_uint) -> hipError_t {
    let _ = Flags;
    refuse(!texRef.is_null())
}

/// `hipTexRefSetFilterMode(textureReference* texRef, enum hipTextureFilterMode fm)`.
/// Errors: `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetFilterMode(texRef: *mut textureReference, fm: hipTextureFilterMode) -> hipError_t {
    let _ = fm;
    refuse(!texRef.is_null())
}

/// `hipTexRefSetMaxAnisotropy(textureReference* texRef, unsigned int maxAniso)`. Errors:
/// `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetMaxAnisotropy(texRef: *mut textureReference, maxAniso: c_uint) -> hipError_t {
    let _ = maxAniso;
    refuse(!texRef.is_null())
}

/// `hipTexRefSetMipmapFilterMode(textureReference* texRef, enum hipTextureFilterMode fm)`.
/// Errors: `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetMipmapFilterMode(texRef: *mut textureReference, fm: hipTextureFilterMode) -> hipError_t {
    let _ = fm;
    refuse(!texRef.is_null())
}

/// `hipTexRefSetMipmapLevelBias(textureReference* texRef, float bias)`. Errors:
/// `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetMipmapLevelBias(texRef: *mut textureReference, bias: f32) -> hipError_t {
    let _ = bias;
    refuse(!texRef.is_null())
}

/// `hipTexRefSetMipmapLevelClamp(textureReference* texRef, float minMipMapLevelClamp, float
/// maxMipMapLevelClamp)`. Errors: `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetMipmapLevelClamp(
    texRef: *mut textureReference,
    minMipMapLevelClamp: f32,
    maxMipMapLevelClamp: f32,
) -> hipError_t {
    let _ = (minMipMapLevelClamp, maxMipMapLevelClamp);
    refuse(!texRef.is_null())
}

/// `hipTexRefSetBorderColor(textureReference* texRef, float* pBorderColor)`. Errors:
/// `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetBorderColor(texRef: *mut textureReference, pBorderColor: *mut f32) -> hipError_t {
    refuse(!texRef.is_null() && !pBorderColor.is_null())
}

/// `hipTexRefSetAddressMode(textureReference* texRef, int dim, enum hipTextureAddressMode am)`.
/// Errors: `hipErrorInvalidValue` (`texRef` null, `dim` not 0, 1 or 2), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetAddressMode(
    texRef: *mut textureReference,
    dim: c_int,
    am: hipTextureAddressMode,
) -> hipError_t {
    let _ = am;
    refuse(!texRef.is_null() && (0..=2).contains(&dim))
}

/// `hipTexRefSetAddress(size_t* ByteOffset, textureReference* texRef, hipDeviceptr_t dptr,
/// size_t bytes)`. Errors: `hipErrorInvalidHandle` (`texRef` null, clr's
/// `hipErrorInvalidResourceHandle`), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetAddress(
    ByteOffset: *mut usize,
    texRef: *mut textureReference,
    dptr: hipDeviceptr_t,
    bytes: usize,
) -> hipError_t {
    let _ = (ByteOffset, dptr, bytes);
    api(|| {
        if texRef.is_null() {
            return Err(hipError_t::hipErrorInvalidHandle);
        }
        no_images()
    })
}

/// `hipTexRefSetAddress2D(textureReference* texRef, const HIP_ARRAY_DESCRIPTOR* desc,
/// hipDeviceptr_t dptr, size_t Pitch)`. Errors: `hipErrorInvalidValue` (`texRef` or `desc`
/// null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetAddress2D(
    texRef: *mut textureReference,
    desc: *const HIP_ARRAY_DESCRIPTOR,
    dptr: hipDeviceptr_t,
    Pitch: usize,
) -> hipError_t {
    let _ = (dptr, Pitch);
    refuse(!texRef.is_null() && !desc.is_null())
}

/// `hipTexRefSetArray(textureReference* tex, hipArray_const_t array, unsigned int flags)`.
/// Errors: `hipErrorInvalidValue` (a pointer null, `flags` not `HIP_TRSA_OVERRIDE_FORMAT`),
/// else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetArray(tex: *mut textureReference, array: hipArray_const_t, flags: c_uint) -> hipError_t {
    refuse(!tex.is_null() && !array.is_null() && flags == HIP_TRSA_OVERRIDE_FORMAT)
}

/// `hipTexRefSetMipmappedArray(textureReference* texRef, struct hipMipmappedArray*
/// mipmappedArray, unsigned int Flags)`. Errors: `hipErrorInvalidValue` (a pointer null,
/// `Flags` not `HIP_TRSA_OVERRIDE_FORMAT`), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipTexRefSetMipmappedArray(
    texRef: *mut textureReference,
    mipmappedArray: *mut hipMipmappedArray,
    Flags: c_uint,
) -> hipError_t {
    refuse(!texRef.is_null() && !mipmappedArray.is_null() && Flags == HIP_TRSA_OVERRIDE_FORMAT)
}

// ---------------------------------------------------------------------------------------------
// Surface objects
// ---------------------------------------------------------------------------------------------

/// `hipCreateSurfaceObject(hipSurfaceObject_t* pSurfObject, const hipResourceDesc* pResDesc)`:
/// would make a surface object over an array. clr (`ihipCreateSurfaceObject`) checks image
/// support before its arguments, so every call answers `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipCreateSurfaceObject(
    pSurfObject: *mut hipSurfaceObject_t,
    pResDesc: *const hipResourceDesc,
) -> hipError_t {
    let _ = (pSurfObject, pResDesc);
    api(no_images)
}

/// `hipDestroySurfaceObject(hipSurfaceObject_t surfaceObject)`: null is a no-op that succeeds
/// (clr `ihipDestroySurfaceObject`); any other handle cannot be one of ours:
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipDestroySurfaceObject(surfaceObject: hipSurfaceObject_t) -> hipError_t {
    api(|| if surfaceObject.is_null() { Ok(()) } else { no_images() })
}
