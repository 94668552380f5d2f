//! Mesa's lavapipe (software Vulkan, Debian `mesa-vulkan-drivers`) as the producer of external
//! memory (issue 10): `hip-conformance/compat/lavapipe_interop.c` is built against our header,
//! Vulkan and our library and run under kfdsim (the test runner). Lavapipe exports memory only
//! as an OPAQUE_FD memfd and no semaphore at all; the program checks that the memfd is refused and
//! that the same memory wrapped in a udmabuf imports and shares data both ways.

mod artifacts;

use std::path::Path;
use std::process::Command;

#[test]
fn lavapipe_memory_through_udmabuf() {
    assert!(std::env::var_os("KFDSIM_ROOT").is_some(), "run under kfdsim (see tools/run-tests)");
    assert!(
        Path::new("/usr/include/vulkan/vulkan.h").exists(),
        "Vulkan headers missing: install Debian packages libvulkan-dev and mesa-vulkan-drivers (.ci/run does)"
    );
    let root = artifacts::root();
    let lib = artifacts::release_dir();
    let exe = std::env::temp_dir().join(format!("hipkfd-lavapipe-{}", std::process::id()));
    let out = Command::new("gcc")
        .args(["-std=gnu11", "-Wall", "-Werror", "-D__HIP_PLATFORM_AMD__", "-I"])
        .arg(root.join("include"))
        .arg(root.join("hip-conformance/compat/lavapipe_interop.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lamdhip64", "-lvulkan"])
        .output()
        .unwrap();
    assert!(out.status.success(), "building lavapipe_interop.c:\n{}", String::from_utf8_lossy(&out.stderr));
    // Only lavapipe: the loader must not pick another ICD.
    let run =
        Command::new(&exe).env("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json").output().unwrap();
    let _ = std::fs::remove_file(&exe);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("PASS"),
        "{:?}\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("exportable OPAQUE_FD semaphores: no"), "{stdout}");
}
