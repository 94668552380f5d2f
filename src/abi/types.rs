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
        hipGraphNodeTypeCount = 14,
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
        hipLaunchAttributeAccessPolicyWindow = 1,
        hipLaunchAttributeCooperative = 2,
        hipLaunchAttributeSynchronizationPolicy = 3,
        hipLaunchAttributePriority = 8,
        hipLaunchAttributeMemSyncDomainMap = 9,
        hipLaunchAttributeMemSyncDomain = 10,
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
        hipJitOptionNumOptions = 17,
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
    ] {
        s.push('\n');
        render_enum(&mut s, name, "", &e);
    }
    s.push('\n');
    s.push_str(VMM_PROP_C);
    s.push('\n');
    s.push_str(INTEROP_C);
    s.push_str("\n/* Defined at the end of the header (GRAPH_NODE_PARAMS_C). */\ntypedef struct hipGraphNodeParams hipGraphNodeParams;\n");
    s.push_str("/* AMD's struct tag is hipLaunchParams_t. */\ntypedef struct hipLaunchParams_t hipLaunchParams;\n");
    // AMD's tags of the two interop enums end in `_enum`.
    for e in ["hipExternalMemoryHandleType", "hipExternalSemaphoreHandleType"] {
        s = s.replace(&format!("typedef enum {e} {{"), &format!("typedef enum {e}_enum {{"));
    }
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
