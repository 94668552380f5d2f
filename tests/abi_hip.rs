//! C ABI checks of `src/abi/types.rs` with a C compiler (`$CC`, default `cc`):
//! - the legacy `hipDeviceProp_tR0000` against AMD's ROCm 5.2 `hipDeviceProp_t`
//!   (`/usr/include/hip/hip_runtime_api.h`, Debian `libamdhip64-dev`), size and every field;
//! - `hipError_t`, `hipMemcpyKind` and the flag macros against the values of the 5.2 header
//!   where 5.2 has the name (except `hipIpcMemLazyEnablePeerAccess`, 0 → 1 in ROCm 6.0);
//! - every struct of our generated `include/hip/hip_runtime_api.h` against the Rust layout,
//!   and `hipDeviceProp_tR0600` against AMD's ROCm 6/7 size (1472, gcc on AMD's definition).

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use amdhip64::abi::types::*;

const AMD_52_HEADER: &str = "/usr/include/hip/hip_runtime_api.h";
const AMD_52_DRIVER_TYPES: &str = "/usr/include/hip/driver_types.h";

macro_rules! offsets {
    ($ty:ty; $($f:ident),* $(,)?) => {
        vec![$( (stringify!($f), offset_of!($ty, $f)) ),*]
    };
}

fn r0000_fields() -> Vec<(&'static str, usize)> {
    offsets!(hipDeviceProp_tR0000;
        name,
        totalGlobalMem,
        sharedMemPerBlock,
        regsPerBlock,
        warpSize,
        maxThreadsPerBlock,
        maxThreadsDim,
        maxGridSize,
        clockRate,
        memoryClockRate,
        memoryBusWidth,
        totalConstMem,
        major,
        minor,
        multiProcessorCount,
        l2CacheSize,
        maxThreadsPerMultiProcessor,
        computeMode,
        clockInstructionRate,
        arch,
        concurrentKernels,
        pciDomainID,
        pciBusID,
        pciDeviceID,
        maxSharedMemoryPerMultiProcessor,
        isMultiGpuBoard,
        canMapHostMemory,
        gcnArch,
        gcnArchName,
        integrated,
        cooperativeLaunch,
        cooperativeMultiDeviceLaunch,
        maxTexture1DLinear,
        maxTexture1D,
        maxTexture2D,
        maxTexture3D,
        hdpMemFlushCntl,
        hdpRegFlushCntl,
        memPitch,
        textureAlignment,
        texturePitchAlignment,
        kernelExecTimeoutEnabled,
        ECCEnabled,
        tccDriver,
        cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem,
        isLargeBar,
        asicRevision,
        managedMemory,
        directManagedMemAccessFromHost,
        concurrentManagedAccess,
        pageableMemoryAccess,
        pageableMemoryAccessUsesHostPageTables
    )
}

fn r0600_fields() -> Vec<(&'static str, usize)> {
    offsets!(hipDeviceProp_tR0600;
        name,
        uuid,
        luid,
        luidDeviceNodeMask,
        totalGlobalMem,
        sharedMemPerBlock,
        regsPerBlock,
        warpSize,
        memPitch,
        maxThreadsPerBlock,
        maxThreadsDim,
        maxGridSize,
        clockRate,
        totalConstMem,
        major,
        minor,
        textureAlignment,
        texturePitchAlignment,
        deviceOverlap,
        multiProcessorCount,
        kernelExecTimeoutEnabled,
        integrated,
        canMapHostMemory,
        computeMode,
        maxTexture1D,
        maxTexture1DMipmap,
        maxTexture1DLinear,
        maxTexture2D,
        maxTexture2DMipmap,
        maxTexture2DLinear,
        maxTexture2DGather,
        maxTexture3D,
        maxTexture3DAlt,
        maxTextureCubemap,
        maxTexture1DLayered,
        maxTexture2DLayered,
        maxTextureCubemapLayered,
        maxSurface1D,
        maxSurface2D,
        maxSurface3D,
        maxSurface1DLayered,
        maxSurface2DLayered,
        maxSurfaceCubemap,
        maxSurfaceCubemapLayered,
        surfaceAlignment,
        concurrentKernels,
        ECCEnabled,
        pciBusID,
        pciDeviceID,
        pciDomainID,
        tccDriver,
        asyncEngineCount,
        unifiedAddressing,
        memoryClockRate,
        memoryBusWidth,
        l2CacheSize,
        persistingL2CacheMaxSize,
        maxThreadsPerMultiProcessor,
        streamPrioritiesSupported,
        globalL1CacheSupported,
        localL1CacheSupported,
        sharedMemPerMultiprocessor,
        regsPerMultiprocessor,
        managedMemory,
        isMultiGpuBoard,
        multiGpuBoardGroupID,
        hostNativeAtomicSupported,
        singleToDoublePrecisionPerfRatio,
        pageableMemoryAccess,
        concurrentManagedAccess,
        computePreemptionSupported,
        canUseHostPointerForRegisteredMem,
        cooperativeLaunch,
        cooperativeMultiDeviceLaunch,
        sharedMemPerBlockOptin,
        pageableMemoryAccessUsesHostPageTables,
        directManagedMemAccessFromHost,
        maxBlocksPerMultiProcessor,
        accessPolicyMaxWindowSize,
        reservedSharedMemPerBlock,
        hostRegisterSupported,
        sparseHipArraySupported,
        hostRegisterReadOnlySupported,
        timelineSemaphoreInteropSupported,
        memoryPoolsSupported,
        gpuDirectRDMASupported,
        gpuDirectRDMAFlushWritesOptions,
        gpuDirectRDMAWritesOrdering,
        memoryPoolSupportedHandleTypes,
        deferredMappingHipArraySupported,
        ipcEventSupported,
        clusterLaunch,
        unifiedFunctionPointers,
        reserved,
        hipReserved,
        gcnArchName,
        maxSharedMemoryPerMultiProcessor,
        clockInstructionRate,
        arch,
        hdpMemFlushCntl,
        hdpRegFlushCntl,
        cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem,
        isLargeBar,
        asicRevision
    )
}

/// Compiles `source` with `args` and runs it; returns its `name value` output lines.
fn run_c(tag: &str, source: &str, args: &[&str]) -> BTreeMap<String, i64> {
    let dir: PathBuf = std::env::temp_dir().join(format!("hipkfd-abi-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(&c, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(args)
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(out.status.success(), "{cc} failed for {tag}:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{tag} probe failed");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// (tag, C type name, [(field, Rust offset)]) of one struct to probe.
type Probe<'a> = (&'a str, &'a str, Vec<(&'a str, usize)>);

/// A C program printing `tag.sizeof N` and `tag.field OFFSET` for each probe.
fn layout_probe(types: &[Probe]) -> String {
    let mut s =
        String::from("#include <stddef.h>\n#include <stdio.h>\n#include <hip/hip_runtime_api.h>\nint main(void) {\n");
    for (tag, cty, fields) in types {
        s += &format!("  printf(\"{tag}.sizeof %zu\\n\", sizeof({cty}));\n");
        for (f, _) in fields {
            s += &format!("  printf(\"{tag}.{f} %zu\\n\", offsetof({cty}, {f}));\n");
        }
    }
    s + "  return 0;\n}\n"
}

fn check_layouts(got: &BTreeMap<String, i64>, types: &[Probe], sizes: &[usize]) {
    for ((tag, _, fields), size) in types.iter().zip(sizes) {
        assert_eq!(got[&format!("{tag}.sizeof")] as usize, *size, "sizeof {tag}");
        for (f, off) in fields {
            assert_eq!(got[&format!("{tag}.{f}")] as usize, *off, "offsetof({tag}, {f})");
        }
    }
}

fn amd52() -> String {
    assert!(Path::new(AMD_52_HEADER).exists(), "{AMD_52_HEADER} missing: install Debian package libamdhip64-dev");
    std::fs::read_to_string(AMD_52_HEADER).unwrap() + &std::fs::read_to_string(AMD_52_DRIVER_TYPES).unwrap_or_default()
}

#[test]
fn r0000_matches_rocm52_hipdeviceprop() {
    amd52();
    let types = [("p", "hipDeviceProp_t", r0000_fields())];
    let got = run_c("r0000", &layout_probe(&types), &["-D__HIP_PLATFORM_AMD__"]);
    check_layouts(&got, &types, &[size_of::<hipDeviceProp_tR0000>()]);
    assert_eq!(size_of::<hipDeviceProp_tR0000>(), 792);
}

#[test]
fn our_header_matches_rust_layouts() {
    let inc = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let types = [
        ("prop", "hipDeviceProp_t", r0600_fields()),
        (
            "attr",
            "hipPointerAttribute_t",
            vec![
                ("type", offset_of!(hipPointerAttribute_t, r#type)),
                ("device", offset_of!(hipPointerAttribute_t, device)),
                ("devicePointer", offset_of!(hipPointerAttribute_t, devicePointer)),
                ("hostPointer", offset_of!(hipPointerAttribute_t, hostPointer)),
                ("isManaged", offset_of!(hipPointerAttribute_t, isManaged)),
                ("allocationFlags", offset_of!(hipPointerAttribute_t, allocationFlags)),
            ],
        ),
        ("uuid", "hipUUID", vec![("bytes", offset_of!(hipUUID, bytes))]),
        ("ipcmem", "hipIpcMemHandle_t", vec![("reserved", offset_of!(hipIpcMemHandle_t, reserved))]),
        ("ipcev", "hipIpcEventHandle_t", vec![("reserved", offset_of!(hipIpcEventHandle_t, reserved))]),
        ("arch", "hipDeviceArch_t", vec![]),
        ("err", "hipError_t", vec![]),
        ("kind", "hipMemcpyKind", vec![]),
        ("mtype", "hipMemoryType", vec![]),
        ("dattr", "hipDeviceAttribute_t", vec![]),
        ("stream", "hipStream_t", vec![]),
        ("event", "hipEvent_t", vec![]),
        ("dptr", "hipDeviceptr_t", vec![]),
    ];
    let sizes = [
        size_of::<hipDeviceProp_tR0600>(),
        size_of::<hipPointerAttribute_t>(),
        size_of::<hipUUID>(),
        size_of::<hipIpcMemHandle_t>(),
        size_of::<hipIpcEventHandle_t>(),
        size_of::<hipDeviceArch_t>(),
        size_of::<hipError_t>(),
        size_of::<hipMemcpyKind>(),
        size_of::<hipMemoryType>(),
        size_of::<hipDeviceAttribute_t>(),
        size_of::<hipStream_t>(),
        size_of::<hipEvent_t>(),
        size_of::<hipDeviceptr_t>(),
    ];
    let got = run_c("ours", &layout_probe(&types), &["-std=c99", "-I", inc]);
    check_layouts(&got, &types, &sizes);
    // AMD's ROCm 6.0+ hipDeviceProp_tR0600 and the reference §B.3/§B.2 sizes.
    assert_eq!(got["prop.sizeof"], 1472);
    assert_eq!(got["attr.sizeof"], 32);
    assert_eq!(got["ipcmem.sizeof"], 64);
    assert_eq!(got["ipcev.sizeof"], 64);
    assert_eq!(got["uuid.sizeof"], 16);
    assert_eq!(got["arch.sizeof"], 4);
}

/// `hipFuncAttributes` and `dim3` (module / execution-control API): our header, the Rust layout
/// and AMD's ROCm 5.2 header agree (the layout is unchanged through ROCm 7).
#[test]
fn module_types_match_rust_and_rocm52() {
    let f = |name| -> usize {
        match name {
            "binaryVersion" => offset_of!(hipFuncAttributes, binaryVersion),
            "cacheModeCA" => offset_of!(hipFuncAttributes, cacheModeCA),
            "constSizeBytes" => offset_of!(hipFuncAttributes, constSizeBytes),
            "localSizeBytes" => offset_of!(hipFuncAttributes, localSizeBytes),
            "maxDynamicSharedSizeBytes" => offset_of!(hipFuncAttributes, maxDynamicSharedSizeBytes),
            "maxThreadsPerBlock" => offset_of!(hipFuncAttributes, maxThreadsPerBlock),
            "numRegs" => offset_of!(hipFuncAttributes, numRegs),
            "preferredShmemCarveout" => offset_of!(hipFuncAttributes, preferredShmemCarveout),
            "ptxVersion" => offset_of!(hipFuncAttributes, ptxVersion),
            _ => offset_of!(hipFuncAttributes, sharedSizeBytes),
        }
    };
    let names = [
        "binaryVersion",
        "cacheModeCA",
        "constSizeBytes",
        "localSizeBytes",
        "maxDynamicSharedSizeBytes",
        "maxThreadsPerBlock",
        "numRegs",
        "preferredShmemCarveout",
        "ptxVersion",
        "sharedSizeBytes",
    ];
    let types = [
        ("fattr", "hipFuncAttributes", names.iter().map(|n| (*n, f(n))).collect()),
        ("dim3", "dim3", vec![("x", 0), ("y", 4), ("z", 8)]),
        ("fn", "hipFunction_t", vec![]),
        ("mod", "hipModule_t", vec![]),
    ];
    let sizes = [size_of::<hipFuncAttributes>(), size_of::<dim3>(), 8, 8];
    let inc = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    check_layouts(&run_c("module-ours", &layout_probe(&types), &["-std=c99", "-I", inc]), &types, &sizes);
    amd52();
    check_layouts(&run_c("module-amd52", &layout_probe(&types), &["-D__HIP_PLATFORM_AMD__"]), &types, &sizes);
    assert_eq!(size_of::<hipFuncAttributes>(), 56);
}

#[test]
fn hipdevicearch_bit_order_matches_c_bitfields() {
    let inc = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let mut s = String::from(
        "#include <stdio.h>\n#include <string.h>\n#include <hip/hip_runtime_api.h>\nint main(void) {\n  hipDeviceArch_t a; unsigned u;\n",
    );
    for f in hipDeviceArch_t::FIELDS {
        s += &format!("  memset(&a, 0, sizeof a); a.{f} = 1; memcpy(&u, &a, 4); printf(\"{f} %u\\n\", u);\n");
    }
    s += "  return 0;\n}\n";
    let got = run_c("arch", &s, &["-I", inc]);
    for f in hipDeviceArch_t::FIELDS {
        assert_eq!(got[f] as u32, hipDeviceArch_t::with(&[f]).bits, "{f}");
    }
}

#[test]
fn values_shared_with_rocm52_are_unchanged() {
    let text = amd52();
    let ident = |c: Option<char>| matches!(c, Some(c) if c.is_alphanumeric() || c == '_');
    let has = |n: &str| {
        text.match_indices(n)
            .any(|(i, _)| !ident(text[..i].chars().last()) && !ident(text[i + n.len()..].chars().next()))
    };
    let mut names: Vec<(String, i64)> = Vec::new();
    for (n, v) in hipError_t::ENUMERATORS {
        names.push((n.to_string(), v.0 as i64));
    }
    for (n, v) in hipMemcpyKind::ENUMERATORS {
        names.push((n.to_string(), v.0 as i64));
    }
    for (n, _, v) in C_DEFINES {
        // Changed since 5.2: hipIpcMemLazyEnablePeerAccess 0 → 0x01 (ROCm 6.0 ABI break,
        // reference §0 item 1); hipDeviceLmemResizeToMax 0x16 → 0x10 (CUDA's value).
        const CHANGED: [&str; 2] = ["hipIpcMemLazyEnablePeerAccess", "hipDeviceLmemResizeToMax"];
        if !CHANGED.contains(n) && !n.starts_with("HIP_VERSION") {
            names.push((n.to_string(), *v));
        }
    }
    names.retain(|(n, _)| n != "hipErrorTbd" && has(n));
    assert!(names.len() > 60, "only {} shared names found", names.len());
    let mut s = String::from("#include <stdio.h>\n#include <hip/hip_runtime_api.h>\nint main(void) {\n");
    for (n, _) in &names {
        s += &format!("  printf(\"{n} %lld\\n\", (long long)({n}));\n");
    }
    s += "  return 0;\n}\n";
    let got = run_c("values52", &s, &["-D__HIP_PLATFORM_AMD__"]);
    let bad: Vec<String> = names
        .iter()
        .filter(|(n, v)| got[n] != *v)
        .map(|(n, v)| format!("{n}: ROCm 5.2 {} vs ours {v}", got[n]))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}
