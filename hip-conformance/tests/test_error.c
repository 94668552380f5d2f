/*
 * Errors: hipGetLastError, hipPeekAtLastError, hipGetErrorName,
 * hipGetErrorString, hipDrvGetErrorName, hipDrvGetErrorString, and the ROCm 7
 * numeric values of hipError_t.
 *
 * Expected behaviour: hip-tests catch/unit/errorHandling/ (last error is
 * per thread; hipGetLastError resets it, hipPeekAtLastError does not; unknown
 * codes are named "hipErrorUnknown"); strings as clr hip_error.cpp.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>

TEST(hipGetLastError_returns_and_resets)
{
    CHECK_HIP(hipGetLastError(), hipSuccess);
    CHECK_HIP(hipMalloc(NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipGetLastError(), hipSuccess); /* reset by the previous read */
}

TEST(hipPeekAtLastError_does_not_reset)
{
    CHECK_HIP(hipPeekAtLastError(), hipSuccess);
    CHECK_HIP(hipMalloc(NULL, 1), hipErrorInvalidValue);
    CHECK_HIP(hipPeekAtLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipPeekAtLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipPeekAtLastError(), hipSuccess);
    CHECK_HIP(hipGetLastError(), hipSuccess);
}

TEST(hipGetLastError_latest_error_wins)
{
    hipStream_t s;
    HIP_OK(hipStreamCreate(&s));
    HIP_OK(hipStreamDestroy(s));
    CHECK_HIP(hipSetDevice(-1), hipErrorInvalidDevice);
    CHECK_HIP(hipStreamQuery(s), hipErrorContextIsDestroyed);
    CHECK_HIP(hipGetLastError(), hipErrorContextIsDestroyed);
    CHECK_HIP(hipGetLastError(), hipSuccess);
}

TEST(hipGetLastError_records_errors_of_each_group)
{
    int n = hc_device_count();
    float t;
    REQUIRE(n >= 1);
    CHECK_HIP(hipGetDeviceProperties(NULL, 0), hipErrorInvalidValue);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipSetDevice(n), hipErrorInvalidDevice);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidDevice);
    CHECK_HIP(hipMemcpy(NULL, NULL, 8, hipMemcpyDefault), hipErrorInvalidValue);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidValue);
    CHECK_HIP(hipStreamDestroy(NULL), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidResourceHandle);
    CHECK_HIP(hipEventElapsedTime(&t, NULL, NULL), hipErrorInvalidHandle);
    CHECK_HIP(hipGetLastError(), hipErrorInvalidHandle);
    CHECK_HIP(hipMemGetAddressRange(NULL, NULL, NULL), hipErrorNotFound);
    CHECK_HIP(hipGetLastError(), hipErrorNotFound);
}

struct zigzag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int step;
    hipError_t seen_after_own_error;
};

static void zz_wait(struct zigzag *z, int step)
{
    pthread_mutex_lock(&z->mu);
    while (z->step < step)
        pthread_cond_wait(&z->cv, &z->mu);
    pthread_mutex_unlock(&z->mu);
}

static void zz_advance(struct zigzag *z)
{
    pthread_mutex_lock(&z->mu);
    z->step++;
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
}

static void *zz_thread(void *p)
{
    struct zigzag *z = p;
    (void)hipMalloc(NULL, 1); /* step 0: error in this thread */
    zz_advance(z);
    zz_wait(z, 2); /* main thread looked at its own last error */
    z->seen_after_own_error = hipPeekAtLastError();
    return NULL;
}

TEST(last_error_is_per_thread)
{
    /* hip-tests Unit_hipGetLastError_Positive_Threaded / Unit_hipPeekAtLastError_Positive_Threaded */
    struct zigzag z = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, hipSuccess};
    pthread_t th;
    HIP_OK(hipGetLastError());
    REQUIRE(pthread_create(&th, NULL, zz_thread, &z) == 0);
    zz_wait(&z, 1);
    CHECK_HIP(hipPeekAtLastError(), hipSuccess);
    CHECK_HIP(hipGetLastError(), hipSuccess);
    zz_advance(&z);
    pthread_join(th, NULL);
    CHECK_HIP(z.seen_after_own_error, hipErrorInvalidValue);
}

struct named {
    hipError_t code;
    const char *name;
};

#define NAMED(x) {x, #x}

static const struct named known_errors[] = {
    NAMED(hipSuccess),
    NAMED(hipErrorInvalidValue),
    NAMED(hipErrorOutOfMemory),
    NAMED(hipErrorNotInitialized),
    NAMED(hipErrorDeinitialized),
    NAMED(hipErrorProfilerDisabled),
    NAMED(hipErrorProfilerNotInitialized),
    NAMED(hipErrorProfilerAlreadyStarted),
    NAMED(hipErrorProfilerAlreadyStopped),
    NAMED(hipErrorInvalidConfiguration),
    NAMED(hipErrorInvalidPitchValue),
    NAMED(hipErrorInvalidSymbol),
    NAMED(hipErrorInvalidDevicePointer),
    NAMED(hipErrorInvalidMemcpyDirection),
    NAMED(hipErrorInsufficientDriver),
    NAMED(hipErrorMissingConfiguration),
    NAMED(hipErrorPriorLaunchFailure),
    NAMED(hipErrorInvalidDeviceFunction),
    NAMED(hipErrorNoDevice),
    NAMED(hipErrorInvalidDevice),
    NAMED(hipErrorInvalidImage),
    NAMED(hipErrorInvalidContext),
    NAMED(hipErrorContextAlreadyCurrent),
    NAMED(hipErrorMapFailed),
    NAMED(hipErrorUnmapFailed),
    NAMED(hipErrorArrayIsMapped),
    NAMED(hipErrorAlreadyMapped),
    NAMED(hipErrorNoBinaryForGpu),
    NAMED(hipErrorAlreadyAcquired),
    NAMED(hipErrorNotMapped),
    NAMED(hipErrorNotMappedAsArray),
    NAMED(hipErrorNotMappedAsPointer),
    NAMED(hipErrorECCNotCorrectable),
    NAMED(hipErrorUnsupportedLimit),
    NAMED(hipErrorContextAlreadyInUse),
    NAMED(hipErrorPeerAccessUnsupported),
    NAMED(hipErrorInvalidKernelFile),
    NAMED(hipErrorInvalidGraphicsContext),
    NAMED(hipErrorInvalidSource),
    NAMED(hipErrorFileNotFound),
    NAMED(hipErrorSharedObjectSymbolNotFound),
    NAMED(hipErrorSharedObjectInitFailed),
    NAMED(hipErrorOperatingSystem),
    NAMED(hipErrorInvalidHandle),
    NAMED(hipErrorIllegalState),
    NAMED(hipErrorNotFound),
    NAMED(hipErrorNotReady),
    NAMED(hipErrorIllegalAddress),
    NAMED(hipErrorLaunchOutOfResources),
    NAMED(hipErrorLaunchTimeOut),
    NAMED(hipErrorPeerAccessAlreadyEnabled),
    NAMED(hipErrorPeerAccessNotEnabled),
    NAMED(hipErrorSetOnActiveProcess),
    NAMED(hipErrorContextIsDestroyed),
    NAMED(hipErrorAssert),
    NAMED(hipErrorHostMemoryAlreadyRegistered),
    NAMED(hipErrorHostMemoryNotRegistered),
    NAMED(hipErrorLaunchFailure),
    NAMED(hipErrorCooperativeLaunchTooLarge),
    NAMED(hipErrorNotSupported),
    NAMED(hipErrorStreamCaptureUnsupported),
    NAMED(hipErrorStreamCaptureInvalidated),
    NAMED(hipErrorStreamCaptureMerge),
    NAMED(hipErrorStreamCaptureUnmatched),
    NAMED(hipErrorStreamCaptureUnjoined),
    NAMED(hipErrorStreamCaptureIsolation),
    NAMED(hipErrorStreamCaptureImplicit),
    NAMED(hipErrorCapturedEvent),
    NAMED(hipErrorStreamCaptureWrongThread),
    NAMED(hipErrorGraphExecUpdateFailure),
    NAMED(hipErrorUnknown),
    NAMED(hipErrorRuntimeMemory),
    NAMED(hipErrorRuntimeOther),
    /* aliases are named after their primary enumerator */
    {hipErrorMemoryAllocation, "hipErrorOutOfMemory"},
    {hipErrorInitializationError, "hipErrorNotInitialized"},
    {hipErrorInvalidResourceHandle, "hipErrorInvalidHandle"},
};

TEST(hipGetErrorName_known_codes)
{
    for (size_t i = 0; i < sizeof(known_errors) / sizeof(known_errors[0]); i++) {
        const char *s = hipGetErrorName(known_errors[i].code);
        CHECKF(s != NULL && strcmp(s, known_errors[i].name) == 0,
               "hipGetErrorName(%d) = \"%s\", expected \"%s\"", (int)known_errors[i].code,
               s ? s : "(null)", known_errors[i].name);
    }
}

TEST(hipGetErrorName_unknown_codes)
{
    const int codes[] = {-1, 12345, 0x7fffffff, 1000 /* no such code */};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        const char *s = hipGetErrorName((hipError_t)codes[i]);
        CHECKF(s != NULL && strcmp(s, "hipErrorUnknown") == 0, "hipGetErrorName(%d) = \"%s\"",
               codes[i], s ? s : "(null)");
    }
}

TEST(hipGetErrorString_known_and_unknown)
{
    for (size_t i = 0; i < sizeof(known_errors) / sizeof(known_errors[0]); i++) {
        const char *s = hipGetErrorString(known_errors[i].code);
        CHECKF(s != NULL && s[0] != '\0', "hipGetErrorString(%s) is empty",
               known_errors[i].name);
        /* a description, not the enumerator name */
        CHECKF(s == NULL || known_errors[i].code == hipSuccess ||
                   strcmp(s, known_errors[i].name) != 0,
               "hipGetErrorString(%s) returns the name", known_errors[i].name);
    }
    CHECK(strcmp(hipGetErrorString(hipSuccess), "no error") == 0);
    CHECK(strcmp(hipGetErrorString(hipErrorInvalidValue), "invalid argument") == 0);
    const char *u = hipGetErrorString((hipError_t)-1);
    CHECKF(u != NULL && strcmp(u, "unknown error") == 0, "hipGetErrorString(-1) = \"%s\"",
           u ? u : "(null)");
    u = hipGetErrorString((hipError_t)12345);
    CHECK(u != NULL && u[0] != '\0');
}

/* hip-tests hipDrvGetErrorName.cc, hipDrvGetErrorString.cc: every known code succeeds with the
 * same text as hipGetErrorName/String; an unknown code and a null out pointer are
 * hipErrorInvalidValue (clr hip_error.cpp). */
TEST(hipDrvGetErrorName_String)
{
    for (size_t i = 0; i < sizeof(known_errors) / sizeof(known_errors[0]); i++) {
        hipError_t c = known_errors[i].code;
        const char *s = NULL;
        CHECK_HIP(hipDrvGetErrorName(c, &s), hipSuccess);
        CHECKF(s != NULL && strcmp(s, known_errors[i].name) == 0, "hipDrvGetErrorName(%d) = \"%s\"", (int)c,
               s ? s : "(null)");
        s = NULL;
        CHECK_HIP(hipDrvGetErrorString(c, &s), hipSuccess);
        CHECKF(s != NULL && strcmp(s, hipGetErrorString(c)) == 0, "hipDrvGetErrorString(%d) = \"%s\"", (int)c,
               s ? s : "(null)");
    }
    const char *s = NULL;
    CHECK_HIP(hipDrvGetErrorString(hipErrorOutOfMemory, &s), hipSuccess);
    CHECK(s != NULL && strcmp(s, "out of memory") == 0);
    CHECK_HIP(hipDrvGetErrorName((hipError_t)-1, &s), hipErrorInvalidValue);
    CHECK(s != NULL && strcmp(s, "hipErrorUnknown") == 0);
    CHECK_HIP(hipDrvGetErrorString((hipError_t)-1, &s), hipErrorInvalidValue);
    CHECK(s != NULL && strcmp(s, "unknown error") == 0);
    CHECK_HIP(hipDrvGetErrorName((hipError_t)12345, &s), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGetErrorName(hipErrorInvalidValue, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGetErrorString(hipErrorInvalidValue, NULL), hipErrorInvalidValue);
    CHECK_HIP(hipDrvGetErrorString((hipError_t)0, NULL), hipErrorInvalidValue);
}

TEST(hipGetErrorName_String_before_init_and_no_side_effect)
{
    /* the first HIP calls of this process; they must not set the last error */
    CHECK(strcmp(hipGetErrorName(hipErrorNotReady), "hipErrorNotReady") == 0);
    CHECK(hipGetErrorString(hipErrorNotReady) != NULL);
    CHECK_HIP(hipGetLastError(), hipSuccess);
}

TEST(hipError_t_rocm7_values)
{
    static const struct {
        hipError_t code;
        int value;
        const char *name;
    } v[] = {
        {hipSuccess, 0, "hipSuccess"},
        {hipErrorInvalidValue, 1, "hipErrorInvalidValue"},
        {hipErrorOutOfMemory, 2, "hipErrorOutOfMemory"},
        {hipErrorNotInitialized, 3, "hipErrorNotInitialized"},
        {hipErrorInvalidConfiguration, 9, "hipErrorInvalidConfiguration"},
        {hipErrorInvalidDevicePointer, 17, "hipErrorInvalidDevicePointer"},
        {hipErrorInvalidMemcpyDirection, 21, "hipErrorInvalidMemcpyDirection"},
        {hipErrorNoDevice, 100, "hipErrorNoDevice"},
        {hipErrorInvalidDevice, 101, "hipErrorInvalidDevice"},
        {hipErrorInvalidContext, 201, "hipErrorInvalidContext"},
        {hipErrorMapFailed, 205, "hipErrorMapFailed"},
        {hipErrorInvalidHandle, 400, "hipErrorInvalidHandle"},
        {hipErrorInvalidResourceHandle, 400, "hipErrorInvalidResourceHandle"},
        {hipErrorNotFound, 500, "hipErrorNotFound"},
        {hipErrorNotReady, 600, "hipErrorNotReady"},
        {hipErrorIllegalAddress, 700, "hipErrorIllegalAddress"},
        {hipErrorPeerAccessAlreadyEnabled, 704, "hipErrorPeerAccessAlreadyEnabled"},
        {hipErrorPeerAccessNotEnabled, 705, "hipErrorPeerAccessNotEnabled"},
        {hipErrorContextIsDestroyed, 709, "hipErrorContextIsDestroyed"},
        {hipErrorNotSupported, 801, "hipErrorNotSupported"},
        {hipErrorStreamCaptureUnsupported, 900, "hipErrorStreamCaptureUnsupported"},
        {hipErrorUnknown, 999, "hipErrorUnknown"},
        {hipErrorRuntimeMemory, 1052, "hipErrorRuntimeMemory"},
        {hipErrorRuntimeOther, 1053, "hipErrorRuntimeOther"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        CHECKF((int)v[i].code == v[i].value, "%s = %d, expected %d", v[i].name, (int)v[i].code,
               v[i].value);
    CHECK(sizeof(hipError_t) == 4);
}
