//! Device management (HIP "Device Management" group; clr `hip_device.cpp`,
//! `hip_device_runtime.cpp`): init, counting and selecting devices, properties, attributes,
//! memory info, versions, synchronize and reset.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{
    all_streams, api, check, cstr_in, current_device, read_in, rt_dev, set_current_device, stream_take, write_out,
    write_slice,
};
use crate::core::device_props;
use crate::core::runtime::runtime;
use std::ffi::{c_char, c_int, c_uint};

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
        crate::api::common::mark_device_set();
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
/// any GPU work raised, also work the runtime did not submit (sticky `hipErrorIllegalAddress`,
/// stored by the runtime's fault watcher thread: no syscall; a fault of work it did not wait
/// for is reported once that thread has stored it, within a thread wake-up of the fault).
#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        crate::graph::check_device_sync()?;
        rt.device_sync(d)?;
        rt.poll_fault()
    })
}

/// `hipDeviceReset`: waits for the current device, then destroys its streams, frees its
/// allocations, ends its peer access (both directions, as a destroyed CUDA context does) and sets
/// its flags, cache config and limits back to their defaults.
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
        rt.mipmap_reset(d);
        for a in rt.allocs.all() {
            match a.kind {
                crate::core::memory::MemKind::Device | crate::core::memory::MemKind::External if a.owner == d => {
                    rt.mem_free(a.base)?
                }
                crate::core::memory::MemKind::Array if a.owner == d => rt.free_synced(a.base)?,
                _ => {}
            }
        }
        rt.small_trim();
        rt.hostcall_reset(d);
        rt.peer_reset(d)?;
        // Flags, cache config and limits go back to their defaults (hip-tests
        // Unit_hipDeviceReset_Positive_Basic; CUDA's cudaDeviceReset).
        *rt.devices[d].config.lock() = Default::default();
        Ok(())
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

/// `hipDeviceGetAttribute`. `hipDeviceAttributeHdpMemFlushCntl` / `HdpRegFlushCntl` store a
/// pointer (`unsigned int*`, 8 bytes) through `pi`, as clr does: the HDP flush registers in the
/// device's MMIO remap page, equal to `hipDeviceProp_t.hdpMemFlushCntl` / `hdpRegFlushCntl`.
/// Errors: `hipErrorInvalidValue` (null `pi`, unknown attribute), `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipDeviceGetAttribute(pi: *mut c_int, attr: hipDeviceAttribute_t, device: c_int) -> hipError_t {
    api(|| {
        check(!pi.is_null())?;
        let d = runtime()?.device(device)?;
        let hdp = match attr {
            hipDeviceAttribute_t::hipDeviceAttributeHdpMemFlushCntl => Some(d.props.hdpMemFlushCntl),
            hipDeviceAttribute_t::hipDeviceAttributeHdpRegFlushCntl => Some(d.props.hdpRegFlushCntl),
            _ => None,
        };
        match hdp {
            Some(p) => write_out(pi as *mut *mut c_uint, p),
            None => write_out(pi, device_props::device_attribute(&d.props, &d.topo.node, attr)?),
        }
    })
}

/// `HIP_HIDDEN_FREE_MEM`: MiB of free memory `hipMemGetInfo` hides (clr flag, default 0); read
/// at each call, so a value set by the program before asking counts.
fn hidden_free_mem() -> u64 {
    std::env::var("HIP_HIDDEN_FREE_MEM").ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0) << 20
}

/// `hipMemGetInfo`: free and total VRAM of the current device, bytes (`AMDKFD_IOC_AVAILABLE_MEMORY`
/// and the topology's memory banks). Empty blocks of small `hipMalloc`s are given back first, so
/// memory freed by the user counts as free. Free memory is lowered by `HIP_HIDDEN_FREE_MEM` MiB
/// when it is larger than that (clr rocdevice.cpp `globalFreeMemory`).
#[no_mangle]
pub extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> hipError_t {
    api(|| {
        let (rt, d) = rt_dev()?;
        rt.small_trim();
        let dev = &rt.devices[d];
        let avail = rt.kfd.available_memory(dev.gpu_id).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        let tot = dev.topo.node.vram_size;
        // Either out-pointer may be null (clr: what is not asked for is not written).
        if !free.is_null() {
            let (avail, hidden) = (avail.min(tot), hidden_free_mem());
            write_out(free, if avail > hidden { avail - hidden } else { avail } as usize)?;
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

/// `hipDeviceTotalMem`: VRAM of `device`, bytes (= `totalGlobalMem`). Errors (clr order):
/// `hipErrorInvalidDevice`, then `hipErrorInvalidValue` (null `bytes`).
#[no_mangle]
pub extern "C" fn hipDeviceTotalMem(bytes: *mut usize, device: hipDevice_t) -> hipError_t {
    api(|| write_out(bytes, props(device)?.totalGlobalMem))
}

/// `hipDeviceComputeCapability`: the gfx major and minor (9, 0 for gfx90a). Errors (clr order):
/// `hipErrorInvalidDevice`, then `hipErrorInvalidValue` (a null out-pointer).
#[no_mangle]
pub extern "C" fn hipDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, device: hipDevice_t) -> hipError_t {
    api(|| {
        let p = props(device)?;
        check(!major.is_null() && !minor.is_null())?;
        write_out(major, p.major)?;
        write_out(minor, p.minor)
    })
}

/// Copies the C string `src` into `dst[..len]`, truncated to `len - 1` bytes and NUL-terminated;
/// bytes past the terminator are left alone (clr `hipDeviceGetName`). `len` ≥ 1.
fn copy_cstr(dst: *mut c_char, len: usize, src: &[u8]) -> Result<(), hipError_t> {
    let n = src.len().min(len - 1);
    let bytes: Vec<c_char> = src[..n].iter().chain(&[0]).map(|b| *b as c_char).collect();
    write_slice(dst, &bytes)
}

fn cstr_bytes(a: &[c_char]) -> Vec<u8> {
    a.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect()
}

/// `hipDeviceGetName`: the product name (`hipDeviceProp_t.name`) into `name[len]`, truncated
/// to `len - 1` bytes. Errors (clr order): `hipErrorInvalidDevice`, then `hipErrorInvalidValue`
/// (null `name`, `len` ≤ 0).
#[no_mangle]
pub extern "C" fn hipDeviceGetName(name: *mut c_char, len: c_int, device: hipDevice_t) -> hipError_t {
    api(|| {
        let p = props(device)?;
        check(!name.is_null() && len > 0)?;
        copy_cstr(name, len as usize, &cstr_bytes(&p.name))
    })
}

/// `hipDeviceGetUuid`: the 16 bytes of `hipDeviceProp_t.uuid` (ROCr's `GPU-<unique_id>` form).
/// Errors (clr order): `hipErrorInvalidDevice`, then `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipDeviceGetUuid(uuid: *mut hipUUID, device: hipDevice_t) -> hipError_t {
    api(|| write_out(uuid, props(device)?.uuid))
}

/// The PCI address of device `d` as clr prints it: `%04x:%02x:%02x.%01x` (domain, bus,
/// device, function).
fn pci_bus_id(d: &crate::core::device::Device) -> String {
    let (domain, bus, dev, func) = d.topo.node.pci_location();
    format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:x}")
}

/// `hipDeviceGetPCIBusId`: `DDDD:BB:DD.F` into `pciBusId[len]` (13 bytes with the NUL), as
/// `snprintf` writes it. Errors (clr order): `hipErrorInvalidDevice`; `hipErrorInvalidValue`
/// for a null buffer, and for `len` ≤ 12 (after writing the truncated string, as clr does;
/// `len` ≤ 0 writes nothing).
#[no_mangle]
pub extern "C" fn hipDeviceGetPCIBusId(pciBusId: *mut c_char, len: c_int, device: c_int) -> hipError_t {
    api(|| {
        let d = runtime()?.device(device)?;
        check(!pciBusId.is_null())?;
        if len > 0 {
            copy_cstr(pciBusId, len as usize, pci_bus_id(d).as_bytes())?;
        }
        check(len > 12)
    })
}

/// Parses a PCI address as clr's `sscanf("%04x:%02x:%02x.%01x")` does (leading spaces and a
/// `0x` prefix allowed, each field at most that many hex digits, trailing text ignored), and
/// CUDA's short form `BB:DD.F` (domain 0). → (domain, bus, device, function).
fn parse_pci_bus_id(s: &str) -> Option<(u32, u32, u32, u32)> {
    fn hex(s: &str, width: usize) -> Option<(u32, &str)> {
        let s = s.trim_start();
        let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        let n = s.bytes().take(width).take_while(u8::is_ascii_hexdigit).count();
        Some((u32::from_str_radix(s.get(..n).filter(|d| !d.is_empty())?, 16).ok()?, &s[n..]))
    }
    let long = || {
        let (domain, r) = hex(s, 4)?;
        let (bus, r) = hex(r.strip_prefix(':')?, 2)?;
        let (dev, r) = hex(r.strip_prefix(':')?, 2)?;
        let (func, _) = hex(r.strip_prefix('.')?, 1)?;
        Some((domain, bus, dev, func))
    };
    let short = || {
        let (bus, r) = hex(s, 2)?;
        let (dev, r) = hex(r.strip_prefix(':')?, 2)?;
        let (func, _) = hex(r.strip_prefix('.')?, 1)?;
        Some((0, bus, dev, func))
    };
    long().or_else(short)
}

/// `hipDeviceGetByPCIBusId`: the ordinal of the device at `pciBusIdstr` (`DDDD:BB:DD.F`, or
/// `BB:DD.F` for domain 0). Errors: `hipErrorInvalidValue` (null arguments, unparsable string,
/// no such device), as clr.
#[no_mangle]
pub extern "C" fn hipDeviceGetByPCIBusId(device: *mut c_int, pciBusIdstr: *const c_char) -> hipError_t {
    api(|| {
        // clr HIP_INIT_API: without a usable device, hipErrorNoDevice before any argument check.
        runtime()?;
        check(!device.is_null())?;
        let s = cstr_in(pciBusIdstr)?.to_string_lossy();
        let want = parse_pci_bus_id(&s).ok_or(hipError_t::hipErrorInvalidValue)?;
        let rt = runtime()?;
        let d =
            rt.devices.iter().find(|d| d.topo.node.pci_location() == want).ok_or(hipError_t::hipErrorInvalidValue)?;
        write_out(device, d.ordinal as c_int)
    })
}

/// The properties `hipChooseDevice` compares, in clr's order (`ihipChooseDevice`): major, minor,
/// totalGlobalMem, sharedMemPerBlock, maxThreadsPerBlock, totalConstMem, multiProcessorCount,
/// maxThreadsPerMultiProcessor, memoryClockRate, memoryBusWidth, l2CacheSize, regsPerBlock,
/// maxSharedMemoryPerMultiProcessor, warpSize. Both prop layouts have them under these names.
macro_rules! choose_keys {
    ($p:expr) => {
        [
            $p.major as i128,
            $p.minor as i128,
            $p.totalGlobalMem as i128,
            $p.sharedMemPerBlock as i128,
            $p.maxThreadsPerBlock as i128,
            $p.totalConstMem as i128,
            $p.multiProcessorCount as i128,
            $p.maxThreadsPerMultiProcessor as i128,
            $p.memoryClockRate as i128,
            $p.memoryBusWidth as i128,
            $p.l2CacheSize as i128,
            $p.regsPerBlock as i128,
            $p.maxSharedMemoryPerMultiProcessor as i128,
            $p.warpSize as i128,
        ]
    };
}

/// clr `ihipChooseDevice`: among the devices that meet every non-zero requested property (≥),
/// the first that meets the most; device 0 when none does.
fn choose(device: *mut c_int, want: [i128; 14]) -> Result<(), hipError_t> {
    let rt = runtime()?;
    let (mut best, mut best_n) = (0usize, 0usize);
    for d in &rt.devices {
        let have = choose_keys!(d.props);
        let asked = want.iter().filter(|w| **w != 0).count();
        let met = want.iter().zip(&have).filter(|(w, h)| **w != 0 && h >= w).count();
        if met == asked && met > best_n {
            (best, best_n) = (d.ordinal, met);
        }
    }
    write_out(device, best as c_int)
}

/// An entry point of [`choose`] for one property layout.
fn choose_api<P>(device: *mut c_int, properties: *const P, keys: impl Fn(&P) -> [i128; 14]) -> hipError_t {
    api(|| {
        check(!device.is_null())?;
        choose(device, keys(&read_in(properties)?))
    })
}

/// `hipChooseDeviceR0600` (`hipChooseDevice` in ROCm ≥ 6 headers). Errors:
/// `hipErrorInvalidValue` (null arguments).
#[no_mangle]
pub extern "C" fn hipChooseDeviceR0600(device: *mut c_int, properties: *const hipDeviceProp_tR0600) -> hipError_t {
    choose_api(device, properties, |p| choose_keys!(p))
}

/// `hipChooseDeviceR0000`: [`hipChooseDeviceR0600`] with the ROCm 5 property layout.
#[no_mangle]
pub extern "C" fn hipChooseDeviceR0000(device: *mut c_int, properties: *const hipDeviceProp_tR0000) -> hipError_t {
    choose_api(device, properties, |p| choose_keys!(p))
}

/// `hipChooseDevice`, the unversioned symbol of ROCm 5 binaries: the R0000 layout.
#[no_mangle]
pub extern "C" fn hipChooseDevice(device: *mut c_int, properties: *const hipDeviceProp_tR0000) -> hipError_t {
    hipChooseDeviceR0000(device, properties)
}

/// The current device's settings.
fn config() -> Result<parking_lot::MutexGuard<'static, crate::core::device::DeviceConfig>, hipError_t> {
    let (rt, d) = rt_dev()?;
    Ok(rt.devices[d].config.lock())
}

/// `hipGetDeviceFlags`: the current device's flags (`hipSetDeviceFlags`' schedule bits, or
/// what `hipCtxCreate` gave). Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipGetDeviceFlags(flags: *mut c_uint) -> hipError_t {
    api(|| {
        check(!flags.is_null())?;
        let f = config()?.flags;
        write_out(flags, f)
    })
}

/// `hipSetDeviceFlags` (clr `hipSetDeviceFlags`): at most one `hipDeviceSchedule*` bit, plus
/// `hipDeviceMapHost` and `hipDeviceLmemResizeToMax`; the schedule bits are stored (clr keeps
/// `flags & hipDeviceScheduleMask`; `hipGetDeviceFlags` reports them) and say how host threads
/// wait for the current device's work (src/core/wait.rs): `Spin` polls (no syscall), `Yield`
/// polls between `sched_yield`s, `BlockingSync` sleeps in `AMDKFD_IOC_WAIT_EVENTS`, `Auto` (the
/// default) spins while fewer threads wait than there are CPUs, else yields (CUDA's heuristic),
/// yielding once every 10 µs even then.
/// Errors: `hipErrorInvalidValue` (two schedule bits, unknown bits; nothing changes).
#[no_mangle]
pub extern "C" fn hipSetDeviceFlags(flags: c_uint) -> hipError_t {
    api(|| {
        let sched = flags & hipDeviceScheduleMask;
        check(sched.count_ones() <= 1)?;
        check(flags & !(hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax) == 0)?;
        config()?.flags = sched;
        Ok(())
    })
}

/// `hipDeviceGetCacheConfig`: what `hipDeviceSetCacheConfig` last stored on the current device
/// (default `hipFuncCachePreferNone`). Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipDeviceGetCacheConfig(cacheConfig: *mut hipFuncCache_t) -> hipError_t {
    api(|| {
        check(!cacheConfig.is_null())?;
        let c = config()?.cache_config;
        write_out(cacheConfig, hipFuncCache_t(c))
    })
}

/// `hipDeviceSetCacheConfig`: accepted and stored, no effect (AMD GPUs have a fixed L1/LDS
/// split; HIP documents it as a no-op). Errors: `hipErrorInvalidValue` (not a `hipFuncCache_t`).
#[no_mangle]
pub extern "C" fn hipDeviceSetCacheConfig(cacheConfig: hipFuncCache_t) -> hipError_t {
    api(|| {
        check(hipFuncCache_t::ENUMERATORS.iter().any(|(_, v)| *v == cacheConfig))?;
        config()?.cache_config = cacheConfig.0;
        Ok(())
    })
}

/// `hipDeviceGetSharedMemConfig`: always `hipSharedMemBankSizeFourByte` (clr; LDS banks are
/// 4 bytes wide). Errors: `hipErrorInvalidValue` (null).
#[no_mangle]
pub extern "C" fn hipDeviceGetSharedMemConfig(pConfig: *mut hipSharedMemConfig) -> hipError_t {
    api(|| {
        rt_dev()?;
        write_out(pConfig, hipSharedMemConfig::hipSharedMemBankSizeFourByte)
    })
}

/// `hipDeviceSetSharedMemConfig`: accepted, no effect (clr). Errors: `hipErrorInvalidValue`
/// (not a `hipSharedMemConfig`).
#[no_mangle]
pub extern "C" fn hipDeviceSetSharedMemConfig(config: hipSharedMemConfig) -> hipError_t {
    api(|| {
        check(hipSharedMemConfig::ENUMERATORS.iter().any(|(_, v)| *v == config))?;
        rt_dev().map(drop)
    })
}

/// clr `Device::UpdateStackSize`: at most 128 KiB - 16 per lane (COMPUTE_TMPRING_SIZE.WAVE_SIZE).
const MAX_STACK_SIZE: u64 = (128 << 10) - 16;

/// `hipDeviceGetLimit` on the current device: `hipLimitStackSize` (default 1024),
/// `hipLimitMallocHeapSize` (default 8 MiB). Errors (clr): `hipErrorInvalidValue` (null, `limit`
/// ≥ `hipLimitRange`), `hipErrorUnsupportedLimit` (any other limit: printf FIFO, scratch,
/// negative values).
#[no_mangle]
pub extern "C" fn hipDeviceGetLimit(pValue: *mut usize, limit: hipLimit_t) -> hipError_t {
    api(|| {
        check(!pValue.is_null() && limit.0 < hipLimit_t::hipLimitRange.0)?;
        let c = *config()?;
        let v = match limit {
            hipLimit_t::hipLimitStackSize => c.stack_size,
            hipLimit_t::hipLimitMallocHeapSize => c.heap_size,
            _ => return Err(hipError_t::hipErrorUnsupportedLimit),
        };
        write_out(pValue, v as usize)
    })
}

/// `hipDeviceSetLimit` on the current device: the stack size (≤ 128 KiB - 16, rounded up to 16)
/// and the device heap size (< VRAM) are stored, as clr does; hipkfd runs no kernels yet, so
/// neither is used. Errors (clr): `hipErrorInvalidValue` (`limit` ≥ `hipLimitRange`, value out
/// of range), `hipErrorUnsupportedLimit` (other limits).
#[no_mangle]
pub extern "C" fn hipDeviceSetLimit(limit: hipLimit_t, value: usize) -> hipError_t {
    api(|| {
        check(limit.0 < hipLimit_t::hipLimitRange.0)?;
        let (rt, d) = rt_dev()?;
        let mut c = rt.devices[d].config.lock();
        match limit {
            hipLimit_t::hipLimitStackSize => {
                check(value as u64 <= MAX_STACK_SIZE)?;
                c.stack_size = (value as u64).next_multiple_of(16);
            }
            hipLimit_t::hipLimitMallocHeapSize => {
                check((value as u64) < rt.devices[d].props.totalGlobalMem as u64)?;
                c.heap_size = value as u64;
            }
            _ => return Err(hipError_t::hipErrorUnsupportedLimit),
        }
        Ok(())
    })
}

/// `hipSetValidDevices` (clr): `len` 0 is a no-op; otherwise every entry must be a device, and
/// the first becomes current unless this thread already called `hipSetDevice`. Errors:
/// `hipErrorInvalidValue` (null list, `len` < 0 or > count), `hipErrorInvalidDevice`.
#[no_mangle]
pub extern "C" fn hipSetValidDevices(device_arr: *mut c_int, len: c_int) -> hipError_t {
    api(|| {
        if len == 0 {
            return Ok(());
        }
        let rt = runtime()?;
        check(len > 0 && len as usize <= rt.devices.len())?;
        let list = crate::api::common::slice_in(device_arr, len as usize)?;
        for d in list {
            rt.device(*d)?;
        }
        if !crate::api::common::device_was_set() {
            set_current_device(list[0] as usize);
        }
        Ok(())
    })
}

/// The address of `name` in hipkfd's own library (never in a library it depends on, nor in
/// another `libamdhip64` of the process): the library that holds this function is found with
/// `dladdr`, opened again with `RTLD_NOLOAD`, asked with `dlsym`, and the answer kept only if
/// `dladdr` places it in the same library. Every export is covered, present and future.
fn own_symbol(name: &std::ffi::CStr) -> Option<*mut std::ffi::c_void> {
    let me = own_symbol as *const std::ffi::c_void;
    // SAFETY: `Dl_info` is plain data; dladdr fills it for an address of a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `me` is an address inside this library; `info` is writable.
    if unsafe { libc::dladdr(me, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let base = info.dli_fbase;
    // SAFETY: `dli_fname` is the loaded object's NUL-terminated path; RTLD_NOLOAD only returns a
    // handle of an object already mapped (ours), adding a reference that dlclose drops below.
    let h = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if h.is_null() {
        return None;
    }
    // SAFETY: `h` is a live handle, `name` a NUL-terminated string.
    let p = unsafe { libc::dlsym(h, name.as_ptr()) };
    // SAFETY: `h` came from dlopen above; our library stays mapped (the process links it).
    unsafe { libc::dlclose(h) };
    if p.is_null() {
        return None;
    }
    // SAFETY: as above, for the address dlsym returned.
    let mut at: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `p` is an address dlsym returned; `at` is writable.
    let ok = unsafe { libc::dladdr(p, &mut at) } != 0 && at.dli_fbase == base;
    ok.then_some(p)
}

/// Reads a C string argument: `None` for null or empty.
fn symbol_name(symbol: *const c_char) -> Option<std::ffi::CString> {
    cstr_in(symbol).ok().filter(|s| !s.is_empty()).map(|s| s.to_owned())
}

/// Stores a look-up's answer: the address (null when not found) and, if asked for, the status
/// (`statuses` = (found, not found)). Errors: `hipErrorInvalidValue` when not found.
fn answer<S>(
    out: *mut *mut std::ffi::c_void,
    status: *mut S,
    found: Option<*mut std::ffi::c_void>,
    statuses: (S, S),
) -> Result<(), hipError_t> {
    if !status.is_null() {
        write_out(status, if found.is_some() { statuses.0 } else { statuses.1 })?;
    }
    write_out(out, found.unwrap_or(std::ptr::null_mut()))?;
    found.map(drop).ok_or(hipError_t::hipErrorInvalidValue)
}

/// Our entry point named `name`; with `spt` its `_spt` variant when there is one (clr
/// `hipGetProcAddress_common` / `hipGetDriverEntryPoint_common`: else the plain one).
fn entry_point(name: &std::ffi::CStr, spt: bool) -> Option<*mut std::ffi::c_void> {
    let spt_name = spt.then(|| std::ffi::CString::new([name.to_bytes(), b"_spt"].concat()).expect("no NUL inside"));
    spt_name.as_deref().and_then(own_symbol).or_else(|| own_symbol(name))
}

/// `hipGetProcAddress` (ROCm 6.1+ prototype): `*pfn` = hipkfd's own entry point named `symbol`
/// (`hipGetDeviceProperties` and `hipChooseDevice` mean their `R0600` versions when
/// `hipVersion` ≥ 600, as clr); with `HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` its
/// per-thread-stream variant (`NAME_spt`) where there is one. A lower `hipVersion` selects
/// nothing else: every export of ours has one version. `symbolStatus` (optional) gets
/// `HIP_GET_PROC_ADDRESS_SUCCESS` or `_SYMBOL_NOT_FOUND`. Errors: `hipErrorInvalidValue` (null
/// or empty `symbol`, null `pfn`, `flags` not `HIP_GET_PROC_ADDRESS_DEFAULT`/`_LEGACY_STREAM`/
/// `_PER_THREAD_DEFAULT_STREAM`, not found; clr `hipGetProcAddress_common`).
#[no_mangle]
pub extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut std::ffi::c_void,
    hipVersion: c_int,
    flags: u64,
    symbolStatus: *mut hipDriverProcAddressQueryResult,
) -> hipError_t {
    api(|| {
        let name = symbol_name(symbol).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(!pfn.is_null())?;
        let flag_set = [
            HIP_GET_PROC_ADDRESS_DEFAULT,
            HIP_GET_PROC_ADDRESS_LEGACY_STREAM,
            HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        ];
        check(flag_set.contains(&flags))?;
        let mut spt = flags == HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        let name = match name.to_bytes() {
            b"hipGetDeviceProperties" | b"hipChooseDevice" => {
                spt = false;
                match hipVersion >= 600 {
                    true => std::ffi::CString::new([name.to_bytes(), b"R0600"].concat()).expect("no NUL inside"),
                    false => name,
                }
            }
            _ => name,
        };
        use hipDriverProcAddressQueryResult as R;
        let statuses = (R::HIP_GET_PROC_ADDRESS_SUCCESS, R::HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        answer(pfn, symbolStatus, entry_point(&name, spt), statuses)
    })
}

/// The body of `hipGetDriverEntryPoint` and `hipGetDriverEntryPoint_spt` (clr
/// `hipGetDriverEntryPoint_common`).
pub(crate) fn driver_entry_point(
    symbol: *const c_char,
    funcPtr: *mut *mut std::ffi::c_void,
    flags: u64,
    driverStatus: *mut hipDriverEntryPointQueryResult,
) -> hipError_t {
    api(|| {
        let name = symbol_name(symbol).ok_or(hipError_t::hipErrorInvalidValue)?;
        check(!funcPtr.is_null())?;
        check([hipEnableDefault, hipEnableLegacyStream, hipEnablePerThreadDefaultStream].contains(&flags))?;
        let found = entry_point(&name, flags == hipEnablePerThreadDefaultStream);
        use hipDriverEntryPointQueryResult as R;
        answer(funcPtr, driverStatus, found, (R::hipDriverEntryPointSuccess, R::hipDriverEntryPointSymbolNotFound))
    })
}

/// `hipGetDriverEntryPoint` (ROCm 7.1): `*funcPtr` = hipkfd's own entry point named `symbol`;
/// with `hipEnablePerThreadDefaultStream` its `_spt` variant where there is one (else the plain
/// one, as clr falls back). `driverStatus` (optional): `hipDriverEntryPointSuccess` or
/// `..SymbolNotFound`. Errors: `hipErrorInvalidValue` (null or empty `symbol`, null
/// `funcPtr`, `flags` not one of `hipEnableDefault`/`LegacyStream`/`PerThreadDefaultStream`,
/// not found; clr `hip_device_runtime.cpp`).
#[no_mangle]
pub extern "C" fn hipGetDriverEntryPoint(
    symbol: *const c_char,
    funcPtr: *mut *mut std::ffi::c_void,
    flags: u64,
    driverStatus: *mut hipDriverEntryPointQueryResult,
) -> hipError_t {
    driver_entry_point(symbol, funcPtr, flags, driverStatus)
}

#[cfg(test)]
mod tests {
    use super::parse_pci_bus_id;

    #[test]
    fn pci_bus_id_forms() {
        assert_eq!(parse_pci_bus_id("0000:03:00.0"), Some((0, 3, 0, 0)));
        assert_eq!(parse_pci_bus_id("0001:c3:1f.7"), Some((1, 0xc3, 0x1f, 7)));
        assert_eq!(parse_pci_bus_id("03:00.0"), Some((0, 3, 0, 0)));
        assert_eq!(parse_pci_bus_id("0000:03:00.0 trailing"), Some((0, 3, 0, 0)));
        assert_eq!(parse_pci_bus_id("0:3:0.0"), Some((0, 3, 0, 0)));
        for bad in ["", "0000:", "0000:03", "0000:03:00", "zz:00.0", "0000:03:00.", ":03:00.0"] {
            assert_eq!(parse_pci_bus_id(bad), None, "{bad:?}");
        }
    }
}
