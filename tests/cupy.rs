//! CuPy's ROCm 7 wheel on hipkfd (issue 39): `cupy-rocm-7-0` from PyPI in a venv cached under
//! target/cupy-smoke-venv (made once, ~30 s), run unmodified on kfd-sim's 2 GPUs through an install tree's
//! `bin/hipkfd-env` as README "CuPy" says a user runs it, with tests/python/cupy_check.py: import
//! (every HIP name CuPy binds, under Python's RTLD_NOW, and the fallback companions
//! libroctracer64/libroctx64/librocfft), elementwise kernels and a reduction compiled by our hiprtc
//! (fresh caches, so they really compile), a peer copy, IPC with a spawned child running a kernel
//! on the imported memory, and cupy.cuda.nvtx/profiler reaching hipkfd's trace through our
//! roctracer. Skipped, saying so, when PyPI cannot be reached or python3-venv is missing.
//! CuPy's own test suite runs with `make cupy-tests` (tools/cupy), not here.
mod artifacts;

use artifacts::{root, text, Tree};
use std::path::PathBuf;
use std::process::Command;

/// The wheel issue 39 names: CuPy 14.2.0 built against ROCm 7.0 (links libamdhip64.so.7).
const CUPY: &str = "cupy-rocm-7-0==14.2.0";

/// target/cupy-smoke-venv with [`CUPY`] installed (not tools/cupy's target/cupy-venv, which has
/// CuPy's test extras too), or `None` (with the reason printed).
fn venv() -> Option<PathBuf> {
    artifacts::cached_venv("cupy-smoke-venv", &[CUPY])
}

/// The CCCL headers bundled in CuPy's wheel (`cupy/_core/include/cupy/_cccl`), found without
/// importing cupy, as README "CuPy" does it.
fn cccl_dirs(venv: &std::path::Path) -> String {
    let find = "import importlib.util as u; print(u.find_spec('cupy').submodule_search_locations[0])";
    let out = Command::new(venv.join("bin/python")).args(["-c", find]).env_remove("LD_PRELOAD").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cccl = PathBuf::from(text(&out.stdout).trim()).join("_core/include/cupy/_cccl");
    assert!(cccl.join("thrust").is_dir(), "{} has no thrust/", cccl.display());
    ["thrust", "libcudacxx", "cub"]
        .iter()
        .map(|d| format!("-I{}", cccl.join(d).display()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn cupy_runs_through_hipkfd_env() {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let Some(venv) = venv() else { return };
    let tree = Tree::install("cupy");
    let caches = tempfile::tempdir().unwrap();
    let out = tree
        .env_cmd()
        .arg(venv.join("bin/python"))
        .arg(root().join("tests/python/cupy_check.py"))
        .env("HIPRTC_COMPILE_OPTIONS_APPEND", cccl_dirs(&venv))
        .env("CUPY_CACHE_DIR", caches.path().join("cupy"))
        .env("HIPKFD_RTC_CACHE_DIR", caches.path().join("hiprtc"))
        .env("HIPKFD_LOG", "1")
        .env_remove("ROCM_PATH")
        .env_remove("HIP_PATH")
        .env_remove("ROCM_HOME")
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let notes: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("hipkfd[")).collect();
    assert!(out.status.success() && stdout.contains("PASS cupy"), "{:?}\n{stdout}\n{}", out.status, notes.join("\n"));
    // cupy.cuda.nvtx reached our roctx, and profiler.stop() paused it.
    let roctx: Vec<&str> =
        stderr.lines().filter_map(|l| l.split_once("]: ").filter(|_| l.contains(" roctx[")).map(|x| x.1)).collect();
    assert_eq!(roctx, ["mark \"cupy_check mark\"", "push \"cupy_check range\" level 0", "pop level 0"], "{stderr}");
    // Only the tree's HIP runtime was mapped.
    assert!(!stderr.contains("another HIP runtime"), "{stderr}");
}
