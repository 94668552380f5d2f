//! Device management (HIP "Device Management" group; clr `hip_device.cpp`,
//! `hip_device_runtime.cpp`): init, counting and selecting devices, properties, attributes,
//! memory info, versions, synchronize and reset.

use crate::api::common::{all_streams, api, check, current_device, rt_dev, set_current_device, stream_take, write_out};
use crate::api::device_props;
use crate::api::types::*;
use crate::runtime::runtime;
use std::ffi::{c_int, c_uint};

/// `hipInit`: initialises the runtime. `flags` must be 0 (`hipErrorInvalidValue`);
/// `hipErrorNoDevice` when there is no KFD or no GPU.
#[no_mangle]
pub extern "C" fn hipInit(flags: c_uint) -> hipError_t {
    api(|| {
        check(flags == 0)?;
        runtime().map(drop)
    })
}

/// `hipGetDeviceCount`: the number of visible GPUs. With none, `*count = 0` and
/// `hipErrorNoDevice`. Null `count`: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    api(|| {
        check(!count.is_null())?;
        match runtime() {
            Ok(rt) => write_out(count, rt.devices.len() as c_int),
            Err(e) => {
                write_out(count, 0)?;
                Err(e)
            }
        }
    })
}

/// `hipSetDevice`: makes `device` current for the calling thread (`hipErrorInvalidDevice`).
#[no_mangle]
pub extern "C" fn hipSetDevice(device: c_int) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        rt.device(device)?;
        set_current_device(device as usize);
        Ok(())
    })
}

/// `hipGetDevice`: the calling thread's current device.
#[no_mangle]
pub extern "C" fn hipGetDevice(device: *mut c_int) -> hipError_t {
    api(|| {
        check(!device.is_null())?;
        runtime()?;
        write_out(device, current_device() as c_int)
    })
}

/// `hipDeviceGet`: the device handle of ordinal `ordinal` (`hipErrorInvalidDevice`).
#[no_mangle]
pub extern "C" fn hipDeviceGet(device: *mut hipDevice_t, ordinal: c_int) -> hipError_t {
    api(|| {
        check(!device.is_null())?;
        runtime()?.device(ordinal)?;
        write_out(device, ordinal)
    })
}

/// `hipDeviceSynchronize`: waits for all work of the current device, then reports a VM fault
/// any GPU work raised, also work the runtime did not submit (sticky `hipErrorIllegalAddress`).
#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        rt.device_sync(d)?;
        rt.poll_fault()
    })
}

/// `hipDeviceReset`: waits for the current device, then destroys its streams, frees its
/// allocations and ends its peer access (both directions, as a destroyed CUDA context does).
#[no_mangle]
pub extern "C" fn hipDeviceReset() -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        rt.device_sync(d)?;
        for (h, s) in all_streams() {
            if s.dev == d {
                let _ = stream_take(h as hipStream_t);
            }
        }
        rt.mempool_reset(d);
        for a in rt.allocs.all() {
            if a.owner == d && matches!(a.kind, crate::memory::MemKind::Device | crate::memory::MemKind::External) {
                rt.mem_free(a.base)?;
            }
        }
        rt.peer_reset(d)
    })
}

fn props(device: c_int) -> Result<hipDeviceProp_t, hipError_t> {
    Ok(runtime()?.device(device)?.props)
}

/// `hipGetDevicePropertiesR0600` (what `hipGetDeviceProperties` means in ROCm ≥ 6 headers).
/// Errors: `hipErrorInvalidValue` (null `prop`), `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipGetDevicePropertiesR0600(prop: *mut hipDeviceProp_tR0600, device: c_int) -> hipError_t {
    api(|| {
        check(!prop.is_null())?;
        write_out(prop, props(device)?)
    })
}

/// `hipGetDevicePropertiesR0000`: the ROCm 5 layout of `hipDeviceProp_t`.
#[no_mangle]
pub extern "C" fn hipGetDevicePropertiesR0000(prop: *mut hipDeviceProp_tR0000, device: c_int) -> hipError_t {
    api(|| {
        check(!prop.is_null())?;
        write_out(prop, device_props::device_props_r0000(&props(device)?))
    })
}

/// `hipGetDeviceProperties`, the unversioned symbol that binaries built against ROCm 5 headers
/// call: the ROCm 5 (R0000) layout. ROCm ≥ 6 headers `#define` the name to
/// `hipGetDevicePropertiesR0600`, so new code never reaches this symbol.
#[no_mangle]
pub extern "C" fn hipGetDeviceProperties(prop: *mut hipDeviceProp_tR0000, device: c_int) -> hipError_t {
    hipGetDevicePropertiesR0000(prop, device)
}

/// `hipDeviceGetAttribute`. Errors: `hipErrorInvalidValue` (null `pi`, unknown attribute),
/// `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDeviceGetAttribute(pi: *mut c_int, attr: hipDeviceAttribute_t, device: c_int) -> hipError_t {
    api(|| {
        check(!pi.is_null())?;
        let d = runtime()?.device(device)?;
        write_out(pi, device_props::device_attribute(&d.props, &d.topo.node, attr)?)
    })
}

/// `hipMemGetInfo`: free and total VRAM of the current device, bytes (`AMDKFD_IOC_AVAILABLE_MEMORY`
/// and the topology's memory banks).
#[no_mangle]
pub extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        let dev = &rt.devices[d];
        let avail = rt.kfd.available_memory(dev.gpu_id).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        let tot = dev.topo.node.vram_size;
        // Either out-pointer may be null (clr: what is not asked for is not written).
        if !free.is_null() {
            write_out(free, avail.min(tot) as usize)?;
        }
        if !total.is_null() {
            write_out(total, tot as usize)?;
        }
        Ok(())
    })
}

/// `hipDriverGetVersion`. Null: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipDriverGetVersion(driverVersion: *mut c_int) -> hipError_t {
    api(|| write_out(driverVersion, HIPKFD_DRIVER_VERSION))
}

/// `hipRuntimeGetVersion`. Null: `hipErrorInvalidValue`.
#[no_mangle]
pub extern "C" fn hipRuntimeGetVersion(runtimeVersion: *mut c_int) -> hipError_t {
    api(|| write_out(runtimeVersion, HIPKFD_RUNTIME_VERSION))
}
