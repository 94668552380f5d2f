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
        "lib/fallback/roctracer/libroctracer64.so.4",
        "lib/fallback/rocfft/librocfft.so.0",
    ] {
        assert!(p.join(f).is_file(), "{f} missing");
    }
    for (link, target) in [
        ("lib/libamdhip64.so", "libamdhip64.so.7"),
        ("lib/compat/libamdhip64.so.5", "../libamdhip64.so.7"),
        ("lib/compat/libamdhip64.so.6", "../libamdhip64.so.7"),
        ("lib/fallback/roctracer/libroctx64.so.4", "libroctracer64.so.4"),
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
/// it compiles under hipkfd-env, which leaves ROCM_PATH to name the compiler's ROCm (the tree's
/// hip_runtime.h is the host API alone). The compile is left out,
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

/// What `hipkfd-env` sets: LD_LIBRARY_PATH with the tree's lib/ first, ROCM_PATH and HIP_PATH left
/// as they were (issue 39: pointing them at the tree broke hipcc, which takes clang from them),
/// and the fallback companions (lib/fallback/roctracer, lib/fallback/rocfft) only where the loader
/// finds no library of that name of its own: here, a directory in LD_LIBRARY_PATH holding a
/// `librocfft.so.0` stands for ROCm's, and it keeps winning.
#[test]
fn hipkfd_env_adds_fallbacks_only_where_rocm_has_none() {
    let t = Tree::install("env");
    let p = t.prefix();
    let show = |ld: Option<&Path>| {
        let mut c = t.env_cmd();
        c.args([
            "sh",
            "-c",
            "printf '%s\\n%s\\n%s\\n' \"$LD_LIBRARY_PATH\" \"${ROCM_PATH-unset}\" \"${HIP_PATH-unset}\"",
        ]);
        c.env_remove("ROCM_PATH").env("HIP_PATH", "/somewhere/hip");
        if let Some(d) = ld {
            c.env("LD_LIBRARY_PATH", d);
        }
        let out = ok(c.output().unwrap(), "hipkfd-env sh");
        out.lines().map(str::to_owned).collect::<Vec<_>>()
    };
    let lib = p.join("lib").display().to_string();
    let roctracer = p.join("lib/fallback/roctracer").display().to_string();
    let rocfft = p.join("lib/fallback/rocfft").display().to_string();
    // Debian's packages have neither library.
    let v = show(None);
    assert_eq!(v[0], format!("{lib}:{roctracer}:{rocfft}"));
    assert_eq!((v[1].as_str(), v[2].as_str()), ("unset", "/somewhere/hip"));
    // A ROCm librocfft.so.0 the loader already finds: ours is not added, theirs stays on the path.
    let rocm = t.0.join("rocm-lib");
    std::fs::create_dir_all(&rocm).unwrap();
    std::fs::write(rocm.join("librocfft.so.0"), b"").unwrap();
    let v = show(Some(&rocm));
    assert_eq!(v[0], format!("{lib}:{roctracer}:{}", rocm.display()));
    // What CuPy runs to find the compiler's include paths works under it.
    if Command::new("sh").args(["-c", "command -v hipcc"]).output().is_ok_and(|o| o.status.success()) {
        let mut hipcc = t.env_cmd();
        hipcc.args(["hipcc", "-x", "hip", "-E", "-v", "/dev/null"]).env_remove("ROCM_PATH").env_remove("HIP_PATH");
        let out = hipcc.output().unwrap();
        assert!(out.status.success(), "hipcc under hipkfd-env: {}", artifacts::text(&out.stderr));
    } else {
        eprintln!("hipcc is not installed (Debian package hipcc): not compiling under hipkfd-env");
    }
}

/// The installed companions load under their NEEDED names with the symbol versions ROCm's
/// builds of CuPy bind (`roctracer_start@ROCTRACER_4.0`, `roctxRangePushA@ROCTX_4.1`; librocfft
/// unversioned), `libroctx64.so.4` and `libroctracer64.so.4` are one library (one trace state),
/// and they behave as roctracer and roctx do: hip-conformance/compat/companions_check.c.
#[test]
fn companions_load_as_cupy_binds_them_and_behave_like_rocms() {
    let t = Tree::install("companions");
    let p = t.prefix();
    let exe = t.0.join("companions_check");
    let fallback = |d: &str| p.join("lib/fallback").join(d);
    // Linking records a library's SONAME, and ours serves both names under libroctracer64.so.4's:
    // a stand-in named libroctx64.so.4 with roctx's version node gives the binary CuPy's NEEDED.
    let stub = t.0.join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    let names =
        ["roctxMarkA", "roctxRangePushA", "roctxRangePop", "roctxRangeStartA", "roctxRangeStop", "roctx_version_major"];
    let src: String = names.iter().map(|n| format!("void {n}(void) {{}}\n")).collect();
    std::fs::write(stub.join("roctx.c"), src).unwrap();
    std::fs::write(stub.join("roctx.map"), "ROCTX_4.1 { global: *; };\n").unwrap();
    let out = Command::new("gcc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libroctx64.so.4", "-o"])
        .arg(stub.join("libroctx64.so"))
        .arg(stub.join("roctx.c"))
        .arg(format!("-Wl,--version-script={}", stub.join("roctx.map").display()))
        .output()
        .unwrap();
    ok(out, "gcc stand-in libroctx64.so.4");
    let out = Command::new("gcc")
        .arg(root().join("hip-conformance/compat/companions_check.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", stub.display()))
        .arg(format!("-L{}", fallback("roctracer").display()))
        .arg(format!("-L{}", fallback("rocfft").display()))
        .args(["-lroctx64", "-l:libroctracer64.so.4", "-l:librocfft.so.0", "-ldl"])
        .output()
        .unwrap();
    ok(out, "gcc companions_check.c");
    let dynamic = ok(Command::new("readelf").args(["-d", "-V"]).arg(&exe).output().unwrap(), "readelf");
    for want in ["[libroctx64.so.4]", "[libroctracer64.so.4]", "[librocfft.so.0]", "ROCTRACER_4.0", "ROCTX_4.1"] {
        assert!(dynamic.contains(want), "{want} not in:\n{dynamic}");
    }
    let out = t.env_cmd().arg(&exe).env("HIPKFD_LOG", "1").output().unwrap();
    let stderr = artifacts::text(&out.stderr);
    let stdout = ok(out, "companions_check through hipkfd-env");
    assert!(stdout.contains("PASS companions"), "{stdout}\n{stderr}");
    let pid = stdout.lines().find_map(|l| l.strip_prefix("pid ")).expect("pid line");
    let trace: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("hipkfd[{pid}] roctx[")))
        .map(|l| l.split_once("]: ").unwrap().1)
        .collect();
    // What the program did while tracing ran; nothing between roctracer_stop and roctracer_start.
    assert_eq!(
        trace,
        [
            "mark \"first\"",
            "push \"outer\" level 0",
            "push \"inner\" level 1",
            "pop level 1",
            "pop level 0",
            "range start 1 \"overlapping\"",
            "range stop 1",
            "mark \"after start\"",
        ],
        "{stderr}"
    );
    assert!(stderr.contains("librocfft.so.0 is hipkfd's placeholder, not rocFFT"), "{stderr}");
}
