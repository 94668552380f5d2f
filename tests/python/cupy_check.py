"""CuPy's ROCm 7 wheel on hipkfd (tests/cupy.rs): run with the venv's python through an install
tree's bin/hipkfd-env on kfd-sim's 2 GPUs. Checks, printing `ok WHAT` for each, then `PASS cupy`:
import (Python's default dlopen flags: RTLD_NOW, every export bound), elementwise kernels compiled
through our hiprtc (int32, float16, float64, complex64: complex includes the thrust headers), a
reduction, a peer copy between the two devices, roctx markers and roctracer start/stop through
cupy.cuda.nvtx and cupy.cuda.profiler, and IPC: a memory handle opened by a spawned child, which
runs a kernel on the imported memory and closes it; the parent checks the bytes.
`python cupy_check.py child HANDLE_HEX N` is the child.
"""
import os
import subprocess
import sys

import numpy as np


def child(handle_hex, n):
    import cupy as cp

    handle = bytes.fromhex(handle_hex)
    ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
    mem = cp.cuda.UnownedMemory(ptr, n * 4, owner=None)
    a = cp.ndarray((n,), dtype=cp.int32, memptr=cp.cuda.MemoryPointer(mem, 0))
    a *= 3  # a kernel on the imported memory
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.ipcCloseMemHandle(ptr)
    print("child ok")


def main():
    import cupy as cp

    print("ok import", cp.__version__, flush=True)
    assert cp.cuda.runtime.getDeviceCount() == 2, cp.cuda.runtime.getDeviceCount()
    assert cp.cuda.runtime.is_hip
    print("ok devices 2", flush=True)

    for dtype in (np.int32, np.float16, np.float64, np.complex64):
        x = np.arange(1, 65).astype(dtype)
        got = (cp.asarray(x) * 2 + 1).get()
        np.testing.assert_array_equal(got, x * 2 + 1)
        print("ok elementwise", np.dtype(dtype).name, flush=True)

    x = np.arange(100000, dtype=np.float64)
    s = float(cp.asarray(x).sum())
    assert s == float(x.sum()), s
    m = int(cp.asarray(np.arange(1000, dtype=np.int32)).max())
    assert m == 999, m
    print("ok reduction", flush=True)

    with cp.cuda.Device(0):
        a0 = cp.arange(1 << 16, dtype=cp.int32)
    with cp.cuda.Device(1):
        a1 = cp.empty_like(a0)
        a1.data.copy_from_device(a0.data, a0.nbytes)  # hipMemcpy from device 0's memory
        cp.cuda.Device(1).synchronize()
        assert a1.device.id == 1
        np.testing.assert_array_equal(a1.get(), np.arange(1 << 16, dtype=np.int32))
    print("ok peer copy", flush=True)

    from cupy.cuda import nvtx, profiler

    nvtx.Mark("cupy_check mark")
    nvtx.RangePush("cupy_check range")
    nvtx.RangePop()
    profiler.stop()
    nvtx.Mark("cupy_check while stopped")
    profiler.start()
    print("ok nvtx", flush=True)

    n = 4096
    a = cp.arange(n, dtype=cp.int32)
    cp.cuda.Device().synchronize()
    handle = cp.cuda.runtime.ipcGetMemHandle(a.data.ptr)
    out = subprocess.run(
        [sys.executable, __file__, "child", bytes(handle).hex(), str(n)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0 and "child ok" in out.stdout, (out.returncode, out.stdout, out.stderr)
    np.testing.assert_array_equal(a.get(), np.arange(n, dtype=np.int32) * 3)
    print("ok ipc", flush=True)
    print("PASS cupy", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
