//! hiprtc's on-disk cache of compiles: a compile whose preprocessed source, clang command and
//! toolchain match an earlier one takes that compile's output and log instead of running the
//! compiler again (a preprocess takes about a tenth of a compile's time).
//!
//! The key is ccache's preprocessor mode: the SHA-256 of the clang arguments, the preprocessed
//! source (`clang -E` of the same command) and the toolchain's files (clang, `ld.lld` and the
//! device library's bitcode: path, size and mtime), with the compile's temporary directory
//! written as one placeholder. Every header a compile reads, from the user's `-I` directories
//! or the HIP install, is in the preprocessed source, so an edit to any of them is a new key.
//! comgr, which clr's hiprtc compiles through, keeps a disk cache of its own (`AMD_COMGR_CACHE`,
//! `AMD_COMGR_CACHE_DIR`; on by default in recent ROCm), and so does CUDA's driver for its JIT.
//!
//! Settings, read at each compile:
//! - `HIPKFD_RTC_CACHE=0` turns the cache off;
//! - `HIPKFD_RTC_CACHE_DIR`: its directory, else `$XDG_CACHE_HOME/hipkfd/hiprtc`, else
//!   `$HOME/.cache/hipkfd/hiprtc` (no cache when none is set);
//! - `HIPKFD_RTC_CACHE_MAXSIZE`: its size in bytes (default 256 MiB). A store that takes the
//!   directory past it removes the entries least recently used until it holds three quarters.
//!
//! An entry is one file named by its key: [`MAGIC`], the log's length (u64, little-endian), the
//! log, then the output. It is written to a temporary file and renamed, so a reader sees it
//! whole or not at all (a writer that dies leaves its temporary file, which a later store
//! removes once it is an hour old); one that does not parse is a miss. A hit refreshes its mtime.
//!
//! Layer `kernels`: may call `share`, `mem`, `core`, `abi` and its own layer.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The start of every entry; a new layout gets a new magic, so older entries miss.
const MAGIC: &[u8; 16] = b"hipkfd-hiprtc-1\n";

const DEFAULT_MAX_BYTES: u64 = 256 << 20;

/// How old a writer's temporary file (`.tmp-*`) must be before a trim takes it for abandoned.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// What a compile left: its diagnostics and its output (a code object, or bitcode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub log: String,
    pub output: Vec<u8>,
}

/// A cache directory and its size limit (bytes).
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
}

impl Cache {
    /// The cache the environment asks for (module doc), or None when it is off.
    pub fn from_env() -> Option<Cache> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if var("HIPKFD_RTC_CACHE").is_some_and(|v| v == "0") {
            return None;
        }
        let dir = var("HIPKFD_RTC_CACHE_DIR").map(PathBuf::from).or_else(|| {
            let base = var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))?;
            Some(base.join("hipkfd/hiprtc"))
        })?;
        let max_bytes =
            var("HIPKFD_RTC_CACHE_MAXSIZE").and_then(|v| v.to_str()?.trim().parse().ok()).unwrap_or(DEFAULT_MAX_BYTES);
        Some(Cache::new(dir, max_bytes))
    }

    pub fn new(dir: PathBuf, max_bytes: u64) -> Cache {
        Cache { dir, max_bytes }
    }

    /// The entry stored under `key`, if one is there and parses; refreshes its mtime.
    pub fn load(&self, key: &str) -> Option<Entry> {
        let path = self.dir.join(key);
        let bytes = std::fs::read(&path).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let (len, rest) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if len > rest.len() {
            return None;
        }
        let (log, output) = rest.split_at(len);
        let entry = Entry { log: String::from_utf8(log.to_vec()).ok()?, output: output.to_vec() };
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(entry)
    }

    /// Stores a compile's `log` and `output` under `key` (replacing an entry there), then trims
    /// the directory to its size limit. Errors: the directory or file could not be written (the
    /// caller goes on without).
    pub fn store(&self, key: &str, log: &str, output: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.dir)?;
        let mut f = tempfile::Builder::new().prefix(".tmp-").tempfile_in(&self.dir)?;
        f.write_all(MAGIC)?;
        f.write_all(&(log.len() as u64).to_le_bytes())?;
        f.write_all(log.as_bytes())?;
        f.write_all(output)?;
        f.persist(self.dir.join(key)).map_err(|e| e.error)?;
        self.trim();
        Ok(())
    }

    /// Removes the least recently used entries while the directory holds more than its limit,
    /// down to three quarters of it, and temporary files older than [`STALE_TMP`] (left by a
    /// writer that died). Entries another process removes meanwhile are skipped.
    fn trim(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else { return };
        let now = std::time::SystemTime::now();
        let mut entries = Vec::new();
        for e in dir.flatten() {
            let Some(m) = e.metadata().ok() else { continue };
            let Some(modified) = m.modified().ok() else { continue };
            let name = e.file_name();
            let name = name.to_str().unwrap_or_default();
            if is_key(name) {
                entries.push((modified, m.len(), e.path()));
            } else if name.starts_with(".tmp-") && now.duration_since(modified).is_ok_and(|age| age > STALE_TMP) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes {
            return;
        }
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.max_bytes / 4 * 3 {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Whether `name` is an entry's file name: a key (64 lowercase hex digits).
fn is_key(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The key of a compile (module doc): `toolchain` from [`toolchain_id`], the clang arguments
/// `args` and the preprocessed source `preprocessed`, with `tmp` (the compile's temporary
/// directory) replaced in both. Lowercase hex.
pub fn key(toolchain: &[u8], tmp: &Path, args: &[std::ffi::OsString], preprocessed: &[u8]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tmp.as_os_str().as_bytes();
    let mut h = Sha256::new();
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(MAGIC);
    part(toolchain);
    for a in args {
        part(&replace(a.as_bytes(), tmp));
    }
    part(&replace(preprocessed, tmp));
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `text` with each occurrence of `tmp` replaced by `<tmp>`.
fn replace(text: &[u8], tmp: &[u8]) -> Vec<u8> {
    if tmp.is_empty() {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.windows(tmp.len()).position(|w| w == tmp) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(b"<tmp>");
        rest = &rest[at + tmp.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// What identifies the toolchain's files: for each of `files` and each `.bc` file in
/// `device_lib`, its canonical path, size and mtime (ns); a file that is missing counts as such.
pub fn toolchain_id(files: &[&Path], device_lib: Option<&Path>) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut paths: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
    if let Some(dir) = device_lib {
        let mut bc: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "bc"))
            .collect();
        bc.sort();
        paths.extend(bc);
    }
    let mut id = Vec::new();
    for p in paths {
        let real = std::fs::canonicalize(&p).unwrap_or(p);
        id.extend_from_slice(real.as_os_str().as_bytes());
        id.push(0);
        if let Ok(m) = std::fs::metadata(&real) {
            use std::os::unix::fs::MetadataExt;
            id.extend_from_slice(&m.size().to_le_bytes());
            id.extend_from_slice(&m.mtime().to_le_bytes());
            id.extend_from_slice(&m.mtime_nsec().to_le_bytes());
        }
        id.push(b'\n');
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn entry(log: &str, output: &[u8]) -> Entry {
        Entry { log: log.into(), output: output.to_vec() }
    }

    #[test]
    fn stored_entries_load_back_and_others_miss() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path().join("c"), 1 << 20);
        let k = key(b"tc", Path::new("/tmp/x"), &[OsString::from("-O3")], b"int x;");
        assert_eq!(c.load(&k), None);
        c.store(&k, "warning: w\n", b"\x7fELF...").unwrap();
        assert_eq!(c.load(&k), Some(entry("warning: w\n", b"\x7fELF...")));
        c.store(&k, "", b"").unwrap();
        assert_eq!(c.load(&k), Some(entry("", b"")));
        // Truncated, or not an entry: a miss.
        let path = dir.path().join("c").join(&k);
        std::fs::write(&path, &MAGIC[..10]).unwrap();
        assert_eq!(c.load(&k), None);
        let mut long = MAGIC.to_vec();
        long.extend_from_slice(&100u64.to_le_bytes());
        long.extend_from_slice(b"short");
        std::fs::write(&path, long).unwrap();
        assert_eq!(c.load(&k), None);
        // A writer's temporary file: kept while fresh, removed by a store once an hour old.
        let tmp = dir.path().join("c").join(".tmp-abandoned");
        std::fs::write(&tmp, b"partial").unwrap();
        c.store(&k, "", b"").unwrap();
        assert!(tmp.exists());
        let f = std::fs::File::options().append(true).open(&tmp).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(7200)).unwrap();
        c.store(&k, "", b"").unwrap();
        assert!(!tmp.exists());
        // Nothing but entries is left in the directory.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("c")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![OsString::from(&k)]);
    }

    #[test]
    fn keys_differ_by_each_input_and_not_by_the_temporary_directory() {
        let args = |a: &str| vec![OsString::from("-O3"), OsString::from(a)];
        let base =
            key(b"tc", Path::new("/tmp/hiprtc-a"), &args("-I/tmp/hiprtc-a/include"), b"# 1 \"/tmp/hiprtc-a/x.h\"");
        assert!(is_key(&base));
        assert_eq!(
            base,
            key(b"tc", Path::new("/tmp/hiprtc-b"), &args("-I/tmp/hiprtc-b/include"), b"# 1 \"/tmp/hiprtc-b/x.h\"")
        );
        assert_ne!(
            base,
            key(b"tc2", Path::new("/tmp/hiprtc-a"), &args("-I/tmp/hiprtc-a/include"), b"# 1 \"/tmp/hiprtc-a/x.h\"")
        );
        assert_ne!(
            base,
            key(b"tc", Path::new("/tmp/hiprtc-a"), &args("-I/tmp/other/include"), b"# 1 \"/tmp/hiprtc-a/x.h\"")
        );
        assert_ne!(
            base,
            key(b"tc", Path::new("/tmp/hiprtc-a"), &args("-I/tmp/hiprtc-a/include"), b"# 2 \"/tmp/hiprtc-a/x.h\"")
        );
        // Arguments are delimited: "-O3" "-x" is not "-O3-x".
        assert_ne!(
            key(b"", Path::new("/t"), &[OsString::from("-O3"), OsString::from("-x")], b""),
            key(b"", Path::new("/t"), &[OsString::from("-O3-x")], b"")
        );
    }

    #[test]
    fn the_least_recently_used_go_when_the_directory_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path().to_path_buf(), 4000);
        let keys: Vec<String> = (0..4).map(|i| key(b"", Path::new("/t"), &[], &[i])).collect();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(100);
        for (i, k) in keys[..3].iter().enumerate() {
            c.store(k, "", &[0; 1000]).unwrap();
            let f = std::fs::File::options().append(true).open(dir.path().join(k)).unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        // A hit makes keys[0] the most recently used.
        assert!(c.load(&keys[0]).is_some());
        // 4 x 1024 bytes > 4000: trimmed to 3000 or less, the oldest first (keys[1], keys[2]).
        c.store(&keys[3], "", &[0; 1000]).unwrap();
        let present: Vec<bool> = keys.iter().map(|k| dir.path().join(k).exists()).collect();
        assert_eq!(present, [true, false, false, true]);
    }

    #[test]
    fn toolchain_id_follows_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let clang = dir.path().join("clang");
        std::fs::write(&clang, "a").unwrap();
        std::fs::write(dir.path().join("ocml.bc"), "b").unwrap();
        let first = toolchain_id(&[&clang], Some(dir.path()));
        assert_eq!(first, toolchain_id(&[&clang], Some(dir.path())));
        std::fs::write(dir.path().join("ocml.bc"), "bc").unwrap();
        assert_ne!(first, toolchain_id(&[&clang], Some(dir.path())));
        assert_ne!(first, toolchain_id(&[&clang], None));
    }
}
