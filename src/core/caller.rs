//! Which ROCm ABI the program calling us was built for, where ROCm 5's and ROCm 7's differ under
//! one symbol and version (README "Use it with your program", the ABI table): the
//! external-semaphore parameters, the `hipMemoryType` values of `hipPointerGetAttributes` and of
//! the driver copies, the `hipMemAllocationProp` of an imported VMM handle, HIP 5.2's
//! `struct hipArray`.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::core::coexist::loaded_objects;
use crate::core::log::hipkfd_log;
use object::read::elf::{Dyn, FileHeader};
use std::path::Path;
use std::sync::OnceLock;

/// The major version of a `libamdhip64.so.N[...]` file name (any directory), else `None`.
fn libamdhip64_major(name: &str) -> Option<u32> {
    let base = name.rsplit('/').next()?;
    let version = base.strip_prefix("libamdhip64.so.")?;
    version.split('.').next()?.parse().ok()
}

/// The `DT_NEEDED` names of the ELF file at `path` (empty when it cannot be read as one). Reads
/// the ELF header, the section headers and the dynamic section alone, not the whole file.
fn needed(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else { return Vec::new() };
    let data = object::ReadCache::new(file);
    let Ok(header) = object::elf::FileHeader64::<object::Endianness>::parse(&data) else { return Vec::new() };
    let Ok(e) = header.endian() else { return Vec::new() };
    let Ok(sections) = header.sections(e, &data) else { return Vec::new() };
    let Ok(Some((dynamic, link))) = sections.dynamic(e, &data) else { return Vec::new() };
    let Ok(strings) = sections.strings(e, &data, link) else { return Vec::new() };
    dynamic
        .iter()
        .filter(|d| d.d_tag(e) == object::elf::DT_NEEDED)
        .filter_map(|d| d.string(e, strings).ok())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// Whether the program calling us was built against ROCm 5 headers, as far as the library can
/// tell, decided once:
/// 1. Loaded under a `libamdhip64.so.5` (or older) name (`dladdr`): a binary linked against ROCm
///    5 found ours through a compat link (README) → yes; under `.so.6`/`.so.7`, no.
/// 2. Otherwise (`libamdhip64.so`, or a path `LD_PRELOAD`ed): the `DT_NEEDED` entries of every
///    other loaded object (the main program included). Some object needs `libamdhip64.so.5` or
///    older and none `.so.6` or newer (e.g. a ROCm 5 binary with ours preloaded, which also maps
///    stock `.so.5`) → yes; else ROCm 7's. Decided at the first call that depends on it, when
///    the program's objects are loaded.
pub fn rocm5_caller() -> bool {
    static ROCM5: OnceLock<bool> = OnceLock::new();
    *ROCM5.get_or_init(|| {
        let objects = loaded_objects();
        let ours = objects.iter().find(|(_, ours)| *ours).map(|(n, _)| n.clone()).unwrap_or_default();
        if let Some(major) = libamdhip64_major(&ours) {
            let rocm5 = major <= 5;
            if rocm5 {
                hipkfd_log!("loaded as {ours}: the ROCm 5 ABI where it differs from ROCm 7's");
            }
            return rocm5;
        }
        let (mut old, mut new) = (None, None);
        for (name, _) in objects.iter().filter(|(_, ours)| !ours) {
            let path = if name.is_empty() { "/proc/self/exe" } else { name.as_str() };
            for need in needed(Path::new(path)) {
                match libamdhip64_major(&need) {
                    Some(m) if m <= 5 => old = old.or(Some((path.to_owned(), need))),
                    Some(_) => new = new.or(Some((path.to_owned(), need))),
                    None => {}
                }
            }
        }
        match (old, new) {
            (Some((path, need)), None) => {
                hipkfd_log!("{path} needs {need} (ours is {ours}): the ROCm 5 ABI where it differs from ROCm 7's");
                true
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_give_their_major() {
        assert_eq!(libamdhip64_major("/opt/hipkfd/lib/compat/libamdhip64.so.5"), Some(5));
        assert_eq!(libamdhip64_major("libamdhip64.so.7.2.26015"), Some(7));
        assert_eq!(libamdhip64_major("/x/libamdhip64.so"), None);
        assert_eq!(libamdhip64_major("/x/libamdhip64.so.7.bak/libfoo.so.1"), None);
    }

    #[test]
    fn needed_entries_are_read_from_the_dynamic_section() {
        // This test binary is linked against libc.
        let n = needed(Path::new("/proc/self/exe"));
        assert!(n.iter().any(|x| x.starts_with("libc.so")), "{n:?}");
        assert!(needed(Path::new("/nonexistent")).is_empty());
        assert!(needed(Path::new("/proc/self/status")).is_empty());
    }
}
