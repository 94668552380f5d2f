//! AMD's Python HIP bindings on hipkfd (issues 11 and 16): `hip-python` and `rocm-bindings-hip`
//! from PyPI, in one venv cached under target/ (made once, ~20 s), run on kfd-sim's 2 GPUs through
//! an install tree the documented ways — `bin/hipkfd-env` (for every client that
//! `dlopen("libamdhip64.so")`), and for rocm-bindings `ROCM_PATH` alone (it looks in
//! `$ROCM_PATH/lib`) — with tests/python/bindings_check.py: device count, properties (gcnArchName),
//! hipMalloc/hipMemcpy round trip, hipMemcpyPeer, IPC with a second process both ways, and only
//! the install tree's libamdhip64 mapped.
//! And with ours merely `LD_PRELOAD`ed, each binding loads stock ROCm beside it: ours says so on
//! stderr. Skipped, saying so, when PyPI cannot be reached or python3-venv is missing.
mod artifacts;

use artifacts::{ours, root, text, Tree};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One of AMD's Python bindings for HIP.
struct Binding {
    /// The name bindings_check.py takes.
    name: &'static str,
    /// What pip installs: the version issue 16 reports working.
    requirement: &'static str,
    /// The Python statement that binds the HIP module to `hip`.
    import: &'static str,
}

/// ROCm 7.2's `hip-python`: `dlopen("libamdhip64.so")`, found through LD_LIBRARY_PATH.
const HIP_PYTHON: Binding =
    Binding { name: "hip-python", requirement: "hip-python==7.2.2.562.43", import: "from hip import hip" };

/// `rocm-bindings-hip` 10.0 (rocm/bindings/util/paths.py `get_library_path`): a libamdhip64.so in
/// its own package, then `rocm_sdk.find_libraries` (TheRock's wheels), then
/// `$ROCM_PATH/lib/libamdhip64.so` (`ROCM_HOME`, default /opt/rocm), then `dlopen` by name.
const ROCM_BINDINGS: Binding = Binding {
    name: "rocm-bindings-hip",
    requirement: "rocm-bindings-hip==10.0.0.0.1.2",
    import: "from rocm.bindings import hip",
};

/// target/python-bindings-venv with both bindings installed, or `None` (with the reason printed)
/// when it cannot be made here. Made once per test process (the tests run on threads).
fn venv() -> Option<PathBuf> {
    static VENV: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    VENV.get_or_init(make_venv).clone()
}

fn make_venv() -> Option<PathBuf> {
    artifacts::cached_venv("python-bindings-venv", &[HIP_PYTHON.requirement, ROCM_BINDINGS.requirement])
}

/// Runs bindings_check.py for `binding` with the venv's python, through `launch` (a command that
/// runs its arguments with `tree` as the HIP runtime), and asserts it passed, quietly.
fn check(binding: &Binding, tree: &Tree, mut launch: Command) {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let Some(venv) = venv() else { return };
    let out = launch
        .arg(venv.join("bin/python"))
        .arg(root().join("tests/python/bindings_check.py"))
        .arg(binding.name)
        .arg(tree.prefix())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("PASS {}", binding.name)),
        "{}: {:?}\n{stdout}\n{}",
        binding.name,
        out.status,
        text(&out.stderr)
    );
    assert!(!text(&out.stderr).contains("another HIP runtime"), "{}", text(&out.stderr));
}

#[test]
fn hip_python_through_hipkfd_env() {
    let tree = Tree::install("hip-python");
    check(&HIP_PYTHON, &tree, tree.env_cmd());
}

#[test]
fn rocm_bindings_hip_through_hipkfd_env() {
    let tree = Tree::install("rocm-bindings-env");
    check(&ROCM_BINDINGS, &tree, tree.env_cmd());
}

/// rocm-bindings' own lookup: `ROCM_PATH` naming the install tree is enough (no LD_LIBRARY_PATH).
#[test]
fn rocm_bindings_hip_through_rocm_path_alone() {
    let tree = Tree::install("rocm-bindings-rocm-path");
    let mut launch = Command::new("env");
    launch.env_remove("LD_LIBRARY_PATH").env_remove("HIP_PATH").env_remove("ROCM_HOME").env("ROCM_PATH", tree.prefix());
    check(&ROCM_BINDINGS, &tree, launch);
}

/// The trap of issue 16: ours preloaded, the binding `dlopen`s `libamdhip64.so` by name (so does
/// rocm-bindings with no ROCM_PATH and no /opt/rocm) and gets stock ROCm (Debian's) beside it.
/// Not quiet: ours names the other library on stderr.
fn loading_stock_beside_preloaded_ours_is_reported(binding: &Binding) {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let stock = "/usr/lib/x86_64-linux-gnu/libamdhip64.so";
    assert!(Path::new(stock).exists(), "{stock} missing: install Debian package libamdhip64-dev");
    let Some(venv) = venv() else { return };
    let preload = format!("{} {}", std::env::var("LD_PRELOAD").unwrap_or_default(), ours().display());
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", &format!("{}; print(hip.hipGetDeviceCount())", binding.import)])
        .env("LD_PRELOAD", preload.trim())
        // cargo's LD_LIBRARY_PATH holds target/release, where dlopen would find ours.
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("ROCM_PATH")
        .env_remove("ROCM_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {out:?}", binding.name);
    let stderr = text(&out.stderr);
    let warnings: Vec<_> = stderr.lines().filter(|l| l.contains("warning: another HIP runtime is mapped")).collect();
    assert_eq!(warnings.len(), 1, "{}: stdout: {}\nstderr: {stderr}", binding.name, text(&out.stdout));
    assert!(warnings[0].contains("libamdhip64.so"), "{}", warnings[0]);
}

#[test]
fn hip_python_loading_stock_beside_preloaded_ours_is_reported() {
    loading_stock_beside_preloaded_ours_is_reported(&HIP_PYTHON);
}

#[test]
fn rocm_bindings_hip_loading_stock_beside_preloaded_ours_is_reported() {
    loading_stock_beside_preloaded_ours_is_reported(&ROCM_BINDINGS);
}
