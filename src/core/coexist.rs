//! Two HIP runtimes in one process must never happen quietly. A binary linked against stock
//! `libamdhip64.so.5` with ours `LD_PRELOAD`ed maps both; so does a Python binding that
//! `dlopen("libamdhip64.so")`s stock next to ours. Calls that reach the other runtime (symbols we
//! lack, `dlsym` on its handle) run there, on a device state ours knows nothing of. When another
//! `libamdhip64*` is mapped, this says so on stderr, once per process, naming the file (always, not
//! only under `HIPKFD_LOG`). Checked when the library is loaded, when the runtime initialises (first
//! API call) and at exit, so one loaded after ours is still reported.
//!
//! Layer `core`: may call `abi` and its own layer.
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};

static WARNED: AtomicBool = AtomicBool::new(false);

/// Every mapped object of the process, in the loader's order: its file name as the loader has
/// it (`""` for the main program) and whether it is this library (compared by load address, so
/// ours under a compat name such as `libamdhip64.so.5` is recognised).
pub fn loaded_objects() -> Vec<(String, bool)> {
    struct Scan {
        ours: usize,
        found: Vec<(String, bool)>,
    }
    extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid `dl_phdr_info` for the duration of the callback
        // and `data` is the `&mut Scan` given below; dlpi_name is null or a NUL-terminated string.
        let (info, scan) = unsafe { (&*info, &mut *(data as *mut Scan)) };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated (see above).
            unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
        };
        scan.found.push((name, info.dlpi_addr as usize == scan.ours));
        0
    }
    let mut scan = Scan { ours: our_base(), found: Vec::new() };
    // SAFETY: `visit` matches dl_iterate_phdr's callback type and only reads what it is given;
    // `scan` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut scan as *mut Scan as *mut c_void) };
    scan.found
}

/// The file of every mapped object whose name starts with `libamdhip64` and that is not this
/// library.
pub fn other_runtimes() -> Vec<String> {
    loaded_objects()
        .into_iter()
        .filter(|(name, ours)| !ours && name.rsplit('/').next().is_some_and(|base| base.starts_with("libamdhip64")))
        .map(|(name, _)| name)
        .collect()
}

/// Load address of the object this code is in (the cdylib, or the executable it is linked into).
pub fn our_base() -> usize {
    let mut info: libc::Dl_info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address given and writes `info`.
    let found = unsafe { libc::dladdr(our_base as *const c_void, &mut info) };
    if found == 0 {
        return 0;
    }
    // For a shared object the base dladdr reports is its load bias, dl_iterate_phdr's dlpi_addr.
    info.dli_fbase as usize
}

/// Warns on stderr (once per process) when another `libamdhip64` is mapped beside ours.
pub fn check() {
    if WARNED.load(Ordering::Relaxed) {
        return;
    }
    let others = other_runtimes();
    if !others.is_empty() && !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "hipkfd[{}] warning: another HIP runtime is mapped in this process: {}. Calls that reach it run \
             on it, not on hipkfd (README: \"Use it with your program\").",
            std::process::id(),
            others.join(", ")
        );
    }
}

extern "C" fn check_at_load_and_exit() {
    check();
}

/// Run by the dynamic loader once every object of the process's initial set (or of the `dlopen`)
/// is mapped, and again at exit.
#[used]
#[link_section = ".init_array"]
static AT_LOAD: extern "C" fn() = check_at_load_and_exit;
#[used]
#[link_section = ".fini_array"]
static AT_EXIT: extern "C" fn() = check_at_load_and_exit;
