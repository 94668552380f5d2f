//! Gives the cdylib AMD's SONAME, so binaries linked against it record `libamdhip64.so.7`.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so.7");
    println!("cargo:rerun-if-changed=build.rs");
}
