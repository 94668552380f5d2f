//! SONAME `librocfft.so.0` and exports only the `rocfft_*` entry points of src/lib.rs, listed
//! from it (rocFFT's own library has no symbol versions, so the script has one anonymous node).
//! The script's name is the one tools/hipkfd-link recognises (it drops rustc's own script).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/lib.rs");
    let source = std::fs::read_to_string("src/lib.rs").expect("read src/lib.rs");
    let mut script = String::from("{\nglobal:\n");
    for line in source.lines() {
        if let Some(rest) = line.trim().strip_prefix("fn rocfft_") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            script.push_str(&format!("    rocfft_{name};\n"));
        }
    }
    script.push_str("local:\n    *;\n};\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("hipkfd-symbol-versions.map");
    std::fs::write(&out, script).expect("write the version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librocfft.so.0");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", out.display());
}
