//! C ABI types, enums and constants of the HIP runtime API, as ROCm 7 defines them.
//!
//! Every item keeps AMD's name, struct tag and value. Sources (read for facts, nothing copied):
//! AMD's newest `hip/hip_runtime_api.h` and `hip/driver_types.h` (`ROCm/rocm-systems`
//! `projects/hip/include/hip/`, 2025-26), cross-checked against the ROCm 6.3 header
//! (`ROCm/HIP` `include/hip/hip_runtime_api.h`, 2024-10) and, for the legacy
//! [`hipDeviceProp_tR0000`], the ROCm 5.2 header (Debian `libamdhip64-dev`).
//!
//! ## Enums
//! C enums that cross the ABI as *inputs* (`hipError_t` passed to `hipGetErrorName`,
//! `hipMemcpyKind`, `hipDeviceAttribute_t`...) may carry any `int`, so in Rust they are
//! `#[repr(transparent)]` newtypes over `c_int` with one associated constant per AMD enumerator
//! (aliases included): `hipError_t::hipErrorInvalidValue`, `hipError_t(1)`, `e.0`. A Rust enum
//! would be undefined behaviour for an out-of-range value from C.
//!
//! cbindgen does not see these newtypes (they are declared through a macro); the C text of each
//! one, `typedef enum NAME { ... } NAME;` with AMD's enumerators, is rendered from the same
//! tables by [`c_header_prelude`] and placed at the top of `include/hip/hip_runtime_api.h`
//! (see `tests/header.rs`).
//!
//! Layer `abi`: imports nothing of ours but the ABI itself.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_longlong, c_uint, c_ulonglong, c_void};
use std::fmt;
use std::fmt::Write as _;

// ---------------------------------------------------------------------------------------------
// Enum newtypes
// ---------------------------------------------------------------------------------------------

/// Declares a C enum as a transparent `c_int` newtype with one associated constant per
/// enumerator, plus the table [`c_header_prelude`] renders. Being a macro invocation, the
/// declaration is invisible to cbindgen, which emits only what the prelude provides.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub c_int);

        impl $name {
            $( $(#[$vmeta])* pub const $variant: $name = $name($value); )*

            /// Every enumerator in AMD's header order, aliases included: (C name, value).
            pub const ENUMERATORS: &'static [(&'static str, $name)] =
                &[ $( (stringify!($variant), $name::$variant), )* ];

            /// The C name of the first enumerator with this value (AMD's primary spelling),
            /// or `None` if the value is not an enumerator.
            pub fn name(self) -> Option<&'static str> {
                Self::ENUMERATORS.iter().find(|(_, v)| *v == self).map(|(n, _)| *n)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => write!(f, "{}({})", n, self.0),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }

        impl From<$name> for c_int {
            fn from(v: $name) -> c_int {
                v.0
            }
        }
    };
}
pub(crate) use c_enum;

c_enum! {
    /// `hipError_t`: the status every HIP API returns (`hip_runtime_api.h`, `typedef enum
    /// __HIP_NODISCARD hipError_t`). Numbers are CUDA's where CUDA has the error.
    /// `hipErrorTbd` is AMD's "next value" marker (1055 today); never hard-code it.
    pub struct hipError_t {
        /// Successful completion.
        hipSuccess = 0,
        /// One or more of the parameters passed to the API call is NULL or not in an acceptable range.
        hipErrorInvalidValue = 1,
        /// Out of memory.
        hipErrorOutOfMemory = 2,
        /// Deprecated alias of `hipErrorOutOfMemory`.
        hipErrorMemoryAllocation = 2,
        /// Not initialized.
        hipErrorNotInitialized = 3,
        /// Deprecated alias of `hipErrorNotInitialized`.
        hipErrorInitializationError = 3,
        hipErrorDeinitialized = 4,
        hipErrorProfilerDisabled = 5,
        hipErrorProfilerNotInitialized = 6,
        hipErrorProfilerAlreadyStarted = 7,
        hipErrorProfilerAlreadyStopped = 8,
        hipErrorInvalidConfiguration = 9,
        hipErrorInvalidPitchValue = 12,
        hipErrorInvalidSymbol = 13,
        hipErrorInvalidDevicePointer = 17,
        hipErrorInvalidMemcpyDirection = 21,
        hipErrorInsufficientDriver = 35,
        hipErrorMissingConfiguration = 52,
        hipErrorPriorLaunchFailure = 53,
        hipErrorInvalidDeviceFunction = 98,
        /// No device (hipGetDeviceCount found 0 devices).
        hipErrorNoDevice = 100,
        /// Device ordinal out of range.
        hipErrorInvalidDevice = 101,
        hipErrorInvalidImage = 200,
        hipErrorInvalidContext = 201,
        hipErrorContextAlreadyCurrent = 202,
        hipErrorMapFailed = 205,
        /// Deprecated alias of `hipErrorMapFailed`.
        hipErrorMapBufferObjectFailed = 205,
        hipErrorUnmapFailed = 206,
        hipErrorArrayIsMapped = 207,
        hipErrorAlreadyMapped = 208,
        hipErrorNoBinaryForGpu = 209,
        hipErrorAlreadyAcquired = 210,
        hipErrorNotMapped = 211,
        hipErrorNotMappedAsArray = 212,
        hipErrorNotMappedAsPointer = 213,
        hipErrorECCNotCorrectable = 214,
        hipErrorUnsupportedLimit = 215,
        hipErrorContextAlreadyInUse = 216,
        hipErrorPeerAccessUnsupported = 217,
        hipErrorInvalidKernelFile = 218,
        hipErrorInvalidGraphicsContext = 219,
        hipErrorInvalidSource = 300,
        hipErrorFileNotFound = 301,
        hipErrorSharedObjectSymbolNotFound = 302,
        hipErrorSharedObjectInitFailed = 303,
        hipErrorOperatingSystem = 304,
        /// Invalid handle (stream, event...).
        hipErrorInvalidHandle = 400,
        /// Deprecated alias of `hipErrorInvalidHandle`.
        hipErrorInvalidResourceHandle = 400,
        hipErrorIllegalState = 401,
        hipErrorNotFound = 500,
        /// Asynchronous work not yet complete (hipStreamQuery, hipEventQuery); not sticky.
        hipErrorNotReady = 600,
        hipErrorIllegalAddress = 700,
        hipErrorLaunchOutOfResources = 701,
        hipErrorLaunchTimeOut = 702,
        hipErrorPeerAccessAlreadyEnabled = 704,
        hipErrorPeerAccessNotEnabled = 705,
        hipErrorSetOnActiveProcess = 708,
        hipErrorContextIsDestroyed = 709,
        hipErrorAssert = 710,
        hipErrorHostMemoryAlreadyRegistered = 712,
        hipErrorHostMemoryNotRegistered = 713,
        hipErrorLaunchFailure = 719,
        hipErrorCooperativeLaunchTooLarge = 720,
        hipErrorNotSupported = 801,
        hipErrorStreamCaptureUnsupported = 900,
        hipErrorStreamCaptureInvalidated = 901,
        hipErrorStreamCaptureMerge = 902,
        hipErrorStreamCaptureUnmatched = 903,
        hipErrorStreamCaptureUnjoined = 904,
        hipErrorStreamCaptureIsolation = 905,
        hipErrorStreamCaptureImplicit = 906,
        hipErrorCapturedEvent = 907,
        hipErrorStreamCaptureWrongThread = 908,
        hipErrorGraphExecUpdateFailure = 910,
        hipErrorInvalidChannelDescriptor = 911,
        hipErrorInvalidTexture = 912,
        hipErrorInvalidResourceType = 914,
        hipErrorInvalidResourceConfiguration = 915,
        hipErrorStreamDetached = 916,
        hipErrorUnknown = 999,
        /// HSA runtime memory call returned an error.
        hipErrorRuntimeMemory = 1052,
        /// HSA runtime call other than memory returned an error.
        hipErrorRuntimeOther = 1053,
        hipErrorInvalidClusterSize = 1054,
        /// Marker: one past the last code (implicit value in AMD's header).
        hipErrorTbd = 1055,
    }
}

impl hipError_t {
    /// `true` for `hipSuccess`.
    pub fn is_success(self) -> bool {
        self == hipError_t::hipSuccess
    }
}

c_enum! {
    /// `hipDeviceAttribute_t` (`hip_runtime_api.h`), ROCm 6.0+ numbering (ROCm 5.x used a
    /// different order). CUDA-compatible attributes are 0..=9999, AMD-specific ones start at
    /// 10000. The `Unused` slots are former attributes whose numbers stay reserved.
    pub struct hipDeviceAttribute_t {
        hipDeviceAttributeCudaCompatibleBegin = 0,
        hipDeviceAttributeEccEnabled = 0,
        hipDeviceAttributeAccessPolicyMaxWindowSize = 1,
        hipDeviceAttributeAsyncEngineCount = 2,
        hipDeviceAttributeCanMapHostMemory = 3,
        hipDeviceAttributeCanUseHostPointerForRegisteredMem = 4,
        /// Peak clock frequency in kHz.
        hipDeviceAttributeClockRate = 5,
        hipDeviceAttributeComputeMode = 6,
        hipDeviceAttributeComputePreemptionSupported = 7,
        hipDeviceAttributeConcurrentKernels = 8,
        hipDeviceAttributeConcurrentManagedAccess = 9,
        hipDeviceAttributeCooperativeLaunch = 10,
        hipDeviceAttributeCooperativeMultiDeviceLaunch = 11,
        hipDeviceAttributeDeviceOverlap = 12,
        hipDeviceAttributeDirectManagedMemAccessFromHost = 13,
        hipDeviceAttributeGlobalL1CacheSupported = 14,
        hipDeviceAttributeHostNativeAtomicSupported = 15,
        hipDeviceAttributeIntegrated = 16,
        hipDeviceAttributeIsMultiGpuBoard = 17,
        hipDeviceAttributeKernelExecTimeout = 18,
        /// L2 cache size in bytes.
        hipDeviceAttributeL2CacheSize = 19,
        hipDeviceAttributeLocalL1CacheSupported = 20,
        hipDeviceAttributeLuid = 21,
        hipDeviceAttributeLuidDeviceNodeMask = 22,
        hipDeviceAttributeComputeCapabilityMajor = 23,
        hipDeviceAttributeManagedMemory = 24,
        hipDeviceAttributeMaxBlocksPerMultiProcessor = 25,
        hipDeviceAttributeMaxBlockDimX = 26,
        hipDeviceAttributeMaxBlockDimY = 27,
        hipDeviceAttributeMaxBlockDimZ = 28,
        hipDeviceAttributeMaxGridDimX = 29,
        hipDeviceAttributeMaxGridDimY = 30,
        hipDeviceAttributeMaxGridDimZ = 31,
        hipDeviceAttributeMaxSurface1D = 32,
        hipDeviceAttributeMaxSurface1DLayered = 33,
        hipDeviceAttributeMaxSurface2D = 34,
        hipDeviceAttributeMaxSurface2DLayered = 35,
        hipDeviceAttributeMaxSurface3D = 36,
        hipDeviceAttributeMaxSurfaceCubemap = 37,
        hipDeviceAttributeMaxSurfaceCubemapLayered = 38,
        hipDeviceAttributeMaxTexture1DWidth = 39,
        hipDeviceAttributeMaxTexture1DLayered = 40,
        hipDeviceAttributeMaxTexture1DLinear = 41,
        hipDeviceAttributeMaxTexture1DMipmap = 42,
        hipDeviceAttributeMaxTexture2DWidth = 43,
        hipDeviceAttributeMaxTexture2DHeight = 44,
        hipDeviceAttributeMaxTexture2DGather = 45,
        hipDeviceAttributeMaxTexture2DLayered = 46,
        hipDeviceAttributeMaxTexture2DLinear = 47,
        hipDeviceAttributeMaxTexture2DMipmap = 48,
        hipDeviceAttributeMaxTexture3DWidth = 49,
        hipDeviceAttributeMaxTexture3DHeight = 50,
        hipDeviceAttributeMaxTexture3DDepth = 51,
        hipDeviceAttributeMaxTexture3DAlt = 52,
        hipDeviceAttributeMaxTextureCubemap = 53,
        hipDeviceAttributeMaxTextureCubemapLayered = 54,
        hipDeviceAttributeMaxThreadsDim = 55,
        hipDeviceAttributeMaxThreadsPerBlock = 56,
        hipDeviceAttributeMaxThreadsPerMultiProcessor = 57,
        hipDeviceAttributeMaxPitch = 58,
        hipDeviceAttributeMemoryBusWidth = 59,
        /// Peak memory clock frequency in kHz.
        hipDeviceAttributeMemoryClockRate = 60,
        hipDeviceAttributeComputeCapabilityMinor = 61,
        hipDeviceAttributeMultiGpuBoardGroupID = 62,
        hipDeviceAttributeMultiprocessorCount = 63,
        /// Previously hipDeviceAttributeName.
        hipDeviceAttributeUnused1 = 64,
        hipDeviceAttributePageableMemoryAccess = 65,
        hipDeviceAttributePageableMemoryAccessUsesHostPageTables = 66,
        hipDeviceAttributePciBusId = 67,
        hipDeviceAttributePciDeviceId = 68,
        hipDeviceAttributePciDomainId = 69,
        /// Backward-compatible alias of `hipDeviceAttributePciDomainId`.
        hipDeviceAttributePciDomainID = 69,
        hipDeviceAttributePersistingL2CacheMaxSize = 70,
        hipDeviceAttributeMaxRegistersPerBlock = 71,
        hipDeviceAttributeMaxRegistersPerMultiprocessor = 72,
        hipDeviceAttributeReservedSharedMemPerBlock = 73,
        hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
        hipDeviceAttributeSharedMemPerBlockOptin = 75,
        hipDeviceAttributeSharedMemPerMultiprocessor = 76,
        hipDeviceAttributeSingleToDoublePrecisionPerfRatio = 77,
        hipDeviceAttributeStreamPrioritiesSupported = 78,
        hipDeviceAttributeSurfaceAlignment = 79,
        hipDeviceAttributeTccDriver = 80,
        hipDeviceAttributeTextureAlignment = 81,
        hipDeviceAttributeTexturePitchAlignment = 82,
        hipDeviceAttributeTotalConstantMemory = 83,
        hipDeviceAttributeTotalGlobalMem = 84,
        hipDeviceAttributeUnifiedAddressing = 85,
        /// Previously hipDeviceAttributeUuid.
        hipDeviceAttributeUnused2 = 86,
        hipDeviceAttributeWarpSize = 87,
        hipDeviceAttributeMemoryPoolsSupported = 88,
        hipDeviceAttributeVirtualMemoryManagementSupported = 89,
        hipDeviceAttributeHostRegisterSupported = 90,
        hipDeviceAttributeMemoryPoolSupportedHandleTypes = 91,
        hipDeviceAttributeHostNumaId = 92,
        hipDeviceAttributeDmaBufSupported = 93,
        hipDeviceAttributeGPUDirectRDMAWithHipVMMSupported = 94,
        hipDeviceAttributeHandleTypeFabricSupported = 95,
        hipDeviceAttributeCudaCompatibleEnd = 9999,
        hipDeviceAttributeAmdSpecificBegin = 10000,
        /// Frequency in kHz of the timer behind device-side `clock*`.
        hipDeviceAttributeClockInstructionRate = 10000,
        /// Previously hipDeviceAttributeArch.
        hipDeviceAttributeUnused3 = 10001,
        hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002,
        /// Previously hipDeviceAttributeGcnArch.
        hipDeviceAttributeUnused4 = 10003,
        /// Previously hipDeviceAttributeGcnArchName.
        hipDeviceAttributeUnused5 = 10004,
        hipDeviceAttributeHdpMemFlushCntl = 10005,
        hipDeviceAttributeHdpRegFlushCntl = 10006,
        hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc = 10007,
        hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim = 10008,
        hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim = 10009,
        hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem = 10010,
        hipDeviceAttributeIsLargeBar = 10011,
        hipDeviceAttributeAsicRevision = 10012,
        hipDeviceAttributeCanUseStreamWaitValue = 10013,
        hipDeviceAttributeImageSupport = 10014,
        hipDeviceAttributePhysicalMultiProcessorCount = 10015,
        hipDeviceAttributeFineGrainSupport = 10016,
        /// Constant wall-clock frequency in kHz.
        hipDeviceAttributeWallClockRate = 10017,
        hipDeviceAttributeNumberOfXccs = 10018,
        hipDeviceAttributeMaxAvailableVgprsPerThread = 10019,
        hipDeviceAttributePciChipId = 10020,
        hipDeviceAttributeExpertSchedMode = 10021,
        hipDeviceAttributeMaxDynDataPrefetchRegions = 10022,
        hipDeviceAttributeAmdSpecificEnd = 19999,
        hipDeviceAttributeVendorSpecificBegin = 20000,
    }
}

c_enum! {
    /// `hipMemcpyKind` (`driver_types.h`).
    pub struct hipMemcpyKind {
        hipMemcpyHostToHost = 0,
        hipMemcpyHostToDevice = 1,
        hipMemcpyDeviceToHost = 2,
        hipMemcpyDeviceToDevice = 3,
        /// Direction inferred from the pointers (unified virtual addressing).
        hipMemcpyDefault = 4,
        /// Device-to-device copy without compute units (AMD).
        hipMemcpyDeviceToDeviceNoCU = 1024,
    }
}

c_enum! {
    /// `hipDeviceP2PAttr` (`hip_runtime_api.h`): what `hipDeviceGetP2PAttribute` reports.
    pub struct hipDeviceP2PAttr {
        hipDevP2PAttrPerformanceRank = 0,
        hipDevP2PAttrAccessSupported = 1,
        hipDevP2PAttrNativeAtomicSupported = 2,
        hipDevP2PAttrHipArrayAccessSupported = 3,
    }
}

c_enum! {
    /// `hipMemoryType` (`hip_runtime_api.h`), ROCm 6.0+ values, which follow
    /// cudaMemoryType/CUmemorytype (ROCm 5.x had Host 0, Device 1, Array 2, Unified 3).
    pub struct hipMemoryType {
        /// Unregistered host memory.
        hipMemoryTypeUnregistered = 0,
        /// Physically located on the host.
        hipMemoryTypeHost = 1,
        /// Physically located on a device (see `hipPointerAttribute_t::device`).
        hipMemoryTypeDevice = 2,
        /// Managed memory, migrated by the unified memory system.
        hipMemoryTypeManaged = 3,
        /// Array memory on a device.
        hipMemoryTypeArray = 10,
        /// Unified address space.
        hipMemoryTypeUnified = 11,
    }
}

c_enum! {
    /// `hipArray_Format` (`driver_types.h`): an array element's channel type.
    pub struct hipArray_Format {
        HIP_AD_FORMAT_UNSIGNED_INT8 = 0x01,
        HIP_AD_FORMAT_UNSIGNED_INT16 = 0x02,
        HIP_AD_FORMAT_UNSIGNED_INT32 = 0x03,
        HIP_AD_FORMAT_SIGNED_INT8 = 0x08,
        HIP_AD_FORMAT_SIGNED_INT16 = 0x09,
        HIP_AD_FORMAT_SIGNED_INT32 = 0x0a,
        HIP_AD_FORMAT_HALF = 0x10,
        HIP_AD_FORMAT_FLOAT = 0x20,
    }
}

c_enum! {
    /// `hipFuncCache_t` (`hip_runtime_api.h`): L1/LDS split preference (`hipDeviceSetCacheConfig`).
    pub struct hipFuncCache_t {
        /// No preference (default).
        hipFuncCachePreferNone = 0,
        hipFuncCachePreferShared = 1,
        hipFuncCachePreferL1 = 2,
        hipFuncCachePreferEqual = 3,
    }
}

c_enum! {
    /// `hipMemoryAdvise` (`hip_runtime_api.h`): `hipMemAdvise` advice.
    pub struct hipMemoryAdvise {
        hipMemAdviseSetReadMostly = 1,
        hipMemAdviseUnsetReadMostly = 2,
        hipMemAdviseSetPreferredLocation = 3,
        hipMemAdviseUnsetPreferredLocation = 4,
        hipMemAdviseSetAccessedBy = 5,
        hipMemAdviseUnsetAccessedBy = 6,
        hipMemAdviseSetCoarseGrain = 100,
        hipMemAdviseUnsetCoarseGrain = 101,
    }
}

c_enum! {
    /// `hipSharedMemConfig` (`hip_runtime_api.h`): LDS bank width (`hipDeviceSetSharedMemConfig`).
    pub struct hipSharedMemConfig {
        hipSharedMemBankSizeDefault = 0,
        hipSharedMemBankSizeFourByte = 1,
        hipSharedMemBankSizeEightByte = 2,
    }
}

c_enum! {
    /// `hipMemRangeAttribute` (`hip_runtime_api.h`): what `hipMemRangeGetAttribute` answers.
    pub struct hipMemRangeAttribute {
        hipMemRangeAttributeReadMostly = 1,
        hipMemRangeAttributePreferredLocation = 2,
        hipMemRangeAttributeAccessedBy = 3,
        hipMemRangeAttributeLastPrefetchLocation = 4,
        hipMemRangeAttributeCoherencyMode = 100,
    }
}

c_enum! {
    /// `hipMemRangeCoherencyMode` (`hip_runtime_api.h`): what
    /// `hipMemRangeAttributeCoherencyMode` reads (`hipMemAdviseSet/UnsetCoarseGrain`).
    pub struct hipMemRangeCoherencyMode {
        hipMemRangeCoherencyModeFineGrain = 0,
        hipMemRangeCoherencyModeCoarseGrain = 1,
        /// The range mixes fine- and coarse-grained pages.
        hipMemRangeCoherencyModeIndeterminate = 2,
    }
}

c_enum! {
    /// `hipLimit_t` (`hip_runtime_api.h`, ROCm 7 values): `hipDeviceGetLimit`/`hipDeviceSetLimit`.
    pub struct hipLimit_t {
        /// Per-thread stack size, bytes.
        hipLimitStackSize = 0x0,
        /// Device `printf` FIFO size, bytes (not supported on AMD).
        hipLimitPrintfFifoSize = 0x01,
        /// Device `malloc` heap size, bytes.
        hipLimitMallocHeapSize = 0x02,
        /// Scratch limits (MI300+; not supported by hipkfd).
        hipExtLimitScratchMin = 0x1000,
        hipExtLimitScratchMax = 0x1001,
        hipExtLimitScratchCurrent = 0x1002,
        /// One past the last limit.
        hipLimitRange = 0x1003,
    }
}

c_enum! {
    /// `hipStreamBatchMemOpType` (`hip_runtime_api.h`, ROCm 6.4+): the operation of one element
    /// of a `hipStreamBatchMemOp` batch ([`hipStreamBatchMemOpParams`]).
    pub struct hipStreamBatchMemOpType {
        /// Wait on a 32-bit word (`waitValue`, as `hipStreamWaitValue32`).
        hipStreamMemOpWaitValue32 = 0x1,
        /// Write a 32-bit word (`writeValue`, as `hipStreamWriteValue32`).
        hipStreamMemOpWriteValue32 = 0x2,
        /// Wait on a 64-bit word.
        hipStreamMemOpWaitValue64 = 0x4,
        /// Write a 64-bit word.
        hipStreamMemOpWriteValue64 = 0x5,
        /// A memory barrier (`memoryBarrier`; clr refuses it).
        hipStreamMemOpBarrier = 0x6,
        /// Flush remote writes (`flushRemoteWrites`; clr refuses it).
        hipStreamMemOpFlushRemoteWrites = 0x3,
    }
}

c_enum! {
    /// `hipMemRangeHandleType` (`hip_runtime_api.h`, ROCm 6.5+): what
    /// `hipMemGetHandleForAddressRange` returns.
    pub struct hipMemRangeHandleType {
        /// A dma-buf file descriptor (`int`).
        hipMemRangeHandleTypeDmaBufFd = 1,
        hipMemRangeHandleTypeMax = 0x7fffffff,
    }
}

c_enum! {
    /// `hipDriverProcAddressQueryResult` (`hip_runtime_api.h`): `hipGetProcAddress`'s
    /// `symbolStatus`.
    pub struct hipDriverProcAddressQueryResult {
        HIP_GET_PROC_ADDRESS_SUCCESS = 0,
        HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
        HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
    }
}

c_enum! {
    /// `hipMemPoolAttr` (`hip_runtime_api.h`): the three reuse flags are `int`, the rest
    /// `uint64_t`.
    pub struct hipMemPoolAttr {
        hipMemPoolReuseFollowEventDependencies = 0x1,
        hipMemPoolReuseAllowOpportunistic = 0x2,
        hipMemPoolReuseAllowInternalDependencies = 0x3,
        hipMemPoolAttrReleaseThreshold = 0x4,
        hipMemPoolAttrReservedMemCurrent = 0x5,
        hipMemPoolAttrReservedMemHigh = 0x6,
        hipMemPoolAttrUsedMemCurrent = 0x7,
        hipMemPoolAttrUsedMemHigh = 0x8,
    }
}

c_enum! {
    /// `hipDriverEntryPointQueryResult` (`hip_runtime_api.h`, ROCm 7.1): `hipGetDriverEntryPoint`'s
    /// `driverStatus` (AMD's spelling of "Sufficent").
    pub struct hipDriverEntryPointQueryResult {
        hipDriverEntryPointSuccess = 0,
        hipDriverEntryPointSymbolNotFound = 1,
        hipDriverEntryPointVersionNotSufficent = 2,
    }
}

c_enum! {
    /// `hipPointer_attribute` (`driver_types.h`, CUDA's `CUpointer_attribute` values): what
    /// `hipPointerGetAttribute` answers.
    pub struct hipPointer_attribute {
        HIP_POINTER_ATTRIBUTE_CONTEXT = 1,
        HIP_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
        HIP_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
        HIP_POINTER_ATTRIBUTE_HOST_POINTER = 4,
        HIP_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
        HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
        HIP_POINTER_ATTRIBUTE_BUFFER_ID = 7,
        HIP_POINTER_ATTRIBUTE_IS_MANAGED = 8,
        HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
        HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE = 10,
        HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
        HIP_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
        HIP_POINTER_ATTRIBUTE_MAPPED = 13,
        HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
        HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
        HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
        HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
    }
}

// ---------------------------------------------------------------------------------------------
// Opaque handles and scalar typedefs
// ---------------------------------------------------------------------------------------------

/// Opaque stream object behind [`hipStream_t`] (`typedef struct ihipStream_t* hipStream_t;`).
/// The runtime casts its own stream objects to and from this pointer type.
pub struct ihipStream_t {
    _opaque: [u8; 0],
}

/// Opaque event object behind [`hipEvent_t`] (`typedef struct ihipEvent_t* hipEvent_t;`).
pub struct ihipEvent_t {
    _opaque: [u8; 0],
}

/// Opaque context object behind [`hipCtx_t`] (`typedef struct ihipCtx_t* hipCtx_t;`).
pub struct ihipCtx_t {
    _opaque: [u8; 0],
}

/// Opaque array object behind [`hipArray_t`] (`typedef struct hipArray* hipArray_t;`): opaque in
/// ROCm 7's headers; hipkfd's handle points to clr's layout (src/mem/array.rs, `ArrayObj`).
pub struct hipArray {
    _opaque: [u8; 0],
}

/// Array handle.
pub type hipArray_t = *mut hipArray;
/// `typedef const struct hipArray* hipArray_const_t;` (the texture binding calls).
pub type hipArray_const_t = *const hipArray;
/// Opaque pool object behind [`hipMemPool_t`] (`typedef struct ihipMemPoolHandle_t*
/// hipMemPool_t;`).
pub struct ihipMemPoolHandle_t {
    _opaque: [u8; 0],
}

/// Memory pool handle (`hipMallocAsync` and friends).
pub type hipMemPool_t = *mut ihipMemPoolHandle_t;

/// Stream handle; null is the legacy default (null) stream.
pub type hipStream_t = *mut ihipStream_t;
/// Event handle.
pub type hipEvent_t = *mut ihipEvent_t;
/// Context handle (a device, in AMD's implementation).
pub type hipCtx_t = *mut ihipCtx_t;
/// Device pointer (`typedef void* hipDeviceptr_t;`, `driver_types.h`).
pub type hipDeviceptr_t = *mut c_void;
/// Device ordinal (`typedef int hipDevice_t;`).
pub type hipDevice_t = c_int;
/// Host function run in stream order (`hipLaunchHostFunc`):
/// `typedef void (*hipHostFn_t)(void* userData);`.
pub type hipHostFn_t = Option<unsafe extern "C" fn(userData: *mut c_void)>;
/// Stream callback (`hipStreamAddCallback`):
/// `typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void* userData);`.
pub type hipStreamCallback_t =
    Option<unsafe extern "C" fn(stream: hipStream_t, status: hipError_t, userData: *mut c_void)>;

/// Opaque module object behind [`hipModule_t`] (`typedef struct ihipModule_t* hipModule_t;`).
pub struct ihipModule_t {
    _opaque: [u8; 0],
}

/// Opaque kernel object behind [`hipFunction_t`]
/// (`typedef struct ihipModuleSymbol_t* hipFunction_t;`).
pub struct ihipModuleSymbol_t {
    _opaque: [u8; 0],
}

/// A loaded code object (`hipModuleLoad`, `hipModuleLoadData`).
pub type hipModule_t = *mut ihipModule_t;
/// A kernel of a module (`hipModuleGetFunction`) or of the program (`hipGetFuncBySymbol`).
pub type hipFunction_t = *mut ihipModuleSymbol_t;

/// Opaque link object behind [`hipLinkState_t`] (`typedef struct ihipLinkState_t* hipLinkState_t;`).
pub struct ihipLinkState_t {
    _opaque: [u8; 0],
}

/// A link in progress (`hipLinkCreate` .. `hipLinkDestroy`).
pub type hipLinkState_t = *mut ihipLinkState_t;

/// Opaque library object behind [`hipLibrary_t`] (`typedef struct ihipLibrary_t* hipLibrary_t;`).
pub struct ihipLibrary_t {
    _opaque: [u8; 0],
}

/// A code object loaded as a library (`hipLibraryLoadData`, `hipLibraryLoadFromFile`).
pub type hipLibrary_t = *mut ihipLibrary_t;

/// Opaque kernel object behind [`hipKernel_t`] (`typedef struct ihipKernel_t* hipKernel_t;`).
pub struct ihipKernel_t {
    _opaque: [u8; 0],
}

/// A kernel of a library (`hipLibraryGetKernel`); AMD's value is the kernel's `hipFunction_t`,
/// so the module launch and attribute calls take it too.
pub type hipKernel_t = *mut ihipKernel_t;

/// `dim3`: grid or block dimensions (`hip_runtime_api.h`; C++ gives it a constructor
/// defaulting each to 1).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hipFuncAttributes`: a kernel's static attributes (`hipFuncGetAttributes`), ROCm 5.2..7 layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipFuncAttributes {
    pub binaryVersion: c_int,
    pub cacheModeCA: c_int,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxDynamicSharedSizeBytes: c_int,
    pub maxThreadsPerBlock: c_int,
    pub numRegs: c_int,
    pub preferredShmemCarveout: c_int,
    pub ptxVersion: c_int,
    pub sharedSizeBytes: usize,
}

// Pointer-valued macros; cbindgen cannot emit them, so the prelude does.
macro_rules! hidden_from_cbindgen {
    ($($item:item)*) => { $($item)* };
}
hidden_from_cbindgen! {
    /// `#define hipStreamLegacy ((hipStream_t)1)`: the legacy default stream.
    pub const hipStreamLegacy: hipStream_t = 1 as hipStream_t;
    /// `#define hipStreamPerThread ((hipStream_t)2)`: the per-thread default stream.
    pub const hipStreamPerThread: hipStream_t = 2 as hipStream_t;

    /// `#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)`: `extra[]` key of the packed
    /// kernel-argument buffer (`hipModuleLaunchKernel`).
    #[allow(clippy::manual_dangling_ptr)] // a key value, never dereferenced
    pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: *mut c_void = 1 as *mut c_void;
    /// `#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)`: `extra[]` key of its size (`size_t*`).
    #[allow(clippy::manual_dangling_ptr)] // a key value, never dereferenced
    pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: *mut c_void = 2 as *mut c_void;
    /// `#define HIP_LAUNCH_PARAM_END ((void*)0x03)`: end of `extra[]`.
    #[allow(clippy::manual_dangling_ptr)] // a key value, never dereferenced
    pub const HIP_LAUNCH_PARAM_END: *mut c_void = 3 as *mut c_void;

    /// `hipDeviceArch_t`: architectural feature flags, 17 one-bit `unsigned` bitfields packed
    /// into one 32-bit word (bit 0 = `hasGlobalInt32Atomics` ... bit 16 =
    /// `hasDynamicParallelism`, in the order of [`hipDeviceArch_t::FIELDS`]). The C header
    /// declares the bitfields (rendered by [`c_header_prelude`]).
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct hipDeviceArch_t {
        /// The packed bitfields.
        pub bits: u32,
    }
}

impl hipDeviceArch_t {
    /// Bitfield names in declaration (= bit) order, `hip_runtime_api.h`.
    pub const FIELDS: [&'static str; 17] = [
        "hasGlobalInt32Atomics",
        "hasGlobalFloatAtomicExch",
        "hasSharedInt32Atomics",
        "hasSharedFloatAtomicExch",
        "hasFloatAtomicAdd",
        "hasGlobalInt64Atomics",
        "hasSharedInt64Atomics",
        "hasDoubles",
        "hasWarpVote",
        "hasWarpBallot",
        "hasWarpShuffle",
        "hasFunnelShift",
        "hasThreadFenceSystem",
        "hasSyncThreadsExt",
        "hasSurfaceFuncs",
        "has3dGrid",
        "hasDynamicParallelism",
    ];

    /// The flags with the given bitfield names set; unknown names are ignored.
    pub fn with(names: &[&str]) -> Self {
        let mut bits = 0;
        for n in names {
            if let Some(i) = Self::FIELDS.iter().position(|f| f == n) {
                bits |= 1 << i;
            }
        }
        hipDeviceArch_t { bits }
    }

    /// Value of the bitfield `name` (false for unknown names).
    pub fn get(self, name: &str) -> bool {
        Self::FIELDS.iter().position(|f| *f == name).is_some_and(|i| self.bits & (1 << i) != 0)
    }
}

// ---------------------------------------------------------------------------------------------
// Structs
// ---------------------------------------------------------------------------------------------

/// `typedef struct hipUUID_t { char bytes[16]; } hipUUID;` — 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipUUID_t {
    pub bytes: [c_char; 16],
}
/// See [`hipUUID_t`].
pub type hipUUID = hipUUID_t;

/// Size in bytes of IPC handles (`#define HIP_IPC_HANDLE_SIZE 64`).
pub const HIP_IPC_HANDLE_SIZE: usize = 64;

/// `typedef struct hipIpcMemHandle_st { char reserved[64]; } hipIpcMemHandle_t;` — opaque
/// 64-byte memory IPC handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hipIpcMemHandle_st {
    pub reserved: [c_char; HIP_IPC_HANDLE_SIZE],
}
/// See [`hipIpcMemHandle_st`].
pub type hipIpcMemHandle_t = hipIpcMemHandle_st;

/// `typedef struct hipIpcEventHandle_st { char reserved[64]; } hipIpcEventHandle_t;` — opaque
/// 64-byte event IPC handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hipIpcEventHandle_st {
    pub reserved: [c_char; HIP_IPC_HANDLE_SIZE],
}
/// See [`hipIpcEventHandle_st`].
pub type hipIpcEventHandle_t = hipIpcEventHandle_st;

impl Default for hipIpcMemHandle_st {
    fn default() -> Self {
        hipIpcMemHandle_st { reserved: [0; HIP_IPC_HANDLE_SIZE] }
    }
}
impl Default for hipIpcEventHandle_st {
    fn default() -> Self {
        hipIpcEventHandle_st { reserved: [0; HIP_IPC_HANDLE_SIZE] }
    }
}

/// `typedef struct hipPointerAttribute_t {...} hipPointerAttribute_t;` (ROCm 6.0+ layout:
/// the first member is `type`; ROCm 5.x called it `memoryType` with other values). 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPointerAttribute_t {
    /// Where the memory lives (`enum hipMemoryType type;`).
    pub r#type: hipMemoryType,
    /// Device ordinal owning the memory.
    pub device: c_int,
    /// Device-side address of the allocation.
    pub devicePointer: *mut c_void,
    /// Host-side address, or null if not host-accessible.
    pub hostPointer: *mut c_void,
    /// 1 for managed memory.
    pub isManaged: c_int,
    /// Flags given at allocation time.
    pub allocationFlags: c_uint,
}

/// `typedef struct hipMemPoolProps {...}` (`hip_runtime_api.h`): allocType@0, handleTypes@4,
/// location@8, win32SecurityAttributes@16, maxSize@24, reserved[56]@32. 88 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemPoolProps {
    /// Must be `hipMemAllocationTypePinned`.
    pub allocType: hipMemAllocationType,
    /// Handle types the pool may be exported as (`hipMemPoolExportToShareableHandle`:
    /// `hipMemHandleTypePosixFileDescriptor`).
    pub handleTypes: hipMemAllocationHandleType,
    /// Must be a device.
    pub location: hipMemLocation,
    pub win32SecurityAttributes: *mut c_void,
    /// Largest pool size, bytes (0: no limit).
    pub maxSize: usize,
    pub reserved: [u8; 56],
}

/// `hipMemPoolPtrExportData`: 64 opaque bytes describing one pool allocation for another
/// process (hipkfd: the allocation's IPC handle, src/share/ipc.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hipMemPoolPtrExportData {
    pub reserved: [u8; 64],
}

/// `typedef struct hipPitchedPtr { void* ptr; size_t pitch; size_t xsize; size_t ysize; }`
/// (`driver_types.h`): a pitched allocation; `pitch` and `xsize` in bytes, `ysize` rows. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `typedef struct hipPos { size_t x; size_t y; size_t z; }` (`driver_types.h`): x in bytes for
/// linear memory. 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `typedef struct hipMemcpy3DParms {...}` (`driver_types.h`): srcArray@0, srcPos@8, srcPtr@32,
/// dstArray@64, dstPos@72, dstPtr@96, extent@128, kind@152. 160 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemcpy3DParms {
    pub srcArray: hipArray_t,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub dstArray: hipArray_t,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub extent: hipExtent,
    pub kind: hipMemcpyKind,
}

/// `typedef struct hipMemcpy3DPeerParms {...}` (`driver_types.h`, ROCm 7): srcArray@0,
/// srcPos@8, srcPtr@32, srcDevice@64, dstArray@72, dstPos@80, dstPtr@104, dstDevice@136,
/// extent@144. 168 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemcpy3DPeerParms {
    pub srcArray: hipArray_t,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    /// Device ordinal of the source.
    pub srcDevice: c_int,
    pub dstArray: hipArray_t,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    /// Device ordinal of the destination.
    pub dstDevice: c_int,
    pub extent: hipExtent,
}

c_enum! {
    /// `hipMemcpyFlags` (`driver_types.h`, ROCm 7): `hipMemcpyAttributes::flags` bits.
    pub struct hipMemcpyFlags {
        hipMemcpyFlagDefault = 0x0,
        hipMemcpyFlagPreferOverlapWithCompute = 0x1,
        hipMemcpyFlagExtPreferCE = 0x100,
        hipMemcpyFlagExtOpSwap = 0x200,
    }
}

c_enum! {
    /// `hipMemcpySrcAccessOrder` (`driver_types.h`, ROCm 7): when a batch copy may read its source.
    pub struct hipMemcpySrcAccessOrder {
        hipMemcpySrcAccessOrderInvalid = 0x0,
        hipMemcpySrcAccessOrderStream = 0x1,
        hipMemcpySrcAccessOrderDuringApiCall = 0x2,
        hipMemcpySrcAccessOrderAny = 0x3,
        hipMemcpySrcAccessOrderMax = 0x7FFF_FFFF,
    }
}

/// `typedef struct hipMemcpyAttributes { hipMemcpySrcAccessOrder srcAccessOrder; hipMemLocation
/// srcLocHint; hipMemLocation dstLocHint; unsigned int flags; }` (`driver_types.h`, ROCm 7):
/// srcAccessOrder@0, srcLocHint@4, dstLocHint@12, flags@20. 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemcpyAttributes {
    pub srcAccessOrder: hipMemcpySrcAccessOrder,
    pub srcLocHint: hipMemLocation,
    pub dstLocHint: hipMemLocation,
    /// [`hipMemcpyFlags`] bits.
    pub flags: c_uint,
}

c_enum! {
    /// `hipMemcpy3DOperandType` (`driver_types.h`, ROCm 7): what a batch operand is.
    pub struct hipMemcpy3DOperandType {
        hipMemcpyOperandTypePointer = 0x1,
        hipMemcpyOperandTypeArray = 0x2,
        hipMemcpyOperandTypeMax = 0x7FFF_FFFF,
    }
}

/// `typedef struct hipOffset3D { size_t x; size_t y; size_t z; }`: an offset into an array, in
/// elements. 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipOffset3D {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `op.ptr` of [`hipMemcpy3DOperand`]: ptr@0, rowLength@8 and layerHeight@16 (elements; 0 means
/// the extent's), locHint@24. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemcpy3DOperand_ptr {
    pub ptr: *mut c_void,
    pub rowLength: usize,
    pub layerHeight: usize,
    pub locHint: hipMemLocation,
}

/// `op.array` of [`hipMemcpy3DOperand`]: array@0, offset@8 (elements). 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemcpy3DOperand_array {
    pub array: hipArray_t,
    pub offset: hipOffset3D,
}

/// The `op` union of [`hipMemcpy3DOperand`] (AMD's members are anonymous structs; these named
/// ones have their layout, so `o.op.ptr.ptr` reads the same in C).
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipMemcpy3DOperand_op {
    pub ptr: hipMemcpy3DOperand_ptr,
    pub array: hipMemcpy3DOperand_array,
}

/// `typedef struct hipMemcpy3DOperand { hipMemcpy3DOperandType type; union {...} op; }`
/// (`driver_types.h`, ROCm 7): type@0, op@8. 40 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemcpy3DOperand {
    pub r#type: hipMemcpy3DOperandType,
    pub op: hipMemcpy3DOperand_op,
}

/// `typedef struct hipMemcpy3DBatchOp { hipMemcpy3DOperand src; hipMemcpy3DOperand dst;
/// hipExtent extent; hipMemcpySrcAccessOrder srcAccessOrder; unsigned int flags; }`
/// (`driver_types.h`, ROCm 7): src@0, dst@40, extent@80, srcAccessOrder@104, flags@108. 112 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemcpy3DBatchOp {
    pub src: hipMemcpy3DOperand,
    pub dst: hipMemcpy3DOperand,
    pub extent: hipExtent,
    pub srcAccessOrder: hipMemcpySrcAccessOrder,
    pub flags: c_uint,
}

// ---------------------------------------------------------------------------------------------
// Graphs and stream capture (`hip_runtime_api.h`, ROCm 7)
// ---------------------------------------------------------------------------------------------

/// Opaque graph object behind [`hipGraph_t`] (`typedef struct ihipGraph* hipGraph_t;`).
pub struct ihipGraph {
    _opaque: [u8; 0],
}
/// Opaque node object behind [`hipGraphNode_t`] (`typedef struct hipGraphNode* hipGraphNode_t;`).
pub struct hipGraphNode {
    _opaque: [u8; 0],
}
/// Opaque executable graph behind [`hipGraphExec_t`]
/// (`typedef struct hipGraphExec* hipGraphExec_t;`).
pub struct hipGraphExec {
    _opaque: [u8; 0],
}
/// Graph handle.
pub type hipGraph_t = *mut ihipGraph;
/// Graph node handle.
pub type hipGraphNode_t = *mut hipGraphNode;
/// Executable graph handle.
pub type hipGraphExec_t = *mut hipGraphExec;

c_enum! {
    /// `hipGraphNodeType` (`hip_runtime_api.h`).
    pub struct hipGraphNodeType {
        hipGraphNodeTypeKernel = 0,
        hipGraphNodeTypeMemcpy = 1,
        hipGraphNodeTypeMemset = 2,
        hipGraphNodeTypeHost = 3,
        hipGraphNodeTypeGraph = 4,
        hipGraphNodeTypeEmpty = 5,
        hipGraphNodeTypeWaitEvent = 6,
        hipGraphNodeTypeEventRecord = 7,
        hipGraphNodeTypeExtSemaphoreSignal = 8,
        hipGraphNodeTypeExtSemaphoreWait = 9,
        hipGraphNodeTypeMemAlloc = 10,
        hipGraphNodeTypeMemFree = 11,
        hipGraphNodeTypeMemcpyFromSymbol = 12,
        hipGraphNodeTypeMemcpyToSymbol = 13,
        /// A batch of stream memory operations (`hipGraphAddBatchMemOpNode`; ROCm 6.4).
        hipGraphNodeTypeBatchMemOp = 14,
        hipGraphNodeTypeCount = 15,
    }
}

c_enum! {
    /// `hipStreamCaptureMode` (`hip_runtime_api.h`).
    pub struct hipStreamCaptureMode {
        hipStreamCaptureModeGlobal = 0,
        hipStreamCaptureModeThreadLocal = 1,
        hipStreamCaptureModeRelaxed = 2,
    }
}

c_enum! {
    /// `hipStreamCaptureStatus` (`hip_runtime_api.h`).
    pub struct hipStreamCaptureStatus {
        hipStreamCaptureStatusNone = 0,
        hipStreamCaptureStatusActive = 1,
        hipStreamCaptureStatusInvalidated = 2,
    }
}

c_enum! {
    /// `hipStreamUpdateCaptureDependenciesFlags` (`hip_runtime_api.h`).
    pub struct hipStreamUpdateCaptureDependenciesFlags {
        hipStreamAddCaptureDependencies = 0,
        hipStreamSetCaptureDependencies = 1,
    }
}

c_enum! {
    /// `hipGraphExecUpdateResult` (`hip_runtime_api.h`).
    pub struct hipGraphExecUpdateResult {
        hipGraphExecUpdateSuccess = 0x0,
        hipGraphExecUpdateError = 0x1,
        hipGraphExecUpdateErrorTopologyChanged = 0x2,
        hipGraphExecUpdateErrorNodeTypeChanged = 0x3,
        hipGraphExecUpdateErrorFunctionChanged = 0x4,
        hipGraphExecUpdateErrorParametersChanged = 0x5,
        hipGraphExecUpdateErrorNotSupported = 0x6,
        hipGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
    }
}

c_enum! {
    /// `hipGraphInstantiateFlags` (`hip_runtime_api.h`).
    pub struct hipGraphInstantiateFlags {
        hipGraphInstantiateFlagAutoFreeOnLaunch = 1,
        hipGraphInstantiateFlagUpload = 2,
        hipGraphInstantiateFlagDeviceLaunch = 4,
        hipGraphInstantiateFlagUseNodePriority = 8,
    }
}

c_enum! {
    /// `hipGraphInstantiateResult` (`hip_runtime_api.h`): `hipGraphInstantiateParams::result_out`.
    pub struct hipGraphInstantiateResult {
        hipGraphInstantiateSuccess = 0,
        hipGraphInstantiateError = 1,
        hipGraphInstantiateInvalidStructure = 2,
        hipGraphInstantiateNodeOperationNotSupported = 3,
        hipGraphInstantiateMultipleDevicesNotSupported = 4,
    }
}

/// `typedef struct hipGraphInstantiateParams { hipGraphNode_t errNode_out; unsigned long long
/// flags; hipGraphInstantiateResult result_out; hipStream_t uploadStream; }`
/// (`hipGraphInstantiateWithParams`). 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipGraphInstantiateParams {
    /// The node that made instantiation fail (hipkfd: always null).
    pub errNode_out: hipGraphNode_t,
    /// `hipGraphInstantiateFlags`.
    pub flags: c_ulonglong,
    pub result_out: hipGraphInstantiateResult,
    /// The stream of `hipGraphInstantiateFlagUpload`.
    pub uploadStream: hipStream_t,
}

c_enum! {
    /// `hipGraphMemAttributeType` (`hip_runtime_api.h`): `hipDeviceGet/SetGraphMemAttribute`.
    pub struct hipGraphMemAttributeType {
        hipGraphMemAttrUsedMemCurrent = 0,
        hipGraphMemAttrUsedMemHigh = 1,
        hipGraphMemAttrReservedMemCurrent = 2,
        hipGraphMemAttrReservedMemHigh = 3,
    }
}

c_enum! {
    /// `hipUserObjectFlags` (`hip_runtime_api.h`).
    pub struct hipUserObjectFlags {
        hipUserObjectNoDestructorSync = 0x1,
    }
}

c_enum! {
    /// `hipUserObjectRetainFlags` (`hip_runtime_api.h`).
    pub struct hipUserObjectRetainFlags {
        hipGraphUserObjectMove = 0x1,
    }
}

c_enum! {
    /// `hipGraphDebugDotFlags` (`hip_runtime_api.h`): what `hipGraphDebugDotPrint` adds.
    pub struct hipGraphDebugDotFlags {
        hipGraphDebugDotFlagsVerbose = 1 << 0,
        hipGraphDebugDotFlagsKernelNodeParams = 1 << 2,
        hipGraphDebugDotFlagsMemcpyNodeParams = 1 << 3,
        hipGraphDebugDotFlagsMemsetNodeParams = 1 << 4,
        hipGraphDebugDotFlagsHostNodeParams = 1 << 5,
        hipGraphDebugDotFlagsEventNodeParams = 1 << 6,
        hipGraphDebugDotFlagsExtSemasSignalNodeParams = 1 << 7,
        hipGraphDebugDotFlagsExtSemasWaitNodeParams = 1 << 8,
        hipGraphDebugDotFlagsKernelNodeAttributes = 1 << 9,
        hipGraphDebugDotFlagsHandles = 1 << 10,
    }
}

/// Opaque user object behind [`hipUserObject_t`] (`typedef struct hipUserObject* hipUserObject_t;`).
pub struct hipUserObject {
    _opaque: [u8; 0],
}
/// User object handle (`hipUserObjectCreate`).
pub type hipUserObject_t = *mut hipUserObject;

/// `typedef struct hipMemAllocNodeParams { hipMemPoolProps poolProps; const hipMemAccessDesc*
/// accessDescs; size_t accessDescCount; size_t bytesize; void* dptr; }`
/// (`hipGraphAddMemAllocNode`): poolProps@0, accessDescs@88, accessDescCount@96, bytesize@104,
/// dptr@112. 120 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemAllocNodeParams {
    /// Pinned memory of a device (`allocType`, `location`).
    pub poolProps: hipMemPoolProps,
    /// Devices that get access besides the owner (read-write or none).
    pub accessDescs: *const hipMemAccessDesc,
    pub accessDescCount: usize,
    /// Bytes.
    pub bytesize: usize,
    /// Out: the allocation's address, fixed when the node is made.
    pub dptr: *mut c_void,
}

/// `typedef struct hipMemcpyNodeParams { int flags; int reserved[3]; hipMemcpy3DParms
/// copyParams; }` (a copy in [`hipGraphNodeParams`]): copyParams@16.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemcpyNodeParams {
    /// Must be 0.
    pub flags: c_int,
    pub reserved: [c_int; 3],
    pub copyParams: hipMemcpy3DParms,
}

/// `typedef struct hipChildGraphNodeParams { hipGraph_t graph; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipChildGraphNodeParams {
    pub graph: hipGraph_t,
}

/// `typedef struct hipEventWaitNodeParams { hipEvent_t event; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipEventWaitNodeParams {
    pub event: hipEvent_t,
}

/// `typedef struct hipEventRecordNodeParams { hipEvent_t event; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipEventRecordNodeParams {
    pub event: hipEvent_t,
}

/// `typedef struct hipMemFreeNodeParams { void* dptr; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemFreeNodeParams {
    pub dptr: *mut c_void,
}

/// `typedef struct hipExternalSemaphoreSignalNodeParams { hipExternalSemaphore_t* extSemArray;
/// const hipExternalSemaphoreSignalParams* paramsArray; unsigned int numExtSems; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalSemaphoreSignalNodeParams {
    pub extSemArray: *mut hipExternalSemaphore_t,
    pub paramsArray: *const hipExternalSemaphoreSignalParams,
    pub numExtSems: c_uint,
}

/// `typedef struct hipExternalSemaphoreWaitNodeParams { ... }`: as
/// [`hipExternalSemaphoreSignalNodeParams`] with wait parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalSemaphoreWaitNodeParams {
    pub extSemArray: *mut hipExternalSemaphore_t,
    pub paramsArray: *const hipExternalSemaphoreWaitParams,
    pub numExtSems: c_uint,
}

/// `typedef struct hipBatchMemOpNodeParams { hipCtx_t ctx; unsigned int count;
/// hipStreamBatchMemOpParams* paramArray; unsigned int flags; }` (`hipGraphAddBatchMemOpNode`):
/// ctx@0, count@8, paramArray@16, flags@24. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipBatchMemOpNodeParams {
    /// A context (must not be null: clr); its device is not used.
    pub ctx: hipCtx_t,
    /// Elements of `paramArray`, 1 to 256.
    pub count: c_uint,
    pub paramArray: *mut hipStreamBatchMemOpParams,
    /// Must be 0.
    pub flags: c_uint,
}

hidden_from_cbindgen! {
/// `typedef union hipStreamBatchMemOpParams_union { hipStreamBatchMemOpType operation; struct
/// {...} waitValue; struct {...} writeValue; struct {...} flushRemoteWrites; struct {...}
/// memoryBarrier; uint64_t pad[6]; } hipStreamBatchMemOpParams;` (`hipStreamBatchMemOp`), seen
/// here as the fields its members share: operation@0; `flushRemoteWrites.flags` and
/// `memoryBarrier.flags`@4; `waitValue`/`writeValue`: address@8, value (low 32 bits) or
/// value64@16, flags@24, alias@32. 48 bytes. The C text is [`STREAM_BATCH_MEM_OP_C`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipStreamBatchMemOpParams {
    pub operation: hipStreamBatchMemOpType,
    /// `flushRemoteWrites.flags` / `memoryBarrier.flags`.
    pub barrierFlags: c_uint,
    /// The word waited on or written (4- or 8-aligned).
    pub address: hipDeviceptr_t,
    /// `value` (32-bit operations: the low half) / `value64`.
    pub value64: u64,
    /// A wait's compare (`hipStreamWaitValueGte` ...); a write's flags (unused, as clr).
    pub flags: c_uint,
    /// CUDA's alias address; not used on AMD.
    pub alias: hipDeviceptr_t,
    pub pad: u64,
}
}

/// The C text of `hipStreamBatchMemOpParams` (ROCm 7 `hip_runtime_api.h`), for the prelude
/// (after the `hipStreamBatchMemOpType` enum). The addresses are `hipDeviceptr_t` (`void*`),
/// written `void*` here because the prelude comes before the typedef.
pub const STREAM_BATCH_MEM_OP_C: &str = "\
typedef union hipStreamBatchMemOpParams_union {
  hipStreamBatchMemOpType operation;
  struct hipStreamMemOpWaitValueParams_t {
    hipStreamBatchMemOpType operation;
    void *address;
    HIP_ANONYMOUS_UNION union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned int flags;
    void *alias;
  } waitValue;
  struct hipStreamMemOpWriteValueParams_t {
    hipStreamBatchMemOpType operation;
    void *address;
    HIP_ANONYMOUS_UNION union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned int flags;
    void *alias;
  } writeValue;
  struct hipStreamMemOpFlushRemoteWritesParams_t {
    hipStreamBatchMemOpType operation;
    unsigned int flags;
  } flushRemoteWrites;
  struct hipStreamMemOpMemoryBarrierParams_t {
    hipStreamBatchMemOpType operation;
    unsigned int flags;
  } memoryBarrier;
  uint64_t pad[6];
} hipStreamBatchMemOpParams;
";

hidden_from_cbindgen! {
/// `typedef struct hipGraphNodeParams { hipGraphNodeType type; int reserved0[3]; union {...};
/// long long reserved2; }` (`hipGraphAddNode`): type@0, the node type's parameters@16 (an
/// anonymous union of 232 bytes), reserved2@248. 256 bytes. The C text is
/// [`GRAPH_NODE_PARAMS_C`]; here the union is its bytes, read by type (src/api/graph.rs).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipGraphNodeParams {
    pub r#type: hipGraphNodeType,
    pub reserved0: [c_int; 3],
    pub params: [c_longlong; 29],
    pub reserved2: c_longlong,
}
}

/// The C text of [`hipGraphNodeParams`] (ROCm 7 `hip_runtime_api.h`), written after the
/// declarations (cbindgen's trailer) because its anonymous union names the node parameter
/// structs; the prelude declares the typedef for `hipGraphAddNode`'s prototype.
pub const GRAPH_NODE_PARAMS_C: &str = "\
/* hipGraphNodeParams (hipGraphAddNode): after the node parameter structs its union names. */
#ifndef HIPKFD_GRAPH_NODE_PARAMS
#define HIPKFD_GRAPH_NODE_PARAMS
#ifdef __cplusplus
extern \"C\" {
#endif
struct hipGraphNodeParams {
  hipGraphNodeType type;
  int reserved0[3];
  HIP_ANONYMOUS_UNION union {
    long long reserved1[29];
    hipKernelNodeParams kernel;
    hipMemcpyNodeParams memcpy;
    hipMemsetParams memset;
    hipHostNodeParams host;
    hipChildGraphNodeParams graph;
    hipEventWaitNodeParams eventWait;
    hipEventRecordNodeParams eventRecord;
    hipExternalSemaphoreSignalNodeParams extSemSignal;
    hipExternalSemaphoreWaitNodeParams extSemWait;
    hipMemAllocNodeParams alloc;
    hipMemFreeNodeParams free;
  };
  long long reserved2;
};
#ifdef __cplusplus
}
#endif
#endif
";

/// `typedef struct HIP_MEMSET_NODE_PARAMS { hipDeviceptr_t dst; size_t pitch; unsigned int value;
/// unsigned int elementSize; size_t width; size_t height; }` (`hipDrvGraphAddMemsetNode`):
/// `hipMemsetParams`' fields in another order. 40 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_MEMSET_NODE_PARAMS {
    pub dst: hipDeviceptr_t,
    /// Bytes per row (unused for one row).
    pub pitch: usize,
    pub value: c_uint,
    /// 1, 2 or 4 bytes.
    pub elementSize: c_uint,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

/// `typedef struct hipLaunchParams_t { void* func; dim3 gridDim; dim3 blockDim; void** args;
/// size_t sharedMem; hipStream_t stream; } hipLaunchParams;` (the multi-device launches):
/// func@0, gridDim@8, blockDim@20, args@32, sharedMem@40, stream@48. 56 bytes. cbindgen writes
/// it under its tag (`[export.rename]`); the prelude adds the `hipLaunchParams` typedef.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipLaunchParams {
    /// The kernel's host-side symbol (as `hipLaunchKernel`'s `function_address`).
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub args: *mut *mut c_void,
    /// Dynamic LDS bytes.
    pub sharedMem: usize,
    pub stream: hipStream_t,
}

/// `typedef struct hipFunctionLaunchParams_t { hipFunction_t function; unsigned int gridDimX,
/// gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes; hipStream_t hStream;
/// void** kernelParams; } hipFunctionLaunchParams;` (`hipModuleLaunchCooperativeKernelMultiDevice`):
/// function@0, gridDimX@8 .. sharedMemBytes@32, hStream@40, kernelParams@48. 56 bytes. cbindgen
/// writes it under its tag (`[export.rename]`); the prelude adds the typedef.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipFunctionLaunchParams {
    pub function: hipFunction_t,
    /// Grid in blocks.
    pub gridDimX: c_uint,
    pub gridDimY: c_uint,
    pub gridDimZ: c_uint,
    /// Block in work-items.
    pub blockDimX: c_uint,
    pub blockDimY: c_uint,
    pub blockDimZ: c_uint,
    /// Dynamic LDS bytes.
    pub sharedMemBytes: c_uint,
    pub hStream: hipStream_t,
    pub kernelParams: *mut *mut c_void,
}

/// `typedef struct hipGraphEdgeData { unsigned char from_port; unsigned char reserved[5];
/// unsigned char to_port; unsigned char type; }`: an edge's ports and type. 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipGraphEdgeData {
    pub from_port: u8,
    pub reserved: [u8; 5],
    pub to_port: u8,
    pub r#type: u8,
}

/// `typedef struct hipMemsetParams { void* dst; unsigned int elementSize; size_t height; size_t
/// pitch; unsigned int value; size_t width; }`: dst@0, elementSize@8, height@16, pitch@24,
/// value@32, width@40. 48 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: c_uint,
    pub height: usize,
    pub pitch: usize,
    pub value: c_uint,
    pub width: usize,
}

/// `typedef struct hipHostNodeParams { hipHostFn_t fn; void* userData; }`. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipHostNodeParams {
    pub r#fn: hipHostFn_t,
    pub userData: *mut c_void,
}

/// `typedef struct hipKernelNodeParams { dim3 blockDim; void** extra; void* func; dim3 gridDim;
/// void** kernelParams; unsigned int sharedMemBytes; }`: blockDim@0, extra@16, func@24,
/// gridDim@32, kernelParams@48, sharedMemBytes@56. 64 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipKernelNodeParams {
    pub blockDim: dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: c_uint,
}

c_enum! {
    /// `hipAccessProperty` (`hip_runtime_api.h`): the cache hint of an access policy window.
    pub struct hipAccessProperty {
        hipAccessPropertyNormal = 0,
        hipAccessPropertyStreaming = 1,
        hipAccessPropertyPersisting = 2,
    }
}

/// `hipAccessPolicyWindow`: base_ptr@0, hitProp@8, hitRatio@12, missProp@16, num_bytes@24.
/// 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipAccessPolicyWindow {
    pub base_ptr: *mut c_void,
    pub hitProp: hipAccessProperty,
    pub hitRatio: f32,
    pub missProp: hipAccessProperty,
    pub num_bytes: usize,
}

c_enum! {
    /// `hipLaunchAttributeID` (`hip_runtime_api.h`; `hipKernelNodeAttrID` and `hipStreamAttrID`
    /// are its typedefs, and the `hipKernelNodeAttribute*` and `hipStreamAttribute*` names its
    /// values): the kernel node and stream attributes.
    pub struct hipLaunchAttributeID {
        hipLaunchAttributeIgnore = 0,
        hipLaunchAttributeAccessPolicyWindow = 1,
        hipLaunchAttributeCooperative = 2,
        hipLaunchAttributeSynchronizationPolicy = 3,
        hipLaunchAttributeClusterDimension = 4,
        hipLaunchAttributeClusterSchedulingPolicyPreference = 5,
        hipLaunchAttributePriority = 8,
        hipLaunchAttributeMemSyncDomainMap = 9,
        hipLaunchAttributeMemSyncDomain = 10,
        hipLaunchAttributeExtDynDataPrefetch = 1024,
        hipLaunchAttributeMax = 1025,
        hipKernelNodeAttributeAccessPolicyWindow = 1,
        hipKernelNodeAttributeCooperative = 2,
        hipStreamAttributeAccessPolicyWindow = 1,
        hipStreamAttributeSynchronizationPolicy = 3,
        hipStreamAttributePriority = 8,
        hipStreamAttributeMemSyncDomainMap = 9,
        hipStreamAttributeMemSyncDomain = 10,
    }
}
/// `typedef hipLaunchAttributeID hipKernelNodeAttrID;`
pub type hipKernelNodeAttrID = hipLaunchAttributeID;
/// `#define hipStreamAttrID hipLaunchAttributeID` (a typedef here).
pub type hipStreamAttrID = hipLaunchAttributeID;

c_enum! {
    /// `hipSynchronizationPolicy` (`hip_runtime_api.h`): how the host waits for a stream
    /// (`hipStreamAttributeSynchronizationPolicy`).
    pub struct hipSynchronizationPolicy {
        hipSyncPolicyAuto = 1,
        hipSyncPolicySpin = 2,
        hipSyncPolicyYield = 3,
        hipSyncPolicyBlockingSync = 4,
    }
}

c_enum! {
    /// `hipLaunchMemSyncDomain` (`hip_runtime_api.h`).
    pub struct hipLaunchMemSyncDomain {
        hipLaunchMemSyncDomainDefault = 0,
        hipLaunchMemSyncDomainRemote = 1,
    }
}

/// `hipLaunchMemSyncDomainMap`: default_@0, remote@1. 2 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipLaunchMemSyncDomainMap {
    pub default_: u8,
    pub remote: u8,
}

/// `hipLaunchAttributeValue` (`hipKernelNodeAttrValue`): 64 bytes in ROCm 7 (`pad[64]`); ROCm
/// 5's `hipKernelNodeAttrValue` is the first 32 (window or cooperative), so readers and writers
/// touch only the member of the attribute at hand.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipLaunchAttributeValue {
    pub pad: [c_char; 64],
    pub accessPolicyWindow: hipAccessPolicyWindow,
    pub cooperative: c_int,
    pub priority: c_int,
    pub syncPolicy: hipSynchronizationPolicy,
    pub memSyncDomainMap: hipLaunchMemSyncDomainMap,
    pub memSyncDomain: hipLaunchMemSyncDomain,
}
/// `typedef hipLaunchAttributeValue hipKernelNodeAttrValue;`
pub type hipKernelNodeAttrValue = hipLaunchAttributeValue;
/// `#define hipStreamAttrValue hipLaunchAttributeValue` (a typedef here).
pub type hipStreamAttrValue = hipLaunchAttributeValue;

// hipLaunchAttribute, hipLaunchConfig_t and HIP_LAUNCH_CONFIG are written into the header after
// the declarations ([`LAUNCH_CONFIG_C`]): hipLaunchAttribute's value is an anonymous union of
// two names (`val`, `value`), which cbindgen cannot write.
hidden_from_cbindgen! {
/// `typedef struct hipLaunchAttribute_st { hipLaunchAttributeID id; char pad[4]; union {
/// hipLaunchAttributeValue val; hipLaunchAttributeValue value; }; } hipLaunchAttribute;`
/// (ROCm 7): id@0, val/value@8. 72 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipLaunchAttribute {
    pub id: hipLaunchAttributeID,
    pub pad: [c_char; 4],
    /// `val` and `value` in C.
    pub val: hipLaunchAttributeValue,
}

/// `typedef struct hipLaunchConfig_st { dim3 gridDim; dim3 blockDim; size_t dynamicSmemBytes;
/// hipStream_t stream; hipLaunchAttribute* attrs; unsigned int numAttrs; } hipLaunchConfig_t;`
/// (`hipLaunchKernelExC`): gridDim@0, blockDim@12, dynamicSmemBytes@24, stream@32, attrs@40,
/// numAttrs@48. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipLaunchConfig_t {
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub dynamicSmemBytes: usize,
    pub stream: hipStream_t,
    pub attrs: *mut hipLaunchAttribute,
    pub numAttrs: c_uint,
}

/// `typedef struct HIP_LAUNCH_CONFIG_st { unsigned int gridDimX, gridDimY, gridDimZ, blockDimX,
/// blockDimY, blockDimZ, sharedMemBytes; hipStream_t hStream; hipLaunchAttribute* attrs;
/// unsigned int numAttrs; } HIP_LAUNCH_CONFIG;` (`hipDrvLaunchKernelEx`): gridDimX@0 ..
/// sharedMemBytes@24, hStream@32, attrs@40, numAttrs@48. 56 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_LAUNCH_CONFIG {
    pub gridDimX: c_uint,
    pub gridDimY: c_uint,
    pub gridDimZ: c_uint,
    pub blockDimX: c_uint,
    pub blockDimY: c_uint,
    pub blockDimZ: c_uint,
    pub sharedMemBytes: c_uint,
    pub hStream: hipStream_t,
    pub attrs: *mut hipLaunchAttribute,
    pub numAttrs: c_uint,
}
}

/// The C text of [`hipLaunchAttribute`], [`hipLaunchConfig_t`] and [`HIP_LAUNCH_CONFIG`] (ROCm 7
/// `hip_runtime_api.h`), written after the declarations (cbindgen's trailer, after
/// [`GRAPH_NODE_PARAMS_C`]); the prelude declares their typedefs for the prototypes.
pub const LAUNCH_CONFIG_C: &str = "\
/* The extensible launch configurations (hipLaunchKernelExC, hipDrvLaunchKernelEx). */
#ifndef HIPKFD_LAUNCH_CONFIG
#define HIPKFD_LAUNCH_CONFIG
#ifdef __cplusplus
extern \"C\" {
#endif
struct hipLaunchAttribute_st {
  hipLaunchAttributeID id;
  char pad[8 - sizeof(hipLaunchAttributeID)];
  HIP_ANONYMOUS_UNION union {
    hipLaunchAttributeValue val;
    hipLaunchAttributeValue value;
  };
};
struct hipLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  hipStream_t stream;
  hipLaunchAttribute *attrs;
  unsigned int numAttrs;
};
struct HIP_LAUNCH_CONFIG_st {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  hipStream_t hStream;
  hipLaunchAttribute *attrs;
  unsigned int numAttrs;
};
#ifdef __cplusplus
}
#endif
#endif
";

/// What `tests/header.rs` passes to cbindgen as the trailer: [`GRAPH_NODE_PARAMS_C`] and
/// [`LAUNCH_CONFIG_C`].
pub fn c_header_trailer() -> String {
    format!("{GRAPH_NODE_PARAMS_C}\n{LAUNCH_CONFIG_C}")
}

/// `HIP_ARRAY_DESCRIPTOR` (`driver_types.h`): Width@0, Height@8 (elements; 0 for 1D),
/// Format@16, NumChannels@20. 24 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_ARRAY_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Format: hipArray_Format,
    pub NumChannels: c_uint,
}

/// `HIP_ARRAY3D_DESCRIPTOR` (`driver_types.h`): Width@0, Height@8, Depth@16 (elements; 0 for
/// fewer dimensions), Format@24, NumChannels@28, Flags@32 (`hipArray*`). 40 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_ARRAY3D_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Depth: usize,
    pub Format: hipArray_Format,
    pub NumChannels: c_uint,
    pub Flags: c_uint,
}

/// `hip_Memcpy2D` (`driver_types.h`): a 2D copy between host, device, unified or array memory
/// (`*MemoryType`), `*XInBytes`/`*Y` the block origins, `*Pitch` bytes per row (ignored for
/// arrays). 128 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_Memcpy2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: hipArray_t,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: hipArray_t,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

/// `HIP_MEMCPY3D` (`driver_types.h`): the 3D form of [`hip_Memcpy2D`], with `*Z`, `*LOD`
/// (ignored) and `*Height` (rows per slice of pitched memory). 184 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_MEMCPY3D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcZ: usize,
    pub srcLOD: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: hipArray_t,
    pub srcPitch: usize,
    pub srcHeight: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstZ: usize,
    pub dstLOD: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: hipArray_t,
    pub dstPitch: usize,
    pub dstHeight: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
    pub Depth: usize,
}

impl Default for hipPointerAttribute_t {
    fn default() -> Self {
        hipPointerAttribute_t {
            r#type: hipMemoryType::hipMemoryTypeUnregistered,
            device: 0,
            devicePointer: std::ptr::null_mut(),
            hostPointer: std::ptr::null_mut(),
            isManaged: 0,
            allocationFlags: 0,
        }
    }
}

/// Device properties, ROCm 6.0+ layout (`hip_runtime_api.h`: `#define hipDeviceProp_t
/// hipDeviceProp_tR0600` then `typedef struct hipDeviceProp_t {...} hipDeviceProp_t;`).
/// 1472 bytes on x86-64. Returned by `hipGetDevicePropertiesR0600`, which the header names
/// `hipGetDeviceProperties`. Units: sizes in bytes, clock rates in kHz.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipDeviceProp_tR0600 {
    /// Device (marketing) name, NUL-terminated.
    pub name: [c_char; 256],
    pub uuid: hipUUID,
    /// Windows only.
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: c_uint,
    /// Bytes of device memory.
    pub totalGlobalMem: usize,
    /// Bytes of LDS per block.
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub memPitch: usize,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    /// kHz.
    pub clockRate: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: c_int,
    pub multiProcessorCount: c_int,
    pub kernelExecTimeoutEnabled: c_int,
    pub integrated: c_int,
    pub canMapHostMemory: c_int,
    pub computeMode: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture1DMipmap: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture2DMipmap: [c_int; 2],
    pub maxTexture2DLinear: [c_int; 3],
    pub maxTexture2DGather: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub maxTexture3DAlt: [c_int; 3],
    pub maxTextureCubemap: c_int,
    pub maxTexture1DLayered: [c_int; 2],
    pub maxTexture2DLayered: [c_int; 3],
    pub maxTextureCubemapLayered: [c_int; 2],
    pub maxSurface1D: c_int,
    pub maxSurface2D: [c_int; 2],
    pub maxSurface3D: [c_int; 3],
    pub maxSurface1DLayered: [c_int; 2],
    pub maxSurface2DLayered: [c_int; 3],
    pub maxSurfaceCubemap: c_int,
    pub maxSurfaceCubemapLayered: [c_int; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: c_int,
    pub ECCEnabled: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub pciDomainID: c_int,
    pub tccDriver: c_int,
    pub asyncEngineCount: c_int,
    pub unifiedAddressing: c_int,
    /// kHz.
    pub memoryClockRate: c_int,
    /// Bits.
    pub memoryBusWidth: c_int,
    /// Bytes.
    pub l2CacheSize: c_int,
    pub persistingL2CacheMaxSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub streamPrioritiesSupported: c_int,
    pub globalL1CacheSupported: c_int,
    pub localL1CacheSupported: c_int,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: c_int,
    pub managedMemory: c_int,
    pub isMultiGpuBoard: c_int,
    pub multiGpuBoardGroupID: c_int,
    pub hostNativeAtomicSupported: c_int,
    pub singleToDoublePrecisionPerfRatio: c_int,
    pub pageableMemoryAccess: c_int,
    pub concurrentManagedAccess: c_int,
    pub computePreemptionSupported: c_int,
    pub canUseHostPointerForRegisteredMem: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub maxBlocksPerMultiProcessor: c_int,
    pub accessPolicyMaxWindowSize: c_int,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: c_int,
    pub sparseHipArraySupported: c_int,
    pub hostRegisterReadOnlySupported: c_int,
    pub timelineSemaphoreInteropSupported: c_int,
    pub memoryPoolsSupported: c_int,
    pub gpuDirectRDMASupported: c_int,
    pub gpuDirectRDMAFlushWritesOptions: c_uint,
    pub gpuDirectRDMAWritesOrdering: c_int,
    pub memoryPoolSupportedHandleTypes: c_uint,
    pub deferredMappingHipArraySupported: c_int,
    pub ipcEventSupported: c_int,
    pub clusterLaunch: c_int,
    pub unifiedFunctionPointers: c_int,
    /// CUDA reserved.
    pub reserved: [c_int; 63],
    /// Reserved for new HIP/CUDA entries.
    pub hipReserved: [c_int; 32],
    /// Target ID, e.g. `gfx90a:sramecc+:xnack-` (HIP only).
    pub gcnArchName: [c_char; 256],
    pub maxSharedMemoryPerMultiProcessor: usize,
    /// kHz.
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
}

/// The name C code uses: `hipDeviceProp_t` is `hipDeviceProp_tR0600` in ROCm 6.0+ headers.
pub type hipDeviceProp_t = hipDeviceProp_tR0600;

impl Default for hipDeviceProp_tR0600 {
    fn default() -> Self {
        // SAFETY: every field is an integer, an array of integers, a struct of integers or a
        // raw pointer; all-zero bytes are a valid value for each.
        unsafe { std::mem::zeroed() }
    }
}

/// Device properties, ROCm 5.x layout (`hipDeviceProp_t` of the ROCm 5.2 header; clr calls it
/// `hipDeviceProp_tR0000`). Filled by the unversioned legacy symbol `hipGetDeviceProperties`
/// (and `hipGetDevicePropertiesR0000`) that binaries built against ROCm 5.x call. 792 bytes
/// on x86-64. Not part of our C header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipDeviceProp_tR0000 {
    pub name: [c_char; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multiProcessorCount: c_int,
    pub l2CacheSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub computeMode: c_int,
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub concurrentKernels: c_int,
    pub pciDomainID: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: c_int,
    pub canMapHostMemory: c_int,
    /// Deprecated: major*100 + minor*10 + stepping.
    pub gcnArch: c_int,
    pub gcnArchName: [c_char; 256],
    pub integrated: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: c_int,
    pub ECCEnabled: c_int,
    pub tccDriver: c_int,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
    pub managedMemory: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub concurrentManagedAccess: c_int,
    pub pageableMemoryAccess: c_int,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

impl Default for hipDeviceProp_tR0000 {
    fn default() -> Self {
        // SAFETY: every field is an integer, an array of integers, a struct of integers or a
        // raw pointer; all-zero bytes are a valid value for each.
        unsafe { std::mem::zeroed() }
    }
}

// ---------------------------------------------------------------------------------------------
// Modules and execution control (hip_runtime_api.h / driver_types.h, ROCm 7)
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// `hipFunction_attribute`: what `hipFuncGetAttribute` reports.
    pub struct hipFunction_attribute {
        HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
        HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
        HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
        HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
        HIP_FUNC_ATTRIBUTE_NUM_REGS = 4,
        HIP_FUNC_ATTRIBUTE_PTX_VERSION = 5,
        HIP_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
        HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
        HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
        HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
        HIP_FUNC_ATTRIBUTE_MAX = 10,
    }
}

c_enum! {
    /// `hipFuncAttribute`: what `hipFuncSetAttribute` sets.
    pub struct hipFuncAttribute {
        hipFuncAttributeMaxDynamicSharedMemorySize = 8,
        hipFuncAttributePreferredSharedMemoryCarveout = 9,
        hipFuncAttributeMax = 10,
    }
}

c_enum! {
    /// `hipJitOption`: `hipModuleLoadDataEx` options (AMD ignores them).
    pub struct hipJitOption {
        hipJitOptionMaxRegisters = 0,
        hipJitOptionThreadsPerBlock = 1,
        hipJitOptionWallTime = 2,
        hipJitOptionInfoLogBuffer = 3,
        hipJitOptionInfoLogBufferSizeBytes = 4,
        hipJitOptionErrorLogBuffer = 5,
        hipJitOptionErrorLogBufferSizeBytes = 6,
        hipJitOptionOptimizationLevel = 7,
        hipJitOptionTargetFromContext = 8,
        hipJitOptionTarget = 9,
        hipJitOptionFallbackStrategy = 10,
        hipJitOptionGenerateDebugInfo = 11,
        hipJitOptionLogVerbose = 12,
        hipJitOptionGenerateLineInfo = 13,
        hipJitOptionCacheMode = 14,
        hipJitOptionSm3xOpt = 15,
        hipJitOptionFastCompile = 16,
        hipJitOptionGlobalSymbolNames = 17,
        hipJitOptionGlobalSymbolAddresses = 18,
        hipJitOptionGlobalSymbolCount = 19,
        hipJitOptionLto = 20,
        hipJitOptionFtz = 21,
        hipJitOptionPrecDiv = 22,
        hipJitOptionPrecSqrt = 23,
        hipJitOptionFma = 24,
        hipJitOptionPositionIndependentCode = 25,
        hipJitOptionMinCTAPerSM = 26,
        hipJitOptionMaxThreadsPerBlock = 27,
        hipJitOptionOverrideDirectiveValues = 28,
        hipJitOptionNumOptions = 29,
        /// HIP only: codegen options for the linker (`hipLinkCreate`), an array of C strings.
        hipJitOptionIRtoISAOptExt = 10000,
        /// HIP only: how many strings `hipJitOptionIRtoISAOptExt` has.
        hipJitOptionIRtoISAOptCountExt = 10001,
    }
}

c_enum! {
    /// `hipJitInputType` (`linker_types.h`, ROCm 7): what `hipLinkAddData`/`hipLinkAddFile` add.
    /// AMD links only `hipJitInputSpirv`.
    pub struct hipJitInputType {
        hipJitInputCubin = 0,
        hipJitInputPtx = 1,
        hipJitInputFatBinary = 2,
        hipJitInputObject = 3,
        hipJitInputLibrary = 4,
        hipJitInputNvvm = 5,
        hipJitNumLegacyInputTypes = 6,
        hipJitInputLLVMBitcode = 100,
        hipJitInputLLVMBundledBitcode = 101,
        hipJitInputLLVMArchivesOfBundledBitcode = 102,
        hipJitInputSpirv = 103,
        hipJitNumInputTypes = 10,
    }
}

c_enum! {
    /// `hipLibraryOption` (`linker_types.h`, tag `hipLibraryOption_e`): `hipLibraryLoad*`'s
    /// library options (AMD reads none of them).
    pub struct hipLibraryOption {
        hipLibraryHostUniversalFunctionAndDataTable = 0,
        hipLibraryBinaryIsPreserved = 1,
    }
}

// ---------------------------------------------------------------------------------------------
// Virtual memory management (hipMem*: hip_runtime_api.h / driver_types.h, ROCm 7)
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// `hipMemLocationType`: where a VMM chunk lives or who accesses it.
    pub struct hipMemLocationType {
        hipMemLocationTypeInvalid = 0,
        hipMemLocationTypeNone = 0,
        /// A device; `id` is its ordinal.
        hipMemLocationTypeDevice = 1,
        /// The host (system memory); `id` is ignored.
        hipMemLocationTypeHost = 2,
        /// A host NUMA node; `id` is the node.
        hipMemLocationTypeHostNuma = 3,
        /// The calling thread's host NUMA node.
        hipMemLocationTypeHostNumaCurrent = 4,
    }
}

c_enum! {
    /// `hipMemAccessFlags`: a location's access to a mapped range.
    pub struct hipMemAccessFlags {
        hipMemAccessFlagsProtNone = 0,
        hipMemAccessFlagsProtRead = 1,
        hipMemAccessFlagsProtReadWrite = 3,
    }
}

c_enum! {
    /// `hipMemAllocationType`.
    pub struct hipMemAllocationType {
        hipMemAllocationTypeInvalid = 0,
        /// Pinned (non-migratable) memory.
        hipMemAllocationTypePinned = 1,
        hipMemAllocationTypeManaged = 2,
        /// Uncached device memory (AMD).
        hipMemAllocationTypeUncached = 0x4000_0000,
        hipMemAllocationTypeMax = 0x7FFF_FFFF,
    }
}

c_enum! {
    /// `hipMemAllocationHandleType`: shareable handle kinds (bit flags).
    pub struct hipMemAllocationHandleType {
        hipMemHandleTypeNone = 0,
        /// A POSIX file descriptor (here: a dma-buf fd), passed as `int`.
        hipMemHandleTypePosixFileDescriptor = 1,
        hipMemHandleTypeWin32 = 2,
        hipMemHandleTypeWin32Kmt = 4,
        hipMemHandleTypeFabric = 8,
    }
}

c_enum! {
    /// `hipMemAllocationGranularity_flags`.
    pub struct hipMemAllocationGranularity_flags {
        hipMemAllocationGranularityMinimum = 0,
        hipMemAllocationGranularityRecommended = 1,
    }
}

c_enum! {
    /// `hipMemHandleType` (of `hipArrayMapInfo`).
    pub struct hipMemHandleType {
        hipMemHandleTypeGeneric = 0,
    }
}

c_enum! {
    /// `hipMemOperationType` (of `hipArrayMapInfo`).
    pub struct hipMemOperationType {
        hipMemOperationTypeMap = 1,
        hipMemOperationTypeUnmap = 2,
    }
}

c_enum! {
    /// `hipArraySparseSubresourceType` (of `hipArrayMapInfo`).
    pub struct hipArraySparseSubresourceType {
        hipArraySparseSubresourceTypeSparseLevel = 0,
        hipArraySparseSubresourceTypeMiptail = 1,
    }
}

// hipMemLocation and hipMemAllocationProp are written into the header by the prelude
// ([`VMM_PROP_C`]): the ROCm 7 struct has an anonymous union, which cbindgen cannot emit.
hidden_from_cbindgen! {
/// `typedef struct hipMemLocation { hipMemLocationType type; int id; } hipMemLocation;` 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipMemLocation {
    pub r#type: hipMemLocationType,
    /// Device ordinal for `hipMemLocationTypeDevice`, NUMA node for `HostNuma`.
    pub id: c_int,
}

/// The handle-type member of [`hipMemAllocationProp`]: ROCm 7 spells it either way.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipMemAllocationProp_handleTypes {
    pub requestedHandleType: hipMemAllocationHandleType,
    pub requestedHandleTypes: hipMemAllocationHandleType,
}

/// `allocFlags` of [`hipMemAllocationProp`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipMemAllocationProp_allocFlags {
    pub compressionType: u8,
    pub gpuDirectRDMACapable: u8,
    pub usage: u16,
}

/// `typedef struct hipMemAllocationProp {...} hipMemAllocationProp;`, the ROCm 5.3+ layout
/// (32 bytes: type@0, requestedHandleType(s)@4, location@8, win32HandleMetaData@16,
/// allocFlags@24). The C text is [`VMM_PROP_C`] (an anonymous union, which cbindgen cannot
/// write). Binaries built against the ROCm ≤ 5.2 header pass another layout of the same
/// size; `src/share/vmm.rs` (`AllocProp::read`) tells them apart.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemAllocationProp {
    pub r#type: hipMemAllocationType,
    pub handleTypes: hipMemAllocationProp_handleTypes,
    pub location: hipMemLocation,
    pub win32HandleMetaData: *mut c_void,
    pub allocFlags: hipMemAllocationProp_allocFlags,
}
}

/// `typedef struct hipMemAccessDesc { hipMemLocation location; hipMemAccessFlags flags; }`. 12 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipMemAccessDesc {
    pub location: hipMemLocation,
    pub flags: hipMemAccessFlags,
}

/// The C text of `hipMemLocation` and `hipMemAllocationProp` (ROCm 7 `driver_types.h` /
/// `hip_runtime_api.h`), for the prelude.
pub const VMM_PROP_C: &str = "\
/* An anonymous union is C11 and C++; __extension__ lets GCC and Clang accept it in C99 too. */
#if defined(__GNUC__) && !defined(__cplusplus)
#define HIP_ANONYMOUS_UNION __extension__
#else
#define HIP_ANONYMOUS_UNION
#endif
typedef struct hipMemLocation {
  hipMemLocationType type;
  int id;
} hipMemLocation;

typedef struct hipMemAllocationProp {
  hipMemAllocationType type;
  HIP_ANONYMOUS_UNION union {
    hipMemAllocationHandleType requestedHandleType;
    hipMemAllocationHandleType requestedHandleTypes;
  };
  hipMemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
  } allocFlags;
} hipMemAllocationProp;
";

/// Opaque chunk object behind [`hipMemGenericAllocationHandle_t`].
pub struct ihipMemGenericAllocationHandle {
    _opaque: [u8; 0],
}

/// A physical VMM chunk (`typedef struct ihipMemGenericAllocationHandle*
/// hipMemGenericAllocationHandle_t;`). The runtime's values are ids, never dereferenced.
pub type hipMemGenericAllocationHandle_t = *mut ihipMemGenericAllocationHandle;

/// `hipArrayMapInfo` (sparse-array mapping descriptor). hipkfd has no sparse arrays, so
/// `hipMemMapArrayAsync` never reads one and the header declares the type incomplete: pass
/// pointers to it only.
pub struct hipArrayMapInfo {
    _opaque: [u8; 0],
}

// ---------------------------------------------------------------------------------------------
// External interop (hipImportExternalMemory, hipImportExternalSemaphore; src/share/interop.rs)
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// `hipExternalMemoryHandleType` (`hipExternalMemoryHandleType_enum`). ROCm 5.2 stops at 7.
    pub struct hipExternalMemoryHandleType {
        /// A POSIX fd; on Linux a dma-buf fd.
        hipExternalMemoryHandleTypeOpaqueFd = 1,
        hipExternalMemoryHandleTypeOpaqueWin32 = 2,
        hipExternalMemoryHandleTypeOpaqueWin32Kmt = 3,
        hipExternalMemoryHandleTypeD3D12Heap = 4,
        hipExternalMemoryHandleTypeD3D12Resource = 5,
        hipExternalMemoryHandleTypeD3D11Resource = 6,
        hipExternalMemoryHandleTypeD3D11ResourceKmt = 7,
        hipExternalMemoryHandleTypeNvSciBuf = 8,
    }
}

c_enum! {
    /// `hipExternalSemaphoreHandleType` (`hipExternalSemaphoreHandleType_enum`). ROCm 5.2 stops
    /// at 4.
    pub struct hipExternalSemaphoreHandleType {
        /// A POSIX fd; here a binary DRM syncobj fd.
        hipExternalSemaphoreHandleTypeOpaqueFd = 1,
        hipExternalSemaphoreHandleTypeOpaqueWin32 = 2,
        hipExternalSemaphoreHandleTypeOpaqueWin32Kmt = 3,
        hipExternalSemaphoreHandleTypeD3D12Fence = 4,
        hipExternalSemaphoreHandleTypeD3D11Fence = 5,
        hipExternalSemaphoreHandleTypeNvSciSync = 6,
        hipExternalSemaphoreHandleTypeKeyedMutex = 7,
        hipExternalSemaphoreHandleTypeKeyedMutexKmt = 8,
        /// A timeline DRM syncobj fd (Vulkan timeline semaphore).
        hipExternalSemaphoreHandleTypeTimelineSemaphoreFd = 9,
        hipExternalSemaphoreHandleTypeTimelineSemaphoreWin32 = 10,
    }
}

c_enum! {
    /// `hipChannelFormatKind` (of `hipChannelFormatDesc`).
    pub struct hipChannelFormatKind {
        hipChannelFormatKindSigned = 0,
        hipChannelFormatKindUnsigned = 1,
        hipChannelFormatKindFloat = 2,
        hipChannelFormatKindNone = 3,
    }
}

/// An imported external memory object (`typedef void* hipExternalMemory_t;`).
pub type hipExternalMemory_t = *mut c_void;
/// An imported external semaphore (`typedef void* hipExternalSemaphore_t;`).
pub type hipExternalSemaphore_t = *mut c_void;

/// Mipmapped array (`hipMipmappedArray`): opaque here; the object is clr's `struct
/// hipMipmappedArray` (src/mem/array.rs `MipmapObj`).
pub struct hipMipmappedArray {
    _opaque: [u8; 0],
}
/// `typedef hipMipmappedArray* hipMipmappedArray_t;`
pub type hipMipmappedArray_t = *mut hipMipmappedArray;
/// `typedef hipMipmappedArray_t hipmipmappedArray;` (the driver API's spelling, `hipMemMapArrayAsync`).
pub type hipmipmappedArray = hipMipmappedArray_t;
/// `typedef const hipMipmappedArray* hipMipmappedArray_const_t;`
pub type hipMipmappedArray_const_t = *const hipMipmappedArray;

// The interop structs have anonymous unions and nested anonymous structs, which cbindgen cannot
// emit: their C text is [`INTEROP_C`] (ROCm 7 `driver_types.h` / `hip_runtime_api.h`).
hidden_from_cbindgen! {
/// `handle.win32` of the handle descriptors.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalHandle_win32 {
    pub handle: *mut c_void,
    pub name: *const c_void,
}

/// `handle` of [`hipExternalMemoryHandleDesc`] / [`hipExternalSemaphoreHandleDesc`]: 16 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipExternalHandle {
    pub fd: c_int,
    pub win32: hipExternalHandle_win32,
    pub nvSciObject: *const c_void,
}

/// `hipExternalMemoryHandleDesc` (`_st`): 104 bytes, type@0, handle@8, size@24, flags@32,
/// reserved[16]@36. ROCm 5.2: 40 bytes, the same fields at the same offsets, no `reserved`
/// (never read, so both layouts work).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryHandleDesc {
    pub r#type: hipExternalMemoryHandleType,
    pub handle: hipExternalHandle,
    /// Bytes.
    pub size: u64,
    /// 0 or `hipExternalMemoryDedicated`.
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// `hipExternalMemoryBufferDesc` (`_st`): 88 bytes, offset@0, size@8, flags@16,
/// reserved[16]@20. ROCm 5.2: 24 bytes without `reserved` (never read).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryBufferDesc {
    /// Bytes from the start of the memory object.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// Must be 0.
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// `hipChannelFormatDesc`: 20 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct hipChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: hipChannelFormatKind,
}

/// `hipExtent`: 24 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `hipExternalMemoryMipmappedArrayDesc` (`_st`): 64 bytes, offset@0, formatDesc@8,
/// extent@32, flags@56, numLevels@60.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryMipmappedArrayDesc {
    pub offset: u64,
    pub formatDesc: hipChannelFormatDesc,
    pub extent: hipExtent,
    pub flags: c_uint,
    pub numLevels: c_uint,
}

/// `hipExternalSemaphoreHandleDesc` (`_st`): 96 bytes, type@0, handle@8, flags@24,
/// reserved[16]@28. ROCm 5.2: 32 bytes without `reserved` (never read).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalSemaphoreHandleDesc {
    pub r#type: hipExternalSemaphoreHandleType,
    pub handle: hipExternalHandle,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}
}

/// The C text of the interop enums' companions and structs (ROCm 7 `driver_types.h` /
/// `hip_runtime_api.h`), for the prelude. `hipExternalSemaphoreSignalParams` and
/// `hipExternalSemaphoreWaitParams` are 144 bytes (fence.value@0, flags@72); ROCm 5.2's are 136
/// (no `nvSciSync`: flags@64). src/share/interop.rs reads them by offset (`SemParamsLayout`).
pub const INTEROP_C: &str = "\
typedef struct hipChannelFormatDesc {
  int x;
  int y;
  int z;
  int w;
  enum hipChannelFormatKind f;
} hipChannelFormatDesc;

typedef struct hipExtent {
  size_t width;
  size_t height;
  size_t depth;
} hipExtent;

typedef struct hipExternalMemoryHandleDesc_st {
  hipExternalMemoryHandleType type;
  union {
    int fd;
    struct {
      void *handle;
      const void *name;
    } win32;
    const void *nvSciBufObject;
  } handle;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
} hipExternalMemoryHandleDesc;

typedef struct hipExternalMemoryBufferDesc_st {
  unsigned long long offset;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
} hipExternalMemoryBufferDesc;

typedef struct hipExternalMemoryMipmappedArrayDesc_st {
  unsigned long long offset;
  hipChannelFormatDesc formatDesc;
  hipExtent extent;
  unsigned int flags;
  unsigned int numLevels;
} hipExternalMemoryMipmappedArrayDesc;

typedef struct hipExternalSemaphoreHandleDesc_st {
  hipExternalSemaphoreHandleType type;
  union {
    int fd;
    struct {
      void *handle;
      const void *name;
    } win32;
    const void *NvSciSyncObj;
  } handle;
  unsigned int flags;
  unsigned int reserved[16];
} hipExternalSemaphoreHandleDesc;

typedef struct hipExternalSemaphoreSignalParams_st {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void *fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
    } keyedMutex;
    unsigned int reserved[12];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
} hipExternalSemaphoreSignalParams;

typedef struct hipExternalSemaphoreWaitParams_st {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void *fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
      unsigned int timeoutMs;
    } keyedMutex;
    unsigned int reserved[10];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
} hipExternalSemaphoreWaitParams;
";

hidden_from_cbindgen! {
/// `hipExternalSemaphoreSignalParams` / `hipExternalSemaphoreWaitParams`: read by offset
/// (src/api/interop.rs), since ROCm 5.2 callers pass a shorter layout. Opaque to Rust; the C
/// text is in [`INTEROP_C`].
pub struct hipExternalSemaphoreSignalParams {
    _opaque: [u8; 0],
}
/// See [`hipExternalSemaphoreSignalParams`].
pub struct hipExternalSemaphoreWaitParams {
    _opaque: [u8; 0],
}
}

// ---------------------------------------------------------------------------------------------
// Textures, surfaces and graphics interop (texture_types.h, surface_types.h, driver_types.h,
// hip_gl_interop.h, ROCm 7; src/api/texture.rs, src/api/gl.rs). hipkfd has no image path
// (`hipDeviceAttributeImageSupport` = 0): the entry points only read what clr validates.
// ---------------------------------------------------------------------------------------------

c_enum! {
    /// `hipResourceType` (of [`hipResourceDesc`]).
    pub struct hipResourceType {
        hipResourceTypeArray = 0x00,
        hipResourceTypeMipmappedArray = 0x01,
        hipResourceTypeLinear = 0x02,
        hipResourceTypePitch2D = 0x03,
    }
}

c_enum! {
    /// `HIPresourcetype` (tag `HIPresourcetype_enum`, also typedef'd `hipResourcetype`): the
    /// driver API's spelling of [`hipResourceType`] (of [`HIP_RESOURCE_DESC`]).
    pub struct HIPresourcetype {
        HIP_RESOURCE_TYPE_ARRAY = 0x00,
        HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY = 0x01,
        HIP_RESOURCE_TYPE_LINEAR = 0x02,
        HIP_RESOURCE_TYPE_PITCH2D = 0x03,
    }
}

c_enum! {
    /// `HIPaddress_mode` (tag `HIPaddress_mode_enum`, of [`HIP_TEXTURE_DESC`]).
    pub struct HIPaddress_mode {
        HIP_TR_ADDRESS_MODE_WRAP = 0,
        HIP_TR_ADDRESS_MODE_CLAMP = 1,
        HIP_TR_ADDRESS_MODE_MIRROR = 2,
        HIP_TR_ADDRESS_MODE_BORDER = 3,
    }
}

c_enum! {
    /// `HIPfilter_mode` (tag `HIPfilter_mode_enum`, of [`HIP_TEXTURE_DESC`]).
    pub struct HIPfilter_mode {
        HIP_TR_FILTER_MODE_POINT = 0,
        HIP_TR_FILTER_MODE_LINEAR = 1,
    }
}

c_enum! {
    /// `hipResourceViewFormat` (of [`hipResourceViewDesc`]): channels and element type.
    pub struct hipResourceViewFormat {
        hipResViewFormatNone = 0x00,
        hipResViewFormatUnsignedChar1 = 0x01,
        hipResViewFormatUnsignedChar2 = 0x02,
        hipResViewFormatUnsignedChar4 = 0x03,
        hipResViewFormatSignedChar1 = 0x04,
        hipResViewFormatSignedChar2 = 0x05,
        hipResViewFormatSignedChar4 = 0x06,
        hipResViewFormatUnsignedShort1 = 0x07,
        hipResViewFormatUnsignedShort2 = 0x08,
        hipResViewFormatUnsignedShort4 = 0x09,
        hipResViewFormatSignedShort1 = 0x0a,
        hipResViewFormatSignedShort2 = 0x0b,
        hipResViewFormatSignedShort4 = 0x0c,
        hipResViewFormatUnsignedInt1 = 0x0d,
        hipResViewFormatUnsignedInt2 = 0x0e,
        hipResViewFormatUnsignedInt4 = 0x0f,
        hipResViewFormatSignedInt1 = 0x10,
        hipResViewFormatSignedInt2 = 0x11,
        hipResViewFormatSignedInt4 = 0x12,
        hipResViewFormatHalf1 = 0x13,
        hipResViewFormatHalf2 = 0x14,
        hipResViewFormatHalf4 = 0x15,
        hipResViewFormatFloat1 = 0x16,
        hipResViewFormatFloat2 = 0x17,
        hipResViewFormatFloat4 = 0x18,
        hipResViewFormatUnsignedBlockCompressed1 = 0x19,
        hipResViewFormatUnsignedBlockCompressed2 = 0x1a,
        hipResViewFormatUnsignedBlockCompressed3 = 0x1b,
        hipResViewFormatUnsignedBlockCompressed4 = 0x1c,
        hipResViewFormatSignedBlockCompressed4 = 0x1d,
        hipResViewFormatUnsignedBlockCompressed5 = 0x1e,
        hipResViewFormatSignedBlockCompressed5 = 0x1f,
        hipResViewFormatUnsignedBlockCompressed6H = 0x20,
        hipResViewFormatSignedBlockCompressed6H = 0x21,
        hipResViewFormatUnsignedBlockCompressed7 = 0x22,
    }
}

c_enum! {
    /// `HIPresourceViewFormat` (tag `HIPresourceViewFormat_enum`, of
    /// [`HIP_RESOURCE_VIEW_DESC`]): the driver API's spelling of [`hipResourceViewFormat`].
    pub struct HIPresourceViewFormat {
        HIP_RES_VIEW_FORMAT_NONE = 0x00,
        HIP_RES_VIEW_FORMAT_UINT_1X8 = 0x01,
        HIP_RES_VIEW_FORMAT_UINT_2X8 = 0x02,
        HIP_RES_VIEW_FORMAT_UINT_4X8 = 0x03,
        HIP_RES_VIEW_FORMAT_SINT_1X8 = 0x04,
        HIP_RES_VIEW_FORMAT_SINT_2X8 = 0x05,
        HIP_RES_VIEW_FORMAT_SINT_4X8 = 0x06,
        HIP_RES_VIEW_FORMAT_UINT_1X16 = 0x07,
        HIP_RES_VIEW_FORMAT_UINT_2X16 = 0x08,
        HIP_RES_VIEW_FORMAT_UINT_4X16 = 0x09,
        HIP_RES_VIEW_FORMAT_SINT_1X16 = 0x0a,
        HIP_RES_VIEW_FORMAT_SINT_2X16 = 0x0b,
        HIP_RES_VIEW_FORMAT_SINT_4X16 = 0x0c,
        HIP_RES_VIEW_FORMAT_UINT_1X32 = 0x0d,
        HIP_RES_VIEW_FORMAT_UINT_2X32 = 0x0e,
        HIP_RES_VIEW_FORMAT_UINT_4X32 = 0x0f,
        HIP_RES_VIEW_FORMAT_SINT_1X32 = 0x10,
        HIP_RES_VIEW_FORMAT_SINT_2X32 = 0x11,
        HIP_RES_VIEW_FORMAT_SINT_4X32 = 0x12,
        HIP_RES_VIEW_FORMAT_FLOAT_1X16 = 0x13,
        HIP_RES_VIEW_FORMAT_FLOAT_2X16 = 0x14,
        HIP_RES_VIEW_FORMAT_FLOAT_4X16 = 0x15,
        HIP_RES_VIEW_FORMAT_FLOAT_1X32 = 0x16,
        HIP_RES_VIEW_FORMAT_FLOAT_2X32 = 0x17,
        HIP_RES_VIEW_FORMAT_FLOAT_4X32 = 0x18,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC1 = 0x19,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC2 = 0x1a,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC3 = 0x1b,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC4 = 0x1c,
        HIP_RES_VIEW_FORMAT_SIGNED_BC4 = 0x1d,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC5 = 0x1e,
        HIP_RES_VIEW_FORMAT_SIGNED_BC5 = 0x1f,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC6H = 0x20,
        HIP_RES_VIEW_FORMAT_SIGNED_BC6H = 0x21,
        HIP_RES_VIEW_FORMAT_UNSIGNED_BC7 = 0x22,
    }
}

c_enum! {
    /// `enum hipTextureAddressMode` (`texture_types.h`; AMD declares the tag only, the header
    /// adds the typedef).
    pub struct hipTextureAddressMode {
        hipAddressModeWrap = 0,
        hipAddressModeClamp = 1,
        hipAddressModeMirror = 2,
        hipAddressModeBorder = 3,
    }
}

c_enum! {
    /// `enum hipTextureFilterMode` (`texture_types.h`).
    pub struct hipTextureFilterMode {
        hipFilterModePoint = 0,
        hipFilterModeLinear = 1,
    }
}

c_enum! {
    /// `enum hipTextureReadMode` (`texture_types.h`).
    pub struct hipTextureReadMode {
        hipReadModeElementType = 0,
        hipReadModeNormalizedFloat = 1,
    }
}

c_enum! {
    /// `enum hipSurfaceBoundaryMode` (`surface_types.h`).
    pub struct hipSurfaceBoundaryMode {
        hipBoundaryModeZero = 0,
        hipBoundaryModeTrap = 1,
        hipBoundaryModeClamp = 2,
    }
}

c_enum! {
    /// `hipGraphicsRegisterFlags` (`hip_runtime_api.h`): how a graphics resource is registered.
    pub struct hipGraphicsRegisterFlags {
        hipGraphicsRegisterFlagsNone = 0,
        /// HIP will not write to the resource.
        hipGraphicsRegisterFlagsReadOnly = 1,
        /// HIP will not read the resource; its contents are undefined when mapped.
        hipGraphicsRegisterFlagsWriteDiscard = 2,
        /// HIP will bind the resource to a surface.
        hipGraphicsRegisterFlagsSurfaceLoadStore = 4,
        /// HIP will do texture gathers on the resource.
        hipGraphicsRegisterFlagsTextureGather = 8,
    }
}

c_enum! {
    /// `hipGLDeviceList` (`hip_gl_interop.h`): which devices `hipGLGetDevices` lists.
    pub struct hipGLDeviceList {
        /// Every device the current OpenGL context uses.
        hipGLDeviceListAll = 1,
        /// The devices it uses in the current frame.
        hipGLDeviceListCurrentFrame = 2,
        /// The devices it uses in the next frame.
        hipGLDeviceListNextFrame = 3,
    }
}

// The texture structs and handles are declared by the prelude ([`TEXTURE_C`]): their unions of
// unnamed structs are beyond cbindgen, and the prototypes name them before the array typedefs.
hidden_from_cbindgen! {
/// Opaque texture object behind [`hipTextureObject_t`] (`struct __hip_texture`).
pub struct __hip_texture {
    _opaque: [u8; 0],
}
/// Texture object handle (`typedef struct __hip_texture* hipTextureObject_t;`).
pub type hipTextureObject_t = *mut __hip_texture;

/// Opaque surface object behind [`hipSurfaceObject_t`] (`struct __hip_surface`).
pub struct __hip_surface {
    _opaque: [u8; 0],
}
/// Surface object handle (`typedef struct __hip_surface* hipSurfaceObject_t;`).
pub type hipSurfaceObject_t = *mut __hip_surface;

/// Opaque registered graphics resource (`typedef struct _hipGraphicsResource
/// hipGraphicsResource;`).
pub struct _hipGraphicsResource {
    _opaque: [u8; 0],
}
/// See [`_hipGraphicsResource`].
pub type hipGraphicsResource = _hipGraphicsResource;
/// Graphics resource handle (`typedef hipGraphicsResource* hipGraphicsResource_t;`).
pub type hipGraphicsResource_t = *mut hipGraphicsResource;

/// `res.array` of [`hipResourceDesc`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc_array {
    pub array: hipArray_t,
}
/// `res.mipmap` of [`hipResourceDesc`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc_mipmap {
    pub mipmap: hipMipmappedArray_t,
}
/// `res.linear` of [`hipResourceDesc`]: `sizeInBytes` bytes at `devPtr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc_linear {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub sizeInBytes: usize,
}
/// `res.pitch2D` of [`hipResourceDesc`]: `width` × `height` elements, rows `pitchInBytes` apart.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc_pitch2D {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}
/// `res` of [`hipResourceDesc`], by `resType`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipResourceDesc_res {
    pub array: hipResourceDesc_array,
    pub mipmap: hipResourceDesc_mipmap,
    pub linear: hipResourceDesc_linear,
    pub pitch2D: hipResourceDesc_pitch2D,
}
/// `hipResourceDesc` (`driver_types.h`): what a texture or surface object reads. resType@0,
/// res@8 (56 bytes). 64 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc {
    pub resType: hipResourceType,
    pub res: hipResourceDesc_res,
}

/// `res.linear` of [`HIP_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_RESOURCE_DESC_linear {
    pub devPtr: hipDeviceptr_t,
    pub format: hipArray_Format,
    pub numChannels: c_uint,
    pub sizeInBytes: usize,
}
/// `res.pitch2D` of [`HIP_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_RESOURCE_DESC_pitch2D {
    pub devPtr: hipDeviceptr_t,
    pub format: hipArray_Format,
    pub numChannels: c_uint,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}
/// `res` of [`HIP_RESOURCE_DESC`] (128 bytes: `reserved.reserved[32]`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union HIP_RESOURCE_DESC_res {
    pub hArray: hipArray_t,
    pub hMipmappedArray: hipMipmappedArray_t,
    pub linear: HIP_RESOURCE_DESC_linear,
    pub pitch2D: HIP_RESOURCE_DESC_pitch2D,
    pub reserved: [c_int; 32],
}
/// `HIP_RESOURCE_DESC` (`HIP_RESOURCE_DESC_st`, the driver API's resource descriptor):
/// resType@0, res@8, flags@136. 144 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_RESOURCE_DESC {
    pub resType: HIPresourcetype,
    pub res: HIP_RESOURCE_DESC_res,
    /// Must be 0.
    pub flags: c_uint,
}

/// `hipTextureDesc` (`texture_types.h`): sampling state. addressMode@0, filterMode@12,
/// readMode@16, sRGB@20, borderColor@24, normalizedCoords@40, maxAnisotropy@44,
/// mipmapFilterMode@48, mipmapLevelBias@52, min/maxMipmapLevelClamp@56/60. 64 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipTextureDesc {
    pub addressMode: [hipTextureAddressMode; 3],
    pub filterMode: hipTextureFilterMode,
    pub readMode: hipTextureReadMode,
    pub sRGB: c_int,
    pub borderColor: [f32; 4],
    pub normalizedCoords: c_int,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: hipTextureFilterMode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
}

/// `HIP_TEXTURE_DESC` (`HIP_TEXTURE_DESC_st`): addressMode@0, filterMode@12, flags@16
/// (`HIP_TRSF_*`), maxAnisotropy@20, mipmapFilterMode@24, mipmapLevelBias@28,
/// min/maxMipmapLevelClamp@32/36, borderColor@40, reserved[12]@56. 104 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_TEXTURE_DESC {
    pub addressMode: [HIPaddress_mode; 3],
    pub filterMode: HIPfilter_mode,
    pub flags: c_uint,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: HIPfilter_mode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub borderColor: [f32; 4],
    pub reserved: [c_int; 12],
}

/// `struct hipResourceViewDesc` (`driver_types.h`; the header adds the typedef): format@0,
/// width/height/depth@8/16/24 (elements), first/lastMipmapLevel@32/36, first/lastLayer@40/44.
/// 48 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceViewDesc {
    pub format: hipResourceViewFormat,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub firstMipmapLevel: c_uint,
    pub lastMipmapLevel: c_uint,
    pub firstLayer: c_uint,
    pub lastLayer: c_uint,
}

/// `HIP_RESOURCE_VIEW_DESC` (`HIP_RESOURCE_VIEW_DESC_st`): the fields of
/// [`hipResourceViewDesc`], then reserved[16]@48. 112 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_RESOURCE_VIEW_DESC {
    pub format: HIPresourceViewFormat,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub firstMipmapLevel: c_uint,
    pub lastMipmapLevel: c_uint,
    pub firstLayer: c_uint,
    pub lastLayer: c_uint,
    pub reserved: [c_uint; 16],
}

/// `textureReference` (`texture_types.h`): a texture reference's state (hipcc's `texture<>`
/// globals derive from it). normalized@0, readMode@4, filterMode@8, addressMode@12,
/// channelDesc@24, sRGB@44, maxAnisotropy@48, mipmapFilterMode@52, mipmapLevelBias@56,
/// min/maxMipmapLevelClamp@60/64, textureObject@72, numChannels@80, format@84. 88 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct textureReference {
    pub normalized: c_int,
    pub readMode: hipTextureReadMode,
    pub filterMode: hipTextureFilterMode,
    pub addressMode: [hipTextureAddressMode; 3],
    pub channelDesc: hipChannelFormatDesc,
    pub sRGB: c_int,
    pub maxAnisotropy: c_uint,
    pub mipmapFilterMode: hipTextureFilterMode,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub textureObject: hipTextureObject_t,
    pub numChannels: c_int,
    pub format: hipArray_Format,
}

/// `struct surfaceReference { hipSurfaceObject_t surfaceObject; }` (`surface_types.h`). 8 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct surfaceReference {
    pub surfaceObject: hipSurfaceObject_t,
}
}

/// The C text of the texture, surface and graphics-interop handles and structs (ROCm 7
/// `texture_types.h`, `surface_types.h`, `driver_types.h`, `hip_runtime_api.h`), for the
/// prelude, after [`INTEROP_C`] (`hipChannelFormatDesc`) and the enums. The array members name
/// `struct hipArray*` / `struct hipMipmappedArray*` (what `hipArray_t` / `hipMipmappedArray_t`
/// are; those typedefs come later in the header).
pub const TEXTURE_C: &str = "\
typedef HIPresourcetype hipResourcetype;

struct __hip_texture;
typedef struct __hip_texture *hipTextureObject_t;
struct __hip_surface;
typedef struct __hip_surface *hipSurfaceObject_t;
typedef struct _hipGraphicsResource hipGraphicsResource;
typedef hipGraphicsResource *hipGraphicsResource_t;

typedef struct hipResourceDesc {
  enum hipResourceType resType;
  union {
    struct {
      struct hipArray *array;
    } array;
    struct {
      struct hipMipmappedArray *mipmap;
    } mipmap;
    struct {
      void *devPtr;
      struct hipChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void *devPtr;
      struct hipChannelFormatDesc desc;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
  } res;
} hipResourceDesc;

typedef struct HIP_RESOURCE_DESC_st {
  HIPresourcetype resType;
  union {
    struct {
      struct hipArray *hArray;
    } array;
    struct {
      struct hipMipmappedArray *hMipmappedArray;
    } mipmap;
    struct {
      void *devPtr;
      hipArray_Format format;
      unsigned int numChannels;
      size_t sizeInBytes;
    } linear;
    struct {
      void *devPtr;
      hipArray_Format format;
      unsigned int numChannels;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;
} HIP_RESOURCE_DESC;

typedef struct hipTextureDesc {
  enum hipTextureAddressMode addressMode[3];
  enum hipTextureFilterMode filterMode;
  enum hipTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  enum hipTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
} hipTextureDesc;

typedef struct HIP_TEXTURE_DESC_st {
  HIPaddress_mode addressMode[3];
  HIPfilter_mode filterMode;
  unsigned int flags;
  unsigned int maxAnisotropy;
  HIPfilter_mode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  float borderColor[4];
  int reserved[12];
} HIP_TEXTURE_DESC;

/* AMD declares the tag only (prototypes say `struct hipResourceViewDesc`); the typedef is ours. */
typedef struct hipResourceViewDesc {
  enum hipResourceViewFormat format;
  size_t width;
  size_t height;
  size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
} hipResourceViewDesc;

typedef struct HIP_RESOURCE_VIEW_DESC_st {
  HIPresourceViewFormat format;
  size_t width;
  size_t height;
  size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
  unsigned int reserved[16];
} HIP_RESOURCE_VIEW_DESC;

typedef struct textureReference {
  int normalized;
  enum hipTextureReadMode readMode;
  enum hipTextureFilterMode filterMode;
  enum hipTextureAddressMode addressMode[3];
  struct hipChannelFormatDesc channelDesc;
  int sRGB;
  unsigned int maxAnisotropy;
  enum hipTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  hipTextureObject_t textureObject;
  int numChannels;
  enum hipArray_Format format;
} textureReference;

struct surfaceReference {
  hipSurfaceObject_t surfaceObject;
};
";

// ---------------------------------------------------------------------------------------------
// Version and flag macros
// ---------------------------------------------------------------------------------------------

/// Declares `#define`-style constants: Rust `pub const`s plus [`C_DEFINES`], the table the
/// prelude renders with AMD's own spelling (hex stays hex, negatives become `((int)-1)`).
/// Hidden from cbindgen, which would print `2147483648` and a bare `-1`.
macro_rules! c_defines {
    ($( $(#[$m:meta])* pub const $name:ident : $ty:ty = $val:literal; )*) => {
        $( $(#[$m])* pub const $name: $ty = $val; )*

        /// Every flag/version macro as (name, C spelling, value), in header order.
        pub const C_DEFINES: &[(&str, &str, i64)] =
            &[ $( (stringify!($name), stringify!($val), $val as i64), )* ];
    };
}

c_defines! {
    /// HIP major version of the ROCm 7.0 runtime we stand in for (`hip/hip_version.h`).
    pub const HIP_VERSION_MAJOR: c_int = 7;
    /// HIP minor version (ROCm 7.0).
    pub const HIP_VERSION_MINOR: c_int = 0;
    /// HIP patch version: AMD's build date stamp; ROCm 7.0.x ships HIP 7.0.51831.
    pub const HIP_VERSION_PATCH: c_int = 51831;
    pub const HIP_VERSION_BUILD_ID: c_int = 0;

    /// `hipIpcOpenMemHandle` flag; 0x01 since ROCm 6.0 (0 up to 5.7).
    pub const hipIpcMemLazyEnablePeerAccess: c_uint = 0x01;

    /// `hipStreamCreateWithFlags`: default, synchronizes with the null stream.
    pub const hipStreamDefault: c_uint = 0x00;
    /// `hipStreamCreateWithFlags`: does not synchronize with the null stream.
    pub const hipStreamNonBlocking: c_uint = 0x01;

    /// `hipEventCreateWithFlags`: default.
    pub const hipEventDefault: c_uint = 0x0;
    /// Waiting yields the CPU.
    pub const hipEventBlockingSync: c_uint = 0x1;
    /// No timing data (required for interprocess events).
    pub const hipEventDisableTiming: c_uint = 0x2;
    /// Event usable through `hipIpcGetEventHandle`; needs `hipEventDisableTiming`.
    pub const hipEventInterprocess: c_uint = 0x4;
    /// `hipEventRecordWithFlags`: default.
    pub const hipEventRecordDefault: c_uint = 0x00;
    /// `hipEventRecordWithFlags`: external node during capture.
    pub const hipEventRecordExternal: c_uint = 0x01;
    /// `hipStreamWaitEvent`: default.
    pub const hipEventWaitDefault: c_uint = 0x00;
    /// `hipStreamWaitEvent`: external node during capture.
    pub const hipEventWaitExternal: c_uint = 0x01;
    /// No system-scope fence when the event completes (AMD).
    pub const hipEventDisableSystemFence: c_uint = 0x20000000;
    /// Device-scope release on record (AMD).
    pub const hipEventReleaseToDevice: c_uint = 0x40000000;
    /// System-scope release on record (AMD).
    pub const hipEventReleaseToSystem: c_uint = 0x80000000;

    /// `hipImportExternalMemory` flag: a dedicated allocation (accepted, no effect).
    pub const hipExternalMemoryDedicated: c_uint = 0x1;

    /// `hipHostMalloc`/`hipHostAlloc`: default pinned host memory.
    pub const hipHostAllocDefault: c_uint = 0x0;
    pub const hipHostMallocDefault: c_uint = 0x0;
    /// Memory is considered allocated by all contexts.
    pub const hipHostAllocPortable: c_uint = 0x1;
    pub const hipHostMallocPortable: c_uint = 0x1;
    /// Map the allocation into the device address space.
    pub const hipHostAllocMapped: c_uint = 0x2;
    pub const hipHostMallocMapped: c_uint = 0x2;
    /// Write-combined (accepted, not functional on AMD).
    pub const hipHostAllocWriteCombined: c_uint = 0x4;
    pub const hipHostMallocWriteCombined: c_uint = 0x4;
    /// Uncached (MTYPE_UC) fine-grained host memory (AMD, Linux).
    pub const hipHostMallocUncached: c_uint = 0x10000000;
    pub const hipHostAllocUncached: c_uint = 0x10000000;
    /// Follow the user's NUMA policy.
    pub const hipHostMallocNumaUser: c_uint = 0x20000000;
    /// Coherent (fine-grained) host memory.
    pub const hipHostMallocCoherent: c_uint = 0x40000000;
    /// Non-coherent (coarse-grained) host memory.
    pub const hipHostMallocNonCoherent: c_uint = 0x80000000;

    /// `hipMallocManaged` attach flags.
    pub const hipMemAttachGlobal: c_uint = 0x01;
    pub const hipMemAttachHost: c_uint = 0x02;
    pub const hipMemAttachSingle: c_uint = 0x04;

    /// `hipMallocArray`/`hipArray3DCreate` flags.
    pub const hipArrayDefault: c_uint = 0x00;
    pub const hipArrayLayered: c_uint = 0x01;
    pub const hipArraySurfaceLoadStore: c_uint = 0x02;
    pub const hipArrayCubemap: c_uint = 0x04;
    pub const hipArrayTextureGather: c_uint = 0x08;

    /// `hipTexRefSetArray`/`hipTexRefSetMipmappedArray` flag: take the format from the array
    /// (`driver_types.h`).
    pub const HIP_TRSA_OVERRIDE_FORMAT: c_uint = 0x01;
    /// `hipTexRefSetFlags` flags: read as integer, normalized coordinates, sRGB.
    pub const HIP_TRSF_READ_AS_INTEGER: c_uint = 0x01;
    pub const HIP_TRSF_NORMALIZED_COORDINATES: c_uint = 0x02;
    pub const HIP_TRSF_SRGB: c_uint = 0x10;

    /// `hipExtMallocWithFlags` flags.
    pub const hipDeviceMallocDefault: c_uint = 0x0;
    pub const hipDeviceMallocFinegrained: c_uint = 0x1;
    pub const hipMallocSignalMemory: c_uint = 0x2;
    pub const hipDeviceMallocUncached: c_uint = 0x3;
    pub const hipDeviceMallocContiguous: c_uint = 0x4;

    /// `hipStreamWaitValue32/64` compare operations.
    pub const hipStreamWaitValueGte: c_uint = 0x0;
    pub const hipStreamWaitValueEq: c_uint = 0x1;
    pub const hipStreamWaitValueAnd: c_uint = 0x2;
    pub const hipStreamWaitValueNor: c_uint = 0x3;

    /// `hipHostRegister` flags.
    pub const hipHostRegisterDefault: c_uint = 0x0;
    pub const hipHostRegisterPortable: c_uint = 0x1;
    pub const hipHostRegisterMapped: c_uint = 0x2;
    pub const hipHostRegisterIoMemory: c_uint = 0x4;
    pub const hipHostRegisterReadOnly: c_uint = 0x08;
    pub const hipExtHostRegisterCoarseGrained: c_uint = 0x8;
    pub const hipExtHostRegisterUncached: c_uint = 0x80000000;

    /// `hipSetDeviceFlags` flags.
    pub const hipDeviceScheduleAuto: c_uint = 0x0;
    pub const hipDeviceScheduleSpin: c_uint = 0x1;
    pub const hipDeviceScheduleYield: c_uint = 0x2;
    pub const hipDeviceScheduleBlockingSync: c_uint = 0x4;
    pub const hipDeviceScheduleMask: c_uint = 0x7;
    pub const hipDeviceMapHost: c_uint = 0x8;
    pub const hipDeviceLmemResizeToMax: c_uint = 0x10;

    /// `hipGetProcAddress` flags (`hip_runtime_api.h`).
    pub const HIP_GET_PROC_ADDRESS_DEFAULT: u64 = 0x0;
    pub const HIP_GET_PROC_ADDRESS_LEGACY_STREAM: u64 = 0x1;
    pub const HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 0x2;
    /// `hipGetDriverEntryPoint` flags (`hip_runtime_api.h`, ROCm 7.1).
    pub const hipEnableDefault: u64 = 0x0;
    pub const hipEnableLegacyStream: u64 = 0x1;
    pub const hipEnablePerThreadDefaultStream: u64 = 0x2;

    /// Device ordinal meaning "the CPU" (`#define hipCpuDeviceId ((int)-1)`).
    pub const hipCpuDeviceId: c_int = -1;
    /// Invalid device ordinal (`#define hipInvalidDeviceId ((int)-2)`).
    pub const hipInvalidDeviceId: c_int = -2;
}

/// `HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH`
/// (= 70051831, `hip/hip_version.h`). clr's `hipRuntimeGetVersion` and `hipDriverGetVersion`
/// both store this (`hipamd/src/hip_context.cpp`). The header spells it as AMD does.
pub const HIP_VERSION: c_int = HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH;

/// Value `hipRuntimeGetVersion` stores (= [`HIP_VERSION`], as clr does).
pub const HIPKFD_RUNTIME_VERSION: c_int = HIP_VERSION;
/// Value `hipDriverGetVersion` stores (= [`HIP_VERSION`], as clr does).
pub const HIPKFD_DRIVER_VERSION: c_int = HIP_VERSION;

// ---------------------------------------------------------------------------------------------
// Header prelude
// ---------------------------------------------------------------------------------------------

/// The calls that `HIP_API_PER_THREAD_DEFAULT_STREAM` renames to `NAME_spt` (ROCm 7's
/// `amd_hip_runtime_pt_api.h`, in its order).
const PER_THREAD_STREAM_NAMES: &[&str] = &[
    "hipMemcpy",
    "hipMemcpyToSymbol",
    "hipMemcpyFromSymbol",
    "hipMemcpy2D",
    "hipMemcpy2DFromArray",
    "hipMemcpy3D",
    "hipMemset",
    "hipMemset2D",
    "hipMemset3D",
    "hipMemcpyAsync",
    "hipMemset3DAsync",
    "hipMemset2DAsync",
    "hipMemsetAsync",
    "hipMemcpy3DAsync",
    "hipMemcpy2DAsync",
    "hipMemcpyFromSymbolAsync",
    "hipMemcpyToSymbolAsync",
    "hipMemcpyFromArray",
    "hipMemcpy2DToArray",
    "hipMemcpy2DFromArrayAsync",
    "hipMemcpy2DToArrayAsync",
    "hipStreamSynchronize",
    "hipStreamQuery",
    "hipStreamGetFlags",
    "hipStreamGetPriority",
    "hipStreamWaitEvent",
    "hipStreamAddCallback",
    "hipLaunchHostFunc",
    "hipEventRecord",
    "hipLaunchKernel",
    "hipLaunchCooperativeKernel",
    "hipGraphLaunch",
    "hipStreamBeginCapture",
    "hipStreamEndCapture",
    "hipStreamIsCapturing",
    "hipStreamGetCaptureInfo",
    "hipStreamGetCaptureInfo_v2",
];

/// The C declarations cbindgen cannot derive, rendered from the tables above: the R0600
/// renaming macros, the pointer-valued stream macros, the per-thread default stream renames,
/// the `hipDeviceArch_t` bitfields and every [`c_enum!`] enum as `typedef enum NAME { ... }
/// NAME;` (`hipError_t` with AMD's C++17 `[[nodiscard]]`). `tests/header.rs` passes this to cbindgen as `after_includes`.
#[doc(hidden)]
pub fn c_header_prelude() -> String {
    let mut s = String::new();
    s.push('\n');
    for (name, text, _) in C_DEFINES {
        let text = if text.starts_with('-') { format!("((int){text})") } else { text.to_string() };
        let _ = writeln!(s, "#define {name} {text}");
        if *name == "HIP_VERSION_BUILD_ID" {
            s.push_str("#define HIP_VERSION_BUILD_NAME \"\"\n#define HIP_VERSION_GITHASH \"\"\n");
            s.push_str("#define HIP_VERSION \\\n  (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)\n");
        }
    }
    s.push_str("\n/* ROCm 6.0+ names the versioned device-property ABI (hip_runtime_api.h). */\n");
    s.push_str("#define hipGetDeviceProperties hipGetDevicePropertiesR0600\n");
    s.push_str("#define hipDeviceProp_t hipDeviceProp_tR0600\n");
    s.push_str("#define hipChooseDevice hipChooseDeviceR0600\n\n");
    s.push_str("#define hipStreamLegacy ((hipStream_t)1)\n");
    s.push_str("#define hipStreamPerThread ((hipStream_t)2)\n\n");
    s.push_str("/* Built for the per-thread default stream (-fgpu-default-stream=per-thread defines\n");
    s.push_str(" * HIP_API_PER_THREAD_DEFAULT_STREAM): these calls go to their _spt entry points\n");
    s.push_str(" * (amd_hip_runtime_pt_api.h). */\n#if defined(HIP_API_PER_THREAD_DEFAULT_STREAM)\n");
    for name in PER_THREAD_STREAM_NAMES {
        let _ = writeln!(s, "#define {name} {name}_spt");
    }
    s.push_str("#endif\n\n");
    s.push_str("#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)\n");
    s.push_str("#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)\n");
    s.push_str("#define HIP_LAUNCH_PARAM_END ((void*)0x03)\n\n");

    s.push_str("typedef struct {\n");
    for f in hipDeviceArch_t::FIELDS {
        let _ = writeln!(s, "  unsigned {f} : 1;");
    }
    s.push_str("} hipDeviceArch_t;\n\n");

    s.push_str("#if defined(__cplusplus) && __cplusplus >= 201703L\n");
    s.push_str("#define __HIP_NODISCARD [[nodiscard]]\n#else\n#define __HIP_NODISCARD\n#endif\n");
    render_enum(&mut s, "hipError_t", "__HIP_NODISCARD ", hipError_t::ENUMERATORS);
    s.push_str("#undef __HIP_NODISCARD\n\n");
    render_enum(&mut s, "hipDeviceAttribute_t", "", hipDeviceAttribute_t::ENUMERATORS);
    s.push('\n');
    render_enum(&mut s, "hipMemcpyKind", "", hipMemcpyKind::ENUMERATORS);
    s.push('\n');
    render_enum(&mut s, "hipDeviceP2PAttr", "", hipDeviceP2PAttr::ENUMERATORS);
    s.push('\n');
    render_enum(&mut s, "hipMemoryType", "", hipMemoryType::ENUMERATORS);
    for (name, e) in [
        ("hipMemoryAdvise", ints(hipMemoryAdvise::ENUMERATORS)),
        ("hipMemRangeAttribute", ints(hipMemRangeAttribute::ENUMERATORS)),
        ("hipMemRangeCoherencyMode", ints(hipMemRangeCoherencyMode::ENUMERATORS)),
        ("hipPointer_attribute", ints(hipPointer_attribute::ENUMERATORS)),
        ("hipMemRangeHandleType", ints(hipMemRangeHandleType::ENUMERATORS)),
        ("hipMemPoolAttr", ints(hipMemPoolAttr::ENUMERATORS)),
        ("hipMemLocationType", ints(hipMemLocationType::ENUMERATORS)),
        ("hipMemAccessFlags", ints(hipMemAccessFlags::ENUMERATORS)),
        ("hipMemAllocationType", ints(hipMemAllocationType::ENUMERATORS)),
        ("hipMemAllocationHandleType", ints(hipMemAllocationHandleType::ENUMERATORS)),
        ("hipMemAllocationGranularity_flags", ints(hipMemAllocationGranularity_flags::ENUMERATORS)),
        ("hipMemHandleType", ints(hipMemHandleType::ENUMERATORS)),
        ("hipMemOperationType", ints(hipMemOperationType::ENUMERATORS)),
        ("hipArraySparseSubresourceType", ints(hipArraySparseSubresourceType::ENUMERATORS)),
        ("hipExternalMemoryHandleType", ints(hipExternalMemoryHandleType::ENUMERATORS)),
        ("hipExternalSemaphoreHandleType", ints(hipExternalSemaphoreHandleType::ENUMERATORS)),
        ("hipChannelFormatKind", ints(hipChannelFormatKind::ENUMERATORS)),
        ("hipArray_Format", ints(hipArray_Format::ENUMERATORS)),
        ("hipFuncCache_t", ints(hipFuncCache_t::ENUMERATORS)),
        ("hipSharedMemConfig", ints(hipSharedMemConfig::ENUMERATORS)),
        ("hipLimit_t", ints(hipLimit_t::ENUMERATORS)),
        ("hipStreamBatchMemOpType", ints(hipStreamBatchMemOpType::ENUMERATORS)),
        ("hipGraphNodeType", ints(hipGraphNodeType::ENUMERATORS)),
        ("hipAccessProperty", ints(hipAccessProperty::ENUMERATORS)),
        ("hipLaunchAttributeID", ints(hipLaunchAttributeID::ENUMERATORS)),
        ("hipSynchronizationPolicy", ints(hipSynchronizationPolicy::ENUMERATORS)),
        ("hipLaunchMemSyncDomain", ints(hipLaunchMemSyncDomain::ENUMERATORS)),
        ("hipStreamCaptureMode", ints(hipStreamCaptureMode::ENUMERATORS)),
        ("hipStreamCaptureStatus", ints(hipStreamCaptureStatus::ENUMERATORS)),
        ("hipStreamUpdateCaptureDependenciesFlags", ints(hipStreamUpdateCaptureDependenciesFlags::ENUMERATORS)),
        ("hipGraphExecUpdateResult", ints(hipGraphExecUpdateResult::ENUMERATORS)),
        ("hipGraphInstantiateFlags", ints(hipGraphInstantiateFlags::ENUMERATORS)),
        ("hipGraphInstantiateResult", ints(hipGraphInstantiateResult::ENUMERATORS)),
        ("hipGraphMemAttributeType", ints(hipGraphMemAttributeType::ENUMERATORS)),
        ("hipUserObjectFlags", ints(hipUserObjectFlags::ENUMERATORS)),
        ("hipUserObjectRetainFlags", ints(hipUserObjectRetainFlags::ENUMERATORS)),
        ("hipGraphDebugDotFlags", ints(hipGraphDebugDotFlags::ENUMERATORS)),
        ("hipDriverProcAddressQueryResult", ints(hipDriverProcAddressQueryResult::ENUMERATORS)),
        ("hipDriverEntryPointQueryResult", ints(hipDriverEntryPointQueryResult::ENUMERATORS)),
        ("hipFunction_attribute", ints(hipFunction_attribute::ENUMERATORS)),
        ("hipFuncAttribute", ints(hipFuncAttribute::ENUMERATORS)),
        ("hipJitOption", ints(hipJitOption::ENUMERATORS)),
        ("hipJitInputType", ints(hipJitInputType::ENUMERATORS)),
        ("hipLibraryOption", ints(hipLibraryOption::ENUMERATORS)),
        ("hipMemcpyFlags", ints(hipMemcpyFlags::ENUMERATORS)),
        ("hipMemcpySrcAccessOrder", ints(hipMemcpySrcAccessOrder::ENUMERATORS)),
        ("hipMemcpy3DOperandType", ints(hipMemcpy3DOperandType::ENUMERATORS)),
        ("hipResourceType", ints(hipResourceType::ENUMERATORS)),
        ("HIPresourcetype", ints(HIPresourcetype::ENUMERATORS)),
        ("HIPaddress_mode", ints(HIPaddress_mode::ENUMERATORS)),
        ("HIPfilter_mode", ints(HIPfilter_mode::ENUMERATORS)),
        ("hipResourceViewFormat", ints(hipResourceViewFormat::ENUMERATORS)),
        ("HIPresourceViewFormat", ints(HIPresourceViewFormat::ENUMERATORS)),
        ("hipTextureAddressMode", ints(hipTextureAddressMode::ENUMERATORS)),
        ("hipTextureFilterMode", ints(hipTextureFilterMode::ENUMERATORS)),
        ("hipTextureReadMode", ints(hipTextureReadMode::ENUMERATORS)),
        ("hipSurfaceBoundaryMode", ints(hipSurfaceBoundaryMode::ENUMERATORS)),
        ("hipGraphicsRegisterFlags", ints(hipGraphicsRegisterFlags::ENUMERATORS)),
        ("hipGLDeviceList", ints(hipGLDeviceList::ENUMERATORS)),
    ] {
        s.push('\n');
        render_enum(&mut s, name, "", &e);
    }
    s.push('\n');
    s.push_str(VMM_PROP_C);
    s.push('\n');
    s.push_str(INTEROP_C);
    s.push('\n');
    s.push_str(STREAM_BATCH_MEM_OP_C);
    s.push_str(TEXTURE_C);
    s.push_str("\n/* Defined at the end of the header (GRAPH_NODE_PARAMS_C). */\ntypedef struct hipGraphNodeParams hipGraphNodeParams;\n");
    s.push_str("/* AMD's struct tag is hipLaunchParams_t. */\ntypedef struct hipLaunchParams_t hipLaunchParams;\n");
    s.push_str("typedef struct hipFunctionLaunchParams_t hipFunctionLaunchParams;\n");
    s.push_str("/* Defined at the end of the header (LAUNCH_CONFIG_C). */\n");
    s.push_str("typedef struct hipLaunchAttribute_st hipLaunchAttribute;\n");
    s.push_str("typedef struct hipLaunchConfig_st hipLaunchConfig_t;\n");
    s.push_str("typedef struct HIP_LAUNCH_CONFIG_st HIP_LAUNCH_CONFIG;\n");
    // AMD's tags of these enums end in `_enum`.
    for e in [
        "hipExternalMemoryHandleType",
        "hipExternalSemaphoreHandleType",
        "HIPresourcetype",
        "HIPaddress_mode",
        "HIPfilter_mode",
        "HIPresourceViewFormat",
    ] {
        s = s.replace(&format!("typedef enum {e} {{"), &format!("typedef enum {e}_enum {{"));
    }
    s = s.replace("typedef enum hipLibraryOption {", "typedef enum hipLibraryOption_e {");
    s
}

/// An enumerator table with plain `int` values, so tables of several enum types share a loop.
fn ints<T: Copy + Into<c_int>>(e: &[(&'static str, T)]) -> Vec<(&'static str, c_int)> {
    e.iter().map(|(n, v)| (*n, (*v).into())).collect()
}

/// `typedef enum {attr}{name} { ... } {name};` for a [`c_enum!`] table.
pub(crate) fn render_enum<T: Copy + Into<c_int>>(s: &mut String, name: &str, attr: &str, e: &[(&str, T)]) {
    let _ = writeln!(s, "typedef enum {attr}{name} {{");
    for (i, (n, v)) in e.iter().enumerate() {
        let sep = if i + 1 == e.len() { "" } else { "," };
        let _ = writeln!(s, "  {n} = {}{sep}", (*v).into());
    }
    let _ = writeln!(s, "}} {name};");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn handle_and_small_struct_layouts() {
        assert_eq!(size_of::<hipError_t>(), 4);
        assert_eq!(size_of::<HIP_ARRAY_DESCRIPTOR>(), 24);
        assert_eq!(size_of::<HIP_ARRAY3D_DESCRIPTOR>(), 40);
        assert_eq!(size_of::<hip_Memcpy2D>(), 128);
        assert_eq!(offset_of!(hip_Memcpy2D, dstXInBytes), 56);
        assert_eq!(size_of::<HIP_MEMCPY3D>(), 184);
        assert_eq!(size_of::<hipStreamBatchMemOpParams>(), 48);
        assert_eq!(offset_of!(hipStreamBatchMemOpParams, address), 8);
        assert_eq!(offset_of!(hipStreamBatchMemOpParams, value64), 16);
        assert_eq!(offset_of!(hipStreamBatchMemOpParams, flags), 24);
        assert_eq!(offset_of!(hipStreamBatchMemOpParams, alias), 32);
        assert_eq!(size_of::<hipBatchMemOpNodeParams>(), 32);
        assert_eq!(offset_of!(hipBatchMemOpNodeParams, paramArray), 16);
        assert_eq!(offset_of!(hipBatchMemOpNodeParams, flags), 24);
        assert_eq!(offset_of!(HIP_MEMCPY3D, dstXInBytes), 80);
        assert_eq!(offset_of!(HIP_MEMCPY3D, WidthInBytes), 160);
        assert_eq!(size_of::<hipMemcpyKind>(), 4);
        assert_eq!(size_of::<hipDeviceAttribute_t>(), 4);
        assert_eq!(size_of::<hipStream_t>(), 8);
        assert_eq!(size_of::<hipEvent_t>(), 8);
        assert_eq!(size_of::<hipDeviceptr_t>(), 8);
        assert_eq!(size_of::<hipUUID>(), 16);
        assert_eq!(size_of::<hipDeviceArch_t>(), 4);
        // Reference §B.2: HIP_IPC_HANDLE_SIZE 64 → both handles 64 bytes.
        assert_eq!(size_of::<hipIpcMemHandle_t>(), 64);
        assert_eq!(size_of::<hipIpcEventHandle_t>(), 64);
        assert_eq!(size_of::<hipPointerAttribute_t>(), 32);
        // Reference §B.3: VMM structs.
        assert_eq!(size_of::<hipMemLocation>(), 8);
        assert_eq!(size_of::<hipMemAccessDesc>(), 12);
        assert_eq!(size_of::<hipPitchedPtr>(), 32);
        assert_eq!(size_of::<hipMemPoolProps>(), 88);
        assert_eq!(offset_of!(hipMemPoolProps, maxSize), 24);
        assert_eq!(size_of::<hipPos>(), 24);
        assert_eq!(size_of::<hipMemcpy3DParms>(), 160);
        assert_eq!(offset_of!(hipMemcpy3DParms, dstArray), 64);
        assert_eq!(offset_of!(hipMemcpy3DParms, extent), 128);
        assert_eq!(offset_of!(hipMemcpy3DParms, kind), 152);
        assert_eq!(size_of::<hipMemsetParams>(), 48);
        assert_eq!(offset_of!(hipMemsetParams, value), 32);
        assert_eq!(offset_of!(hipMemsetParams, width), 40);
        assert_eq!(size_of::<hipHostNodeParams>(), 16);
        assert_eq!(size_of::<hipKernelNodeParams>(), 64);
        assert_eq!(offset_of!(hipKernelNodeParams, func), 24);
        assert_eq!(offset_of!(hipKernelNodeParams, gridDim), 32);
        assert_eq!(offset_of!(hipKernelNodeParams, sharedMemBytes), 56);
        assert_eq!(offset_of!(hipMemAccessDesc, flags), 8);
        assert_eq!(size_of::<hipMemAllocationProp>(), 32);
        assert_eq!(offset_of!(hipMemAllocationProp, handleTypes), 4);
        assert_eq!(offset_of!(hipMemAllocationProp, location), 8);
        assert_eq!(offset_of!(hipMemAllocationProp, win32HandleMetaData), 16);
        assert_eq!(offset_of!(hipMemAllocationProp, allocFlags), 24);
        assert_eq!(offset_of!(hipPointerAttribute_t, r#type), 0);
        assert_eq!(offset_of!(hipPointerAttribute_t, device), 4);
        assert_eq!(offset_of!(hipPointerAttribute_t, devicePointer), 8);
        assert_eq!(offset_of!(hipPointerAttribute_t, hostPointer), 16);
        assert_eq!(offset_of!(hipPointerAttribute_t, isManaged), 24);
        assert_eq!(offset_of!(hipPointerAttribute_t, allocationFlags), 28);
    }

    /// The module, launch and batch-copy structs of ROCm 6.5 / 7.1 (offsets as in the doc
    /// comments, from AMD's `hip_runtime_api.h` / `driver_types.h`).
    #[test]
    fn launch_and_batch_copy_layouts() {
        assert_eq!(size_of::<hipLaunchAttribute>(), 72);
        assert_eq!(offset_of!(hipLaunchAttribute, val), 8);
        assert_eq!(size_of::<hipLaunchConfig_t>(), 56);
        assert_eq!(offset_of!(hipLaunchConfig_t, dynamicSmemBytes), 24);
        assert_eq!(offset_of!(hipLaunchConfig_t, attrs), 40);
        assert_eq!(offset_of!(hipLaunchConfig_t, numAttrs), 48);
        assert_eq!(size_of::<HIP_LAUNCH_CONFIG>(), 56);
        assert_eq!(offset_of!(HIP_LAUNCH_CONFIG, hStream), 32);
        assert_eq!(offset_of!(HIP_LAUNCH_CONFIG, numAttrs), 48);
        assert_eq!(size_of::<hipFunctionLaunchParams>(), 56);
        assert_eq!(offset_of!(hipFunctionLaunchParams, hStream), 40);
        assert_eq!(size_of::<hipMemcpy3DPeerParms>(), 168);
        assert_eq!(offset_of!(hipMemcpy3DPeerParms, srcDevice), 64);
        assert_eq!(offset_of!(hipMemcpy3DPeerParms, dstArray), 72);
        assert_eq!(offset_of!(hipMemcpy3DPeerParms, dstDevice), 136);
        assert_eq!(offset_of!(hipMemcpy3DPeerParms, extent), 144);
        assert_eq!(size_of::<hipMemcpyAttributes>(), 24);
        assert_eq!(offset_of!(hipMemcpyAttributes, dstLocHint), 12);
        assert_eq!(offset_of!(hipMemcpyAttributes, flags), 20);
        assert_eq!(size_of::<hipMemcpy3DOperand>(), 40);
        assert_eq!(offset_of!(hipMemcpy3DOperand, op), 8);
        assert_eq!(size_of::<hipMemcpy3DBatchOp>(), 112);
        assert_eq!(offset_of!(hipMemcpy3DBatchOp, extent), 80);
        assert_eq!(offset_of!(hipMemcpy3DBatchOp, srcAccessOrder), 104);
        assert_eq!(offset_of!(hipMemcpy3DBatchOp, flags), 108);
    }

    /// Sizes and offsets of the texture structs as gcc lays out ROCm 7's `driver_types.h` /
    /// `texture_types.h` definitions on x86-64 (unchanged since ROCm 5.2).
    #[test]
    fn texture_struct_layouts() {
        assert_eq!(size_of::<hipResourceDesc>(), 64);
        assert_eq!(offset_of!(hipResourceDesc, res), 8);
        assert_eq!(offset_of!(hipResourceDesc_pitch2D, desc), 8);
        assert_eq!(offset_of!(hipResourceDesc_pitch2D, width), 32);
        assert_eq!(offset_of!(hipResourceDesc_pitch2D, pitchInBytes), 48);
        assert_eq!(offset_of!(hipResourceDesc_linear, sizeInBytes), 32);
        assert_eq!(size_of::<HIP_RESOURCE_DESC>(), 144);
        assert_eq!(offset_of!(HIP_RESOURCE_DESC, res), 8);
        assert_eq!(offset_of!(HIP_RESOURCE_DESC, flags), 136);
        assert_eq!(offset_of!(HIP_RESOURCE_DESC_pitch2D, width), 16);
        assert_eq!(size_of::<hipTextureDesc>(), 64);
        assert_eq!(offset_of!(hipTextureDesc, borderColor), 24);
        assert_eq!(offset_of!(hipTextureDesc, normalizedCoords), 40);
        assert_eq!(offset_of!(hipTextureDesc, maxMipmapLevelClamp), 60);
        assert_eq!(size_of::<HIP_TEXTURE_DESC>(), 104);
        assert_eq!(offset_of!(HIP_TEXTURE_DESC, flags), 16);
        assert_eq!(offset_of!(HIP_TEXTURE_DESC, borderColor), 40);
        assert_eq!(offset_of!(HIP_TEXTURE_DESC, reserved), 56);
        assert_eq!(size_of::<hipResourceViewDesc>(), 48);
        assert_eq!(offset_of!(hipResourceViewDesc, width), 8);
        assert_eq!(offset_of!(hipResourceViewDesc, lastLayer), 44);
        assert_eq!(size_of::<HIP_RESOURCE_VIEW_DESC>(), 112);
        assert_eq!(offset_of!(HIP_RESOURCE_VIEW_DESC, reserved), 48);
        assert_eq!(size_of::<textureReference>(), 88);
        assert_eq!(offset_of!(textureReference, channelDesc), 24);
        assert_eq!(offset_of!(textureReference, sRGB), 44);
        assert_eq!(offset_of!(textureReference, maxMipmapLevelClamp), 64);
        assert_eq!(offset_of!(textureReference, textureObject), 72);
        assert_eq!(offset_of!(textureReference, numChannels), 80);
        assert_eq!(offset_of!(textureReference, format), 84);
        assert_eq!(size_of::<surfaceReference>(), 8);
        assert_eq!(size_of::<hipTextureObject_t>(), 8);
    }

    /// Sizes and offsets computed with gcc from AMD's newest `hipDeviceProp_tR0600`
    /// (identical to the ROCm 6.3 definition).
    #[test]
    fn device_prop_r0600_layout() {
        type P = hipDeviceProp_tR0600;
        assert_eq!(size_of::<P>(), 1472);
        let expect = [
            (offset_of!(P, uuid), 256),
            (offset_of!(P, luid), 272),
            (offset_of!(P, luidDeviceNodeMask), 280),
            (offset_of!(P, totalGlobalMem), 288),
            (offset_of!(P, memPitch), 312),
            (offset_of!(P, clockRate), 348),
            (offset_of!(P, totalConstMem), 352),
            (offset_of!(P, major), 360),
            (offset_of!(P, textureAlignment), 368),
            (offset_of!(P, multiProcessorCount), 388),
            (offset_of!(P, maxTexture1D), 408),
            (offset_of!(P, surfaceAlignment), 568),
            (offset_of!(P, concurrentKernels), 576),
            (offset_of!(P, pciBusID), 584),
            (offset_of!(P, pciDeviceID), 588),
            (offset_of!(P, pciDomainID), 592),
            (offset_of!(P, l2CacheSize), 616),
            (offset_of!(P, sharedMemPerMultiprocessor), 640),
            (offset_of!(P, regsPerMultiprocessor), 648),
            (offset_of!(P, sharedMemPerBlockOptin), 696),
            (offset_of!(P, reservedSharedMemPerBlock), 720),
            (offset_of!(P, memoryPoolSupportedHandleTypes), 760),
            (offset_of!(P, unifiedFunctionPointers), 776),
            (offset_of!(P, reserved), 780),
            (offset_of!(P, hipReserved), 1032),
            (offset_of!(P, gcnArchName), 1160),
            (offset_of!(P, maxSharedMemoryPerMultiProcessor), 1416),
            (offset_of!(P, clockInstructionRate), 1424),
            (offset_of!(P, arch), 1428),
            (offset_of!(P, hdpMemFlushCntl), 1432),
            (offset_of!(P, hdpRegFlushCntl), 1440),
            (offset_of!(P, cooperativeMultiDeviceUnmatchedFunc), 1448),
            (offset_of!(P, isLargeBar), 1464),
            (offset_of!(P, asicRevision), 1468),
        ];
        for (i, (got, want)) in expect.iter().enumerate() {
            assert_eq!(got, want, "entry {i}");
        }
    }

    #[test]
    fn device_prop_r0000_layout() {
        type P = hipDeviceProp_tR0000;
        assert_eq!(size_of::<P>(), 792);
        assert_eq!(offset_of!(P, totalGlobalMem), 256);
        assert_eq!(offset_of!(P, clockRate), 308);
        assert_eq!(offset_of!(P, totalConstMem), 320);
        assert_eq!(offset_of!(P, arch), 356);
        assert_eq!(offset_of!(P, pciDomainID), 364);
        assert_eq!(offset_of!(P, maxSharedMemoryPerMultiProcessor), 376);
        assert_eq!(offset_of!(P, gcnArch), 392);
        assert_eq!(offset_of!(P, gcnArchName), 396);
        assert_eq!(offset_of!(P, integrated), 652);
        assert_eq!(offset_of!(P, hdpMemFlushCntl), 696);
        assert_eq!(offset_of!(P, memPitch), 712);
        assert_eq!(offset_of!(P, isLargeBar), 764);
        assert_eq!(offset_of!(P, pageableMemoryAccessUsesHostPageTables), 788);
    }

    #[test]
    fn enum_values_and_names() {
        assert_eq!(hipError_t::hipErrorMemoryAllocation, hipError_t::hipErrorOutOfMemory);
        assert_eq!(hipError_t(2).name(), Some("hipErrorOutOfMemory"));
        assert_eq!(hipError_t(400).name(), Some("hipErrorInvalidHandle"));
        assert_eq!(hipError_t(12345).name(), None);
        assert_eq!(hipError_t::hipErrorTbd.0, 1055);
        assert_eq!(hipDeviceAttribute_t::hipDeviceAttributeVirtualMemoryManagementSupported.0, 89);
        assert_eq!(hipDeviceAttribute_t::hipDeviceAttributeWarpSize.0, 87);
        assert_eq!(hipDeviceAttribute_t::hipDeviceAttributeMaxDynDataPrefetchRegions.0, 10022);
        assert_eq!(hipMemoryType::hipMemoryTypeUnified.0, 11);
        assert_eq!(hipMemcpyKind::hipMemcpyDeviceToDeviceNoCU.0, 1024);
        assert_eq!(HIP_VERSION, 70051831);
        assert_eq!(format!("{:?}", hipError_t(1)), "hipErrorInvalidValue(1)");
        // Values strictly increase except where AMD spells an alias of the previous entry.
        for t in [hipError_t::ENUMERATORS] {
            for w in t.windows(2) {
                assert!(w[1].1 >= w[0].1, "{} after {}", w[1].0, w[0].0);
            }
        }
    }

    #[test]
    fn defines_spell_their_values() {
        for (name, text, value) in C_DEFINES {
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => i64::from_str_radix(hex, 16).unwrap(),
                None => text.parse::<i64>().unwrap(),
            };
            assert_eq!(parsed, *value, "{name}");
        }
        assert_eq!(hipHostMallocNonCoherent, 0x8000_0000);
        let p = c_header_prelude();
        assert!(p.contains("#define hipHostMallocNonCoherent 0x80000000\n"));
        assert!(p.contains("#define hipCpuDeviceId ((int)-1)\n"));
        assert!(p.contains("#define HIP_VERSION_PATCH 51831\n"));
    }

    #[test]
    fn arch_bits() {
        let a = hipDeviceArch_t::with(&["hasGlobalInt32Atomics", "hasDoubles", "has3dGrid"]);
        assert_eq!(a.bits, 1 | (1 << 7) | (1 << 15));
        assert!(a.get("hasDoubles"));
        assert!(!a.get("hasWarpVote"));
    }

    #[test]
    fn prelude_renders_enums() {
        let p = c_header_prelude();
        assert!(p.contains("typedef enum __HIP_NODISCARD hipError_t {\n  hipSuccess = 0,\n"));
        assert!(p.contains("  hipErrorTbd = 1055\n} hipError_t;\n"));
        assert!(p.contains("  hipMemoryTypeUnified = 11\n} hipMemoryType;\n"));
        assert!(p.contains("  unsigned hasDynamicParallelism : 1;\n} hipDeviceArch_t;"));
    }
}
