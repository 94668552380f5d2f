//! A kfd-sim session: a private directory `$TMPDIR/kfdsim-<pid>-<rand>/` holding
//! `topology.toml` (the canonical topology the model reads), `root/` (the fake file tree the
//! interposer redirects `/dev/kfd`, `/dev/dri`, the KFD sysfs ... to) and, once a process
//! allocates VRAM, `vram-ledger` (VRAM use per GPU across the session's processes,
//! `model::vram`).
//!
//! The launcher creates one per `kfdsim run` and removes it when the command ends. A process
//! that preloads libkfdsim.so without the launcher gets one from [`ensure_env`] (preset from
//! `KFDSIM_TOPOLOGY`, else the default), exported in the environment for its children; nobody
//! removes that one.

use std::io;
use std::path::{Path, PathBuf};

use crate::topology::{Topology, DEFAULT_PRESET};

/// Env: the fake file tree (`<session>/root`).
pub const ENV_ROOT: &str = "KFDSIM_ROOT";
/// Env: the session directory.
pub const ENV_SESSION: &str = "KFDSIM_SESSION";
/// Env: preset or topology file for a session created without the launcher.
pub const ENV_TOPOLOGY: &str = "KFDSIM_TOPOLOGY";
/// Name of the topology file inside the session directory.
pub const TOPOLOGY_FILE: &str = "topology.toml";
/// Name of the file in the session directory where each process appends its `KFDSIM_STATS`
/// record (`stats::at_exit`); the launcher sums them with [`stats_summary`].
pub const STATS_FILE: &str = "stats";
/// Name of the file in the session directory where each injected fault appends its call name
/// (`faults::check`), one per line.
pub const FAULTS_FILE: &str = "faults";

/// A created session directory.
#[derive(Debug)]
pub struct Session {
    dir: PathBuf,
}

impl Session {
    /// Creates `$TMPDIR/kfdsim-<pid>-<rand>/` (mode 0700, canonical path), writes
    /// `topology.toml` and the file tree under `root/`.
    pub fn create(topo: &Topology) -> io::Result<Session> {
        let base = std::env::temp_dir();
        let mut attempt = 0u32;
        let dir = loop {
            let dir = base.join(format!("kfdsim-{}-{:08x}", std::process::id(), random_u32()));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", dir.display()))),
            }
        };
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        // Canonical, so that realpath() results inside the tree start with KFDSIM_ROOT.
        let dir = std::fs::canonicalize(&dir)?;
        let session = Session { dir };
        let result = (|| {
            std::fs::write(session.dir.join(TOPOLOGY_FILE), topo.to_toml())?;
            crate::sysfs::write_tree(&session.root(), topo)
        })();
        match result {
            Ok(()) => Ok(session),
            Err(e) => {
                let _ = session.remove();
                Err(e)
            }
        }
    }

    /// The session directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The fake file tree (`KFDSIM_ROOT`).
    pub fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    /// Removes the session directory and everything in it.
    pub fn remove(self) -> io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }

    /// Forgets the session without removing it (it stays on disk).
    pub fn keep(self) -> PathBuf {
        self.dir
    }
}

/// A weak random number for unique directory names (time, pid and ASLR mixed).
fn random_u32() -> u32 {
    let t =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let local = 0u8;
    let mut x = t ^ (std::process::id() as u64).rotate_left(32) ^ (&local as *const u8 as u64);
    // splitmix64 finaliser
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    x as u32
}

/// Makes sure this process has a session: if `KFDSIM_SESSION` and `KFDSIM_ROOT` are set, returns
/// the session dir; else uses the shared session for `KFDSIM_TOPOLOGY` (preset or file; default
/// `xgmi-2`), creating it if needed, exports both variables (children inherit them) and returns
/// it. `None` (with a message on stderr) if that fails.
///
/// The shared session is `$TMPDIR/kfdsim-shared-<uid>-<hash of topology.toml>/`: processes that
/// preload the library without the launcher reuse it instead of leaving one directory each.
///
/// Called by libkfdsim.so's constructor, while the process is still single-threaded (setenv is
/// not thread-safe).
pub fn ensure_env() -> Option<PathBuf> {
    if let (Some(dir), Some(_)) = (std::env::var_os(ENV_SESSION), std::env::var_os(ENV_ROOT)) {
        return Some(PathBuf::from(dir));
    }
    let spec = std::env::var(ENV_TOPOLOGY).unwrap_or_else(|_| DEFAULT_PRESET.to_string());
    let topo = match Topology::from_arg(&spec) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kfdsim: {ENV_TOPOLOGY}={spec}: {e}; using {DEFAULT_PRESET}");
            Topology::preset(DEFAULT_PRESET).ok()?
        }
    };
    match shared_session(&topo) {
        Ok(dir) => {
            std::env::set_var(ENV_ROOT, dir.join("root"));
            std::env::set_var(ENV_SESSION, &dir);
            Some(dir)
        }
        Err(e) => {
            eprintln!("kfdsim: cannot create a session: {e}");
            None
        }
    }
}

/// FNV-1a, 64 bits.
fn fnv64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3))
}

/// The shared session directory for `topo`, created (atomically, by rename) if missing.
fn shared_session(topo: &Topology) -> io::Result<PathBuf> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let name = format!("kfdsim-shared-{uid}-{:016x}", fnv64(topo.to_toml().as_bytes()));
    let dir = std::fs::canonicalize(std::env::temp_dir())?.join(name);
    match join_or_create(topo, &dir)? {
        Some(dir) => Ok(dir),
        None => Ok(Session::create(topo)?.keep()),
    }
}

/// The session of simulated machine `name` (`kfdsim run --node NAME`):
/// `$TMPDIR/kfdsim-node-<uid>-<name>/`, created by the first run of the node and joined by the
/// others, so that every process of the node shares one machine (its VRAM ledger). Never
/// removed by the launcher. Errors: the directory exists and is not ours, or holds another
/// topology (`AlreadyExists`).
pub fn node_session(topo: &Topology, name: &str) -> io::Result<PathBuf> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = std::fs::canonicalize(std::env::temp_dir())?.join(format!("kfdsim-node-{uid}-{name}"));
    join_or_create(topo, &dir)?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists with another topology or owner (remove it to redefine node {name})", dir.display()),
        )
    })
}

/// `dir` as the session of `topo`: joined when it is ours (our uid, not group- or
/// world-writable) and holds the same topology, else created there (a fresh session renamed to
/// it: of processes racing to create it, one wins and the others join). `None`: `dir` exists
/// and is not usable.
fn join_or_create(topo: &Topology, dir: &Path) -> io::Result<Option<PathBuf>> {
    use std::os::unix::fs::MetadataExt;
    let text = topo.to_toml();
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let usable = |d: &Path| -> bool {
        std::fs::metadata(d).is_ok_and(|m| m.uid() == uid && m.mode() & 0o022 == 0)
            && std::fs::read_to_string(d.join(TOPOLOGY_FILE)).is_ok_and(|t| t == text)
    };
    if usable(dir) {
        return Ok(Some(dir.to_path_buf()));
    }
    let fresh = Session::create(topo)?;
    match std::fs::rename(fresh.dir(), dir) {
        Ok(()) => {
            let _ = fresh.keep();
            Ok(Some(dir.to_path_buf()))
        }
        Err(_) => {
            let _ = fresh.remove();
            // Another process won the race (usable), or the directory is someone else's.
            Ok(usable(dir).then(|| dir.to_path_buf()))
        }
    }
}

/// Appends `text` to `path` with one write (O_APPEND: records of processes do not interleave).
pub fn append(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(text.as_bytes())
}

/// The session record from the concatenated process records `records` and the fault log
/// `faults` (one call name per injected fault): `session.processes`, per key (first-seen order;
/// `gpu<i>.gpu_id` left out) the sum over the processes, then `session.faults.<NAME>` and
/// `session.faults.total` counted from the fault log (which also has the processes that wrote
/// no record).
pub fn stats_summary(records: &str, faults: &str) -> String {
    use std::fmt::Write as _;
    let mut pids: Vec<&str> = Vec::new();
    let mut sums: Vec<(String, u64)> = Vec::new();
    let mut add = |k: &str, v: u64| match sums.iter_mut().find(|(n, _)| n == k) {
        Some((_, s)) => *s += v,
        None => sums.push((k.to_string(), v)),
    };
    for line in records.lines() {
        let Some(rest) = line.strip_prefix("process.") else { continue };
        let Some((pid, kv)) = rest.split_once('.') else { continue };
        let Some((k, v)) = kv.split_once('=') else { continue };
        let Ok(v) = v.parse::<u64>() else { continue };
        if !pids.contains(&pid) {
            pids.push(pid);
        }
        // A gpu_id is an identity, not a quantity; faults come from the log.
        if !k.ends_with(".gpu_id") && !k.starts_with("faults.") {
            add(k, v);
        }
    }
    let mut total = 0;
    for name in faults.lines().filter(|l| !l.is_empty()) {
        add(&format!("faults.{name}"), 1);
        total += 1;
    }
    add("faults.total", total);
    let mut s = format!("session.processes={}\n", pids.len());
    for (k, v) in &sums {
        let _ = writeln!(s, "session.{k}={v}");
    }
    s
}

#[cfg(test)]
mod stats_tests {
    use super::*;

    #[test]
    fn stats_summary_sums_keys_over_processes_and_counts_the_fault_log() {
        let a = "process.10.bos=2\nprocess.10.gpu0.gpu_id=4096\nprocess.10.faults.GEM_VA=1\n";
        let b = "process.11.bos=3\nprocess.11.gpu0.gpu_id=4096\nprocess.11.faults.total=0\n";
        assert_eq!(
            stats_summary(&format!("{a}{b}"), "GEM_VA\nmmap\nGEM_VA\n"),
            "session.processes=2\nsession.bos=5\nsession.faults.GEM_VA=2\nsession.faults.mmap=1\nsession.faults.total=3\n"
        );
        assert_eq!(stats_summary("", ""), "session.processes=0\nsession.faults.total=0\n");
    }
}
