//! Arrays and driver-style copies (clr `hip_memory.cpp`: `hipMallocArray` … `hipArrayDestroy`,
//! `hipMemcpy*Array*`, `hipMemcpyAtoH`/`HtoA`, `hipMemcpyParam2D`, `hipDrvMemcpy3D`;
//! `hip_texture.cpp`: `hipCreateChannelDesc`, `hipGetChannelDesc`). An array is linear pitched
//! VRAM (src/mem/array.rs); every copy here becomes one pitched block copy (src/core/copy.rs
//! `memcpy_3d`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, read_in, rocm5_caller, rt_dev, stream_of, write_out};
use crate::api::memory::{max_pitch, memory_type_from_caller, pitched};
use crate::core::copy::{check_kind, Block};
use crate::core::runtime::{runtime, Runtime};
use crate::mem::array::{array_block, ArrayObj, MipmapObj};
use kfd_ioctl::sdma;
use std::ffi::{c_int, c_uint, c_void};

/// An array handle as the core sees it.
fn obj(a: hipArray_t) -> *const ArrayObj {
    a as *const ArrayObj
}

/// `hipCreateChannelDesc`: `{x, y, z, w, f}` (clr `hip_texture.cpp`); no checks.
#[no_mangle]
pub extern "C" fn hipCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: hipChannelFormatKind,
) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

/// `hipGetChannelDesc`: the channel format of `array`. Errors: `hipErrorInvalidValue` (null
/// `desc`), `hipErrorInvalidHandle` (null, freed or unknown `array`).
#[no_mangle]
pub extern "C" fn hipGetChannelDesc(desc: *mut hipChannelFormatDesc, array: hipArray_t) -> hipError_t {
    api(|| {
        check(!desc.is_null())?;
        let g = runtime()?.array_geom_of(obj(array), hipError_t::hipErrorInvalidHandle)?;
        write_out(desc, g.channel_desc())
    })
}

/// The `hipArray_Format` and channel count of a channel description, as clr's
/// `hip::CheckArrayFormat` and `hip::getArrayFormat` read it: every channel as wide as `x`, no
/// channel after a zero one, 8/16/32-bit integers or 16/32-bit floats. Errors:
/// `hipErrorInvalidValue`.
fn desc_format(d: &hipChannelFormatDesc) -> Result<(hipArray_Format, u32), hipError_t> {
    let ch = [d.x, d.y, d.z, d.w];
    let n = ch.iter().take_while(|&&c| c != 0).count();
    check(n > 0 && ch[n..].iter().all(|&c| c == 0) && ch[..n].iter().all(|&c| c == d.x))?;
    type K = hipChannelFormatKind;
    type F = hipArray_Format;
    let f = match (d.f, d.x) {
        (K::hipChannelFormatKindUnsigned, 8) => F::HIP_AD_FORMAT_UNSIGNED_INT8,
        (K::hipChannelFormatKindUnsigned, 16) => F::HIP_AD_FORMAT_UNSIGNED_INT16,
        (K::hipChannelFormatKindUnsigned, 32) => F::HIP_AD_FORMAT_UNSIGNED_INT32,
        (K::hipChannelFormatKindSigned, 8) => F::HIP_AD_FORMAT_SIGNED_INT8,
        (K::hipChannelFormatKindSigned, 16) => F::HIP_AD_FORMAT_SIGNED_INT16,
        (K::hipChannelFormatKindSigned, 32) => F::HIP_AD_FORMAT_SIGNED_INT32,
        (K::hipChannelFormatKindFloat, 16) => F::HIP_AD_FORMAT_HALF,
        (K::hipChannelFormatKindFloat, 32) => F::HIP_AD_FORMAT_FLOAT,
        _ => return Err(hipError_t::hipErrorInvalidValue),
    };
    Ok((f, n as u32))
}

/// The driver descriptor of an array of `extent` elements of `desc`'s format. Errors as
/// [`desc_format`] (and `hipErrorInvalidValue` for a null `desc`).
fn extent_descriptor(
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    flags: c_uint,
) -> Result<HIP_ARRAY3D_DESCRIPTOR, hipError_t> {
    let (Format, NumChannels) = desc_format(&read_in(desc)?)?;
    Ok(HIP_ARRAY3D_DESCRIPTOR {
        Width: extent.width,
        Height: extent.height,
        Depth: extent.depth,
        Format,
        NumChannels,
        Flags: flags,
    })
}

/// Makes an array on the current device and writes its handle to `array` (null first, so a
/// failed call leaves no stale handle).
fn create(array: *mut hipArray_t, d: &HIP_ARRAY3D_DESCRIPTOR) -> Result<(), hipError_t> {
    crate::graph::check_unsafe_call()?;
    let (rt, dev) = rt_dev()?;
    let g = rt.array_geom(dev, (d.Width, d.Height, d.Depth), d.Format, d.NumChannels, d.Flags)?;
    write_out(array, std::ptr::null_mut())?;
    let h = rt.array_create(dev, g)?;
    write_out(array, h as hipArray_t)
}

/// `hipMallocArray`: a 1D (`height == 0`) or 2D array of `width × height` elements of `desc`'s
/// format on the current device, as linear pitched VRAM (no texture path: `ImageSupport` stays
/// 0). Flags: `hipArrayDefault`, `hipArraySurfaceLoadStore`, `hipArrayTextureGather` (2D);
/// `hipArrayLayered` needs a depth, so is refused here. Errors (clr `hipMallocArray`,
/// `ihipArrayCreate`; hip-tests `hipMallocArray.cc`): `hipErrorInvalidValue` (null `array` or
/// `desc`; channels of different sizes, a channel after a zero one, 3 channels, 8-bit float,
/// widths other than 8/16/32, unknown kind; zero width; unknown or cubemap flags; extents past
/// `hipDeviceAttributeMaxTexture*`), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMallocArray(
    array: *mut hipArray_t,
    desc: *const hipChannelFormatDesc,
    width: usize,
    height: usize,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!array.is_null())?;
        let (Format, NumChannels) = desc_format(&read_in(desc)?)?;
        create(
            array,
            &HIP_ARRAY3D_DESCRIPTOR { Width: width, Height: height, Depth: 0, Format, NumChannels, Flags: flags },
        )
    })
}

/// `hipMalloc3DArray`: an array of `extent` elements (`depth == 0`: 1D or 2D; `hipArrayLayered`:
/// `depth` layers of a 1D (`height == 0`) or 2D array). Errors as `hipMallocArray` (hip-tests
/// `hipMalloc3DArray.cc`: zero width, zero height of a non-layered 3D array, extents past the
/// limits: `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipMalloc3DArray(
    array: *mut hipArray_t,
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!array.is_null())?;
        create(array, &extent_descriptor(desc, extent, flags)?)
    })
}

/// `hipArrayCreate`: a 1D or 2D array of `Width × Height` elements of `NumChannels` (1, 2, 4)
/// channels of `Format`. Errors (hip-tests `hipArrayCreate.cc`): `hipErrorInvalidValue` (null
/// pointers, other channel counts, unknown formats, zero width, extents past the limits),
/// `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipArrayCreate(pHandle: *mut hipArray_t, pAllocateArray: *const HIP_ARRAY_DESCRIPTOR) -> hipError_t {
    api(|| {
        let d = read_in(pAllocateArray)?;
        check(!pHandle.is_null())?;
        let d3 = HIP_ARRAY3D_DESCRIPTOR {
            Width: d.Width,
            Height: d.Height,
            Depth: 0,
            Format: d.Format,
            NumChannels: d.NumChannels,
            Flags: hipArrayDefault,
        };
        create(pHandle, &d3)
    })
}

/// `hipArray3DCreate`: `hipArrayCreate` with a depth and flags (`hipArrayLayered`,
/// `hipArraySurfaceLoadStore`, `hipArrayTextureGather`). Errors as `hipArrayCreate`, and
/// `hipErrorInvalidValue` for `hipArrayCubemap` or unknown flags.
#[no_mangle]
pub extern "C" fn hipArray3DCreate(
    array: *mut hipArray_t,
    pAllocateArray: *const HIP_ARRAY3D_DESCRIPTOR,
) -> hipError_t {
    api(|| {
        let d = read_in(pAllocateArray)?;
        check(!array.is_null())?;
        create(array, &d)
    })
}

/// `hipFreeArray`: frees an array after the devices are idle. Errors (clr `ihipArrayDestroy`,
/// hip-tests `hipFreeArray.cc`): `hipErrorInvalidValue` (null), `hipErrorContextIsDestroyed`
/// (an array already freed, or no array).
#[no_mangle]
pub extern "C" fn hipFreeArray(array: hipArray_t) -> hipError_t {
    api(|| {
        crate::graph::check_unsafe_call()?;
        check(!array.is_null())?;
        runtime()?.array_destroy(obj(array))
    })
}

/// `hipArrayDestroy`: `hipFreeArray` (driver spelling).
#[no_mangle]
pub extern "C" fn hipArrayDestroy(array: hipArray_t) -> hipError_t {
    hipFreeArray(array)
}

// ---- mipmapped arrays -------------------------------------------------------------------------

/// Makes a mipmapped array of `levels` levels on the current device and writes its handle to
/// `out` (null first).
fn mipmap_create(out: *mut hipMipmappedArray_t, d: &HIP_ARRAY3D_DESCRIPTOR, levels: c_uint) -> Result<(), hipError_t> {
    crate::graph::check_unsafe_call()?;
    let (rt, dev) = rt_dev()?;
    let g = rt.array_geom(dev, (d.Width, d.Height, d.Depth), d.Format, d.NumChannels, d.Flags)?;
    write_out(out, std::ptr::null_mut())?;
    let h = rt.mipmap_create(dev, g, levels)?;
    write_out(out, h as hipMipmappedArray_t)
}

/// `hipMallocMipmappedArray`: a mipmapped array of `numLevels` levels (0 counts as 1) of
/// `desc`'s format, level 0 of `extent` elements (1D, 2D, 3D or layered as `hipMalloc3DArray`),
/// each next level half as large in every present dimension (at least 1). Each level is an
/// array as `hipMalloc3DArray` makes (linear pitched VRAM). Errors (clr `hipMallocMipmappedArray`,
/// `ihipMipmapArrayCreate`; hip-tests `hipMallocMipmappedArray.cc`): `hipErrorInvalidValue`
/// (null `mipmappedArray` or `desc`; a bad channel layout or format as `hipMallocArray`; unknown
/// or cubemap flags; zero width; extents past the texture limits; more than `1 +
/// floor(log2(max extent))` levels), `hipErrorOutOfMemory`.
#[no_mangle]
pub extern "C" fn hipMallocMipmappedArray(
    mipmappedArray: *mut hipMipmappedArray_t,
    desc: *const hipChannelFormatDesc,
    extent: hipExtent,
    numLevels: c_uint,
    flags: c_uint,
) -> hipError_t {
    api(|| {
        check(!mipmappedArray.is_null())?;
        mipmap_create(mipmappedArray, &extent_descriptor(desc, extent, flags)?, numLevels)
    })
}

/// `hipMipmappedArrayCreate`: `hipMallocMipmappedArray` from a driver descriptor. Errors as
/// `hipMallocMipmappedArray` (null pointers, bad descriptor: `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipMipmappedArrayCreate(
    pHandle: *mut hipMipmappedArray_t,
    pMipmappedArrayDesc: *mut HIP_ARRAY3D_DESCRIPTOR,
    numMipmapLevels: c_uint,
) -> hipError_t {
    api(|| {
        check(!pHandle.is_null())?;
        let d = read_in(pMipmappedArrayDesc)?;
        mipmap_create(pHandle, &d, numMipmapLevels)
    })
}

/// `hipFreeMipmappedArray`: frees a mipmapped array (every level) after the devices are idle.
/// Errors (clr `ihipMipmappedArrayDestroy`; hip-tests `hipFreeMipmappedArray.cc`):
/// `hipErrorInvalidValue` (null), `hipErrorContextIsDestroyed` (freed already, or unknown).
#[no_mangle]
pub extern "C" fn hipFreeMipmappedArray(mipmappedArray: hipMipmappedArray_t) -> hipError_t {
    api(|| {
        crate::graph::check_unsafe_call()?;
        check(!mipmappedArray.is_null())?;
        runtime()?.mipmap_destroy(mipmappedArray as *const MipmapObj)
    })
}

/// `hipMipmappedArrayDestroy`: `hipFreeMipmappedArray` (driver spelling).
#[no_mangle]
pub extern "C" fn hipMipmappedArrayDestroy(hMipmappedArray: hipMipmappedArray_t) -> hipError_t {
    hipFreeMipmappedArray(hMipmappedArray)
}

/// `hipGetMipmappedArrayLevel`: the array of level `level` of `mipmappedArray`; it belongs to
/// the mipmapped array (freed with it). Errors (clr `ihipMipmappedArrayGetLevel`; hip-tests
/// `Unit_hipGetMipmappedArrayLevel_Negative`): `hipErrorInvalidValue` (null `levelArray`, a
/// level past the last), `hipErrorInvalidResourceHandle` (null or freed `mipmappedArray`).
#[no_mangle]
pub extern "C" fn hipGetMipmappedArrayLevel(
    levelArray: *mut hipArray_t,
    mipmappedArray: hipMipmappedArray_const_t,
    level: c_uint,
) -> hipError_t {
    api(|| {
        check(!levelArray.is_null())?;
        check(!mipmappedArray.is_null()).map_err(|_| hipError_t::hipErrorInvalidResourceHandle)?;
        crate::graph::check_unsafe_call()?;
        let a = runtime()?.mipmap_level(mipmappedArray as *const MipmapObj, level)?;
        write_out(levelArray, a as hipArray_t)
    })
}

/// `hipMipmappedArrayGetLevel`: `hipGetMipmappedArrayLevel` (driver spelling).
#[no_mangle]
pub extern "C" fn hipMipmappedArrayGetLevel(
    pLevelArray: *mut hipArray_t,
    hMipMappedArray: hipMipmappedArray_t,
    level: c_uint,
) -> hipError_t {
    hipGetMipmappedArrayLevel(pLevelArray, hMipMappedArray, level)
}

/// The descriptor of a live array. Errors: `hipErrorInvalidHandle`.
fn descriptor(array: hipArray_t) -> Result<HIP_ARRAY3D_DESCRIPTOR, hipError_t> {
    let g = runtime()?.array_geom_of(obj(array), hipError_t::hipErrorInvalidHandle)?;
    Ok(HIP_ARRAY3D_DESCRIPTOR {
        Width: g.width as usize,
        Height: g.height as usize,
        Depth: g.depth as usize,
        Format: g.format,
        NumChannels: g.channels,
        Flags: g.flags,
    })
}

/// `hipArrayGetInfo`: any of `desc` (channel format), `extent` (elements, 0 for absent
/// dimensions) and `flags` of `array`; null outputs are skipped. Errors (clr, hip-tests
/// `hipArrayGetInfo.cc`): `hipErrorInvalidHandle` (null or freed `array`).
#[no_mangle]
pub extern "C" fn hipArrayGetInfo(
    desc: *mut hipChannelFormatDesc,
    extent: *mut hipExtent,
    flags: *mut c_uint,
    array: hipArray_t,
) -> hipError_t {
    api(|| {
        check(!array.is_null()).map_err(|_| hipError_t::hipErrorInvalidHandle)?;
        if desc.is_null() && extent.is_null() && flags.is_null() {
            return Ok(());
        }
        let d = descriptor(array)?;
        if !desc.is_null() {
            let g = runtime()?.array_geom_of(obj(array), hipError_t::hipErrorInvalidHandle)?;
            write_out(desc, g.channel_desc())?;
        }
        if !extent.is_null() {
            write_out(extent, hipExtent { width: d.Width, height: d.Height, depth: d.Depth })?;
        }
        if !flags.is_null() {
            write_out(flags, d.Flags)?;
        }
        Ok(())
    })
}

/// `hipArrayGetDescriptor`: width, height, format and channels of `array`. Errors (clr):
/// `hipErrorInvalidHandle` (null or freed `array`), `hipErrorInvalidValue` (null descriptor).
#[no_mangle]
pub extern "C" fn hipArrayGetDescriptor(pArrayDescriptor: *mut HIP_ARRAY_DESCRIPTOR, array: hipArray_t) -> hipError_t {
    api(|| {
        check(!array.is_null()).map_err(|_| hipError_t::hipErrorInvalidHandle)?;
        check(!pArrayDescriptor.is_null())?;
        let d = descriptor(array)?;
        let d2 =
            HIP_ARRAY_DESCRIPTOR { Width: d.Width, Height: d.Height, Format: d.Format, NumChannels: d.NumChannels };
        write_out(pArrayDescriptor, d2)
    })
}

/// `hipArray3DGetDescriptor`: the full descriptor of `array` (flags included). Errors as
/// `hipArrayGetDescriptor`.
#[no_mangle]
pub extern "C" fn hipArray3DGetDescriptor(
    pArrayDescriptor: *mut HIP_ARRAY3D_DESCRIPTOR,
    array: hipArray_t,
) -> hipError_t {
    api(|| {
        check(!array.is_null()).map_err(|_| hipError_t::hipErrorInvalidHandle)?;
        check(!pArrayDescriptor.is_null())?;
        write_out(pArrayDescriptor, descriptor(array)?)
    })
}

// ---- copies ----------------------------------------------------------------------------------

/// One side of a driver copy (a `HIP_MEMCPY3D` half).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Side {
    /// `hipMemoryTypeHost`, `Device`, `Unified` (a pointer) or `Array`.
    pub ty: hipMemoryType,
    /// The pointer (`*Host` for host memory, else `*Device`).
    pub ptr: *const c_void,
    pub array: hipArray_t,
    /// Block origin: x in bytes, y rows, z slices.
    pub pos: hipPos,
    /// Bytes per row of pointer memory (0: the copy's width).
    pub pitch: usize,
    /// Rows per slice of pointer memory (0: the copy's height).
    pub height: usize,
}

impl Side {
    fn ptr(ptr: *const c_void, pitch: usize) -> Side {
        Side {
            ty: hipMemoryType::hipMemoryTypeUnified,
            ptr,
            array: std::ptr::null_mut(),
            pos: hipPos { x: 0, y: 0, z: 0 },
            pitch,
            height: 0,
        }
    }

    fn array(array: hipArray_t, x: usize, y: usize) -> Side {
        Side {
            ty: hipMemoryType::hipMemoryTypeArray,
            ptr: std::ptr::null(),
            array,
            pos: hipPos { x, y, z: 0 },
            pitch: 0,
            height: 0,
        }
    }

    /// Side `src` (or dst) of a `HIP_MEMCPY3D`; `ty` in the caller's ABI (ROCm 5's values for a
    /// caller built against ROCm 5).
    #[allow(clippy::too_many_arguments)]
    fn drv(
        ty: hipMemoryType,
        host: *const c_void,
        device: *const c_void,
        array: hipArray_t,
        pos: hipPos,
        pitch: usize,
        height: usize,
    ) -> Side {
        let ty = memory_type_from_caller(ty);
        let ptr = if ty == hipMemoryType::hipMemoryTypeHost { host } else { device };
        Side { ty, ptr, array, pos, pitch, height }
    }

    /// The pitched surface of this side for a block of `b`, checked: a live array and a block
    /// inside it; a non-null pointer (device memory the runtime knows for
    /// `hipMemoryTypeDevice`), a pitch of at least `pos.x + width` and below
    /// `hipDeviceAttributeMaxPitch`, and for several slices a block inside a slice. Errors:
    /// `hipErrorInvalidValue`.
    fn surface(&self, rt: &Runtime, b: &Block) -> Result<sdma::Pitched, hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        type T = hipMemoryType;
        match self.ty {
            T::hipMemoryTypeArray => {
                let a = rt.array_find(obj(self.array), inv)?;
                array_block(&a, self.pos, (b.width, b.height, b.depth))
            }
            T::hipMemoryTypeHost | T::hipMemoryTypeDevice | T::hipMemoryTypeUnified => {
                check(!self.ptr.is_null())?;
                check(self.ty != T::hipMemoryTypeDevice || rt.allocs.find(self.ptr as u64).is_some())?;
                let pitch = if self.pitch == 0 { b.width as usize } else { self.pitch };
                check((self.pos.x as u64).checked_add(b.width).is_some_and(|e| e <= pitch as u64))?;
                check(pitch < max_pitch()?)?;
                let rows = if self.height == 0 { b.height as usize } else { self.height };
                check(b.depth <= 1 || (self.pos.y as u64).checked_add(b.height).is_some_and(|e| e <= rows as u64))?;
                pitched(self.ptr, pitch, rows, self.pos)
            }
            _ => Err(inv),
        }
    }
}

/// Copies block `b` (width in bytes) from `src` to `dst` on `stream`; `sync` waits. Zero
/// extents succeed. Errors: `hipErrorContextIsDestroyed` (bad stream), those of
/// [`Side::surface`], and the copy's (`hipErrorInvalidValue` for pointer blocks past their
/// allocation).
pub(crate) fn copy(dst: Side, src: Side, b: Block, stream: hipStream_t, sync: bool) -> Result<(), hipError_t> {
    let (rt, _) = rt_dev()?;
    let s = stream_of(rt, stream)?;
    if b.width == 0 || b.height == 0 || b.depth == 0 {
        return Ok(());
    }
    let d = dst.surface(rt, &b)?;
    let sr = src.surface(rt, &b)?;
    let kind = hipMemcpyKind::hipMemcpyDefault;
    if sync {
        crate::graph::check_sync_copy()?;
        return rt.memcpy_3d(d, sr, b, kind, &s, true);
    }
    // Recorded while `s` captures as the pointer copy it is (arrays are linear).
    rt.enqueue(&s, pitched_op(d, sr, b, None))
}

/// The stream operation of a copy between two linear surfaces (arrays are linear): a pitched
/// block copy whose parameters name the surfaces as pointers; `drv`: the `HIP_MEMCPY3D` it was
/// made from, if any.
fn pitched_op(d: sdma::Pitched, sr: sdma::Pitched, b: Block, drv: Option<HIP_MEMCPY3D>) -> crate::graph::Op {
    let side = |p: &sdma::Pitched| hipPitchedPtr {
        ptr: p.addr as *mut c_void,
        pitch: p.pitch as usize,
        xsize: b.width as usize,
        ysize: p.slice.checked_div(p.pitch).unwrap_or(0) as usize,
    };
    let origin = hipPos { x: 0, y: 0, z: 0 };
    let parms = hipMemcpy3DParms {
        srcArray: std::ptr::null_mut(),
        srcPos: origin,
        srcPtr: side(&sr),
        dstArray: std::ptr::null_mut(),
        dstPos: origin,
        dstPtr: side(&d),
        extent: hipExtent { width: b.width as usize, height: b.height as usize, depth: b.depth as usize },
        kind: hipMemcpyKind::hipMemcpyDefault,
    };
    let drv = drv.map(|p| Box::new(crate::graph::CParams(p)));
    crate::graph::Op::Memcpy3D { parms: crate::graph::CParams(parms), dst: d, src: sr, block: b, drv }
}

/// `hipDrvGraphAddMemcpyNode`'s operation: the `HIP_MEMCPY3D` copy (the caller's ABI) with its
/// sides resolved now, as [`hipDrvMemcpy3D`] resolves them. Errors as `hipDrvMemcpy3D`'s checks,
/// and `hipErrorInvalidValue` for a block past its allocation.
pub(crate) fn drv_copy_op(p: *const HIP_MEMCPY3D) -> Result<crate::graph::Op, hipError_t> {
    let rt = runtime()?;
    let given = read_drv3d(p)?;
    let (dst, src, b) = drv3d(&given);
    let (d, sr) = (dst.surface(rt, &b)?, src.surface(rt, &b)?);
    // Checked now, as clr validates a node's copy when it is added.
    rt.node_block_check(&d, &b)?;
    rt.node_block_check(&sr, &b)?;
    Ok(pitched_op(d, sr, b, Some(given)))
}

fn block(width: usize, height: usize, depth: usize) -> Block {
    Block { width: width as u64, height: height as u64, depth: depth as u64 }
}

/// clr `hipMemcpy2DValidateParams`: the kind, then the stream. Errors:
/// `hipErrorInvalidMemcpyDirection`, `hipErrorInvalidValue`.
fn check_params(kind: hipMemcpyKind, stream: hipStream_t) -> Result<(), hipError_t> {
    check_kind(kind)?;
    let (rt, _) = rt_dev()?;
    stream_of(rt, stream).map(drop).map_err(|_| hipError_t::hipErrorInvalidValue)
}

/// clr `hipMemcpy2DValidateBuffer`. Errors: `hipErrorInvalidValue` (null),
/// `hipErrorInvalidPitchValue` (`pitch` 0 or below `width`).
fn check_buffer(buf: *const c_void, pitch: usize, width: usize) -> Result<(), hipError_t> {
    check(!buf.is_null())?;
    if pitch == 0 || pitch < width {
        return Err(hipError_t::hipErrorInvalidPitchValue);
    }
    Ok(())
}

/// clr `hipMemcpy2DValidateArray`: a live array, and the block inside it. Errors:
/// `hipErrorInvalidHandle` (null or freed), `hipErrorInvalidValue` (past its extent).
fn check_array(array: hipArray_t, x: usize, y: usize, width: usize, height: usize) -> Result<(), hipError_t> {
    let a = runtime()?.array_find(obj(array), hipError_t::hipErrorInvalidHandle)?;
    array_block(&a, hipPos { x, y, z: 0 }, (width as u64, height as u64, 1)).map(drop)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn to_array(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        check_params(kind, stream)?;
        check_buffer(src, spitch, width)?;
        check_array(dst, wOffset, hOffset, width, height)?;
        copy(Side::array(dst, wOffset, hOffset), Side::ptr(src, spitch), block(width, height, 1), stream, sync)
    })
}

/// `hipMemcpy2DToArray`: copies `height` rows of `width` bytes from `src` (rows `spitch` apart;
/// host or device memory, any `kind`) into `dst` at byte offset `wOffset` of row `hOffset`,
/// synchronously. Errors (clr `hipMemcpy2DToArray_common`, in its order; hip-tests
/// `hipMemcpy2DToArray.cc`): `hipErrorInvalidMemcpyDirection`, `hipErrorInvalidValue` (bad
/// stream, null `src`), `hipErrorInvalidPitchValue` (`spitch` 0 or below `width`); zero extents
/// succeed; `hipErrorInvalidHandle` (null or freed `dst`), `hipErrorInvalidValue` (offsets or
/// extents past the array, not whole elements, source rows past their allocation).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DToArray(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, std::ptr::null_mut(), true)
}

/// `hipMemcpy2DToArrayAsync`: `hipMemcpy2DToArray` ordered on `stream`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DToArrayAsync(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    to_array(dst, wOffset, hOffset, src, spitch, width, height, kind, stream, false)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn from_array(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
    sync: bool,
) -> hipError_t {
    api(|| {
        check_params(kind, stream)?;
        check_array(src, wOffset, hOffset, width, height)?;
        check_buffer(dst, dpitch, width)?;
        copy(Side::ptr(dst, dpitch), Side::array(src, wOffset, hOffset), block(width, height, 1), stream, sync)
    })
}

/// `hipMemcpy2DFromArray`: copies `height` rows of `width` bytes of `src` from byte offset
/// `wOffsetSrc` of row `hOffset` to `dst` (rows `dpitch` apart), synchronously. Errors (clr
/// `hipMemcpy2DFromArray_common`, in its order): `hipErrorInvalidMemcpyDirection`,
/// `hipErrorInvalidValue` (bad stream), `hipErrorInvalidHandle` (null or freed `src`),
/// `hipErrorInvalidValue` (block past the array), `hipErrorInvalidValue` (null `dst`),
/// `hipErrorInvalidPitchValue` (`dpitch` 0 or below `width`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffset: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    from_array(dst, dpitch, src, wOffsetSrc, hOffset, width, height, kind, std::ptr::null_mut(), true)
}

/// `hipMemcpy2DFromArrayAsync`: `hipMemcpy2DFromArray` ordered on `stream`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffsetSrc: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    from_array(dst, dpitch, src, wOffsetSrc, hOffsetSrc, width, height, kind, stream, false)
}

/// `hipMemcpy2DArrayToArray`: copies `height` rows of `width` bytes between two arrays.
/// Errors (clr): `hipErrorInvalidMemcpyDirection`, `hipErrorInvalidHandle` (null or freed
/// array), `hipErrorInvalidValue` (a block past either array).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn hipMemcpy2DArrayToArray(
    dst: hipArray_t,
    wOffsetDst: usize,
    hOffsetDst: usize,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffsetSrc: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    api(|| {
        check_params(kind, std::ptr::null_mut())?;
        check_array(src, wOffsetSrc, hOffsetSrc, width, height)?;
        check_array(dst, wOffsetDst, hOffsetDst, width, height)?;
        let (d, s) = (Side::array(dst, wOffsetDst, hOffsetDst), Side::array(src, wOffsetSrc, hOffsetSrc));
        copy(d, s, block(width, height, 1), std::ptr::null_mut(), true)
    })
}

/// The rows clr's `hipMemcpyToArray`/`hipMemcpyFromArray` make of `count` bytes: `count /
/// max(height, 1)` bytes per row, `count / width / element size` rows.
fn legacy_rows(array: hipArray_t, count: usize) -> Result<(usize, usize), hipError_t> {
    let g = runtime()?.array_geom_of(obj(array), hipError_t::hipErrorInvalidValue)?;
    Ok((count / g.rows() as usize, count / g.width as usize / g.elem as usize))
}

/// `hipMemcpyToArray` (deprecated): `count` bytes from `src` into `dst` from byte `wOffset` of
/// row `hOffset`, as clr shapes them (`count / max(height, 1)` bytes per row). Errors:
/// `hipErrorInvalidValue` (null or freed `dst`, null `src`, a block past the array),
/// `hipErrorInvalidMemcpyDirection`.
#[no_mangle]
pub extern "C" fn hipMemcpyToArray(
    dst: hipArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    api(|| {
        check_kind(kind)?;
        let (w, h) = legacy_rows(dst, count)?;
        copy(Side::array(dst, wOffset, hOffset), Side::ptr(src, w), block(w, h, 1), std::ptr::null_mut(), true)
    })
}

/// `hipMemcpyFromArray` (deprecated): the reverse of `hipMemcpyToArray`. Errors as it.
#[no_mangle]
pub extern "C" fn hipMemcpyFromArray(
    dst: *mut c_void,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffset: usize,
    count: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    from_array_legacy(dst, src, wOffsetSrc, hOffset, count, kind, std::ptr::null_mut())
}

/// `hipMemcpyFromArray` on `stream` (synchronous).
pub(crate) fn from_array_legacy(
    dst: *mut c_void,
    src: hipArray_t,
    wOffsetSrc: usize,
    hOffset: usize,
    count: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        check_kind(kind)?;
        let (w, h) = legacy_rows(src, count)?;
        copy(Side::ptr(dst, w), Side::array(src, wOffsetSrc, hOffset), block(w, h, 1), stream, true)
    })
}

fn htoa(dst: hipArray_t, off: usize, src: *const c_void, n: usize, stream: hipStream_t, sync: bool) -> hipError_t {
    api(|| {
        check(!dst.is_null() && !src.is_null())?;
        copy(Side::array(dst, off, 0), Side::ptr(src, n), block(n, 1, 1), stream, sync)
    })
}

fn atoh(dst: *mut c_void, src: hipArray_t, off: usize, n: usize, stream: hipStream_t, sync: bool) -> hipError_t {
    api(|| {
        check(!dst.is_null() && !src.is_null())?;
        copy(Side::ptr(dst, n), Side::array(src, off, 0), block(n, 1, 1), stream, sync)
    })
}

/// `hipMemcpyHtoA`: `ByteCount` bytes from `srcHost` into the first row of `dstArray` from
/// byte `dstOffset`. Errors (clr `ihipMemcpyHtoAValidate`, hip-tests `hipMemcpyHtoA.cc`):
/// `hipErrorInvalidValue` (null or freed array, null source, offset + count past the first
/// row).
#[no_mangle]
pub extern "C" fn hipMemcpyHtoA(
    dstArray: hipArray_t,
    dstOffset: usize,
    srcHost: *const c_void,
    ByteCount: usize,
) -> hipError_t {
    htoa(dstArray, dstOffset, srcHost, ByteCount, std::ptr::null_mut(), true)
}

/// `hipMemcpyHtoAAsync`: `hipMemcpyHtoA` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyHtoAAsync(
    dstArray: hipArray_t,
    dstOffset: usize,
    srcHost: *const c_void,
    ByteCount: usize,
    stream: hipStream_t,
) -> hipError_t {
    htoa(dstArray, dstOffset, srcHost, ByteCount, stream, false)
}

/// `hipMemcpyAtoH`: `ByteCount` bytes of the first row of `srcArray` from byte `srcOffset` to
/// `dstHost`. Errors as `hipMemcpyHtoA` (hip-tests `hipMemcpyAtoH.cc`).
#[no_mangle]
pub extern "C" fn hipMemcpyAtoH(
    dstHost: *mut c_void,
    srcArray: hipArray_t,
    srcOffset: usize,
    ByteCount: usize,
) -> hipError_t {
    atoh(dstHost, srcArray, srcOffset, ByteCount, std::ptr::null_mut(), true)
}

/// `hipMemcpyAtoHAsync`: `hipMemcpyAtoH` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyAtoHAsync(
    dstHost: *mut c_void,
    srcArray: hipArray_t,
    srcOffset: usize,
    ByteCount: usize,
    stream: hipStream_t,
) -> hipError_t {
    atoh(dstHost, srcArray, srcOffset, ByteCount, stream, false)
}

/// Device memory at `ptr` (rows `pitch` apart) as a copy side: checked against the allocation
/// registry, as clr's `getMemoryObject`.
fn device_side(ptr: *const c_void, pitch: usize) -> Side {
    Side { ty: hipMemoryType::hipMemoryTypeDevice, ..Side::ptr(ptr, pitch) }
}

/// `hipMemcpyAtoD`: `ByteCount` bytes of the first row of `srcArray` from byte `srcOffset` to
/// device memory at `dstDevice`, synchronously. Errors (clr `ihipMemcpyAtoDValidate`):
/// `hipErrorInvalidValue` (null or freed array, `dstDevice` not device memory of this runtime,
/// offset + count past the first row or past the destination allocation).
#[no_mangle]
pub extern "C" fn hipMemcpyAtoD(
    dstDevice: hipDeviceptr_t,
    srcArray: hipArray_t,
    srcOffset: usize,
    ByteCount: usize,
) -> hipError_t {
    api(|| {
        check(!srcArray.is_null())?;
        let b = block(ByteCount, 1, 1);
        copy(device_side(dstDevice, ByteCount), Side::array(srcArray, srcOffset, 0), b, std::ptr::null_mut(), true)
    })
}

/// `hipMemcpyDtoA`: `ByteCount` bytes of device memory at `srcDevice` into the first row of
/// `dstArray` from byte `dstOffset`, synchronously. Errors (clr `ihipMemcpyDtoAValidate`): as
/// `hipMemcpyAtoD`.
#[no_mangle]
pub extern "C" fn hipMemcpyDtoA(
    dstArray: hipArray_t,
    dstOffset: usize,
    srcDevice: hipDeviceptr_t,
    ByteCount: usize,
) -> hipError_t {
    api(|| {
        check(!dstArray.is_null())?;
        let b = block(ByteCount, 1, 1);
        copy(Side::array(dstArray, dstOffset, 0), device_side(srcDevice, ByteCount), b, std::ptr::null_mut(), true)
    })
}

/// `hipMemcpyAtoA`: `ByteCount` bytes of the first row of `srcArray` from byte `srcOffset` into
/// the first row of `dstArray` from byte `dstOffset`, synchronously. Errors (clr
/// `ihipMemcpyAtoAValidate`): `hipErrorInvalidValue` (null or freed arrays, a span past either
/// first row).
#[no_mangle]
pub extern "C" fn hipMemcpyAtoA(
    dstArray: hipArray_t,
    dstOffset: usize,
    srcArray: hipArray_t,
    srcOffset: usize,
    ByteCount: usize,
) -> hipError_t {
    api(|| {
        check(!dstArray.is_null() && !srcArray.is_null())?;
        let (d, s) = (Side::array(dstArray, dstOffset, 0), Side::array(srcArray, srcOffset, 0));
        copy(d, s, block(ByteCount, 1, 1), std::ptr::null_mut(), true)
    })
}

/// The two sides and block of a `HIP_MEMCPY3D`.
fn drv3d(p: &HIP_MEMCPY3D) -> (Side, Side, Block) {
    let src = Side::drv(
        p.srcMemoryType,
        p.srcHost,
        p.srcDevice,
        p.srcArray,
        hipPos { x: p.srcXInBytes, y: p.srcY, z: p.srcZ },
        p.srcPitch,
        p.srcHeight,
    );
    let dst = Side::drv(
        p.dstMemoryType,
        p.dstHost,
        p.dstDevice,
        p.dstArray,
        hipPos { x: p.dstXInBytes, y: p.dstY, z: p.dstZ },
        p.dstPitch,
        p.dstHeight,
    );
    (dst, src, block(p.WidthInBytes, p.Height, p.Depth))
}

/// The `HIP_MEMCPY3D` of a `hip_Memcpy2D` (one slice).
fn drv2d_as_3d(p: &hip_Memcpy2D) -> HIP_MEMCPY3D {
    HIP_MEMCPY3D {
        srcXInBytes: p.srcXInBytes,
        srcY: p.srcY,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: p.srcMemoryType,
        srcHost: p.srcHost,
        srcDevice: p.srcDevice,
        srcArray: p.srcArray,
        srcPitch: p.srcPitch,
        srcHeight: 0,
        dstXInBytes: p.dstXInBytes,
        dstY: p.dstY,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: p.dstMemoryType,
        dstHost: p.dstHost,
        dstDevice: p.dstDevice,
        dstArray: p.dstArray,
        dstPitch: p.dstPitch,
        dstHeight: 0,
        WidthInBytes: p.WidthInBytes,
        Height: p.Height,
        Depth: 1,
    }
}

/// ROCm 5's `HIP_MEMCPY3D` (HIP 5.2 `driver_types.h`): the same fields with `unsigned int`
/// offsets, pitches and extents; 128 bytes (srcMemoryType@16, srcHost@24, dstXInBytes@56,
/// dstHost@80, WidthInBytes@112).
#[repr(C)]
#[derive(Clone, Copy)]
struct Memcpy3DRocm5 {
    src_x: c_uint,
    src_y: c_uint,
    src_z: c_uint,
    src_lod: c_uint,
    src_type: hipMemoryType,
    src_host: *const c_void,
    src_device: hipDeviceptr_t,
    src_array: hipArray_t,
    src_pitch: c_uint,
    src_height: c_uint,
    dst_x: c_uint,
    dst_y: c_uint,
    dst_z: c_uint,
    dst_lod: c_uint,
    dst_type: hipMemoryType,
    dst_host: *mut c_void,
    dst_device: hipDeviceptr_t,
    dst_array: hipArray_t,
    dst_pitch: c_uint,
    dst_height: c_uint,
    width: c_uint,
    height: c_uint,
    depth: c_uint,
}

/// Reads a `HIP_MEMCPY3D` in the caller's ABI (ROCm 5's for a caller built against ROCm 5).
/// Errors: `hipErrorInvalidValue` (null).
fn read_drv3d(p: *const HIP_MEMCPY3D) -> Result<HIP_MEMCPY3D, hipError_t> {
    if !rocm5_caller() {
        return read_in(p);
    }
    let o = read_in(p as *const Memcpy3DRocm5)?;
    let z = |v: c_uint| v as usize;
    Ok(HIP_MEMCPY3D {
        srcXInBytes: z(o.src_x),
        srcY: z(o.src_y),
        srcZ: z(o.src_z),
        srcLOD: z(o.src_lod),
        srcMemoryType: o.src_type,
        srcHost: o.src_host,
        srcDevice: o.src_device,
        srcArray: o.src_array,
        srcPitch: z(o.src_pitch),
        srcHeight: z(o.src_height),
        dstXInBytes: z(o.dst_x),
        dstY: z(o.dst_y),
        dstZ: z(o.dst_z),
        dstLOD: z(o.dst_lod),
        dstMemoryType: o.dst_type,
        dstHost: o.dst_host,
        dstDevice: o.dst_device,
        dstArray: o.dst_array,
        dstPitch: z(o.dst_pitch),
        dstHeight: z(o.dst_height),
        WidthInBytes: z(o.width),
        Height: z(o.height),
        Depth: z(o.depth),
    })
}

fn drv_copy(p: Result<HIP_MEMCPY3D, hipError_t>, stream: hipStream_t, sync: bool) -> hipError_t {
    api(|| {
        let (dst, src, b) = drv3d(&p?);
        copy(dst, src, b, stream, sync)
    })
}

/// `hipDrvMemcpy3D`: copies `WidthInBytes × Height × Depth` between host, device, unified
/// (`*Device` is the pointer) or array memory, synchronously. A caller built against ROCm 5
/// passes ROCm 5's struct (`unsigned int` fields) and memory type values. Pointer sides: `*Pitch` bytes
/// per row (0: `WidthInBytes`), `*Height` rows per slice. Errors (clr `ihipMemcpyParam3D`):
/// `hipErrorInvalidValue` (null `pCopy`, null pointers, device memory the runtime does not
/// know, freed arrays, blocks past an array, a pointer block past its pitch, its slice or its
/// allocation, a pitch of `hipDeviceAttributeMaxPitch` or more (clr `ihipMemcpy3D_validate`),
/// an unknown memory type), `hipErrorContextIsDestroyed` (bad stream); zero extents succeed.
#[no_mangle]
pub extern "C" fn hipDrvMemcpy3D(pCopy: *const HIP_MEMCPY3D) -> hipError_t {
    drv_copy(read_drv3d(pCopy), std::ptr::null_mut(), true)
}

/// `hipDrvMemcpy3DAsync`: `hipDrvMemcpy3D` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipDrvMemcpy3DAsync(pCopy: *const HIP_MEMCPY3D, stream: hipStream_t) -> hipError_t {
    drv_copy(read_drv3d(pCopy), stream, false)
}

/// `hipMemcpyParam2D`: the 2D form of `hipDrvMemcpy3D` (`hip_Memcpy2D`). Errors as it
/// (hip-tests `hipMemcpyParam2D.cc`: null pointers, pitches below the width or above the
/// maximum: `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipMemcpyParam2D(pCopy: *const hip_Memcpy2D) -> hipError_t {
    drv_copy(read_in(pCopy).map(|p| drv2d_as_3d(&p)), std::ptr::null_mut(), true)
}

/// `hipMemcpyParam2DAsync`: `hipMemcpyParam2D` ordered on `stream`.
#[no_mangle]
pub extern "C" fn hipMemcpyParam2DAsync(pCopy: *const hip_Memcpy2D, stream: hipStream_t) -> hipError_t {
    drv_copy(read_in(pCopy).map(|p| drv2d_as_3d(&p)), stream, false)
}

/// `hipDrvMemcpy2DUnaligned`: `hipMemcpyParam2D` (no alignment rules to relax here).
#[no_mangle]
pub extern "C" fn hipDrvMemcpy2DUnaligned(pCopy: *const hip_Memcpy2D) -> hipError_t {
    hipMemcpyParam2D(pCopy)
}

/// `hipMemcpy3D`/`hipMemcpy3DAsync` with an array on either side, after clr's
/// `ihipMemcpy3D_validate` checks: as clr's `getDrvMemcpy3DDesc`, an array side's `pos.x` and
/// the extent's width are in elements (of the destination array when both are arrays). Errors:
/// `hipErrorInvalidValue` (arrays of different element sizes, freed arrays, blocks past them),
/// and those of [`copy`].
pub(crate) fn memcpy_3d_array(p: &hipMemcpy3DParms, stream: hipStream_t, sync: bool) -> Result<(), hipError_t> {
    let rt = runtime()?;
    let elem =
        |a: hipArray_t| Ok::<_, hipError_t>(rt.array_geom_of(obj(a), hipError_t::hipErrorInvalidValue)?.elem as usize);
    let es = if p.srcArray.is_null() { None } else { Some(elem(p.srcArray)?) };
    let ed = if p.dstArray.is_null() { None } else { Some(elem(p.dstArray)?) };
    if let (Some(a), Some(b)) = (es, ed) {
        check(a == b)?;
    }
    let side = |a: hipArray_t, e: Option<usize>, pos: hipPos, ptr: hipPitchedPtr| -> Result<Side, hipError_t> {
        Ok(match e {
            Some(e) => {
                let x = pos.x.checked_mul(e).ok_or(hipError_t::hipErrorInvalidValue)?;
                Side { pos: hipPos { x, ..pos }, ..Side::array(a, 0, 0) }
            }
            None => Side { pos, height: ptr.ysize, ..Side::ptr(ptr.ptr, ptr.pitch) },
        })
    };
    let src = side(p.srcArray, es, p.srcPos, p.srcPtr)?;
    let dst = side(p.dstArray, ed, p.dstPos, p.dstPtr)?;
    let e = p.extent;
    let width = e.width.checked_mul(ed.or(es).unwrap_or(1)).ok_or(hipError_t::hipErrorInvalidValue)?;
    copy(dst, src, block(width, e.height, e.depth), stream, sync)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// HIP 5.2's `HIP_MEMCPY3D`.
    #[test]
    fn rocm5_memcpy3d_layout() {
        assert_eq!(size_of::<Memcpy3DRocm5>(), 128);
        assert_eq!(offset_of!(Memcpy3DRocm5, src_type), 16);
        assert_eq!(offset_of!(Memcpy3DRocm5, src_host), 24);
        assert_eq!(offset_of!(Memcpy3DRocm5, src_pitch), 48);
        assert_eq!(offset_of!(Memcpy3DRocm5, dst_x), 56);
        assert_eq!(offset_of!(Memcpy3DRocm5, dst_host), 80);
        assert_eq!(offset_of!(Memcpy3DRocm5, width), 112);
        assert_eq!(offset_of!(Memcpy3DRocm5, depth), 120);
    }
}
