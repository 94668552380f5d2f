"""AMD's hip-python bindings on hipkfd (tests/hip_python.rs; run under kfdsim with 2+ GPUs, through
an install tree's bin/hipkfd-env). Checks the device count and properties, a hipMalloc/hipMemcpy
round trip, hipMemcpyPeer between GPU 0 and 1, and that the libamdhip64 mapped into this process
is the one under sys.argv[1] (the install prefix), not another. Prints PASS at the end."""
import ctypes
import sys

from hip import hip

prefix = sys.argv[1]


def ok(result):
    """hip-python returns (err, values...) or err; fail on anything but hipSuccess."""
    values = result[1:] if isinstance(result, tuple) else ()
    err = result[0] if isinstance(result, tuple) else result
    if err != hip.hipError_t.hipSuccess:
        raise SystemExit(f"FAIL {err}")
    return values[0] if len(values) == 1 else (values or None)


n = ok(hip.hipGetDeviceCount())
assert n >= 2, f"FAIL {n} devices"
props = hip.hipDeviceProp_t()
ok(hip.hipGetDeviceProperties(props, 0))
name = props.name.decode()
arch = props.gcnArchName.decode()
assert arch.startswith("gfx"), f"FAIL gcnArchName {arch!r}"
assert props.totalGlobalMem > 0, "FAIL totalGlobalMem"

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
print(f"PASS {n} devices, {name} {arch}, {size} bytes through GPU0 -> GPU1; {mapped}")
