//! Binaries built for stock ROCm run on ours (issue 11): a host-only program built by Debian's
//! `hipcc` 5.2 against stock `libamdhip64.so.5` (a) with ours `LD_PRELOAD`ed binds every HIP symbol
//! it uses to ours, and says that the stock library is mapped too; (b) with a compat link
//! `libamdhip64.so.5 → ours` on `LD_LIBRARY_PATH` loads with no symbol-version complaint and runs.
//! And a second `libamdhip64` mapped next to ours is reported on stderr, once.
//! Runs under kfdsim (the test runner); children inherit the simulator.
mod artifacts;

use artifacts::{ours, root, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const STOCK: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
const WARNING: &str = "warning: another HIP runtime is mapped in this process";

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hipkfd-dropin-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn check_env() {
    assert!(Path::new(STOCK).exists(), "{STOCK} missing: install Debian package libamdhip64-dev");
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
}

/// Builds hip-conformance/compat/hipcc_host.hip with Debian's hipcc (linked to stock .so.5).
fn hipcc_host(dir: &Path) -> PathBuf {
    let exe = dir.join("hipcc_host");
    let out = Command::new("hipcc")
        .arg("--offload-arch=gfx90a")
        .arg(root().join("hip-conformance/compat/hipcc_host.hip"))
        .arg("-o")
        .arg(&exe)
        // clang leaves empty <source>-XXXXXX directories in TMPDIR: the test's own directory.
        .env("TMPDIR", dir)
        .output()
        .expect("hipcc missing: install Debian package hipcc");
    assert!(out.status.success(), "hipcc:\n{}", text(&out.stderr));
    exe
}

/// The HIP symbols `exe` imports (`nm -D -u`), without their version.
fn hip_imports(exe: &Path) -> Vec<String> {
    let out = Command::new("nm").args(["-D", "-u"]).arg(exe).output().unwrap();
    let names: Vec<String> = text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap().to_owned())
        .filter(|s| s.starts_with("hip") || s.starts_with("__hip"))
        .collect();
    assert!(names.len() >= 5, "hip imports of {}: {names:?}", exe.display());
    names
}

fn passed(run: &Output, what: &str) -> String {
    let stdout = text(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("PASS"),
        "{what}: {:?}\n{stdout}\n{}",
        run.status,
        text(&run.stderr)
    );
    stdout
}

#[test]
fn hipcc_binary_with_ours_preloaded_binds_every_hip_symbol_to_ours() {
    check_env();
    let dir = out_dir("preload");
    let exe = hipcc_host(&dir);
    let imports = hip_imports(&exe);
    // kfdsim's libkfdsim.so stays first in LD_PRELOAD.
    let preload = format!("{} {}", std::env::var("LD_PRELOAD").unwrap_or_default(), ours().display());
    let run = Command::new(&exe)
        .env("LD_PRELOAD", preload.trim())
        .env_remove("LD_LIBRARY_PATH")
        .env("LD_DEBUG", "bindings")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    passed(&run, "hipcc binary with ours preloaded");
    let stderr = text(&run.stderr);
    let ours = ours().display().to_string();
    for sym in imports {
        let bound = stderr.lines().find(|l| l.contains("binding file") && l.contains(&format!("`{sym}'")));
        let bound = bound.unwrap_or_else(|| panic!("no binding for {sym}:\n{stderr}"));
        assert!(bound.contains(&format!(" to {ours} ")), "{sym} bound elsewhere: {bound}");
        assert!(bound.ends_with("[hip_4.2]"), "{sym} bound without its ROCm version: {bound}");
    }
    // The stock library is still mapped (the binary's DT_NEEDED): said once, naming it.
    let warnings: Vec<_> = stderr.lines().filter(|l| l.contains(WARNING)).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("libamdhip64.so.5"), "{}", warnings[0]);
}

#[test]
fn hipcc_binary_on_compat_link_runs_on_ours_without_version_warnings() {
    check_env();
    let dir = out_dir("compat");
    let exe = hipcc_host(&dir);
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::os::unix::fs::symlink(ours(), libdir.join("libamdhip64.so.5")).unwrap();
    let run = Command::new(&exe).env("LD_LIBRARY_PATH", &libdir).env("LD_DEBUG", "bindings").output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = passed(&run, "hipcc binary on the compat link");
    assert!(stdout.contains("gfx90a"), "device properties through the ROCm 5 layout: {stdout}");
    let stderr = text(&run.stderr);
    assert!(!stderr.contains("no version information"), "{stderr}");
    assert!(!stderr.contains(WARNING), "only ours is mapped: {stderr}");
    let link = libdir.join("libamdhip64.so.5").display().to_string();
    let binding = stderr.lines().find(|l| l.contains("`hipMalloc'")).expect("hipMalloc binding");
    assert!(binding.contains(&link) && binding.ends_with("[hip_4.2]"), "{binding}");
}

/// Builds hip-conformance/compat/two_runtimes.c and runs it with `args`.
fn two_runtimes(tag: &str, args: &[&str]) -> Output {
    let dir = out_dir(tag);
    let exe = dir.join("two_runtimes");
    let out = Command::new("gcc")
        .arg(root().join("hip-conformance/compat/two_runtimes.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-ldl")
        .output()
        .unwrap();
    assert!(out.status.success(), "gcc:\n{}", text(&out.stderr));
    let run = Command::new(&exe).arg(ours()).args(args).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    passed(&run, "two_runtimes");
    run
}

#[test]
fn stock_runtime_dlopened_next_to_ours_is_reported_once() {
    check_env();
    let run = two_runtimes("two", &[STOCK]);
    let stderr = text(&run.stderr);
    let warnings: Vec<_> = stderr.lines().filter(|l| l.contains(WARNING)).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains(STOCK), "{}", warnings[0]);
}

#[test]
fn ours_alone_is_not_reported() {
    check_env();
    let run = two_runtimes("one", &[]);
    let stderr = text(&run.stderr);
    assert!(!stderr.contains(WARNING), "{stderr}");
}
