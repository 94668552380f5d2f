"""AMD's Python HIP bindings on hipkfd (tests/hip_python.rs; run under kfdsim with 2+ GPUs, through
an install tree's bin/hipkfd-env). Usage: bindings_check.py BINDING PREFIX, BINDING being
`hip-python` (module `hip`) or `rocm-bindings-hip` (module `rocm.bindings`). Checks the device
count and properties (gcnArchName of kfd-sim's MI200), a hipMalloc/hipMemcpy round trip,
hipMemcpyPeer between GPU 0 and 1, and that the only libamdhip64 mapped into this process is the
one under PREFIX (the install tree). Prints PASS at the end."""
import ctypes
import sys

binding, prefix = sys.argv[1], sys.argv[2]
if binding == "hip-python":
    from hip import hip
elif binding == "rocm-bindings-hip":
    from rocm.bindings import hip
else:
    raise SystemExit(f"FAIL unknown binding {binding!r}")


def ok(result):
    """Both bindings return (err, values...) or err; fail on anything but hipSuccess."""
    values = result[1:] if isinstance(result, tuple) else ()
    err = result[0] if isinstance(result, tuple) else result
    if err != hip.hipError_t.hipSuccess:
        raise SystemExit(f"FAIL {err}")
    return values[0] if len(values) == 1 else (values or None)


def properties(device):
    """hip-python fills a hipDeviceProp_t it is given; rocm-bindings returns one."""
    if binding == "hip-python":
        props = hip.hipDeviceProp_t()
        ok(hip.hipGetDeviceProperties(props, device))
        return props
    return ok(hip.hipGetDeviceProperties(device))


def text(field):
    return field.decode() if isinstance(field, bytes) else str(field)


n = ok(hip.hipGetDeviceCount())
assert n == 2, f"FAIL {n} devices (kfdsim run --gpus 2)"
for d in range(n):
    props = properties(d)
    arch = text(props.gcnArchName)
    assert arch == "gfx90a:sramecc+:xnack-", f"FAIL device {d} gcnArchName {arch!r}"
    assert props.totalGlobalMem > 0, f"FAIL device {d} totalGlobalMem"
name = text(properties(0).name)

size = 1 << 20
src = bytearray((i * 7 + 3) & 0xFF for i in range(size))
dst = bytearray(size)
src_buf = (ctypes.c_ubyte * size).from_buffer(src)
dst_buf = (ctypes.c_ubyte * size).from_buffer(dst)

ok(hip.hipSetDevice(0))
d0 = ok(hip.hipMalloc(size))
ok(hip.hipSetDevice(1))
d1 = ok(hip.hipMalloc(size))
ok(hip.hipMemcpy(d0, src_buf, size, hip.hipMemcpyKind.hipMemcpyHostToDevice))
ok(hip.hipMemcpyPeer(d1, 1, d0, 0, size))
ok(hip.hipMemcpy(dst_buf, d1, size, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert dst == src, "FAIL data after H2D, peer copy, D2H"
ok(hip.hipFree(d1))
ok(hip.hipSetDevice(0))
ok(hip.hipFree(d0))

with open("/proc/self/maps") as f:
    mapped = sorted({line.split()[-1] for line in f if "libamdhip64" in line})
assert mapped and all(m.startswith(prefix + "/") for m in mapped), f"FAIL libamdhip64 mapped: {mapped}"
print(f"PASS {binding}: {n} devices, {name} {arch}, {size} bytes through GPU0 -> GPU1; {mapped}")
