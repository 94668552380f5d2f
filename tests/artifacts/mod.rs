//! What the drop-in tests (dropin, symbol_versions, install, hip_python, cupy, hipkfd_info) share:
//! the built artifacts in target/release, a `make install` tree in a temporary DESTDIR, and Python
//! venvs cached under target/.
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

/// target/`name`, a Python venv with `requirements` installed from PyPI, made once and reused
/// while its requirements are the same (recorded in `.hipkfd-installed`); `None`, with the reason
/// printed, when it cannot be made here (no python3-venv, PyPI unreachable).
pub fn cached_venv(name: &str, requirements: &[&str]) -> Option<PathBuf> {
    let venv = release_dir().parent().unwrap().join(name);
    let done = venv.join(".hipkfd-installed");
    if std::fs::read_to_string(&done).is_ok_and(|v| v == requirements.join("\n")) {
        return Some(venv);
    }
    let _ = std::fs::remove_dir_all(&venv);
    // The venv's pip must not run under the simulator's LD_PRELOAD (it needs none of it).
    let bare = |c: &mut Command| -> Output { c.env_remove("LD_PRELOAD").output().unwrap() };
    let made = bare(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    if !made.status.success() {
        eprintln!("skipped: cannot create a venv (Debian package python3-venv): {}", text(&made.stderr));
        return None;
    }
    let pip = bare(
        Command::new(venv.join("bin/pip")).args(["install", "-q", "--disable-pip-version-check"]).args(requirements),
    );
    if !pip.status.success() {
        eprintln!("skipped: cannot install {requirements:?} from PyPI (unreachable?): {}", text(&pip.stderr));
        let _ = std::fs::remove_dir_all(&venv);
        return None;
    }
    std::fs::write(&done, requirements.join("\n")).unwrap();
    Some(venv)
}
