//! Source compatibility of `include/hip/hip_runtime_api.h` (issue 2, item 5): the C program
//! `hip-conformance/compat/compat.c`, which uses only the runtime-core APIs, must compile
//! unchanged with gcc against our header and against AMD's own `hip/hip_runtime_api.h`
//! (Debian `libamdhip64-dev`, ROCm 5.2; it works as C with `-D__HIP_PLATFORM_AMD__`). Our header
//! must also be valid on its own as strict C99 and as C++17. Compile only: the C suite links and
//! runs compat.c against our library under kfdsim.

use std::path::{Path, PathBuf};
use std::process::Command;

const AMD_HEADER: &str = "/usr/include/hip/hip_runtime_api.h";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

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
    root().join("hip-conformance/compat/compat.c")
}

#[test]
fn compat_c_compiles_against_our_header() {
    let inc = root().join("include");
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
    let inc = root().join("include");
    let inc = inc.to_str().unwrap();
    compile("self-c99", "gcc", &["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-I", inc], &src);
    compile("self-cxx11", "g++", &["-x", "c++", "-std=c++11", "-Wall", "-Werror", "-I", inc], &src);
    let _ = std::fs::remove_dir_all(&dir);
}
