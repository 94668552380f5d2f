//! Peer device memory access (HIP "PeerToPeer Device Memory Access" group; clr `hip_peer.cpp`)
//! and the peer copies `hipMemcpyPeer(Async)`. The core is `src/share/peer.rs`.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, check, current_device, rt_dev, stream_of, write_out};
use crate::core::runtime::{runtime, Runtime};
use std::ffi::{c_int, c_uint, c_void};

/// A device ordinal from C. Errors: `hipErrorInvalidDevice` (negative or ≥ count).
fn ordinal(rt: &Runtime, d: c_int) -> Result<usize, hipError_t> {
    rt.device(d).map(|d| d.ordinal)
}

/// `hipDeviceCanAccessPeer`: `*canAccessPeer` = 1 when `deviceId` can map `peerDeviceId`'s
/// memory (a direct xGMI or PCIe P2P link in the KFD topology; src/share/peer.rs explains why links
/// that libhsakmt would invent do not count), else 0; a device and itself → 0 (checked before
/// the ordinals, as clr does). Errors: `hipErrorInvalidValue` (null), `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDeviceCanAccessPeer(
    canAccessPeer: *mut c_int,
    deviceId: c_int,
    peerDeviceId: c_int,
) -> hipError_t {
    api(|| {
        check(!canAccessPeer.is_null())?;
        let rt = runtime()?;
        if deviceId == peerDeviceId {
            return write_out(canAccessPeer, 0);
        }
        let (d, p) = (ordinal(rt, deviceId)?, ordinal(rt, peerDeviceId)?);
        write_out(canAccessPeer, rt.can_access_peer(d, p) as c_int)
    })
}

/// `hipDeviceEnablePeerAccess`: the current device may access `peerDeviceId`'s memory: every
/// allocation of the peer, present and future, is mapped into the current device's GPUVM.
/// `flags` must be 0. Errors: `hipErrorInvalidValue` (flags, checked first),
/// `hipErrorInvalidDevice` (bad ordinal, the current device itself, no link),
/// `hipErrorPeerAccessAlreadyEnabled`, `hipErrorOutOfMemory` (a map ioctl failed).
#[no_mangle]
pub extern "C" fn hipDeviceEnablePeerAccess(peerDeviceId: c_int, flags: c_uint) -> hipError_t {
    api(|| {
        check(flags == 0)?;
        let (rt, d) = rt_dev()?;
        let p = ordinal(rt, peerDeviceId)?;
        rt.peer_enable(d, p, flags)
    })
}

/// `hipDeviceDisablePeerAccess`: revokes the current device's mappings of `peerDeviceId`'s
/// memory (after the runtime's own copies through them are done); later accesses fault, as
/// CUDA specifies (stock ROCm keeps the mappings). Errors: `hipErrorInvalidDevice`,
/// `hipErrorPeerAccessNotEnabled`.
#[no_mangle]
pub extern "C" fn hipDeviceDisablePeerAccess(peerDeviceId: c_int) -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        let p = ordinal(rt, peerDeviceId)?;
        rt.peer_disable(d, p)
    })
}

/// Per-device primary contexts: a `hipCtx_t` is the address of its device's slot here (AMD's
/// `hipCtx_t` is a device too).
static CONTEXTS: [u8; 64] = [0; 64];

/// The primary context handle of device `dev`.
pub fn ctx_handle(dev: usize) -> hipCtx_t {
    CONTEXTS[dev.min(CONTEXTS.len() - 1)..].as_ptr() as hipCtx_t
}

/// The device a context handle names. Errors: `hipErrorInvalidValue` (null),
/// `hipErrorInvalidContext` (not a context of ours).
pub fn ctx_device(rt: &Runtime, ctx: hipCtx_t) -> Result<usize, hipError_t> {
    check(!ctx.is_null())?;
    let base = CONTEXTS.as_ptr() as usize;
    let d = (ctx as usize).wrapping_sub(base);
    if d < rt.devices.len() {
        Ok(d)
    } else {
        Err(hipError_t::hipErrorInvalidContext)
    }
}

/// `hipCtxGetCurrent` (deprecated in HIP): the current device's primary context.
/// Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipCtxGetCurrent(ctx: *mut hipCtx_t) -> hipError_t {
    api(|| {
        check(!ctx.is_null())?;
        rt_dev()?;
        write_out(ctx, ctx_handle(current_device()))
    })
}

/// `hipDevicePrimaryCtxRetain`: the primary context of `dev` (no reference counting: primary
/// contexts live as long as the process). Errors: `hipErrorInvalidValue`, `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDevicePrimaryCtxRetain(pctx: *mut hipCtx_t, dev: hipDevice_t) -> hipError_t {
    api(|| {
        check(!pctx.is_null())?;
        let rt = runtime()?;
        let d = ordinal(rt, dev)?;
        write_out(pctx, ctx_handle(d))
    })
}

/// `hipCtxEnablePeerAccess` (deprecated): `hipDeviceEnablePeerAccess` for `peerCtx`'s device.
/// Errors: as `hipDeviceEnablePeerAccess`; `hipErrorInvalidValue` for a null context,
/// `hipErrorInvalidContext` for an unknown one.
#[no_mangle]
pub extern "C" fn hipCtxEnablePeerAccess(peerCtx: hipCtx_t, flags: c_uint) -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        let p = ctx_device(rt, peerCtx)?;
        rt.peer_enable(d, p, flags)
    })
}

/// `hipCtxDisablePeerAccess` (deprecated): `hipDeviceDisablePeerAccess` for `peerCtx`'s device.
#[no_mangle]
pub extern "C" fn hipCtxDisablePeerAccess(peerCtx: hipCtx_t) -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        let p = ctx_device(rt, peerCtx)?;
        rt.peer_disable(d, p)
    })
}

/// `hipDeviceGetP2PAttribute`: `attr` of the link from `srcDevice` to `dstDevice`:
/// `PerformanceRank` 0 over xGMI, 1 over PCIe P2P (0 when not accessible); `AccessSupported`
/// 1/0; `NativeAtomicSupported` 1 over xGMI only; `HipArrayAccessSupported` 0 (no texture path).
/// Errors (clr order): `hipErrorInvalidValue` (null `value`), `hipErrorInvalidDevice` (bad
/// ordinal, `srcDevice == dstDevice`), `hipErrorInvalidValue` (unknown `attr`).
#[no_mangle]
pub extern "C" fn hipDeviceGetP2PAttribute(
    value: *mut c_int,
    attr: hipDeviceP2PAttr,
    srcDevice: c_int,
    dstDevice: c_int,
) -> hipError_t {
    api(|| {
        check(!value.is_null())?;
        let rt = runtime()?;
        let (s, d) = (ordinal(rt, srcDevice)?, ordinal(rt, dstDevice)?);
        if s == d {
            return Err(hipError_t::hipErrorInvalidDevice);
        }
        let access = rt.can_access_peer(s, d);
        let xgmi = rt.xgmi_linked(s, d);
        let v = match attr {
            hipDeviceP2PAttr::hipDevP2PAttrPerformanceRank => (access && !xgmi) as c_int,
            hipDeviceP2PAttr::hipDevP2PAttrAccessSupported => access as c_int,
            hipDeviceP2PAttr::hipDevP2PAttrNativeAtomicSupported => xgmi as c_int,
            hipDeviceP2PAttr::hipDevP2PAttrHipArrayAccessSupported => 0,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        write_out(value, v)
    })
}

fn memcpy_peer(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        let ddev = ordinal(rt, dstDevice)?;
        let sdev = ordinal(rt, srcDevice)?;
        rt_dev()?;
        let s = stream_of(rt, stream)?;
        let (dst, src, len) = (dst as u64, src as u64, sizeBytes as u64);
        if stream.is_null() {
            // hipMemcpyPeer is asynchronous to the host (clr: ihipMemcpy with isHostAsync = true;
            // CUDA documents the same) and ordered with all work of the current device and of
            // both devices, before and after it.
            return rt.memcpy_peer_call(dst, ddev, src, sdev, len, &s);
        }
        rt.memcpy(dst, src, len, hipMemcpyKind::hipMemcpyDeviceToDevice, &s, false)
    })
}

/// `hipMemcpyPeer`: copies `sizeBytes` bytes from `src` (memory of `srcDevice`) to `dst`
/// (memory of `dstDevice`) on the current device's null stream, ordered after prior work on both
/// devices and before later work on them (their null streams wait for it), and asynchronous to
/// the host, as clr's `hipMemcpyPeer` and CUDA's `cudaMemcpyPeer` are (hip-tests
/// `Unit_hipMemcpyPeer_Positive_Synchronization_Behavior`). Runs on an SDMA engine of
/// the source device (xGMI engine over xGMI), through host staging when no peer mapping exists
/// (src/share/peer.rs). Size 0 succeeds. Errors: `hipErrorInvalidDevice` (device ordinals),
/// `hipErrorInvalidValue` (null pointers, ranges past an allocation), `hipErrorIllegalAddress`.
#[no_mangle]
pub extern "C" fn hipMemcpyPeer(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    sizeBytes: usize,
) -> hipError_t {
    memcpy_peer(dst, dstDevice, src, srcDevice, sizeBytes, std::ptr::null_mut())
}

/// `hipMemcpyPeerAsync`: as `hipMemcpyPeer`, but ordered on `stream` and asynchronous to the host. Errors as `hipMemcpyPeer`,
/// plus `hipErrorContextIsDestroyed` for a destroyed or unknown stream.
#[no_mangle]
pub extern "C" fn hipMemcpyPeerAsync(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    sizeBytes: usize,
    stream: hipStream_t,
) -> hipError_t {
    memcpy_peer(dst, dstDevice, src, srcDevice, sizeBytes, stream)
}

/// The `hipMemcpy3DParms` of a peer copy (clr `getMemcpy3DParms`): the same arrays, positions,
/// pointers and extent, device to device. Errors: `hipErrorInvalidValue` (null `p`),
/// `hipErrorInvalidDevice` (a device ordinal out of range).
fn peer_parms(p: *const hipMemcpy3DPeerParms) -> Result<hipMemcpy3DParms, hipError_t> {
    let p = crate::api::common::read_in(p)?;
    let rt = runtime()?;
    ordinal(rt, p.srcDevice)?;
    ordinal(rt, p.dstDevice)?;
    Ok(hipMemcpy3DParms {
        srcArray: p.srcArray,
        srcPos: p.srcPos,
        srcPtr: p.srcPtr,
        dstArray: p.dstArray,
        dstPos: p.dstPos,
        dstPtr: p.dstPtr,
        extent: p.extent,
        kind: hipMemcpyKind::hipMemcpyDeviceToDevice,
    })
}

/// `hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms* p)` (ROCm 7.1): copies `p->extent` (width in
/// bytes, or elements of an array side × height rows × depth slices) from `srcPtr`/`srcArray`
/// at `srcPos` on `srcDevice` to `dstPtr`/`dstArray` at `dstPos` on `dstDevice`, as
/// [`hipMemcpy3D`](crate::api::memory::hipMemcpy3D) does (the devices are where the memory
/// lives; rows between two devices go as peer copies). Errors (clr `hipMemcpy3DPeer`):
/// `hipErrorInvalidValue` (null `p`), `hipErrorInvalidDevice` (a device ordinal out of range),
/// then `hipMemcpy3D`'s.
#[no_mangle]
pub extern "C" fn hipMemcpy3DPeer(p: *mut hipMemcpy3DPeerParms) -> hipError_t {
    match peer_parms(p) {
        Ok(parms) => crate::api::memory::hipMemcpy3D(&parms),
        Err(e) => api(|| Err(e)),
    }
}

/// `hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms* p, hipStream_t stream)` (ROCm 7.1):
/// [`hipMemcpy3DPeer`] ordered on `stream`
/// ([`hipMemcpy3DAsync`](crate::api::memory::hipMemcpy3DAsync)). Errors as
/// `hipMemcpy3DPeer`, then `hipMemcpy3DAsync`'s.
#[no_mangle]
pub extern "C" fn hipMemcpy3DPeerAsync(p: *mut hipMemcpy3DPeerParms, stream: hipStream_t) -> hipError_t {
    match peer_parms(p) {
        Ok(parms) => crate::api::memory::hipMemcpy3DAsync(&parms, stream),
        Err(e) => api(|| Err(e)),
    }
}

/// `hipExtGetLinkTypeAndHopCount`: the link from `device1` to `device2` as clr's
/// `Device::findLinkInfo` reports it from ROCr's link info: `*linktype` is an
/// `hsa_amd_link_info_type_t` (`HSA_AMD_LINK_INFO_TYPE_XGMI` 4 for a direct xGMI link, else
/// `HSA_AMD_LINK_INFO_TYPE_PCIE` 2), `*hopcount` 1 for a direct link (xGMI or PCIe P2P) and 2
/// through the CPU root complex (ROCr's hop distance over the one-hop distance). Errors (clr
/// `hipExtGetLinkTypeAndHopCount`; hip-tests `hipExtGetLinkTypeAndHopCount.cc`):
/// `hipErrorInvalidValue` (a null output, `device1 == device2`, a negative ordinal),
/// `hipErrorInvalidDevice` (an ordinal past the last device).
#[no_mangle]
pub extern "C" fn hipExtGetLinkTypeAndHopCount(
    device1: c_int,
    device2: c_int,
    linktype: *mut u32,
    hopcount: *mut u32,
) -> hipError_t {
    /// `HSA_AMD_LINK_INFO_TYPE_PCIE`, `HSA_AMD_LINK_INFO_TYPE_XGMI` (ROCr `hsa_ext_amd.h`).
    const HSA_LINK_PCIE: u32 = 2;
    const HSA_LINK_XGMI: u32 = 4;
    api(|| {
        check(!linktype.is_null() && !hopcount.is_null() && device1 != device2 && device1 >= 0 && device2 >= 0)?;
        let rt = runtime()?;
        let (a, b) = (ordinal(rt, device1)?, ordinal(rt, device2)?);
        let (ty, hops) = if rt.xgmi_linked(a, b) {
            (HSA_LINK_XGMI, 1)
        } else if rt.can_access_peer(a, b) {
            (HSA_LINK_PCIE, 1)
        } else {
            (HSA_LINK_PCIE, 2)
        };
        write_out(linktype, ty)?;
        write_out(hopcount, hops)
    })
}
