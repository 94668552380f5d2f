//! Header drift test: regenerates `include/hip/hip_runtime_api.h` from the crate with cbindgen
//! (configured by `cbindgen.toml`, sources = the files of `src/api/` but `rtc.rs`, and
//! `src/abi/types.rs`, prelude = `amdhip64::abi::types::c_header_prelude()`) and `include/hip/hiprtc.h` (from `src/api/rtc.rs`,
//! prelude `amdhip64::abi::rtc::c_header_prelude()`), and fails if either differs from the
//! committed file.
//! `HIPKFD_BLESS=1` writes the regenerated header instead.

use std::path::Path;

/// The headers and the files of src/api each is made from: hiprtc (`hip/hiprtc.h`, its own
/// header in AMD's tree too) from src/api/rtc.rs, the runtime API from every other file.
const RTC: &str = "rtc.rs";

fn api_sources(rtc: bool) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("src/api"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "mod.rs" && (n == RTC) == rtc))
        .collect();
    if !rtc {
        // The ABI types live a layer below the entry points (src/abi).
        files.push(root.join("src/abi/types.rs"));
    }
    // By file name, as when every file was in src/api: cbindgen's order follows it.
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    files
}

fn render(config: cbindgen::Config, sources: Vec<std::path::PathBuf>) -> String {
    let mut builder = cbindgen::Builder::new().with_config(config);
    for f in sources {
        builder = builder.with_src(f);
    }
    let bindings = builder.generate().unwrap_or_else(|e| panic!("cbindgen: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen output is UTF-8")
}

fn config() -> cbindgen::Config {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    cbindgen::Config::from_file(root.join("cbindgen.toml")).unwrap_or_else(|e| panic!("cbindgen.toml: {e}"))
}

/// The header text cbindgen produces from the current sources.
pub fn generate() -> String {
    let mut config = config();
    config.after_includes = Some(amdhip64::abi::types::c_header_prelude());
    config.trailer = Some(amdhip64::abi::types::c_header_trailer());
    render(config, api_sources(false))
}

/// `include/hip/hiprtc.h`: the same configuration, its own guard and prelude (`hiprtcResult`).
pub fn generate_rtc() -> String {
    let mut config = config();
    config.include_guard = Some("HIP_INCLUDE_HIP_HIPRTC_H".into());
    config.header = Some(
        "/*\n * hiprtc, HIP's runtime compilation, of hipkfd (exported by libamdhip64.so.7): AMD's names\n \
         * and values. SPDX-License-Identifier: MIT\n */"
            .into(),
    );
    config.after_includes = Some(amdhip64::abi::rtc::c_header_prelude());
    render(config, api_sources(true))
}

/// Fails when `path` differs from `fresh`; `HIPKFD_BLESS=1` writes it instead.
fn compare(name: &str, fresh: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/hip").join(name);
    if std::env::var_os("HIPKFD_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, fresh).unwrap();
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
fn header_matches_sources() {
    compare("hip_runtime_api.h", &generate());
}

#[test]
fn hiprtc_header_matches_sources() {
    let h = generate_rtc();
    for needle in [
        "#ifndef HIP_INCLUDE_HIP_HIPRTC_H",
        "typedef enum hiprtcResult {",
        "  HIPRTC_ERROR_COMPILATION = 6,",
        "typedef struct _hiprtcProgram *hiprtcProgram;",
        "hiprtcResult hiprtcCreateProgram(hiprtcProgram *prog,",
    ] {
        assert!(h.contains(needle), "hiprtc.h lacks {needle:?}");
    }
    assert!(!generate().contains("hiprtc"), "hiprtc leaked into hip_runtime_api.h");
    compare("hiprtc.h", &h);
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
