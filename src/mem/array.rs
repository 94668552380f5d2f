//! Arrays (`hipArray_t`): the runtime's stand-in for CUDA/HIP arrays. hipkfd has no image
//! (texture) path, so an array is linear pitched VRAM — rows of `width` elements padded to
//! [`ARRAY_PITCH_ALIGN`] bytes, `max(height, 1)` rows a slice, `max(depth, 1)` slices (layers
//! for a layered array) — in the one allocation registry (`MemKind::Array`), reached from the
//! handle through the registry's array index. The copy paths treat it as a pitched block of
//! device memory (src/core/copy.rs `memcpy_3d`: SDMA COPY_LINEAR_SUB_WIND).
//!
//! The handle points to an [`ArrayObj`], whose head is clr's `struct hipArray`
//! (`hipamd/src/hip_internal.hpp`): opaque in ROCm 7's headers, but laid out as clr's.
//! A mipmapped array ([`MipmapObj`], clr's `struct hipMipmappedArray` at its head) is one such
//! array per level.
//!
//! Layer `mem`: may call `core`, `abi` and its own layer.

use crate::abi::types::{
    hipArrayCubemap, hipArrayLayered, hipArraySurfaceLoadStore, hipArrayTextureGather, hipArray_Format,
    hipChannelFormatDesc, hipChannelFormatKind, hipError_t, hipPos,
};
use crate::core::memory::{vram_flags, Allocation, Backing, Bo, MemKind};
use crate::core::runtime::Runtime;
use kfd_ioctl::sdma;
use std::ffi::c_uint;
use std::sync::Arc;

/// Row pitch alignment of an array, bytes (as `hipMallocPitch`'s).
pub const ARRAY_PITCH_ALIGN: u64 = 256;

/// What an array is: its descriptor (`HIP_ARRAY3D_DESCRIPTOR`'s fields, extents in elements, 0
/// for an absent dimension) and its layout in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayGeom {
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub format: hipArray_Format,
    pub channels: u32,
    pub flags: u32,
    /// Bytes per element (channel bytes × channels).
    pub elem: u64,
    /// Bytes per row.
    pub pitch: u64,
}

impl ArrayGeom {
    /// Rows per slice.
    pub fn rows(&self) -> u64 {
        self.height.max(1)
    }

    /// Slices (layers of a layered array).
    pub fn slices(&self) -> u64 {
        self.depth.max(1)
    }

    /// Bytes per slice.
    pub fn slice(&self) -> u64 {
        self.pitch * self.rows()
    }

    /// `hipChannelFormatDesc` of the array's format and channel count (clr
    /// `hip::getChannelFormatDesc`).
    pub fn channel_desc(&self) -> hipChannelFormatDesc {
        let bits = (format_bytes(self.format).unwrap_or(0) * 8) as i32;
        let kind = match self.format {
            hipArray_Format::HIP_AD_FORMAT_HALF | hipArray_Format::HIP_AD_FORMAT_FLOAT => {
                hipChannelFormatKind::hipChannelFormatKindFloat
            }
            hipArray_Format::HIP_AD_FORMAT_SIGNED_INT8
            | hipArray_Format::HIP_AD_FORMAT_SIGNED_INT16
            | hipArray_Format::HIP_AD_FORMAT_SIGNED_INT32 => hipChannelFormatKind::hipChannelFormatKindSigned,
            _ => hipChannelFormatKind::hipChannelFormatKindUnsigned,
        };
        let c = |i: u32| if i < self.channels { bits } else { 0 };
        hipChannelFormatDesc { x: c(0), y: c(1), z: c(2), w: c(3), f: kind }
    }
}

/// Bytes of one channel of `format`; `None` for a value that is not a `hipArray_Format`.
pub fn format_bytes(format: hipArray_Format) -> Option<u64> {
    type F = hipArray_Format;
    match format {
        F::HIP_AD_FORMAT_UNSIGNED_INT8 | F::HIP_AD_FORMAT_SIGNED_INT8 => Some(1),
        F::HIP_AD_FORMAT_UNSIGNED_INT16 | F::HIP_AD_FORMAT_SIGNED_INT16 | F::HIP_AD_FORMAT_HALF => Some(2),
        F::HIP_AD_FORMAT_UNSIGNED_INT32 | F::HIP_AD_FORMAT_SIGNED_INT32 | F::HIP_AD_FORMAT_FLOAT => Some(4),
        _ => None,
    }
}

/// What a handle points to. The head is clr's `struct hipArray` (data@0, desc@8, type@28,
/// width@32, height@36, depth@40, Format@44, NumChannels@48, isDrv@52, textureType@56,
/// flags@60; 64 bytes), kept filled in as clr fills it; the rest is hipkfd's.
#[repr(C)]
#[derive(Debug)]
pub struct ArrayObj {
    /// The array's memory (clr: its `cl_mem`).
    data: u64,
    desc: hipChannelFormatDesc,
    r#type: c_uint,
    width: c_uint,
    height: c_uint,
    depth: c_uint,
    format: hipArray_Format,
    num_channels: c_uint,
    is_drv: bool,
    texture_type: c_uint,
    flags: c_uint,
    pub geom: ArrayGeom,
    /// The VRAM, `pitch × rows × slices` bytes, at `data`.
    pub bo: Bo,
}

impl ArrayObj {
    /// The `hipArray_t` value naming this array.
    pub fn handle(&self) -> *const ArrayObj {
        self
    }
}

impl Runtime {
    /// Checks a descriptor as clr's `ihipArrayCreate` and `amd::Image::validateDimensions` do
    /// (channels 1, 2 or 4; flags among layered, surface load/store and texture gather, gather
    /// 2D only; a known format; a 1D, 2D, 3D or layered shape; extents within the device's
    /// texture limits) and works out its layout. Errors: `hipErrorInvalidValue`.
    pub fn array_geom(
        &self,
        dev: usize,
        (width, height, depth): (usize, usize, usize),
        format: hipArray_Format,
        channels: u32,
        flags: u32,
    ) -> Result<ArrayGeom, hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        if !matches!(channels, 1 | 2 | 4)
            || flags & !(hipArrayLayered | hipArraySurfaceLoadStore | hipArrayTextureGather) != 0
        {
            return Err(inv);
        }
        debug_assert!(flags & hipArrayCubemap == 0);
        if flags & hipArrayTextureGather != 0 && (width == 0 || height == 0 || depth > 0) {
            return Err(inv);
        }
        let bytes = format_bytes(format).ok_or(inv)?;
        let p = &self.devices[dev].props;
        let ok = |v: usize, max: i32| v <= max.max(0) as usize;
        let fits = match (flags & hipArrayLayered != 0, width != 0, height != 0, depth != 0) {
            (true, true, false, true) => ok(width, p.maxTexture1DLayered[0]) && ok(depth, p.maxTexture1DLayered[1]),
            (true, true, true, true) => {
                ok(width, p.maxTexture2DLayered[0])
                    && ok(height, p.maxTexture2DLayered[1])
                    && ok(depth, p.maxTexture2DLayered[2])
            }
            (false, true, false, false) => ok(width, p.maxTexture1D),
            (false, true, true, false) => ok(width, p.maxTexture2D[0]) && ok(height, p.maxTexture2D[1]),
            (false, true, true, true) => {
                ok(width, p.maxTexture3D[0]) && ok(height, p.maxTexture3D[1]) && ok(depth, p.maxTexture3D[2])
            }
            _ => false,
        };
        if !fits {
            return Err(inv);
        }
        let elem = bytes * channels as u64;
        let pitch = (width as u64 * elem).next_multiple_of(ARRAY_PITCH_ALIGN);
        Ok(ArrayGeom {
            width: width as u64,
            height: height as u64,
            depth: depth as u64,
            format,
            channels,
            flags,
            elem,
            pitch,
        })
    }

    /// Makes an array of layout `g` on device `dev` (VRAM mapped there and on every device with
    /// peer access to it, as `hipMalloc`'s) and returns its handle. Errors:
    /// `hipErrorOutOfMemory`.
    pub fn array_create(&self, dev: usize, g: ArrayGeom) -> Result<*const ArrayObj, hipError_t> {
        let size = g.slice().checked_mul(g.slices()).ok_or(hipError_t::hipErrorOutOfMemory)?;
        let d = &self.devices[dev];
        let (_peers, map_on) = self.peer_alloc_targets(dev);
        let bo = self.bo_alloc(dev, size, vram_flags(d.large_bar), &map_on, d.large_bar)?;
        let base = bo.va;
        let obj = Box::new(ArrayObj {
            data: base,
            desc: g.channel_desc(),
            r#type: 0,
            width: g.width as c_uint,
            height: g.height as c_uint,
            depth: g.depth as c_uint,
            format: g.format,
            num_channels: g.channels,
            is_drv: false,
            texture_type: 0,
            flags: g.flags,
            geom: g,
            bo,
        });
        let handle = obj.handle();
        self.allocs.insert(Allocation {
            base,
            size,
            kind: MemKind::Array,
            flags: 0,
            owner: dev,
            backing: Backing::Array(obj),
            id: 0,
            sync_memops: Default::default(),
        });
        crate::core::log::hipkfd_log!("array {g:?} on device {dev} at {base:#x}");
        Ok(handle)
    }

    /// The live array named by `handle`. Errors: `err` when it names none (null, freed, not an
    /// array).
    pub fn array_find(&self, handle: *const ArrayObj, err: hipError_t) -> Result<Arc<Allocation>, hipError_t> {
        self.allocs.array(handle as u64).ok_or(err)
    }

    /// The layout of the live array named by `handle`. Errors: `err` when it names none.
    pub fn array_geom_of(&self, handle: *const ArrayObj, err: hipError_t) -> Result<ArrayGeom, hipError_t> {
        geom_of(&*self.array_find(handle, err)?).ok_or(err)
    }

    /// `hipFreeArray`/`hipArrayDestroy`: waits for the devices, then frees the array. Errors:
    /// `hipErrorContextIsDestroyed` for a handle that names no live array (clr: not in
    /// `hipArraySet`).
    pub fn array_destroy(&self, handle: *const ArrayObj) -> Result<(), hipError_t> {
        let a = self.array_find(handle, hipError_t::hipErrorContextIsDestroyed)?;
        let base = a.base;
        drop(a);
        self.free_synced(base).map_err(|_| hipError_t::hipErrorContextIsDestroyed)
    }
}

/// What a `hipMipmappedArray_t` points to. The head is clr's `struct hipMipmappedArray`
/// (`hip/driver_types.h`: data@0, desc@8, type@28, width@32, height@36, depth@40,
/// min_mipmap_level@44, max_mipmap_level@48, flags@52, format@56, num_channels@60; 64 bytes),
/// filled in as clr's `ihipMipmapArrayCreate` fills it; then the levels, one array each
/// (level `l` is `max(1, extent >> l)` elements in each present dimension).
#[repr(C)]
#[derive(Debug)]
pub struct MipmapObj {
    /// Level 0's memory.
    data: u64,
    desc: hipChannelFormatDesc,
    r#type: c_uint,
    width: c_uint,
    height: c_uint,
    depth: c_uint,
    min_mipmap_level: c_uint,
    max_mipmap_level: c_uint,
    flags: c_uint,
    format: hipArray_Format,
    num_channels: c_uint,
    /// The level arrays, level 0 first (handles of live `MemKind::Array` allocations).
    levels: Vec<u64>,
    /// The device the levels are on.
    owner: usize,
}

/// The live mipmapped arrays, by handle.
#[derive(Debug, Default)]
pub struct Mipmaps(parking_lot::Mutex<std::collections::HashMap<u64, Box<MipmapObj>>>);

/// The number of levels a full mip chain of an array of extent `(w, h, d)` has:
/// `1 + floor(log2(max(w, h, d)))` (CUDA `cudaMallocMipmappedArray`).
pub fn mip_levels_max((w, h, d): (usize, usize, usize)) -> u32 {
    let m = w.max(h).max(d).max(1);
    usize::BITS - m.leading_zeros()
}

impl Runtime {
    /// `hipMallocMipmappedArray`: `levels` arrays (0 counts as 1) of `g`'s format, level `l` of
    /// extent `max(1, extent >> l)` in each dimension `g` has, on device `dev`. Errors:
    /// `hipErrorInvalidValue` (more levels than the full chain), `hipErrorOutOfMemory` (nothing
    /// is left allocated then).
    pub fn mipmap_create(&self, dev: usize, g: ArrayGeom, levels: u32) -> Result<*const MipmapObj, hipError_t> {
        let (w, h, d) = (g.width as usize, g.height as usize, g.depth as usize);
        let levels = levels.max(1);
        if levels > mip_levels_max((w, h, d)) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let mut handles: Vec<u64> = Vec::with_capacity(levels as usize);
        for l in 0..levels {
            let shrink = |v: usize| if v == 0 { 0 } else { (v >> l).max(1) };
            let made = self
                .array_geom(dev, (shrink(w), shrink(h), shrink(d)), g.format, g.channels, g.flags)
                .and_then(|lg| self.array_create(dev, lg));
            match made {
                Ok(a) => handles.push(a as u64),
                Err(e) => {
                    for &a in &handles {
                        let _ = self.array_destroy(a as *const ArrayObj);
                    }
                    return Err(e);
                }
            }
        }
        let data = self.allocs.array(handles[0]).map_or(0, |a| a.base);
        let obj = Box::new(MipmapObj {
            data,
            desc: g.channel_desc(),
            r#type: 0,
            width: g.width as c_uint,
            height: g.height as c_uint,
            depth: g.depth as c_uint,
            min_mipmap_level: 0,
            max_mipmap_level: levels - 1,
            flags: g.flags,
            format: g.format,
            num_channels: g.channels,
            levels: handles,
            owner: dev,
        });
        let handle: *const MipmapObj = &*obj;
        self.mipmaps().0.lock().insert(handle as u64, obj);
        Ok(handle)
    }

    /// `hipFreeMipmappedArray`: waits for the devices, then frees every level. Errors:
    /// `hipErrorContextIsDestroyed` for a handle that names no live mipmapped array (hip-tests
    /// `hipFreeMipmappedArray.cc` `Negative_DoubleFree`).
    pub fn mipmap_destroy(&self, handle: *const MipmapObj) -> Result<(), hipError_t> {
        let obj = self.mipmaps().0.lock().remove(&(handle as u64)).ok_or(hipError_t::hipErrorContextIsDestroyed)?;
        for &a in &obj.levels {
            // A level the user freed with hipFreeArray is gone already.
            let _ = self.array_destroy(a as *const ArrayObj);
        }
        Ok(())
    }

    /// `hipDeviceReset`: forgets device `dev`'s mipmapped arrays (their levels are freed with
    /// the device's other arrays).
    pub fn mipmap_reset(&self, dev: usize) {
        self.mipmaps().0.lock().retain(|_, m| m.owner != dev);
    }

    /// `hipGetMipmappedArrayLevel`: the array of level `level` (owned by the mipmapped array).
    /// Errors: `hipErrorInvalidResourceHandle` (no live mipmapped array), `hipErrorInvalidValue`
    /// (a level past the last).
    pub fn mipmap_level(&self, handle: *const MipmapObj, level: u32) -> Result<*const ArrayObj, hipError_t> {
        let m = self.mipmaps().0.lock();
        let obj = m.get(&(handle as u64)).ok_or(hipError_t::hipErrorInvalidResourceHandle)?;
        let a = obj.levels.get(level as usize).ok_or(hipError_t::hipErrorInvalidValue)?;
        Ok(*a as *const ArrayObj)
    }
}

/// The geometry of an array allocation (`MemKind::Array`).
pub fn geom_of(a: &Allocation) -> Option<ArrayGeom> {
    match &a.backing {
        Backing::Array(obj) => (&**obj as &dyn std::any::Any).downcast_ref::<ArrayObj>().map(|o| o.geom),
        _ => None,
    }
}

/// The pitched surface of array `a` with the block origin `pos` (x in bytes, y rows, z slices)
/// folded in, after checking that a block of `width` bytes × `height` rows × `depth` slices
/// from there lies inside the array. Errors: `hipErrorInvalidValue` (an x or width that is not
/// whole elements, a block past the array's extent).
pub fn array_block(
    a: &Allocation,
    pos: hipPos,
    (width, height, depth): (u64, u64, u64),
) -> Result<sdma::Pitched, hipError_t> {
    let inv = hipError_t::hipErrorInvalidValue;
    let g = geom_of(a).ok_or(inv)?;
    let (x, y, z) = (pos.x as u64, pos.y as u64, pos.z as u64);
    let inside = |o: u64, n: u64, max: u64| o.checked_add(n).is_some_and(|e| e <= max);
    if x % g.elem != 0
        || width % g.elem != 0
        || !inside(x, width, g.width * g.elem)
        || !inside(y, height, g.rows())
        || !inside(z, depth, g.slices())
    {
        return Err(inv);
    }
    Ok(sdma::Pitched { addr: a.base + z * g.slice() + y * g.pitch + x, pitch: g.pitch, slice: g.slice() })
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::Mipmaps`](crate::core::runtime::Feature) slot.
    pub fn mipmaps(&self) -> &Mipmaps {
        self.feature(crate::core::runtime::Feature::Mipmaps, |_| Mipmaps::default())
    }
}

impl crate::core::memory::Backed for ArrayObj {
    fn bo(&self) -> Option<&Bo> {
        Some(&self.bo)
    }
    fn array_handle(&self) -> Option<u64> {
        Some(self.handle() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// The head of [`ArrayObj`] is clr's `struct hipArray` (`hip_internal.hpp`).
    #[test]
    fn head_is_clr_hip_array() {
        assert_eq!(offset_of!(ArrayObj, data), 0);
        assert_eq!(offset_of!(ArrayObj, desc), 8);
        assert_eq!(offset_of!(ArrayObj, r#type), 28);
        assert_eq!(offset_of!(ArrayObj, width), 32);
        assert_eq!(offset_of!(ArrayObj, height), 36);
        assert_eq!(offset_of!(ArrayObj, depth), 40);
        assert_eq!(offset_of!(ArrayObj, format), 44);
        assert_eq!(offset_of!(ArrayObj, num_channels), 48);
        assert_eq!(offset_of!(ArrayObj, is_drv), 52);
        assert_eq!(offset_of!(ArrayObj, texture_type), 56);
        assert_eq!(offset_of!(ArrayObj, flags), 60);
        assert_eq!(offset_of!(ArrayObj, geom), 64);
    }

    /// The head of [`MipmapObj`] is clr's `struct hipMipmappedArray` (`driver_types.h`).
    #[test]
    fn head_is_clr_hip_mipmapped_array() {
        assert_eq!(offset_of!(MipmapObj, desc), 8);
        assert_eq!(offset_of!(MipmapObj, r#type), 28);
        assert_eq!(offset_of!(MipmapObj, min_mipmap_level), 44);
        assert_eq!(offset_of!(MipmapObj, max_mipmap_level), 48);
        assert_eq!(offset_of!(MipmapObj, flags), 52);
        assert_eq!(offset_of!(MipmapObj, format), 56);
        assert_eq!(offset_of!(MipmapObj, num_channels), 60);
        assert_eq!(offset_of!(MipmapObj, levels), 64);
    }

    #[test]
    fn full_mip_chain_lengths() {
        assert_eq!(mip_levels_max((1, 0, 0)), 1);
        assert_eq!(mip_levels_max((6, 6, 6)), 3);
        assert_eq!(mip_levels_max((64, 0, 0)), 7);
        assert_eq!(mip_levels_max((100, 3, 0)), 7);
    }

    #[test]
    fn channel_desc_of_each_format() {
        let g = |format, channels| ArrayGeom {
            width: 1,
            height: 0,
            depth: 0,
            format,
            channels,
            flags: 0,
            elem: 0,
            pitch: 0,
        };
        let d = g(hipArray_Format::HIP_AD_FORMAT_HALF, 2).channel_desc();
        assert_eq!((d.x, d.y, d.z, d.w, d.f), (16, 16, 0, 0, hipChannelFormatKind::hipChannelFormatKindFloat));
        let d = g(hipArray_Format::HIP_AD_FORMAT_SIGNED_INT8, 4).channel_desc();
        assert_eq!((d.x, d.y, d.z, d.w, d.f), (8, 8, 8, 8, hipChannelFormatKind::hipChannelFormatKindSigned));
        let d = g(hipArray_Format::HIP_AD_FORMAT_UNSIGNED_INT32, 1).channel_desc();
        assert_eq!((d.x, d.y, d.f), (32, 0, hipChannelFormatKind::hipChannelFormatKindUnsigned));
    }
}
