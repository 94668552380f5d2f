//! Header drift test: regenerates `include/hip/hip_runtime_api.h` from the crate with cbindgen
//! (configured by `cbindgen.toml`, sources = `src/api/mod.rs` and the modules it declares, prelude =
//! `amdhip64::api::types::c_header_prelude()`) and fails if it differs from the committed file.
//! `HIPKFD_BLESS=1` writes the regenerated header instead.

use std::path::Path;

/// The header text cbindgen produces from the current sources.
pub fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).unwrap_or_else(|e| panic!("cbindgen.toml: {e}"));
    config.after_includes = Some(amdhip64::api::types::c_header_prelude());
    config.trailer = Some(amdhip64::api::types::GRAPH_NODE_PARAMS_C.to_string());
    // src/api/mod.rs as the root: cbindgen follows its `mod` declarations, so every file of
    // the API group (and nothing outside src/api) is parsed, each once.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/api/mod.rs"))
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen output is UTF-8")
}

#[test]
fn header_matches_sources() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/hip/hip_runtime_api.h");
    let fresh = generate();
    if std::env::var_os("HIPKFD_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        let line = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
        panic!(
            "{} is stale (first difference at line {}):\n  committed: {:?}\n  generated: {:?}\n\
             regenerate with: HIPKFD_BLESS=1 cargo test -p hipkfd --test header",
            path.display(),
            line + 1,
            committed.lines().nth(line).unwrap_or("<end of file>"),
            fresh.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn generated_header_has_amd_shape() {
    let h = generate();
    for needle in [
        "#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "#define hipGetDeviceProperties hipGetDevicePropertiesR0600",
        "#define hipDeviceProp_t hipDeviceProp_tR0600",
        "typedef enum __HIP_NODISCARD hipError_t {",
        "} hipError_t;",
        "typedef enum hipMemcpyKind {",
        "typedef enum hipMemoryType {",
        "typedef enum hipDeviceAttribute_t {",
        "typedef struct hipDeviceProp_tR0600 {",
        "typedef struct hipIpcMemHandle_st {",
        "typedef struct hipUUID_t {",
        "#define HIP_VERSION_MAJOR 7",
        "#define hipIpcMemLazyEnablePeerAccess 0x01",
        "extern \"C\" {",
        "const char *hipGetErrorName(hipError_t hip_error);",
        "hipError_t hipGetLastError(void);",
    ] {
        assert!(h.contains(needle), "generated header lacks {needle:?}");
    }
    // Only the ABI: no runtime-internal items leak from outside src/api.
    assert!(!h.contains("set_last_error") && !h.contains("KfdNode"));
}
