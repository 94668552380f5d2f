//! `kfdsim`: runs a command on simulated AMD GPUs.
//!
//! ```text
//! kfdsim run [--gpus N | --topology PRESET|FILE] [--keep] [--node NAME] -- CMD [ARGS...]
//! kfdsim presets
//! kfdsim show [--gpus N | --topology PRESET|FILE]
//! ```
//! `run` creates a session (`$TMPDIR/kfdsim-<pid>-<rand>/`: topology.toml and the fake file tree
//! under root/), sets `KFDSIM_ROOT`, `KFDSIM_SESSION` and prepends the libkfdsim.so found next
//! to this executable to `LD_PRELOAD`, runs CMD (its children inherit all of it), removes the
//! session (unless `--keep` or `KFDSIM_KEEP=1`) and exits with CMD's status (128 + signal if CMD
//! was killed). No root needed. The default topology is `xgmi-2`.
//!
//! With `--node NAME`, CMD runs on simulated machine NAME instead of a machine of its own: the
//! session is `$TMPDIR/kfdsim-node-<uid>-<NAME>/`, shared by every run with that name (and the
//! same topology) and kept for later ones, and CMD gets its own UTS namespace whose host name is
//! NAME (a user namespace too where the caller may not create one alone). So several runs make
//! one host (one process per GPU, as `mpirun` starts ranks), and runs with different names are
//! different hosts to programs that tell hosts apart by name (RCCL, MPI): two nodes on one machine.
//!
//! `KFDSIM_FAULTS` is checked before CMD starts (an invalid list is a setup error, 125). With
//! `KFDSIM_STATS` set, a path there is truncated first; after CMD, the `session.` record (the sum
//! of the records of every process, see `stats.rs`) goes to the same place.

#![allow(dead_code)]

#[path = "../topology.rs"]
mod topology;

#[path = "../sysfs.rs"]
mod sysfs;

#[path = "../session.rs"]
mod session;

#[path = "../trace.rs"]
mod trace;

#[path = "../faults.rs"]
mod faults;

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};

use session::Session;
use topology::{Topology, DEFAULT_PRESET};

const USAGE: &str = "\
usage: kfdsim run [--gpus N | --topology PRESET|FILE] [--keep] [--node NAME] -- CMD [ARGS...]
       kfdsim presets
       kfdsim show [--gpus N | --topology PRESET|FILE]

  --gpus N             N GPUs (1..=8) in one xGMI hive (preset xgmi-N)
  --topology X         a preset (see `kfdsim presets`) or a TOML topology file
  --keep               keep the session directory (also KFDSIM_KEEP=1)
  --node NAME          run on simulated machine NAME, shared by every run with that name,
                       with host name NAME (own UTS namespace): one node of a cluster
Default topology: xgmi-2 (2 GPUs gfx90a joined by xGMI).";

/// Exit status for usage and setup errors (the command never ran).
const EXIT_SETUP: u8 = 125;

struct Options {
    topology: Option<Topology>,
    keep: bool,
    /// `--node NAME`: a valid host name (checked).
    node: Option<String>,
    command: Vec<OsString>,
}

/// A host name as `sethostname` and resolvers take it: 1 to 64 letters, digits, '-' and '.'.
fn valid_node_name(n: &str) -> bool {
    (1..=64).contains(&n.len())
        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !n.starts_with(['-', '.'])
}

fn parse_options(args: &[OsString], want_command: bool) -> Result<Options, String> {
    let mut topology: Option<Topology> = None;
    let mut keep = false;
    let mut node = None;
    let mut i = 0;
    let set = |t: Topology, topology: &mut Option<Topology>| {
        if topology.is_some() {
            return Err("give only one of --gpus / --topology".to_string());
        }
        *topology = Some(t);
        Ok(())
    };
    while i < args.len() {
        let a = args[i].to_string_lossy().into_owned();
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            i += 1;
            args.get(i).map(|v| v.to_string_lossy().into_owned()).ok_or(format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--" => {
                i += 1;
                break;
            }
            "--gpus" => {
                let v = value()?;
                let n: usize = v.parse().map_err(|_| format!("--gpus takes a number, not '{v}'"))?;
                set(Topology::with_gpus(n).map_err(|e| e.to_string())?, &mut topology)?;
            }
            "--topology" => {
                let v = value()?;
                set(Topology::from_arg(&v).map_err(|e| e.to_string())?, &mut topology)?;
            }
            "--keep" => keep = true,
            "--node" => {
                let v = value()?;
                if !valid_node_name(&v) {
                    return Err(format!("--node takes a host name (letters, digits, '-', '.'), not '{v}'"));
                }
                node = Some(v);
            }
            "-h" | "--help" => return Err(String::new()),
            _ if a.starts_with('-') => return Err(format!("unknown option '{a}'")),
            _ if want_command => break,
            _ => return Err(format!("unexpected argument '{a}'")),
        }
        i += 1;
    }
    let command = args[i.min(args.len())..].to_vec();
    if want_command && command.is_empty() {
        return Err("no command given (kfdsim run [OPTIONS] -- CMD [ARGS...])".into());
    }
    if !want_command && !command.is_empty() {
        return Err(format!("unexpected argument '{}'", command[0].to_string_lossy()));
    }
    if node.is_some() && !want_command {
        return Err("--node is an option of `kfdsim run`".into());
    }
    Ok(Options { topology, keep, node, command })
}

/// libkfdsim.so next to this executable, or in ../lib (an install tree).
fn preload_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate kfdsim: {e}"))?;
    let dir = exe.parent().ok_or("kfdsim has no parent dir")?;
    // target/release/ keeps both side by side; an install tree (`make install`) has bin/ and lib/.
    let lib = [dir.join("libkfdsim.so"), dir.join("../lib/libkfdsim.so")]
        .into_iter()
        .find(|l| l.is_file())
        .and_then(|l| l.canonicalize().ok())
        .unwrap_or_else(|| dir.join("libkfdsim.so"));
    if !lib.is_file() {
        return Err(format!("{} not found (build the kfd-sim library: cargo build -p kfd-sim)", lib.display()));
    }
    Ok(lib)
}

/// `LD_PRELOAD` with `lib` first (once).
fn ld_preload_with(lib: &std::path::Path) -> OsString {
    let mut v = OsString::from(lib);
    if let Some(old) = std::env::var_os("LD_PRELOAD") {
        let lib_s = lib.as_os_str().to_string_lossy().into_owned();
        let rest: Vec<String> = old
            .to_string_lossy()
            .split([':', ' '])
            .filter(|e| !e.is_empty() && *e != lib_s)
            .map(str::to_string)
            .collect();
        if !rest.is_empty() {
            v.push(":");
            v.push(rest.join(":"));
        }
    }
    v
}

/// What the child of `kfdsim run --node NAME` does before exec: a UTS namespace of its own
/// (`unshare(CLONE_NEWUTS)`; where that needs a privilege the caller lacks, a user namespace
/// too, mapping the caller's uid and gid to themselves) whose host name is NAME.
struct UtsSetup {
    name: Vec<u8>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl UtsSetup {
    fn new(name: &str) -> UtsSetup {
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        UtsSetup {
            name: name.as_bytes().to_vec(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// Runs in the forked child: only async-signal-safe calls, no allocation.
    fn enter(&self) -> std::io::Result<()> {
        use std::io::Error;
        // SAFETY: unshare takes flags only.
        if unsafe { libc::unshare(libc::CLONE_NEWUTS) } != 0 {
            let e = Error::last_os_error();
            if e.raw_os_error() != Some(libc::EPERM) {
                return Err(e);
            }
            // SAFETY: as above.
            if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWUTS) } != 0 {
                return Err(Error::last_os_error());
            }
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &self.uid_map)?;
            write_proc(c"/proc/self/gid_map", &self.gid_map)?;
        }
        // SAFETY: a pointer and length of a live byte vector.
        if unsafe { libc::sethostname(self.name.as_ptr().cast(), self.name.len()) } != 0 {
            return Err(Error::last_os_error());
        }
        Ok(())
    }
}

/// Writes `data` to the /proc file `path` in one write (async-signal-safe).
fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: a NUL-terminated path; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `data` is live for the call; fd is ours.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let e = std::io::Error::last_os_error();
    // SAFETY: closing our own fd.
    unsafe { libc::close(fd) };
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(e)
    }
}

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; pid is our child.
        unsafe { libc::kill(pid, sig) };
    }
}

fn run(args: &[OsString]) -> Result<u8, String> {
    let opts = parse_options(args, true)?;
    let topo = match opts.topology {
        Some(t) => t,
        None => Topology::preset(DEFAULT_PRESET).map_err(|e| e.to_string())?,
    };
    let lib = preload_library()?;
    if let Ok(spec) = std::env::var(faults::ENV_FAULTS) {
        faults::parse(&spec, Some(&faults::known_name)).map_err(|e| format!("{}: {e}", faults::ENV_FAULTS))?;
    }
    let stats = std::env::var_os("KFDSIM_STATS").filter(|v| !v.is_empty() && v != "0");
    if let Some(path) = stats.as_ref().filter(|v| *v != "1") {
        std::fs::write(path, "").map_err(|e| format!("KFDSIM_STATS={}: {e}", path.to_string_lossy()))?;
    }
    // A run's own session, removed at the end; or the node's, which outlives the run.
    let (dir, session) = match &opts.node {
        Some(name) => (session::node_session(&topo, name).map_err(|e| format!("node {name}: {e}"))?, None),
        None => {
            let s = Session::create(&topo).map_err(|e| format!("cannot create the session: {e}"))?;
            (s.dir().to_path_buf(), Some(s))
        }
    };
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..])
        .env(session::ENV_ROOT, dir.join("root"))
        .env(session::ENV_SESSION, &dir)
        .env("LD_PRELOAD", ld_preload_with(&lib));
    if let Some(name) = &opts.node {
        let uts = UtsSetup::new(name);
        // SAFETY: the hook runs in the forked child before exec and makes only
        // async-signal-safe calls (unshare, open, write, close, sethostname) on data prepared
        // before the fork.
        unsafe { cmd.pre_exec(move || uts.enter()) };
    }
    let status = match cmd.spawn() {
        Ok(mut child) => {
            CHILD.store(child.id() as i32, Ordering::Relaxed);
            // The terminal's SIGINT/SIGQUIT reach the child directly; we wait and clean up.
            // SIGTERM/SIGHUP sent to us are passed on.
            // SAFETY: installing handlers; forward_signal only calls kill.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGQUIT, libc::SIG_IGN);
                libc::signal(libc::SIGTERM, forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
                libc::signal(libc::SIGHUP, forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
            }
            child.wait().map_err(|e| format!("wait: {e}"))
        }
        Err(e) => Err(format!("{}: {e}", opts.command[0].to_string_lossy())),
    };
    if let Some(dest) = stats {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let summary = session::stats_summary(&read(session::STATS_FILE), &read(session::FAULTS_FILE));
        if dest == "1" {
            eprint!("{summary}");
        } else if let Err(e) = session::append(std::path::Path::new(&dest), &summary) {
            eprintln!("kfdsim: KFDSIM_STATS={}: {e}", dest.to_string_lossy());
        }
    }
    let keep = opts.keep || std::env::var_os("KFDSIM_KEEP").is_some_and(|v| v == "1");
    match session {
        Some(s) if keep => eprintln!("kfdsim: session kept in {}", s.keep().display()),
        Some(s) => {
            if let Err(e) = s.remove() {
                eprintln!("kfdsim: cannot remove the session: {e}");
            }
        }
        None => {}
    }
    let status = status?;
    Ok(match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(s)) => (128 + s) as u8,
        _ => 1,
    })
}

fn show(args: &[OsString]) -> Result<u8, String> {
    let opts = parse_options(args, false)?;
    let topo = match opts.topology {
        Some(t) => t,
        None => Topology::preset(DEFAULT_PRESET).map_err(|e| e.to_string())?,
    };
    print!("{}", topo.to_toml());
    Ok(0)
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let sub = args.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    let result = match sub.as_str() {
        "run" => run(&args[1..]),
        "show" => show(&args[1..]),
        "presets" => {
            for p in topology::preset_names() {
                println!("{p}");
            }
            Ok(0)
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(0)
        }
        "" => Err(String::new()),
        other => Err(format!("unknown subcommand '{other}'")),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("kfdsim: {msg}");
            }
            eprintln!("{USAGE}");
            ExitCode::from(EXIT_SETUP)
        }
    }
}
