//! Source compatibility of `include/hip/hip_runtime_api.h` (issue 2, item 5): the C program
//! `hip-conformance/compat/compat.c`, which uses only the runtime-core APIs, must compile
//! unchanged with gcc against our header and against AMD's own `hip/hip_runtime_api.h`
//! (Debian `libamdhip64-dev`, ROCm 5.2; it works as C with `-D__HIP_PLATFORM_AMD__`). Our header
//! must also be valid on its own as strict C99 and as C++17. And a binary built and linked
//! against AMD's own library runs on ours (drop-in at the binary level).

mod artifacts;

use std::path::{Path, PathBuf};
use std::process::Command;

const AMD_HEADER: &str = "/usr/include/hip/hip_runtime_api.h";

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hipkfd-compat-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `compiler args... -c src -o <tmp>.o`; panics with the diagnostics on failure.
fn compile(tag: &str, compiler: &str, args: &[&str], src: &Path) {
    let obj = out_dir(tag).join("out.o");
    let out = Command::new(compiler)
        .args(args)
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    let _ = std::fs::remove_dir_all(obj.parent().unwrap());
    assert!(
        out.status.success(),
        "[{tag}] {compiler} {args:?} -c {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn compat_c() -> PathBuf {
    artifacts::root().join("hip-conformance/compat/compat.c")
}

#[test]
fn compat_c_compiles_against_our_header() {
    let inc = artifacts::root().join("include");
    let inc = inc.to_str().unwrap();
    compile("ours-c11", "gcc", &["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", inc], &compat_c());
    compile("ours-c99-pedantic", "gcc", &["-std=c99", "-pedantic", "-Wall", "-Werror", "-I", inc], &compat_c());
    // The conformance suite's flags (hip-conformance/Makefile) define __HIP_PLATFORM_AMD__ too.
    compile(
        "ours-gnu11-amd-define",
        "gcc",
        &["-std=gnu11", "-Wall", "-Werror", "-D__HIP_PLATFORM_AMD__", "-I", inc],
        &compat_c(),
    );
    // Our header as C++ (extern "C" guards, [[nodiscard]] hipError_t).
    compile("ours-cxx17", "g++", &["-x", "c++", "-std=c++17", "-Wall", "-Werror", "-I", inc], &compat_c());
}

#[test]
fn compat_c_compiles_against_amd_header() {
    assert!(Path::new(AMD_HEADER).exists(), "{AMD_HEADER} missing: install Debian package libamdhip64-dev");
    // AMD's header needs the platform macro; no -I, so <hip/...> resolves to /usr/include/hip.
    compile("amd-c11", "gcc", &["-std=c11", "-Wall", "-Wextra", "-Werror", "-D__HIP_PLATFORM_AMD__"], &compat_c());
}

#[test]
fn our_header_is_self_contained() {
    let dir = out_dir("selfcontained");
    let src = dir.join("only_header.c");
    // Included twice to exercise the include guard.
    std::fs::write(
        &src,
        "#include <hip/hip_runtime_api.h>\n#include <hip/hip_runtime_api.h>\n\
         int hipkfd_probe(void) { return (int)sizeof(hipDeviceProp_t) + hipSuccess; }\n",
    )
    .unwrap();
    let inc = artifacts::root().join("include");
    let inc = inc.to_str().unwrap();
    compile("self-c99", "gcc", &["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I", inc], &src);
    compile("self-cxx11", "g++", &["-x", "c++", "-std=c++11", "-Wall", "-Werror", "-I", inc], &src);
    let _ = std::fs::remove_dir_all(&dir);
}

/// How a binary linked against AMD's `libamdhip64.so.5` gets ours.
#[derive(Clone, Copy, PartialEq)]
enum Load {
    /// Found under AMD's name (the install tree's compat link).
    CompatLink,
    /// `LD_PRELOAD`ed under its own name; AMD's is mapped too (and ours warns about it).
    Preload,
}

/// Builds `src` against AMD's header, links it against AMD's own library (Debian
/// `libamdhip64.so.5`, plus `libs`), runs it with ours found under AMD's name and checks that it
/// passed; returns its stdout. Runs under kfdsim (the test runner), like every test binary here.
fn run_against_amds_library(tag: &str, src: &Path, libs: &[&str]) -> String {
    run_against_amds_library_with(tag, src, libs, Load::CompatLink)
}

fn run_against_amds_library_with(tag: &str, src: &Path, libs: &[&str], load: Load) -> String {
    let amd_lib = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
    assert!(Path::new(amd_lib).exists(), "{amd_lib} missing: install Debian package libamdhip64-dev");
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    let ours = artifacts::ours();
    let dir = out_dir(tag);
    let exe = dir.join("compat_amd");
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-D__HIP_PLATFORM_AMD__", "-I/usr/include/libdrm"])
        .arg(src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-l:{}", Path::new(amd_lib).file_name().unwrap().to_str().unwrap()))
        .args(libs)
        .output()
        .unwrap();
    assert!(out.status.success(), "linking against AMD's library:\n{}", String::from_utf8_lossy(&out.stderr));
    let libdir = dir.join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::os::unix::fs::symlink(&ours, libdir.join("libamdhip64.so.5")).unwrap();
    let mut cmd = Command::new(&exe);
    match load {
        Load::CompatLink => cmd.env("LD_LIBRARY_PATH", &libdir),
        Load::Preload => {
            let preload = format!("{} {}", std::env::var("LD_PRELOAD").unwrap_or_default(), ours.display());
            cmd.env("LD_PRELOAD", preload.trim()).env_remove("LD_LIBRARY_PATH")
        }
    };
    let run = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("no version information"), "symbol versions: {stderr}");
    assert!(
        run.status.success() && stdout.contains("PASS"),
        "AMD-linked binary on our library: {:?}\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}

/// Binary compatibility: compat.c built against AMD's header and linked against AMD's own
/// library (whose symbols carry AMD's versions such as `hip_4.2`) runs unchanged on ours when
/// the loader finds ours under AMD's name. Ours defines the same symbol versions (`hip_4.2`, …;
/// tests/symbol_versions.rs), so the loader has nothing to complain about.
#[test]
fn binary_built_against_amds_library_runs_on_ours() {
    let stdout = run_against_amds_library("dropin", &compat_c(), &[]);
    assert!(stdout.contains("gfx90a"), "device properties through the ROCm 5 layout: {stdout}");
}

/// The interop entry points with ROCm 5.2's descriptor and semaphore-parameter layouts
/// (`hip-conformance/compat/compat_interop.c`: two semaphores in one call at the 136-byte
/// stride, `flags` at offset 64), loaded as `libamdhip64.so.5`.
#[test]
fn interop_binary_built_against_rocm52_header_runs_on_ours() {
    let src = artifacts::root().join("hip-conformance/compat/compat_interop.c");
    run_against_amds_library("interop52", &src, &["-ldrm_amdgpu", "-ldrm"]);
}

/// Arrays through HIP 5.2's public `struct hipArray`, and driver copies with ROCm 5's
/// `hipMemoryType` values, from a binary built against ROCm 5.2 (hipkfd loaded as `.so.5`).
#[test]
fn array_binary_built_against_rocm52_header_runs_on_ours() {
    let src = artifacts::root().join("hip-conformance/compat/compat_array.c");
    run_against_amds_library("array52", &src, &[]);
}

/// A VMM chunk imported by a ROCm 5.2 program that never passed a `hipMemAllocationProp`
/// (`hip-conformance/compat/compat_vmm_import.c`, two processes): its properties come back in
/// 5.2's layout (issue 39: location.id read 1 for device 0), with ours under the `.so.5` name.
#[test]
fn vmm_import_binary_built_against_rocm52_header_reads_its_layout() {
    let src = artifacts::root().join("hip-conformance/compat/compat_vmm_import.c");
    let stdout = run_against_amds_library("vmm-import52", &src, &[]);
    assert!(stdout.contains("location.id 0"), "{stdout}");
}

/// The same with ours `LD_PRELOAD`ed (the README's former "not bridged" case): the program's
/// `DT_NEEDED libamdhip64.so.5` tells ours it was built for ROCm 5 (src/core/caller.rs).
#[test]
fn vmm_import_binary_built_against_rocm52_header_reads_its_layout_when_preloaded() {
    let src = artifacts::root().join("hip-conformance/compat/compat_vmm_import.c");
    let stdout = run_against_amds_library_with("vmm-import52-pre", &src, &[], Load::Preload);
    assert!(stdout.contains("location.id 0"), "{stdout}");
}

/// ROCm 5's `hipMemoryType` values (pointer attributes, driver copies) with ours preloaded.
#[test]
fn array_binary_built_against_rocm52_header_runs_on_ours_when_preloaded() {
    let src = artifacts::root().join("hip-conformance/compat/compat_array.c");
    run_against_amds_library_with("array52-pre", &src, &[], Load::Preload);
}

/// ROCm 5.2's external-semaphore parameter layout with ours preloaded.
#[test]
fn interop_binary_built_against_rocm52_header_runs_on_ours_when_preloaded() {
    let src = artifacts::root().join("hip-conformance/compat/compat_interop.c");
    run_against_amds_library_with("interop52-pre", &src, &["-ldrm_amdgpu", "-ldrm"], Load::Preload);
}
