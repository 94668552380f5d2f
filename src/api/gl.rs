//! OpenGL interop (HIP "GL Interop" and "Graphics Interop" groups, `hip_gl_interop.h`; clr
//! `hip_gl.cpp`).
//!
//! hipkfd shares memory with other APIs through dma-bufs (src/api/interop.rs) but has no OpenGL
//! binding: it never looks for a GL context, so no GL object can be registered and no graphics
//! resource exists. Every entry point checks its arguments as clr does (null pointers, counts,
//! flags, the stream; with clr's codes) and then answers `hipErrorNotSupported`. (clr answers
//! `hipErrorInvalidValue` first when no GL context is current, and `hipErrorInvalidHandle` for a
//! resource it did not register; both would hide that the feature is absent here.) Nothing is
//! written through an out-pointer.
//!
//! The `GLuint`/`GLenum` parameters are `unsigned int`, as `amd_hip_gl_interop.h` typedefs them.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, slice_in, stream_of, unsupported as no_gl};
use std::ffi::{c_int, c_uint, c_void};

/// clr `HipToClMemoryFlags`: exactly one `hipGraphicsRegisterFlags` value. Errors:
/// `hipErrorInvalidValue`.
fn register_flags(flags: c_uint) -> Result<(), hipError_t> {
    check(hipGraphicsRegisterFlags::ENUMERATORS.iter().any(|(_, f)| f.0 as c_uint == flags))
}

/// clr `validateResources`: `count` > 0 resources, none null. Errors: `hipErrorInvalidValue`.
fn resources_in(resources: *mut hipGraphicsResource_t, count: c_int) -> Result<(), hipError_t> {
    let n = usize::try_from(count).ok().filter(|&n| n > 0).ok_or(hipError_t::hipErrorInvalidValue)?;
    check(slice_in(resources, n)?.iter().all(|r| !r.is_null()))
}

/// `hipGLGetDevices(unsigned int* pHipDeviceCount, int* pHipDevices, unsigned int
/// hipDeviceCount, hipGLDeviceList deviceList)`: would list the devices of the current GL
/// context. Errors, in clr's order: `hipErrorNotSupported` (`hipGLDeviceListNextFrame`, which
/// clr does not support either), `hipErrorInvalidValue` (a pointer null, `hipDeviceCount` 0,
/// `deviceList` not a `hipGLDeviceList`), else `hipErrorNotSupported`: no device is bound to a
/// GL context here (`*pHipDeviceCount` is left as it was).
#[no_mangle]
pub extern "C" fn hipGLGetDevices(
    pHipDeviceCount: *mut c_uint,
    pHipDevices: *mut c_int,
    hipDeviceCount: c_uint,
    deviceList: hipGLDeviceList,
) -> hipError_t {
    api(|| {
        if deviceList == hipGLDeviceList::hipGLDeviceListNextFrame {
            return Err(hipError_t::hipErrorNotSupported);
        }
        check(!pHipDeviceCount.is_null() && !pHipDevices.is_null() && hipDeviceCount != 0)?;
        check(
            deviceList == hipGLDeviceList::hipGLDeviceListAll
                || deviceList == hipGLDeviceList::hipGLDeviceListCurrentFrame,
        )?;
        no_gl()
    })
}

/// `hipGraphicsGLRegisterBuffer(hipGraphicsResource** resource, GLuint buffer, unsigned int
/// flags)`: would register GL buffer object `buffer`. Errors, in clr's order:
/// `hipErrorInvalidValue` (`flags` not one `hipGraphicsRegisterFlags` value or an image-only
/// one: `SurfaceLoadStore`, `TextureGather`; `resource` null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsGLRegisterBuffer(
    resource: *mut *mut hipGraphicsResource,
    buffer: c_uint,
    flags: c_uint,
) -> hipError_t {
    let _ = buffer;
    api(|| {
        let image_only = hipGraphicsRegisterFlags::hipGraphicsRegisterFlagsSurfaceLoadStore.0
            | hipGraphicsRegisterFlags::hipGraphicsRegisterFlagsTextureGather.0;
        check(flags & image_only as c_uint == 0)?;
        register_flags(flags)?;
        check(!resource.is_null())?;
        no_gl()
    })
}

/// `hipGraphicsGLRegisterImage(hipGraphicsResource** resource, GLuint image, GLenum target,
/// unsigned int flags)`: would register GL texture or renderbuffer `image`. Errors, in clr's
/// order: `hipErrorInvalidValue` (`flags` not one `hipGraphicsRegisterFlags` value, `resource`
/// null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsGLRegisterImage(
    resource: *mut *mut hipGraphicsResource,
    image: c_uint,
    target: c_uint,
    flags: c_uint,
) -> hipError_t {
    let _ = (image, target);
    api(|| {
        register_flags(flags)?;
        check(!resource.is_null())?;
        no_gl()
    })
}

/// `hipGraphicsMapResources(int count, hipGraphicsResource_t* resources, hipStream_t stream)`.
/// Errors, in clr's order: `hipErrorContextIsDestroyed` (`stream` not a stream),
/// `hipErrorInvalidValue` (`count` ≤ 0, `resources` or one of them null), else
/// `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsMapResources(
    count: c_int,
    resources: *mut hipGraphicsResource_t,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        stream_of(crate::core::runtime::runtime()?, stream)?;
        resources_in(resources, count)?;
        no_gl()
    })
}

/// `hipGraphicsUnmapResources(int count, hipGraphicsResource_t* resources, hipStream_t
/// stream)`. Errors: as [`hipGraphicsMapResources`].
#[no_mangle]
pub extern "C" fn hipGraphicsUnmapResources(
    count: c_int,
    resources: *mut hipGraphicsResource_t,
    stream: hipStream_t,
) -> hipError_t {
    hipGraphicsMapResources(count, resources, stream)
}

/// `hipGraphicsResourceGetMappedPointer(void** devPtr, size_t* size, hipGraphicsResource_t
/// resource)`. Errors: `hipErrorInvalidValue` (a pointer null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsResourceGetMappedPointer(
    devPtr: *mut *mut c_void,
    size: *mut usize,
    resource: hipGraphicsResource_t,
) -> hipError_t {
    api(|| {
        check(!devPtr.is_null() && !size.is_null() && !resource.is_null())?;
        no_gl()
    })
}

/// `hipGraphicsSubResourceGetMappedArray(hipArray_t* array, hipGraphicsResource_t resource,
/// unsigned int arrayIndex, unsigned int mipLevel)`. Errors: `hipErrorInvalidValue` (a pointer
/// null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsSubResourceGetMappedArray(
    array: *mut hipArray_t,
    resource: hipGraphicsResource_t,
    arrayIndex: c_uint,
    mipLevel: c_uint,
) -> hipError_t {
    let _ = (arrayIndex, mipLevel);
    api(|| {
        check(!array.is_null() && !resource.is_null())?;
        no_gl()
    })
}

/// `hipGraphicsUnregisterResource(hipGraphicsResource_t resource)`. Errors:
/// `hipErrorInvalidValue` (null), else `hipErrorNotSupported`.
#[no_mangle]
pub extern "C" fn hipGraphicsUnregisterResource(resource: hipGraphicsResource_t) -> hipError_t {
    api(|| {
        check(!resource.is_null())?;
        no_gl()
    })
}
