//! AMD's Python bindings on hipkfd (issues 11 and 16): `hip-python` from PyPI in a venv cached
//! under target/ (made once, ~10 s), run through an install tree's `bin/hipkfd-env` — the
//! documented way for clients that `dlopen("libamdhip64.so")` — on kfd-sim's 2 GPUs:
//! tests/python/hip_python_check.py (device count and properties, hipMalloc/hipMemcpy round trip,
//! hipMemcpyPeer, and only the install tree's libamdhip64 mapped). And with ours merely
//! `LD_PRELOAD`ed, the bindings load stock ROCm beside it: ours says so on stderr.
//! Skipped, saying so, when PyPI cannot be reached or python3-venv is missing.
mod artifacts;

use artifacts::{ours, release_dir, root, text, Tree};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The version the issue reports working (ROCm 7.2's bindings).
const HIP_PYTHON: &str = "hip-python==7.2.2.562.43";

/// target/hip-python-venv with hip-python installed, or `None` (with the reason printed) when it
/// cannot be made here. Made once per test process (the tests run on threads).
fn venv() -> Option<PathBuf> {
    static VENV: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    VENV.get_or_init(make_venv).clone()
}

fn make_venv() -> Option<PathBuf> {
    let target = release_dir().parent().unwrap().to_path_buf();
    let venv = target.join("hip-python-venv");
    let done = venv.join(".hipkfd-installed");
    if std::fs::read_to_string(&done).is_ok_and(|v| v == HIP_PYTHON) {
        return Some(venv);
    }
    let _ = std::fs::remove_dir_all(&venv);
    // The venv's pip must not run under the simulator's LD_PRELOAD (it needs none of it).
    let bare = |c: &mut Command| -> Output { c.env_remove("LD_PRELOAD").output().unwrap() };
    let made = bare(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    if !made.status.success() {
        eprintln!("skipped: cannot create a venv (Debian package python3-venv): {}", text(&made.stderr));
        return None;
    }
    let pip =
        bare(Command::new(venv.join("bin/pip")).args(["install", "-q", "--disable-pip-version-check", HIP_PYTHON]));
    if !pip.status.success() {
        eprintln!("skipped: cannot install {HIP_PYTHON} from PyPI (unreachable?): {}", text(&pip.stderr));
        let _ = std::fs::remove_dir_all(&venv);
        return None;
    }
    std::fs::write(&done, HIP_PYTHON).unwrap();
    Some(venv)
}

#[test]
fn hip_python_through_hipkfd_env() {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let Some(venv) = venv() else { return };
    let tree = Tree::install("hip-python");
    let prefix = tree.prefix();
    let out = tree
        .env_cmd()
        .arg(venv.join("bin/python"))
        .arg(root().join("tests/python/hip_python_check.py"))
        .arg(&prefix)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("PASS"),
        "hip-python: {:?}\n{stdout}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert!(!text(&out.stderr).contains("another HIP runtime"), "{}", text(&out.stderr));
}

/// The trap of issue 16: ours preloaded, the bindings `dlopen("libamdhip64.so")` and get stock
/// ROCm (Debian's) beside it. Not quiet: ours names the other library on stderr.
#[test]
fn hip_python_loading_stock_beside_preloaded_ours_is_reported() {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let stock = "/usr/lib/x86_64-linux-gnu/libamdhip64.so";
    assert!(Path::new(stock).exists(), "{stock} missing: install Debian package libamdhip64-dev");
    let Some(venv) = venv() else { return };
    let preload = format!("{} {}", std::env::var("LD_PRELOAD").unwrap_or_default(), ours().display());
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", "from hip import hip; print(hip.hipGetDeviceCount())"])
        .env("LD_PRELOAD", preload.trim())
        // cargo's LD_LIBRARY_PATH holds target/release, where dlopen would find ours.
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = text(&out.stderr);
    let warnings: Vec<_> = stderr.lines().filter(|l| l.contains("warning: another HIP runtime is mapped")).collect();
    assert_eq!(warnings.len(), 1, "stdout: {}\nstderr: {stderr}", text(&out.stdout));
    assert!(warnings[0].contains("libamdhip64.so"), "{}", warnings[0]);
}
