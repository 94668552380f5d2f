//! SONAME `libroctracer64.so.4` and roctracer's symbol versions (ROCm/roctracer
//! `src/roctracer/exportmap` and `src/roctx/exportmap`): the roctracer entry points we define at
//! `ROCTRACER_4.0`, roctx's at `ROCTX_4.1`. The install tree's `libroctx64.so.4` is a link to this
//! file, so both names load one library (the loader matches the file) with one trace state. The
//! script's name is the one tools/hipkfd-link recognises (it drops rustc's own script).
use std::path::PathBuf;

const SCRIPT: &str = "\
ROCTRACER_4.0 {
global:
    roctracer_error_string;
    roctracer_get_timestamp;
    roctracer_start;
    roctracer_stop;
    roctracer_version_major;
    roctracer_version_minor;
};

ROCTX_4.1 {
global:
    roctxMarkA;
    roctxRangePop;
    roctxRangePushA;
    roctxRangeStartA;
    roctxRangeStop;
    roctx_version_major;
    roctx_version_minor;
local:
    *;
};
";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("hipkfd-symbol-versions.map");
    std::fs::write(&out, SCRIPT).expect("write the version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libroctracer64.so.4");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", out.display());
}
