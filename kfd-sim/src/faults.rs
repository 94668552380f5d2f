//! Fault injection: `KFDSIM_FAULTS` makes chosen ioctls and mmaps of the simulated devices fail
//! as the kernel can, before the model acts on them (a failed call changes no model state).
//!
//! Syntax: a comma-separated list of `NAME:ERRNO:RULE`.
//! - `NAME`: the ioctl's uapi name without its prefix (`AMDKFD_IOC_`, `DRM_IOCTL_AMDGPU_`,
//!   `DRM_IOCTL_`): `ALLOC_MEMORY_OF_GPU`, `MAP_MEMORY_TO_GPU`, `IMPORT_DMABUF`, `CREATE_QUEUE`,
//!   `GEM_VA`, `PRIME_FD_TO_HANDLE`, `SYNCOBJ_TIMELINE_WAIT`, `UDMABUF_CREATE`, ...; or `mmap`
//!   (an mmap of `/dev/kfd` or a render node).
//! - `ERRNO`: a name (`ENOMEM`, `EINTR`, `ERESTARTSYS`, `EAGAIN`, `EFAULT`, `EINVAL`, `ENOSPC`,
//!   `EBUSY`, ...) or a positive number.
//! - `RULE`: `every=N` (the N-th, 2N-th, ... call of that name fails), `nth=N` (only the N-th),
//!   or `p=P` (each call with probability P in [0, 1], drawn from `KFDSIM_SEED`, default 0, and
//!   the call's index: the same sequence of calls fails the same way on every run).
//!
//! `ERRNO` is what the caller's `errno` becomes, except `ERRNO=ERESTARTSYS` (512): the kernel
//! never lets that value reach user space. An ioctl interrupted by a signal returns it inside
//! the kernel; if the handler has `SA_RESTART` the call is restarted invisibly, else the caller
//! sees `EINTR` (`arch/x86/kernel/signal.c: handle_signal`). The model takes the second case, the
//! only visible one: the call fails with `EINTR` (counted under its own rule).
//!
//! Several rules may name the same call; they are checked in order and the first that fires
//! wins. Counts of the faults each name received are in `KFDSIM_STATS` (`faults.<NAME>`; the
//! launcher's `session.faults.*` also count processes that ended in `_exit` or by a signal).
//! Test drivers may switch injection off and on with the exported `kfdsim_faults_enable`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Env: the fault list.
pub const ENV_FAULTS: &str = "KFDSIM_FAULTS";
/// Env: the seed of `p=` rules (a u64, default 0).
pub const ENV_SEED: &str = "KFDSIM_SEED";
/// The kernel's internal `ERESTARTSYS` (`include/linux/errno.h`).
pub const ERESTARTSYS: i32 = 512;

/// When a rule fires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum When {
    Every(u64),
    Nth(u64),
    /// Probability in [0, 1].
    P(f64),
}

/// One `NAME:ERRNO:RULE`.
#[derive(Debug)]
pub struct Rule {
    pub name: String,
    /// The errno as written (`ERESTARTSYS` stays 512 here; see [`Rule::user_errno`]).
    pub errno: i32,
    pub when: When,
    /// Calls of `name` seen by this rule.
    calls: AtomicU64,
    /// Faults this rule injected.
    pub hits: AtomicU64,
}

impl Rule {
    /// What the caller sees: `errno`, with `ERESTARTSYS` shown as `EINTR`.
    pub fn user_errno(&self) -> i32 {
        if self.errno == ERESTARTSYS {
            libc::EINTR
        } else {
            self.errno
        }
    }
}

const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("ENODEV", libc::ENODEV),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("ENOTTY", libc::ENOTTY),
    ("ENOSPC", libc::ENOSPC),
    ("EDEADLK", libc::EDEADLK),
    ("ENOSYS", libc::ENOSYS),
    ("ETIME", libc::ETIME),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ECANCELED", libc::ECANCELED),
    ("EHWPOISON", libc::EHWPOISON),
    ("ERESTARTSYS", ERESTARTSYS),
];

/// An errno name or number.
pub fn parse_errno(s: &str) -> Option<i32> {
    if let Some((_, v)) = ERRNO_NAMES.iter().find(|(n, _)| *n == s) {
        return Some(*v);
    }
    s.parse::<i32>().ok().filter(|v| *v > 0 && *v < 4096)
}

/// The name of an errno value (the number if unnamed).
pub fn errno_name(v: i32) -> String {
    ERRNO_NAMES.iter().find(|(_, e)| *e == v).map_or_else(|| v.to_string(), |(n, _)| n.to_string())
}

/// Parses a `KFDSIM_FAULTS` value. `known` says whether a NAME exists (None: any name).
pub fn parse(spec: &str, known: Option<&dyn Fn(&str) -> bool>) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = item.split(':').collect();
        let [name, errno, rule] = parts[..] else {
            return Err(format!("'{item}': expected NAME:ERRNO:RULE"));
        };
        if let Some(known) = known {
            if !known(name) {
                return Err(format!(
                    "'{item}': unknown call '{name}' (an ioctl's uapi name without its prefix, or mmap)"
                ));
            }
        }
        let errno = parse_errno(errno).ok_or_else(|| format!("'{item}': unknown errno '{errno}'"))?;
        let (k, v) = rule.split_once('=').ok_or_else(|| format!("'{item}': RULE is every=N, nth=N or p=P"))?;
        let when = match k {
            "every" | "nth" => {
                let n: u64 = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("'{item}': {k} takes N ≥ 1"))?;
                if k == "every" {
                    When::Every(n)
                } else {
                    When::Nth(n)
                }
            }
            "p" => When::P(
                v.parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| format!("'{item}': p takes a probability in [0, 1]"))?,
            ),
            _ => return Err(format!("'{item}': RULE is every=N, nth=N or p=P")),
        };
        rules.push(Rule { name: name.to_string(), errno, when, calls: AtomicU64::new(0), hits: AtomicU64::new(0) });
    }
    Ok(rules)
}

/// The seed from `KFDSIM_SEED` (decimal or 0x-hex; 0 if unset or invalid).
pub fn seed_from_env() -> u64 {
    std::env::var(ENV_SEED)
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        })
        .unwrap_or(0)
}

/// splitmix64.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Whether call number `n` (1-based) of rule number `idx` fails under `when` with `seed`.
pub fn fires(when: When, seed: u64, idx: usize, n: u64) -> bool {
    match when {
        When::Every(k) => n.is_multiple_of(k),
        When::Nth(k) => n == k,
        When::P(p) => {
            let r = mix(seed ^ mix(idx as u64 + 1) ^ n.wrapping_mul(0xd6e8_feb8_6659_fd93));
            ((r >> 11) as f64 / (1u64 << 53) as f64) < p
        }
    }
}

/// The injector of this process: the parsed `KFDSIM_FAULTS` and the seed.
pub struct Injector {
    pub rules: Vec<Rule>,
    seed: u64,
}

static INJECTOR: OnceLock<Injector> = OnceLock::new();
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Known call names: the ioctls of the uapi tables without their prefixes, `UDMABUF_CREATE*`
/// and `mmap`.
pub fn known_name(name: &str) -> bool {
    name == "mmap"
        || name == "UDMABUF_CREATE"
        || name == "UDMABUF_CREATE_LIST"
        || kfd_ioctl::kfd::KFD_IOCTLS
            .iter()
            .chain(kfd_ioctl::drm::DRM_IOCTLS)
            .chain(kfd_ioctl::amdgpu::AMDGPU_IOCTLS)
            .any(|(_, n)| short_name(n) == name)
}

/// A uapi ioctl name without its prefix: `AMDKFD_IOC_X`, `DRM_IOCTL_AMDGPU_X`, `DRM_IOCTL_X` → `X`.
pub fn short_name(full: &str) -> &str {
    ["AMDKFD_IOC_", "DRM_IOCTL_AMDGPU_", "DRM_IOCTL_"].iter().find_map(|p| full.strip_prefix(p)).unwrap_or(full)
}

/// This process's injector (parsed once; an invalid `KFDSIM_FAULTS` is reported on stderr and
/// injects nothing: the launcher refuses to start with one).
pub fn injector() -> &'static Injector {
    INJECTOR.get_or_init(|| {
        let rules = match std::env::var(ENV_FAULTS) {
            Ok(s) => parse(&s, Some(&known_name)).unwrap_or_else(|e| {
                eprintln!("kfdsim: {ENV_FAULTS}: {e}; no faults injected");
                Vec::new()
            }),
            Err(_) => Vec::new(),
        };
        Injector { rules, seed: seed_from_env() }
    })
}

/// Switches injection on or off for this process (counting of calls continues only while on).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Called at the dispatch entry for call `name` (short name): the errno to fail with, if a rule
/// fires. `name` is computed only when some rule exists.
pub fn check(name: impl FnOnce() -> Option<&'static str>) -> Option<i32> {
    let inj = injector();
    if inj.rules.is_empty() || !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    let name = short_name(name()?);
    for (idx, r) in inj.rules.iter().enumerate() {
        if r.name != name {
            continue;
        }
        let n = r.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if fires(r.when, inj.seed, idx, n) {
            r.hits.fetch_add(1, Ordering::Relaxed);
            log_to_session(name);
            if crate::trace::enabled() {
                crate::trace::emit(format_args!("{name}: injected {} (call {n})", errno_name(r.errno)));
            }
            return Some(r.user_errno());
        }
    }
    None
}

/// Under the launcher with `KFDSIM_STATS` set: appends `name` as one line to
/// `<session>/faults`, so that the session's counts include processes that end without running
/// their exit handlers (`_exit`, a signal).
fn log_to_session(name: &str) {
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        std::env::var_os("KFDSIM_STATS").filter(|v| !v.is_empty() && v != "0")?;
        std::env::var_os(crate::session::ENV_SESSION).map(std::path::PathBuf::from)
    });
    if let Some(dir) = dir {
        let _ = crate::session::append(&dir.join(crate::session::FAULTS_FILE), &format!("{name}\n"));
    }
}

/// Faults injected so far, per call name (rules of one name summed), in rule order.
pub fn injected() -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for r in &injector().rules {
        let h = r.hits.load(Ordering::Relaxed);
        match out.iter_mut().find(|(n, _)| *n == r.name) {
            Some((_, v)) => *v += h,
            None => out.push((r.name.clone(), h)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rules_and_rejects_garbage() {
        let r =
            parse("ALLOC_MEMORY_OF_GPU:ENOMEM:every=7, MAP_MEMORY_TO_GPU:EINTR:p=0.05,mmap:12:nth=2", None).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].name.as_str(), r[0].errno, r[0].when), ("ALLOC_MEMORY_OF_GPU", libc::ENOMEM, When::Every(7)));
        assert_eq!(r[1].when, When::P(0.05));
        assert_eq!((r[2].errno, r[2].when), (libc::ENOMEM, When::Nth(2)));
        let restart = parse("GEM_VA:ERESTARTSYS:nth=1", None).unwrap();
        assert_eq!((restart[0].errno, restart[0].user_errno()), (ERESTARTSYS, libc::EINTR));
        for bad in ["X:ENOMEM", "X:ENOPE:every=1", "X:ENOMEM:every=0", "X:ENOMEM:p=1.5", "X:ENOMEM:often=2"] {
            assert!(parse(bad, None).is_err(), "{bad}");
        }
        assert!(parse("ALLOC_MEMORY:ENOMEM:every=1", Some(&known_name)).is_err());
        assert!(parse("GEM_VA:ENOMEM:every=1,PRIME_FD_TO_HANDLE:EINTR:nth=1", Some(&known_name)).is_ok());
        assert!(parse("ALLOC_MEMORY_OF_GPU:ENOMEM:every=1,mmap:EINTR:nth=1", Some(&known_name)).is_ok());
    }

    #[test]
    fn rules_fire_as_specified_and_reproducibly() {
        let hits = |w: When, seed: u64| (1..=1000).filter(|&n| fires(w, seed, 0, n)).collect::<Vec<_>>();
        assert_eq!(hits(When::Every(250), 0), vec![250, 500, 750, 1000]);
        assert_eq!(hits(When::Nth(3), 0), vec![3]);
        let a = hits(When::P(0.1), 42);
        assert_eq!(a, hits(When::P(0.1), 42));
        assert_ne!(a, hits(When::P(0.1), 43));
        assert!((60..=140).contains(&a.len()), "{}", a.len());
        assert!(hits(When::P(0.0), 1).is_empty());
        assert_eq!(hits(When::P(1.0), 1).len(), 1000);
    }
}
