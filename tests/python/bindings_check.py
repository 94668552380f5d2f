"""AMD's Python HIP bindings on hipkfd (tests/hip_python.rs; run under kfdsim with 2 GPUs, through
an install tree). Usage: bindings_check.py BINDING PREFIX, BINDING being `hip-python` (module
`hip`) or `rocm-bindings-hip` (module `rocm.bindings`). Checks the device count and properties
(gcnArchName of kfd-sim's MI210), a hipMalloc/hipMemcpy round trip, hipMemcpyPeer GPU 0 -> 1,
then IPC with a second process (this script again, a fresh interpreter, with `ipc-child
HANDLE_HEX SIZE`): it opens the parent's hipMalloc through hipIpcOpenMemHandle, checks the
parent's bytes and overwrites them, and the parent reads the child's bytes back. In both
processes the only libamdhip64 mapped must be the one under PREFIX. Prints PASS at the end."""
import ctypes
import subprocess
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


def pattern(size, seed):
    return bytearray((i * 7 + seed) & 0xFF for i in range(size))


def host(buf):
    """A ctypes view of a bytearray, which both bindings take as a host pointer."""
    return (ctypes.c_ubyte * len(buf)).from_buffer(buf)


HANDLE_SIZE = 64  # sizeof(hipIpcMemHandle_t); its `reserved` field reads as a C string, so go by address


def mapped_runtimes():
    """The libamdhip64 files mapped into this process; fails unless all are under PREFIX."""
    with open("/proc/self/maps") as f:
        mapped = sorted({line.split()[-1] for line in f if "libamdhip64" in line})
    assert mapped and all(m.startswith(prefix + "/") for m in mapped), f"FAIL libamdhip64 mapped: {mapped}"
    return mapped


def handle_bytes(handle):
    return ctypes.string_at(handle.as_c_void_p().value, HANDLE_SIZE)


if len(sys.argv) > 3 and sys.argv[3] == "ipc-child":
    raw, size = bytes.fromhex(sys.argv[4]), int(sys.argv[5])
    handle = hip.hipIpcMemHandle_t()
    ctypes.memmove(handle.as_c_void_p().value, raw, HANDLE_SIZE)
    ptr = ok(hip.hipIpcOpenMemHandle(handle, hip.hipIpcMemLazyEnablePeerAccess))
    seen = bytearray(size)
    ok(hip.hipMemcpy(host(seen), ptr, size, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert seen == pattern(size, 3), "FAIL child: the parent's bytes through IPC"
    ok(hip.hipMemcpy(ptr, host(pattern(size, 5)), size, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ok(hip.hipIpcCloseMemHandle(ptr))
    mapped_runtimes()
    print("CHILD OK")
    sys.exit(0)


n = ok(hip.hipGetDeviceCount())
assert n == 2, f"FAIL {n} devices (kfdsim run --gpus 2)"
for d in range(n):
    props = properties(d)
    arch = text(props.gcnArchName)
    assert arch == "gfx90a:sramecc+:xnack-", f"FAIL device {d} gcnArchName {arch!r}"
    assert props.totalGlobalMem > 0, f"FAIL device {d} totalGlobalMem"
name = text(properties(0).name)

size = 1 << 20
src = pattern(size, 3)
dst = bytearray(size)
src_buf = host(src)
dst_buf = host(dst)

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

raw = handle_bytes(ok(hip.hipIpcGetMemHandle(d0)))
child = subprocess.run(
    [sys.executable, __file__, binding, prefix, "ipc-child", raw.hex(), str(size)], capture_output=True, text=True
)
assert child.returncode == 0 and "CHILD OK" in child.stdout, f"FAIL IPC child: {child}"
ok(hip.hipMemcpy(dst_buf, d0, size, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert dst == pattern(size, 5), "FAIL the child's bytes through IPC"
ok(hip.hipFree(d0))

mapped = mapped_runtimes()
print(f"PASS {binding}: {n} devices, {name} {arch}, {size} bytes through GPU0 -> GPU1 and IPC; {mapped}")
