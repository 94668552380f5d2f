//! `make install PREFIX=/opt/hipkfd DESTDIR=<tmp>` (the copying part, `install-files`, on the
//! artifacts already built): the ROCm-like tree, then a C program built against it with
//! pkg-config and with CMake's `find_package(hip)` (`hip::host`) runs through the installed
//! `bin/hipkfd-env` on the installed library; the installed `kfdsim` and `hipkfd-info` run.
//! The CMake case is skipped, saying so, when cmake is not installed.
mod artifacts;

use artifacts::{ok, root, Tree, PREFIX};
use std::path::Path;
use std::process::Command;

/// Runs `exe` through the installed hipkfd-env (under the test's kfdsim session); checks that it
/// passed on the installed library.
fn run(t: &Tree, exe: &Path) -> String {
    let out = t.env_cmd().arg(exe).env("LD_DEBUG", "libs").output().unwrap();
    let stderr = artifacts::text(&out.stderr);
    let stdout = ok(out, &format!("{} through hipkfd-env", exe.display()));
    assert!(stdout.contains("PASS"), "{stdout}");
    // The loader took the installed library.
    let want = format!("calling init: {}/lib/libamdhip64.so.7", t.prefix().display());
    assert!(stderr.contains(&want), "{want:?} not in:\n{stderr}");
    stdout
}

#[test]
fn tree_has_rocms_layout() {
    let t = Tree::install("layout");
    let p = t.prefix();
    for f in [
        "lib/libamdhip64.so.7",
        "lib/libkfdsim.so",
        "include/hip/hip_runtime_api.h",
        "include/hip/hip_runtime.h",
        "include/hip/hiprtc.h",
        "lib/pkgconfig/hip.pc",
        "lib/cmake/hip/hip-config.cmake",
        "lib/cmake/hip/hip-config-version.cmake",
        "bin/hipkfd-env",
        "bin/hipkfd-info",
        "bin/kfdsim",
    ] {
        assert!(p.join(f).is_file(), "{f} missing");
    }
    for (link, target) in [
        ("lib/libamdhip64.so", "libamdhip64.so.7"),
        ("lib/compat/libamdhip64.so.5", "../libamdhip64.so.7"),
        ("lib/compat/libamdhip64.so.6", "../libamdhip64.so.7"),
    ] {
        assert_eq!(std::fs::read_link(p.join(link)).unwrap(), Path::new(target), "{link}");
        assert!(p.join(link).is_file(), "{link} dangles");
    }
    let pc = std::fs::read_to_string(p.join("lib/pkgconfig/hip.pc")).unwrap();
    assert!(pc.contains(&format!("prefix={PREFIX}\n")) && pc.contains("Version: 7."), "{pc}");
    // The installed kfdsim finds ../lib/libkfdsim.so; hipkfd-info runs on it.
    let out = Command::new(p.join("bin/kfdsim"))
        .args(["run", "--topology", "xgmi-3", "--"])
        .arg(p.join("bin/hipkfd-info"))
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert!(ok(out, "installed kfdsim + hipkfd-info").contains("GPUs: 3\n"));
}

#[test]
fn c_program_builds_with_pkg_config() {
    let t = Tree::install("pkgconfig");
    let pc = |arg: &str| {
        let out = Command::new("pkg-config")
            .args([arg, "hip"])
            .env("PKG_CONFIG_PATH", t.prefix().join("lib/pkgconfig"))
            .env("PKG_CONFIG_SYSROOT_DIR", &t.0)
            .output()
            .expect("pkg-config");
        ok(out, "pkg-config").split_whitespace().map(str::to_owned).collect::<Vec<_>>()
    };
    let exe = t.0.join("install_check");
    let out = Command::new("gcc")
        .args(pc("--cflags"))
        .arg(root().join("hip-conformance/compat/install_check.c"))
        .arg("-o")
        .arg(&exe)
        .args(pc("--libs"))
        .output()
        .unwrap();
    ok(out, "gcc $(pkg-config --cflags --libs hip)");
    run(&t, &exe);
}

#[test]
fn c_program_builds_with_cmake_find_package_hip() {
    if Command::new("cmake").arg("--version").output().is_err() {
        eprintln!("skipped: cmake is not installed (Debian package cmake)");
        return;
    }
    let t = Tree::install("cmake");
    let src = t.0.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(root().join("hip-conformance/compat/install_check.c"), src.join("install_check.c")).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(install_check C)\nfind_package(hip 7.0 REQUIRED CONFIG)\n\
         add_executable(install_check install_check.c)\ntarget_link_libraries(install_check PRIVATE hip::host)\n",
    )
    .unwrap();
    let build = t.0.join("build");
    let configure = Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", t.prefix().display()))
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    ok(configure, "cmake configure");
    let compile = Command::new("cmake").arg("--build").arg(&build).env_remove("LD_PRELOAD").output().unwrap();
    ok(compile, "cmake --build");
    run(&t, &build.join("install_check"));
}

/// A ROCm 7 program takes hiprtc from libhiprtc.so.7: the installed link to our library serves it
/// (DT_NEEDED libhiprtc.so.7, as when linked against ROCm's, here a stand-in of that SONAME), and
/// it compiles under hipkfd-env, which points ROCM_PATH at the tree, whose hip_runtime.h is the
/// host API alone (the compiler's HIP headers must come from elsewhere). The compile is left out,
/// saying so, without Debian's hipcc.
#[test]
fn rocm7_hiprtc_program_runs_on_the_installed_link() {
    let t = Tree::install("hiprtc");
    let p = t.prefix();
    let stub = t.0.join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    let names = [
        "hiprtcVersion",
        "hiprtcCreateProgram",
        "hiprtcAddNameExpression",
        "hiprtcCompileProgram",
        "hiprtcGetProgramLogSize",
        "hiprtcGetProgramLog",
        "hiprtcGetCodeSize",
        "hiprtcGetCode",
        "hiprtcGetLoweredName",
        "hiprtcDestroyProgram",
        "hiprtcGetErrorString",
    ];
    let src: String = names.iter().map(|n| format!("int {n}(void) {{ return 11; }}\n")).collect();
    std::fs::write(stub.join("stub.c"), src).unwrap();
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libhiprtc.so.7", "-o"])
        .arg(stub.join("libhiprtc.so"))
        .arg(stub.join("stub.c"))
        .output()
        .unwrap();
    ok(out, "gcc stand-in libhiprtc.so.7");
    let exe = t.0.join("hiprtc_check");
    let out = Command::new("gcc")
        .arg(format!("-I{}", p.join("include").display()))
        .arg(root().join("hip-conformance/compat/hiprtc_check.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", stub.display()))
        .arg("-lhiprtc")
        .output()
        .unwrap();
    ok(out, "gcc hiprtc_check.c -lhiprtc");
    let dynamic = ok(Command::new("readelf").arg("-d").arg(&exe).output().unwrap(), "readelf -d");
    assert!(dynamic.contains("[libhiprtc.so.7]") && !dynamic.contains("libamdhip64"), "{dynamic}");
    let hipcc = Command::new("sh").args(["-c", "command -v hipcc"]).output().is_ok_and(|o| o.status.success());
    if !hipcc {
        eprintln!("hipcc is not installed (Debian package hipcc): checking hiprtc without a compile");
    }
    let out = t
        .env_cmd()
        .arg(&exe)
        .args(["gfx90a", if hipcc { "compile" } else { "-" }])
        .env("LD_DEBUG", "libs")
        .output()
        .unwrap();
    let stderr = artifacts::text(&out.stderr);
    let stdout = ok(out, "hiprtc_check through hipkfd-env");
    assert!(stdout.contains("PASS hiprtc 9.0"), "{stdout}");
    let want = format!("calling init: {}/lib/libhiprtc.so.7", p.display());
    assert!(stderr.contains(&want), "{want:?} not in:\n{stderr}");
}
