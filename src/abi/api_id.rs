//! `hip_api_id_t`: the ids HIP's tracing interface gives its API functions (AMD's generated
//! `hip/amd_detail/hip_prof_str.h`, `enum hip_api_id_t` and `hip_api_name`; newest ROCm/rocm-systems
//! `projects/clr/hipamd/include/hip/amd_detail/hip_prof_str.h`, 2025-26: ids 1 ..= 446, each
//! AMD's, the retired ones `HIP_API_ID_RESERVED_N`). `hipApiName` answers from this table.
//!
//! Layer `abi`: imports nothing of ours but the ABI itself.

use std::ffi::CStr;

/// `HIP_API_ID_NONE`: no API (never named).
pub const HIP_API_ID_NONE: u32 = 0;
/// `HIP_API_ID_FIRST`.
pub const HIP_API_ID_FIRST: u32 = 1;
/// `HIP_API_ID_LAST`: the highest id.
pub const HIP_API_ID_LAST: u32 = 446;

/// The name of each id, indexed by id; `None` for `HIP_API_ID_NONE` and the reserved ids
/// (50, 82, 83, 185, 296, 393, 394, 395, 396, 397, 398, 399, 407), which `hip_api_name` has no case for.
pub static HIP_API_NAMES: [Option<&CStr>; HIP_API_ID_LAST as usize + 1] = [
    None,                                                                 // 0: HIP_API_ID_NONE
    Some(c"__hipPopCallConfiguration"),                                   // 1
    Some(c"__hipPushCallConfiguration"),                                  // 2
    Some(c"hipArray3DCreate"),                                            // 3
    Some(c"hipArrayCreate"),                                              // 4
    Some(c"hipArrayDestroy"),                                             // 5
    Some(c"hipChooseDeviceR0000"),                                        // 6
    Some(c"hipConfigureCall"),                                            // 7
    Some(c"hipCtxCreate"),                                                // 8
    Some(c"hipCtxDestroy"),                                               // 9
    Some(c"hipCtxDisablePeerAccess"),                                     // 10
    Some(c"hipCtxEnablePeerAccess"),                                      // 11
    Some(c"hipCtxGetApiVersion"),                                         // 12
    Some(c"hipCtxGetCacheConfig"),                                        // 13
    Some(c"hipCtxGetCurrent"),                                            // 14
    Some(c"hipCtxGetDevice"),                                             // 15
    Some(c"hipCtxGetFlags"),                                              // 16
    Some(c"hipCtxGetSharedMemConfig"),                                    // 17
    Some(c"hipCtxPopCurrent"),                                            // 18
    Some(c"hipCtxPushCurrent"),                                           // 19
    Some(c"hipCtxSetCacheConfig"),                                        // 20
    Some(c"hipCtxSetCurrent"),                                            // 21
    Some(c"hipCtxSetSharedMemConfig"),                                    // 22
    Some(c"hipCtxSynchronize"),                                           // 23
    Some(c"hipDestroyExternalMemory"),                                    // 24
    Some(c"hipDestroyExternalSemaphore"),                                 // 25
    Some(c"hipDeviceCanAccessPeer"),                                      // 26
    Some(c"hipDeviceComputeCapability"),                                  // 27
    Some(c"hipDeviceDisablePeerAccess"),                                  // 28
    Some(c"hipDeviceEnablePeerAccess"),                                   // 29
    Some(c"hipDeviceGet"),                                                // 30
    Some(c"hipDeviceGetAttribute"),                                       // 31
    Some(c"hipDeviceGetByPCIBusId"),                                      // 32
    Some(c"hipDeviceGetCacheConfig"),                                     // 33
    Some(c"hipDeviceGetLimit"),                                           // 34
    Some(c"hipDeviceGetName"),                                            // 35
    Some(c"hipDeviceGetP2PAttribute"),                                    // 36
    Some(c"hipDeviceGetPCIBusId"),                                        // 37
    Some(c"hipDeviceGetSharedMemConfig"),                                 // 38
    Some(c"hipDeviceGetStreamPriorityRange"),                             // 39
    Some(c"hipDevicePrimaryCtxGetState"),                                 // 40
    Some(c"hipDevicePrimaryCtxRelease"),                                  // 41
    Some(c"hipDevicePrimaryCtxReset"),                                    // 42
    Some(c"hipDevicePrimaryCtxRetain"),                                   // 43
    Some(c"hipDevicePrimaryCtxSetFlags"),                                 // 44
    Some(c"hipDeviceReset"),                                              // 45
    Some(c"hipDeviceSetCacheConfig"),                                     // 46
    Some(c"hipDeviceSetSharedMemConfig"),                                 // 47
    Some(c"hipDeviceSynchronize"),                                        // 48
    Some(c"hipDeviceTotalMem"),                                           // 49
    None,                                                                 // 50: HIP_API_ID_RESERVED_50
    Some(c"hipDrvMemcpy2DUnaligned"),                                     // 51
    Some(c"hipDrvMemcpy3D"),                                              // 52
    Some(c"hipDrvMemcpy3DAsync"),                                         // 53
    Some(c"hipEventCreate"),                                              // 54
    Some(c"hipEventCreateWithFlags"),                                     // 55
    Some(c"hipEventDestroy"),                                             // 56
    Some(c"hipEventElapsedTime"),                                         // 57
    Some(c"hipEventQuery"),                                               // 58
    Some(c"hipEventRecord"),                                              // 59
    Some(c"hipEventSynchronize"),                                         // 60
    Some(c"hipExtGetLinkTypeAndHopCount"),                                // 61
    Some(c"hipExtLaunchKernel"),                                          // 62
    Some(c"hipExtLaunchMultiKernelMultiDevice"),                          // 63
    Some(c"hipExtMallocWithFlags"),                                       // 64
    Some(c"hipExtModuleLaunchKernel"),                                    // 65
    Some(c"hipExtStreamCreateWithCUMask"),                                // 66
    Some(c"hipExtStreamGetCUMask"),                                       // 67
    Some(c"hipExternalMemoryGetMappedBuffer"),                            // 68
    Some(c"hipFree"),                                                     // 69
    Some(c"hipFreeArray"),                                                // 70
    Some(c"hipFreeHost"),                                                 // 71
    Some(c"hipFreeMipmappedArray"),                                       // 72
    Some(c"hipFuncGetAttribute"),                                         // 73
    Some(c"hipFuncGetAttributes"),                                        // 74
    Some(c"hipFuncSetAttribute"),                                         // 75
    Some(c"hipFuncSetCacheConfig"),                                       // 76
    Some(c"hipFuncSetSharedMemConfig"),                                   // 77
    Some(c"hipGetDevice"),                                                // 78
    Some(c"hipGetDeviceCount"),                                           // 79
    Some(c"hipGetDeviceFlags"),                                           // 80
    Some(c"hipGetDevicePropertiesR0000"),                                 // 81
    None,                                                                 // 82: HIP_API_ID_RESERVED_82
    None,                                                                 // 83: HIP_API_ID_RESERVED_83
    Some(c"hipGetLastError"),                                             // 84
    Some(c"hipGetMipmappedArrayLevel"),                                   // 85
    Some(c"hipGetSymbolAddress"),                                         // 86
    Some(c"hipGetSymbolSize"),                                            // 87
    Some(c"hipHccModuleLaunchKernel"),                                    // 88
    Some(c"hipHostAlloc"),                                                // 89
    Some(c"hipHostFree"),                                                 // 90
    Some(c"hipHostGetDevicePointer"),                                     // 91
    Some(c"hipHostGetFlags"),                                             // 92
    Some(c"hipHostMalloc"),                                               // 93
    Some(c"hipHostRegister"),                                             // 94
    Some(c"hipHostUnregister"),                                           // 95
    Some(c"hipImportExternalMemory"),                                     // 96
    Some(c"hipImportExternalSemaphore"),                                  // 97
    Some(c"hipInit"),                                                     // 98
    Some(c"hipIpcCloseMemHandle"),                                        // 99
    Some(c"hipIpcGetEventHandle"),                                        // 100
    Some(c"hipIpcGetMemHandle"),                                          // 101
    Some(c"hipIpcOpenEventHandle"),                                       // 102
    Some(c"hipIpcOpenMemHandle"),                                         // 103
    Some(c"hipLaunchByPtr"),                                              // 104
    Some(c"hipLaunchCooperativeKernel"),                                  // 105
    Some(c"hipLaunchCooperativeKernelMultiDevice"),                       // 106
    Some(c"hipLaunchKernel"),                                             // 107
    Some(c"hipMalloc"),                                                   // 108
    Some(c"hipMalloc3D"),                                                 // 109
    Some(c"hipMalloc3DArray"),                                            // 110
    Some(c"hipMallocArray"),                                              // 111
    Some(c"hipMallocHost"),                                               // 112
    Some(c"hipMallocManaged"),                                            // 113
    Some(c"hipMallocMipmappedArray"),                                     // 114
    Some(c"hipMallocPitch"),                                              // 115
    Some(c"hipMemAdvise"),                                                // 116
    Some(c"hipMemAllocHost"),                                             // 117
    Some(c"hipMemAllocPitch"),                                            // 118
    Some(c"hipMemGetAddressRange"),                                       // 119
    Some(c"hipMemGetInfo"),                                               // 120
    Some(c"hipMemPrefetchAsync"),                                         // 121
    Some(c"hipMemPtrGetInfo"),                                            // 122
    Some(c"hipMemRangeGetAttribute"),                                     // 123
    Some(c"hipMemRangeGetAttributes"),                                    // 124
    Some(c"hipMemcpy"),                                                   // 125
    Some(c"hipMemcpy2D"),                                                 // 126
    Some(c"hipMemcpy2DAsync"),                                            // 127
    Some(c"hipMemcpy2DFromArray"),                                        // 128
    Some(c"hipMemcpy2DFromArrayAsync"),                                   // 129
    Some(c"hipMemcpy2DToArray"),                                          // 130
    Some(c"hipMemcpy2DToArrayAsync"),                                     // 131
    Some(c"hipMemcpy3D"),                                                 // 132
    Some(c"hipMemcpy3DAsync"),                                            // 133
    Some(c"hipMemcpyAsync"),                                              // 134
    Some(c"hipMemcpyAtoH"),                                               // 135
    Some(c"hipMemcpyDtoD"),                                               // 136
    Some(c"hipMemcpyDtoDAsync"),                                          // 137
    Some(c"hipMemcpyDtoH"),                                               // 138
    Some(c"hipMemcpyDtoHAsync"),                                          // 139
    Some(c"hipMemcpyFromArray"),                                          // 140
    Some(c"hipMemcpyFromSymbol"),                                         // 141
    Some(c"hipMemcpyFromSymbolAsync"),                                    // 142
    Some(c"hipMemcpyHtoA"),                                               // 143
    Some(c"hipMemcpyHtoD"),                                               // 144
    Some(c"hipMemcpyHtoDAsync"),                                          // 145
    Some(c"hipMemcpyParam2D"),                                            // 146
    Some(c"hipMemcpyParam2DAsync"),                                       // 147
    Some(c"hipMemcpyPeer"),                                               // 148
    Some(c"hipMemcpyPeerAsync"),                                          // 149
    Some(c"hipMemcpyToArray"),                                            // 150
    Some(c"hipMemcpyToSymbol"),                                           // 151
    Some(c"hipMemcpyToSymbolAsync"),                                      // 152
    Some(c"hipMemcpyWithStream"),                                         // 153
    Some(c"hipMemset"),                                                   // 154
    Some(c"hipMemset2D"),                                                 // 155
    Some(c"hipMemset2DAsync"),                                            // 156
    Some(c"hipMemset3D"),                                                 // 157
    Some(c"hipMemset3DAsync"),                                            // 158
    Some(c"hipMemsetAsync"),                                              // 159
    Some(c"hipMemsetD16"),                                                // 160
    Some(c"hipMemsetD16Async"),                                           // 161
    Some(c"hipMemsetD32"),                                                // 162
    Some(c"hipMemsetD32Async"),                                           // 163
    Some(c"hipMemsetD8"),                                                 // 164
    Some(c"hipMemsetD8Async"),                                            // 165
    Some(c"hipModuleGetFunction"),                                        // 166
    Some(c"hipModuleGetGlobal"),                                          // 167
    Some(c"hipModuleGetTexRef"),                                          // 168
    Some(c"hipModuleLaunchKernel"),                                       // 169
    Some(c"hipModuleLoad"),                                               // 170
    Some(c"hipModuleLoadData"),                                           // 171
    Some(c"hipModuleLoadDataEx"),                                         // 172
    Some(c"hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"),          // 173
    Some(c"hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"), // 174
    Some(c"hipModuleOccupancyMaxPotentialBlockSize"),                     // 175
    Some(c"hipModuleOccupancyMaxPotentialBlockSizeWithFlags"),            // 176
    Some(c"hipModuleUnload"),                                             // 177
    Some(c"hipOccupancyMaxActiveBlocksPerMultiprocessor"),                // 178
    Some(c"hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"),       // 179
    Some(c"hipOccupancyMaxPotentialBlockSize"),                           // 180
    Some(c"hipPeekAtLastError"),                                          // 181
    Some(c"hipPointerGetAttributes"),                                     // 182
    Some(c"hipProfilerStart"),                                            // 183
    Some(c"hipProfilerStop"),                                             // 184
    None,                                                                 // 185: HIP_API_ID_RESERVED_185
    Some(c"hipSetDevice"),                                                // 186
    Some(c"hipSetDeviceFlags"),                                           // 187
    Some(c"hipSetupArgument"),                                            // 188
    Some(c"hipSignalExternalSemaphoresAsync"),                            // 189
    Some(c"hipStreamAddCallback"),                                        // 190
    Some(c"hipStreamAttachMemAsync"),                                     // 191
    Some(c"hipStreamCreate"),                                             // 192
    Some(c"hipStreamCreateWithFlags"),                                    // 193
    Some(c"hipStreamCreateWithPriority"),                                 // 194
    Some(c"hipStreamDestroy"),                                            // 195
    Some(c"hipStreamGetFlags"),                                           // 196
    Some(c"hipStreamGetPriority"),                                        // 197
    Some(c"hipStreamQuery"),                                              // 198
    Some(c"hipStreamSynchronize"),                                        // 199
    Some(c"hipStreamWaitEvent"),                                          // 200
    Some(c"hipStreamWaitValue32"),                                        // 201
    Some(c"hipStreamWaitValue64"),                                        // 202
    Some(c"hipStreamWriteValue32"),                                       // 203
    Some(c"hipStreamWriteValue64"),                                       // 204
    Some(c"hipWaitExternalSemaphoresAsync"),                              // 205
    Some(c"hipCreateSurfaceObject"),                                      // 206
    Some(c"hipDestroySurfaceObject"),                                     // 207
    Some(c"hipGraphAddKernelNode"),                                       // 208
    Some(c"hipGraphAddMemcpyNode"),                                       // 209
    Some(c"hipGraphAddMemsetNode"),                                       // 210
    Some(c"hipGraphCreate"),                                              // 211
    Some(c"hipGraphDestroy"),                                             // 212
    Some(c"hipGraphExecDestroy"),                                         // 213
    Some(c"hipGraphInstantiate"),                                         // 214
    Some(c"hipGraphLaunch"),                                              // 215
    Some(c"hipMipmappedArrayCreate"),                                     // 216
    Some(c"hipMipmappedArrayDestroy"),                                    // 217
    Some(c"hipMipmappedArrayGetLevel"),                                   // 218
    Some(c"hipStreamBeginCapture"),                                       // 219
    Some(c"hipStreamEndCapture"),                                         // 220
    Some(c"hipTexRefGetAddress"),                                         // 221
    Some(c"hipTexRefGetFlags"),                                           // 222
    Some(c"hipTexRefGetFormat"),                                          // 223
    Some(c"hipTexRefGetMaxAnisotropy"),                                   // 224
    Some(c"hipTexRefGetMipMappedArray"),                                  // 225
    Some(c"hipTexRefGetMipmapLevelBias"),                                 // 226
    Some(c"hipTexRefGetMipmapLevelClamp"),                                // 227
    Some(c"hipTexRefSetAddress"),                                         // 228
    Some(c"hipTexRefSetAddress2D"),                                       // 229
    Some(c"hipTexRefSetBorderColor"),                                     // 230
    Some(c"hipTexRefSetFormat"),                                          // 231
    Some(c"hipTexRefSetMaxAnisotropy"),                                   // 232
    Some(c"hipTexRefSetMipmapLevelClamp"),                                // 233
    Some(c"hipTexRefSetMipmappedArray"),                                  // 234
    Some(c"hipGLGetDevices"),                                             // 235
    Some(c"hipGraphAddDependencies"),                                     // 236
    Some(c"hipGraphAddEmptyNode"),                                        // 237
    Some(c"hipGraphExecKernelNodeSetParams"),                             // 238
    Some(c"hipGraphGetNodes"),                                            // 239
    Some(c"hipGraphGetRootNodes"),                                        // 240
    Some(c"hipGraphKernelNodeGetParams"),                                 // 241
    Some(c"hipGraphKernelNodeSetParams"),                                 // 242
    Some(c"hipGraphMemcpyNodeGetParams"),                                 // 243
    Some(c"hipGraphMemcpyNodeSetParams"),                                 // 244
    Some(c"hipGraphMemsetNodeGetParams"),                                 // 245
    Some(c"hipGraphMemsetNodeSetParams"),                                 // 246
    Some(c"hipGraphicsGLRegisterBuffer"),                                 // 247
    Some(c"hipGraphicsMapResources"),                                     // 248
    Some(c"hipGraphicsResourceGetMappedPointer"),                         // 249
    Some(c"hipGraphicsUnmapResources"),                                   // 250
    Some(c"hipGraphicsUnregisterResource"),                               // 251
    Some(c"hipGraphAddChildGraphNode"),                                   // 252
    Some(c"hipGraphAddEventRecordNode"),                                  // 253
    Some(c"hipGraphAddEventWaitNode"),                                    // 254
    Some(c"hipGraphAddHostNode"),                                         // 255
    Some(c"hipGraphAddMemcpyNode1D"),                                     // 256
    Some(c"hipGraphAddMemcpyNodeFromSymbol"),                             // 257
    Some(c"hipGraphAddMemcpyNodeToSymbol"),                               // 258
    Some(c"hipGraphChildGraphNodeGetGraph"),                              // 259
    Some(c"hipGraphClone"),                                               // 260
    Some(c"hipGraphDestroyNode"),                                         // 261
    Some(c"hipGraphEventRecordNodeGetEvent"),                             // 262
    Some(c"hipGraphEventRecordNodeSetEvent"),                             // 263
    Some(c"hipGraphEventWaitNodeGetEvent"),                               // 264
    Some(c"hipGraphEventWaitNodeSetEvent"),                               // 265
    Some(c"hipGraphExecChildGraphNodeSetParams"),                         // 266
    Some(c"hipGraphExecEventRecordNodeSetEvent"),                         // 267
    Some(c"hipGraphExecEventWaitNodeSetEvent"),                           // 268
    Some(c"hipGraphExecHostNodeSetParams"),                               // 269
    Some(c"hipGraphExecMemcpyNodeSetParams"),                             // 270
    Some(c"hipGraphExecMemcpyNodeSetParams1D"),                           // 271
    Some(c"hipGraphExecMemcpyNodeSetParamsFromSymbol"),                   // 272
    Some(c"hipGraphExecMemcpyNodeSetParamsToSymbol"),                     // 273
    Some(c"hipGraphExecMemsetNodeSetParams"),                             // 274
    Some(c"hipGraphExecUpdate"),                                          // 275
    Some(c"hipGraphGetEdges"),                                            // 276
    Some(c"hipGraphHostNodeGetParams"),                                   // 277
    Some(c"hipGraphHostNodeSetParams"),                                   // 278
    Some(c"hipGraphInstantiateWithFlags"),                                // 279
    Some(c"hipGraphMemcpyNodeSetParams1D"),                               // 280
    Some(c"hipGraphMemcpyNodeSetParamsFromSymbol"),                       // 281
    Some(c"hipGraphMemcpyNodeSetParamsToSymbol"),                         // 282
    Some(c"hipGraphNodeFindInClone"),                                     // 283
    Some(c"hipGraphNodeGetDependencies"),                                 // 284
    Some(c"hipGraphNodeGetDependentNodes"),                               // 285
    Some(c"hipGraphNodeGetType"),                                         // 286
    Some(c"hipGraphRemoveDependencies"),                                  // 287
    Some(c"hipStreamGetCaptureInfo"),                                     // 288
    Some(c"hipStreamGetCaptureInfo_v2"),                                  // 289
    Some(c"hipStreamIsCapturing"),                                        // 290
    Some(c"hipStreamUpdateCaptureDependencies"),                          // 291
    Some(c"hipDrvPointerGetAttributes"),                                  // 292
    Some(c"hipGraphicsGLRegisterImage"),                                  // 293
    Some(c"hipGraphicsSubResourceGetMappedArray"),                        // 294
    Some(c"hipPointerGetAttribute"),                                      // 295
    None,                                                                 // 296: HIP_API_ID_RESERVED_296
    Some(c"hipThreadExchangeStreamCaptureMode"),                          // 297
    Some(c"hipDeviceGetUuid"),                                            // 298
    Some(c"hipGetChannelDesc"),                                           // 299
    Some(c"hipGraphKernelNodeGetAttribute"),                              // 300
    Some(c"hipGraphKernelNodeSetAttribute"),                              // 301
    Some(c"hipLaunchHostFunc"),                                           // 302
    Some(c"hipDeviceGetDefaultMemPool"),                                  // 303
    Some(c"hipDeviceGetMemPool"),                                         // 304
    Some(c"hipDeviceSetMemPool"),                                         // 305
    Some(c"hipFreeAsync"),                                                // 306
    Some(c"hipMallocAsync"),                                              // 307
    Some(c"hipMallocFromPoolAsync"),                                      // 308
    Some(c"hipMemPoolCreate"),                                            // 309
    Some(c"hipMemPoolDestroy"),                                           // 310
    Some(c"hipMemPoolExportPointer"),                                     // 311
    Some(c"hipMemPoolExportToShareableHandle"),                           // 312
    Some(c"hipMemPoolGetAccess"),                                         // 313
    Some(c"hipMemPoolGetAttribute"),                                      // 314
    Some(c"hipMemPoolImportFromShareableHandle"),                         // 315
    Some(c"hipMemPoolImportPointer"),                                     // 316
    Some(c"hipMemPoolSetAccess"),                                         // 317
    Some(c"hipMemPoolSetAttribute"),                                      // 318
    Some(c"hipMemPoolTrimTo"),                                            // 319
    Some(c"hipMemAddressFree"),                                           // 320
    Some(c"hipMemAddressReserve"),                                        // 321
    Some(c"hipMemCreate"),                                                // 322
    Some(c"hipMemExportToShareableHandle"),                               // 323
    Some(c"hipMemGetAccess"),                                             // 324
    Some(c"hipMemGetAllocationGranularity"),                              // 325
    Some(c"hipMemGetAllocationPropertiesFromHandle"),                     // 326
    Some(c"hipMemImportFromShareableHandle"),                             // 327
    Some(c"hipMemMap"),                                                   // 328
    Some(c"hipMemMapArrayAsync"),                                         // 329
    Some(c"hipMemRelease"),                                               // 330
    Some(c"hipMemRetainAllocationHandle"),                                // 331
    Some(c"hipMemSetAccess"),                                             // 332
    Some(c"hipMemUnmap"),                                                 // 333
    Some(c"hipDeviceSetGraphMemAttribute"),                               // 334
    Some(c"hipDeviceGetGraphMemAttribute"),                               // 335
    Some(c"hipDeviceGraphMemTrim"),                                       // 336
    Some(c"hipDeviceSetLimit"),                                           // 337
    Some(c"hipTexRefSetArray"),                                           // 338
    Some(c"hipTexRefSetFlags"),                                           // 339
    Some(c"hipTexRefSetMipmapLevelBias"),                                 // 340
    Some(c"hipDriverGetVersion"),                                         // 341
    Some(c"hipGraphUpload"),                                              // 342
    Some(c"hipRuntimeGetVersion"),                                        // 343
    Some(c"hipUserObjectCreate"),                                         // 344
    Some(c"hipUserObjectRelease"),                                        // 345
    Some(c"hipUserObjectRetain"),                                         // 346
    Some(c"hipGraphRetainUserObject"),                                    // 347
    Some(c"hipGraphReleaseUserObject"),                                   // 348
    Some(c"hipGraphDebugDotPrint"),                                       // 349
    Some(c"hipGraphKernelNodeCopyAttributes"),                            // 350
    Some(c"hipGraphNodeGetEnabled"),                                      // 351
    Some(c"hipGraphNodeSetEnabled"),                                      // 352
    Some(c"hipPointerSetAttribute"),                                      // 353
    Some(c"hipGraphAddMemAllocNode"),                                     // 354
    Some(c"hipGraphAddMemFreeNode"),                                      // 355
    Some(c"hipGraphMemAllocNodeGetParams"),                               // 356
    Some(c"hipGraphMemFreeNodeGetParams"),                                // 357
    Some(c"hipModuleLaunchCooperativeKernel"),                            // 358
    Some(c"hipModuleLaunchCooperativeKernelMultiDevice"),                 // 359
    Some(c"hipArray3DGetDescriptor"),                                     // 360
    Some(c"hipArrayGetDescriptor"),                                       // 361
    Some(c"hipArrayGetInfo"),                                             // 362
    Some(c"hipStreamGetDevice"),                                          // 363
    Some(c"hipExternalMemoryGetMappedMipmappedArray"),                    // 364
    Some(c"hipChooseDeviceR0600"),                                        // 365
    Some(c"hipDrvGraphAddMemcpyNode"),                                    // 366
    Some(c"hipDrvGraphAddMemsetNode"),                                    // 367
    Some(c"hipDrvGraphMemcpyNodeGetParams"),                              // 368
    Some(c"hipDrvGraphMemcpyNodeSetParams"),                              // 369
    Some(c"hipGetDevicePropertiesR0600"),                                 // 370
    Some(c"hipGraphAddExternalSemaphoresSignalNode"),                     // 371
    Some(c"hipGraphAddExternalSemaphoresWaitNode"),                       // 372
    Some(c"hipGraphExecExternalSemaphoresSignalNodeSetParams"),           // 373
    Some(c"hipGraphExecExternalSemaphoresWaitNodeSetParams"),             // 374
    Some(c"hipGraphExternalSemaphoresSignalNodeGetParams"),               // 375
    Some(c"hipGraphExternalSemaphoresSignalNodeSetParams"),               // 376
    Some(c"hipGraphExternalSemaphoresWaitNodeGetParams"),                 // 377
    Some(c"hipGraphExternalSemaphoresWaitNodeSetParams"),                 // 378
    Some(c"hipExtGetLastError"),                                          // 379
    Some(c"hipGraphAddNode"),                                             // 380
    Some(c"hipGetProcAddress"),                                           // 381
    Some(c"hipGraphExecGetFlags"),                                        // 382
    Some(c"hipGraphExecNodeSetParams"),                                   // 383
    Some(c"hipGraphInstantiateWithParams"),                               // 384
    Some(c"hipGraphNodeSetParams"),                                       // 385
    Some(c"hipDrvGraphAddMemFreeNode"),                                   // 386
    Some(c"hipDrvGraphExecMemcpyNodeSetParams"),                          // 387
    Some(c"hipDrvGraphExecMemsetNodeSetParams"),                          // 388
    Some(c"hipTexRefGetArray"),                                           // 389
    Some(c"hipTexRefGetBorderColor"),                                     // 390
    Some(c"hipStreamBeginCaptureToGraph"),                                // 391
    Some(c"hipGetFuncBySymbol"),                                          // 392
    None,                                                                 // 393: HIP_API_ID_RESERVED_393
    None,                                                                 // 394: HIP_API_ID_RESERVED_394
    None,                                                                 // 395: HIP_API_ID_RESERVED_395
    None,                                                                 // 396: HIP_API_ID_RESERVED_396
    None,                                                                 // 397: HIP_API_ID_RESERVED_397
    None,                                                                 // 398: HIP_API_ID_RESERVED_398
    None,                                                                 // 399: HIP_API_ID_RESERVED_399
    Some(c"hipMemcpy2DArrayToArray"),                                     // 400
    Some(c"hipMemcpyAtoA"),                                               // 401
    Some(c"hipMemcpyAtoD"),                                               // 402
    Some(c"hipMemcpyAtoHAsync"),                                          // 403
    Some(c"hipMemcpyDtoA"),                                               // 404
    Some(c"hipMemcpyHtoAAsync"),                                          // 405
    Some(c"hipSetValidDevices"),                                          // 406
    None,                                                                 // 407: HIP_API_ID_RESERVED_407
    Some(c"hipStreamBatchMemOp"),                                         // 408
    Some(c"hipGraphAddBatchMemOpNode"),                                   // 409
    Some(c"hipGraphBatchMemOpNodeGetParams"),                             // 410
    Some(c"hipGraphBatchMemOpNodeSetParams"),                             // 411
    Some(c"hipGraphExecBatchMemOpNodeSetParams"),                         // 412
    Some(c"hipEventRecordWithFlags"),                                     // 413
    Some(c"hipLinkAddData"),                                              // 414
    Some(c"hipLinkAddFile"),                                              // 415
    Some(c"hipLinkComplete"),                                             // 416
    Some(c"hipLinkCreate"),                                               // 417
    Some(c"hipLinkDestroy"),                                              // 418
    Some(c"hipLaunchKernelExC"),                                          // 419
    Some(c"hipDrvLaunchKernelEx"),                                        // 420
    Some(c"hipModuleGetFunctionCount"),                                   // 421
    Some(c"hipMemsetD2D16"),                                              // 422
    Some(c"hipMemsetD2D16Async"),                                         // 423
    Some(c"hipMemsetD2D32"),                                              // 424
    Some(c"hipMemsetD2D32Async"),                                         // 425
    Some(c"hipMemsetD2D8"),                                               // 426
    Some(c"hipMemsetD2D8Async"),                                          // 427
    Some(c"hipStreamGetAttribute"),                                       // 428
    Some(c"hipStreamSetAttribute"),                                       // 429
    Some(c"hipModuleLoadFatBinary"),                                      // 430
    Some(c"hipMemcpy3DBatchAsync"),                                       // 431
    Some(c"hipMemcpy3DPeer"),                                             // 432
    Some(c"hipMemcpy3DPeerAsync"),                                        // 433
    Some(c"hipMemcpyBatchAsync"),                                         // 434
    Some(c"hipGetDriverEntryPoint"),                                      // 435
    Some(c"hipMemPrefetchAsync_v2"),                                      // 436
    Some(c"hipMemAdvise_v2"),                                             // 437
    Some(c"hipStreamGetId"),                                              // 438
    Some(c"hipLibraryLoadData"),                                          // 439
    Some(c"hipLibraryLoadFromFile"),                                      // 440
    Some(c"hipLibraryUnload"),                                            // 441
    Some(c"hipLibraryGetKernel"),                                         // 442
    Some(c"hipLibraryGetKernelCount"),                                    // 443
    Some(c"hipMemGetHandleForAddressRange"),                              // 444
    Some(c"hipStreamCopyAttributes"),                                     // 445
    Some(c"hipModuleGetLoadingMode"),                                     // 446
];

/// The API name of `id` (`hip_api_name`), or `None` for an id that names none.
pub fn api_name(id: u32) -> Option<&'static CStr> {
    HIP_API_NAMES.get(id as usize).copied().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_hip_prof_str() {
        assert_eq!(api_name(HIP_API_ID_NONE), None);
        assert_eq!(api_name(HIP_API_ID_FIRST), Some(c"__hipPopCallConfiguration"));
        assert_eq!(api_name(108), Some(c"hipMalloc"));
        assert_eq!(api_name(125), Some(c"hipMemcpy"));
        assert_eq!(api_name(379), Some(c"hipExtGetLastError"));
        assert_eq!(api_name(HIP_API_ID_LAST), Some(c"hipModuleGetLoadingMode"));
        for reserved in [50, 82, 83, 185, 296, 393, 399, 407] {
            assert_eq!(api_name(reserved), None, "{reserved}");
        }
        assert_eq!(api_name(HIP_API_ID_LAST + 1), None);
        assert_eq!(api_name(u32::MAX), None);
        // Every name is a HIP API function, once.
        let names: Vec<_> = HIP_API_NAMES.iter().flatten().collect();
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(names.len(), unique.len());
        assert_eq!(names.len(), 433);
        assert!(names.iter().all(|n| n.to_bytes().starts_with(b"hip") || n.to_bytes().starts_with(b"__hip")));
    }
}
