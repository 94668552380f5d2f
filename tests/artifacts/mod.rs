//! What the drop-in tests (dropin, symbol_versions, install, hip_python, hipkfd_info) share: the
//! built artifacts in target/release and a `make install` tree in a temporary DESTDIR.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The prefix the install tests install under (inside their DESTDIR).
pub const PREFIX: &str = "/opt/hipkfd";

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/release (the test binary is target/release/deps/NAME-HASH).
pub fn release_dir() -> PathBuf {
    std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().to_path_buf()
}

/// `release_dir()/name`, asserting it was built.
pub fn artifact(name: &str) -> PathBuf {
    let p = release_dir().join(name);
    assert!(p.exists(), "{} missing: cargo build --release --workspace", p.display());
    p
}

/// Builds the C program `src` (relative to the repository root) into `exe` with `$CC` (default
/// `cc`) `-O2 -Wall -Werror`, our `include/` on the path, and `libs` (libraries, linker options)
/// after the source; asserts that it built.
pub fn build_c(src: &str, exe: &Path, libs: &[&str]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-O2", "-Wall", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg("-o")
        .arg(exe)
        .arg(root().join(src))
        .args(libs)
        .output()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(out.status.success(), "building {src} failed:\n{}", text(&out.stderr));
}

/// Our library, target/release/libamdhip64.so.
pub fn ours() -> PathBuf {
    artifact("libamdhip64.so")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts `out` succeeded; returns its stdout.
pub fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {:?}\n{}\n{}", out.status, text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// A `make install-files PREFIX=/opt/hipkfd DESTDIR=<tmp>` tree (the copying part of
/// `make install`, on the artifacts already built); removed on drop.
pub struct Tree(pub PathBuf);

impl Tree {
    pub fn install(tag: &str) -> Tree {
        let dest = std::env::temp_dir().join(format!("hipkfd-install-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dest);
        let out = Command::new("make")
            .args(["-s", "-C"])
            .arg(root())
            .args(["install-files", &format!("PREFIX={PREFIX}"), &format!("DESTDIR={}", dest.display())])
            .output()
            .expect("make");
        ok(out, "make install-files");
        Tree(dest)
    }

    /// DESTDIR/opt/hipkfd.
    pub fn prefix(&self) -> PathBuf {
        self.0.join(PREFIX.trim_start_matches('/'))
    }

    /// A command running `bin/hipkfd-env` of the tree, without cargo's LD_LIBRARY_PATH (it holds
    /// target/release, which has our library too).
    pub fn env_cmd(&self) -> Command {
        let mut c = Command::new(self.prefix().join("bin/hipkfd-env"));
        c.env_remove("LD_LIBRARY_PATH");
        c
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
