//! Occupancy: `hipOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags)`,
//! `hipOccupancyMaxPotentialBlockSize` and their `hipModule*` spellings. The figures come from
//! the kernel's code object metadata (`.vgpr_count`, `.sgpr_count`, `.group_segment_fixed_size`,
//! `.wavefront_size`) and the device's register file, as clr computes them
//! (`hip_platform.cpp`, `hip_impl::ihipOccupancyMaxActiveBlocksPerMultiprocessor`; register file
//! sizes from `rocdevice.cpp`).
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::*;
use crate::api::common::{api, current_device, write_out};
use crate::api::module::host_function;
use crate::core::device_props::arch_name;
use crate::core::runtime::runtime;
use crate::kernels::module::{registry, Function, KernelInfo};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

/// `hipOccupancyDefault` and `hipOccupancyDisableCachingOverride`, the flags clr accepts.
const OCCUPANCY_FLAGS: [c_uint; 2] = [0, 1];

/// A device's resources as occupancy sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// gfx major version (9 for gfx90a).
    pub gfx_major: u32,
    /// VGPRs per SIMD lane and their allocation granule (clr `vgprsPerSimd_`,
    /// `vgprAllocGranularity_`).
    pub vgprs_per_simd: u32,
    pub vgpr_granule: u32,
    /// SGPRs per SIMD (`sgprsPerSimd_`: 800 on gfx8/9, unlimited from gfx10).
    pub sgprs_per_simd: u32,
    pub simd_per_cu: u32,
    /// LDS bytes per workgroup (`localMemSize_`).
    pub lds: u64,
    pub max_workgroup: u32,
    pub cus: u32,
}

impl DeviceLimits {
    /// The limits of a device, from its KFD node (gfx version, register file, SIMDs) and its
    /// properties (LDS, block size, CUs).
    pub fn of(dev: &crate::core::device::Device) -> DeviceLimits {
        let (node, p) = (&dev.topo.node, &dev.props);
        let gfx_major = node.gfx_version().0;
        let (vgprs_per_simd, vgpr_granule) = node.vgpr_file();
        DeviceLimits {
            gfx_major,
            vgprs_per_simd,
            vgpr_granule,
            sgprs_per_simd: if gfx_major < 10 { 800 } else { u32::MAX },
            simd_per_cu: node.simd_per_cu(),
            lds: p.sharedMemPerBlock as u64,
            max_workgroup: p.maxThreadsPerBlock.max(1) as u32,
            cus: p.multiProcessorCount.max(1) as u32,
        }
    }
}

/// What clr's occupancy calculation returns: blocks of the asked size per CU, the grid (blocks)
/// that fills the device at the best block size, and that block size (threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub blocks_per_cu: i32,
    pub grid: i32,
    pub best_block: i32,
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a.max(1)) * a.max(1)
}

/// clr `ihipOccupancyMaxActiveBlocksPerMultiprocessor` for kernel `k` on device `d`, with
/// `block` threads per block and `dyn_lds` bytes of dynamic LDS; `potential` (the
/// MaxPotentialBlockSize calls) takes a `block` of 0 or past the device's limit as that limit.
/// Errors: `hipErrorInvalidValue` (block ≤ 0 when not `potential`), `hipErrorUnknown` (a
/// kernel using more VGPRs than a SIMD has).
pub fn occupancy(
    k: &KernelInfo,
    d: &DeviceLimits,
    block: i32,
    dyn_lds: u64,
    potential: bool,
) -> Result<Occupancy, hipError_t> {
    let mut block = block;
    if !potential {
        if block <= 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        if block as u32 > d.max_workgroup {
            return Ok(Occupancy { blocks_per_cu: 0, grid: 0, best_block: 0 });
        }
    } else if block <= 0 || block as u32 > d.max_workgroup {
        block = d.max_workgroup as i32;
    }
    let max_waves_per_simd: u64 = if d.gfx_major <= 9 { 8 } else { 16 };
    let wave = k.wavefront_size.max(1) as u64;
    let (mut vgprs, mut granule) = (d.vgprs_per_simd as u64, d.vgpr_granule as u64);
    if d.gfx_major >= 10 && wave == 64 {
        vgprs >>= 1;
        granule >>= 1;
    }
    let vgpr_waves = if k.vgpr_count > 0 { vgprs / align_up(k.vgpr_count as u64, granule) } else { max_waves_per_simd };
    if vgpr_waves == 0 {
        return Err(hipError_t::hipErrorUnknown);
    }
    let gpr_waves = if k.sgpr_count > 0 {
        vgpr_waves.min(d.sgprs_per_simd as u64 / align_up(k.sgpr_count as u64, 16))
    } else {
        vgpr_waves
    };
    let alu_threads = (d.simd_per_cu as u64 * max_waves_per_simd.min(gpr_waves) * wave) as i64;
    let lds_used = k.group_segment_fixed_size as u64 + dyn_lds;
    let lds_wgs = d.lds.checked_div(lds_used).map_or(i32::MAX as i64, |n| n as i64);
    let aligned = align_up(block as u64, wave) as i64;
    let blocks_per_cu = (alu_threads / aligned).min(lds_wgs);
    let best = alu_threads.min(aligned);
    let best_per_cu = if best > 0 { alu_threads / best } else { 0 };
    let grid = d.cus as i64 * best_per_cu.min(lds_wgs);
    let clamp = |v: i64| v.clamp(0, i32::MAX as i64) as i32;
    Ok(Occupancy { blocks_per_cu: clamp(blocks_per_cu), grid: clamp(grid), best_block: clamp(best) })
}

/// The kernel behind `f` (a `__global__` host function, or a `hipFunction_t` when `module`) for
/// the current device, and that device's limits. Errors: `hipErrorInvalidDeviceFunction`.
fn kernel_of(f: *const c_void, module: bool) -> Result<(KernelInfo, DeviceLimits), hipError_t> {
    let rt = runtime()?;
    let d = current_device();
    let dev = rt.devices.get(d).ok_or(hipError_t::hipErrorInvalidDevice)?;
    let func: Arc<Function> = if module {
        registry().lock().function(f as usize).ok_or(hipError_t::hipErrorInvalidDeviceFunction)?
    } else {
        host_function(f)?
    };
    let (co, i) = func.kernel(&arch_name(&dev.props))?;
    Ok((co.kernels[i].clone(), DeviceLimits::of(dev)))
}

fn active_blocks(
    num: *mut c_int,
    f: *const c_void,
    block: c_int,
    dyn_lds: usize,
    flags: c_uint,
    module: bool,
) -> hipError_t {
    api(|| {
        runtime()?;
        if num.is_null() || (module && f.is_null()) || !OCCUPANCY_FLAGS.contains(&flags) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (k, d) = kernel_of(f, module)?;
        let o = occupancy(&k, &d, block, dyn_lds as u64, false);
        // clr writes the count even when the calculation fails (0 then).
        write_out(num, o.map(|o| o.blocks_per_cu).unwrap_or(0))?;
        o.map(drop)
    })
}

fn potential_block(
    grid: *mut c_int,
    block: *mut c_int,
    f: *const c_void,
    dyn_lds: usize,
    limit: c_int,
    flags: c_uint,
    module: bool,
) -> hipError_t {
    api(|| {
        runtime()?;
        if grid.is_null() || block.is_null() || (module && f.is_null()) || !OCCUPANCY_FLAGS.contains(&flags) {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (k, d) = kernel_of(f, module)?;
        let o = occupancy(&k, &d, limit, dyn_lds as u64, true)?;
        write_out(block, o.best_block)?;
        write_out(grid, o.grid)
    })
}

/// `hipOccupancyMaxActiveBlocksPerMultiprocessor`: how many blocks of `blockSize` threads of
/// kernel `f` (with `dynSharedMemPerBlk` bytes of dynamic LDS) fit on one CU at once. Errors:
/// `hipErrorInvalidValue` (null `numBlocks`, `blockSize` ≤ 0), `hipErrorInvalidDeviceFunction`.
/// A block larger than the device allows gives 0 blocks.
#[no_mangle]
pub extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    f: *const c_void,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
) -> hipError_t {
    active_blocks(numBlocks, f, blockSize, dynSharedMemPerBlk, 0, false)
}

/// `hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`: as the call without flags; `flags`
/// is `hipOccupancyDefault` or `hipOccupancyDisableCachingOverride` (else `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    f: *const c_void,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
    flags: c_uint,
) -> hipError_t {
    active_blocks(numBlocks, f, blockSize, dynSharedMemPerBlk, flags, false)
}

/// `hipOccupancyMaxPotentialBlockSize`: the block size (≤ `blockSizeLimit`, 0 = the device's
/// limit) that gives kernel `f` the most resident threads per CU, and the grid (blocks) that
/// fills every CU at that size. Errors: `hipErrorInvalidValue` (null outs),
/// `hipErrorInvalidDeviceFunction`.
#[no_mangle]
pub extern "C" fn hipOccupancyMaxPotentialBlockSize(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: *const c_void,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
) -> hipError_t {
    potential_block(gridSize, blockSize, f, dynSharedMemPerBlk, blockSizeLimit, 0, false)
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`: as the runtime call, for a
/// `hipFunction_t` (null: `hipErrorInvalidValue`).
#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    f: hipFunction_t,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
) -> hipError_t {
    active_blocks(numBlocks, f as *const c_void, blockSize, dynSharedMemPerBlk, 0, true)
}

/// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`: with the flags check.
#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    f: hipFunction_t,
    blockSize: c_int,
    dynSharedMemPerBlk: usize,
    flags: c_uint,
) -> hipError_t {
    active_blocks(numBlocks, f as *const c_void, blockSize, dynSharedMemPerBlk, flags, true)
}

/// `hipModuleOccupancyMaxPotentialBlockSize`: as the runtime call, for a `hipFunction_t`.
#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxPotentialBlockSize(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: hipFunction_t,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
) -> hipError_t {
    potential_block(gridSize, blockSize, f as *const c_void, dynSharedMemPerBlk, blockSizeLimit, 0, true)
}

/// `hipModuleOccupancyMaxPotentialBlockSizeWithFlags`: with the flags check.
#[no_mangle]
pub extern "C" fn hipModuleOccupancyMaxPotentialBlockSizeWithFlags(
    gridSize: *mut c_int,
    blockSize: *mut c_int,
    f: hipFunction_t,
    dynSharedMemPerBlk: usize,
    blockSizeLimit: c_int,
    flags: c_uint,
) -> hipError_t {
    potential_block(gridSize, blockSize, f as *const c_void, dynSharedMemPerBlk, blockSizeLimit, flags, true)
}

/// Bytes of LDS a work-group is given in (LLVM `AMDGPUUsage`, `COMPUTE_PGM_RSRC2.LDS_SIZE`:
/// granularity 128 dwords from GFX7 on).
const LDS_GRANULE: usize = 512;

/// `hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* f,
/// int numBlocks, int blockSize)`: the dynamic LDS bytes each block of `blockSize` threads of the
/// hipcc kernel `f` may use so that `numBlocks` blocks fit on a CU, as clr computes it: the
/// CU's LDS (`maxSharedMemoryPerMultiProcessor`) less the kernel's static LDS for each of
/// `min(numBlocks, maxThreadsPerMultiProcessor / blockSize)` blocks, shared among `numBlocks`
/// blocks (but never below the share of the most blocks that fit), capped at the kernel's
/// `HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, rounded down to the 512-byte LDS
/// granule. Errors (clr `hipOccupancyAvailableDynamicSMemPerBlock`): `hipErrorInvalidValue`
/// (null `dynamicSmemSize`, `numBlocks` or `blockSize` ≤ 0, `blockSize` over
/// `maxThreadsPerMultiProcessor`), `hipErrorInvalidDeviceFunction` (null or unregistered `f`),
/// `hipErrorNoBinaryForGpu`.
#[no_mangle]
pub extern "C" fn hipOccupancyAvailableDynamicSMemPerBlock(
    dynamicSmemSize: *mut usize,
    f: *const c_void,
    numBlocks: c_int,
    blockSize: c_int,
) -> hipError_t {
    api(|| {
        let rt = runtime()?;
        if dynamicSmemSize.is_null() || numBlocks <= 0 || blockSize <= 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (k, _) = kernel_of(f, false)?;
        let p = &rt.devices.get(current_device()).ok_or(hipError_t::hipErrorInvalidDevice)?.props;
        if blockSize > p.maxThreadsPerMultiProcessor {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (blocks, threads) = (numBlocks as i64, blockSize as i64);
        let stat = k.group_segment_fixed_size as i64;
        let max_dynamic = (p.sharedMemPerBlock as i64 - stat).max(0);
        let max_blocks = (p.maxThreadsPerMultiProcessor as i64 / threads).max(1);
        let cu_lds = p.maxSharedMemoryPerMultiProcessor as i64 - stat * blocks.min(max_blocks);
        let fitting = (cu_lds / max_blocks).min(max_dynamic);
        let available = fitting.max((cu_lds / blocks).min(max_dynamic)).max(0) as usize;
        write_out(dynamicSmemSize, available / LDS_GRANULE * LDS_GRANULE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gfx90a() -> DeviceLimits {
        DeviceLimits {
            gfx_major: 9,
            vgprs_per_simd: 512,
            vgpr_granule: 8,
            sgprs_per_simd: 800,
            simd_per_cu: 4,
            lds: 65536,
            max_workgroup: 1024,
            cus: 110,
        }
    }

    fn kernel(vgprs: u32, sgprs: u32, lds: u32) -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            symbol: "k.kd".into(),
            kd_address: 0,
            kernarg_segment_size: 0,
            kernarg_segment_align: 8,
            group_segment_fixed_size: lds,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: 1024,
            sgpr_count: sgprs,
            vgpr_count: vgprs,
            wavefront_size: 64,
            args: vec![],
        }
    }

    #[test]
    fn registers_and_lds_limit_as_clr_computes() {
        let d = gfx90a();
        // 32 VGPRs: 512/32 = 16 waves, capped at 8 per SIMD: 4 × 8 × 64 = 2048 threads per CU.
        let o = occupancy(&kernel(32, 16, 0), &d, 256, 0, false).unwrap();
        assert_eq!(o.blocks_per_cu, 8);
        // 128 VGPRs: 4 waves per SIMD: 1024 threads; 65-thread blocks take 128.
        assert_eq!(occupancy(&kernel(128, 16, 0), &d, 65, 0, false).unwrap().blocks_per_cu, 8);
        // 100 SGPRs: 800 / 112 = 7 waves per SIMD.
        assert_eq!(occupancy(&kernel(16, 100, 0), &d, 64, 0, false).unwrap().blocks_per_cu, 28);
        // 20 KiB of LDS (16 static + 4 dynamic): 3 blocks.
        assert_eq!(occupancy(&kernel(16, 16, 16384), &d, 64, 4096, false).unwrap().blocks_per_cu, 3);
        // Potential block size: the whole CU (2048 threads) is past the 1024 limit: 1024.
        let p = occupancy(&kernel(32, 16, 0), &d, 0, 0, true).unwrap();
        assert_eq!((p.best_block, p.grid), (1024, 2 * 110));
        // Errors and limits.
        assert_eq!(occupancy(&kernel(32, 16, 0), &d, 0, 0, false), Err(hipError_t::hipErrorInvalidValue));
        assert_eq!(occupancy(&kernel(32, 16, 0), &d, 2048, 0, false).unwrap().blocks_per_cu, 0);
        assert_eq!(occupancy(&kernel(1024, 16, 0), &d, 64, 0, false), Err(hipError_t::hipErrorUnknown));
    }
}
