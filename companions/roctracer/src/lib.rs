//! `libroctracer64.so.4` and `libroctx64.so.4` for a machine with hipkfd and no ROCm.
//!
//! ROCm's builds of CuPy (and other libraries) list both as NEEDED: CuPy's runtime module calls
//! `roctracer_start`/`roctracer_stop` (`cupy.cuda.profiler`) and its `cupy.cuda.nvtx` the roctx
//! markers and ranges. This library implements those with roctracer's semantics (ROCm/roctracer
//! `src/roctracer/roctracer.cpp`, `src/roctx/roctx.cpp`, headers `inc/roctracer.h`, `inc/roctx.h`,
//! version 4.1), and nothing else: no API callbacks, no activity pools (a program that needs them
//! needs ROCm's roctracer, and fails to load here with the missing name, as it should).
//!
//! The trace is hipkfd's own: with `HIPKFD_LOG` set (to anything but `0`), each roctx event is a
//! line on stderr, `hipkfd[PID] roctx[TID]: mark "MSG"`, `push "MSG" level N`, `pop level N`,
//! `range start ID "MSG"`, `range stop ID`. roctracer's stop/start pause and resume it, as they
//! pause roctracer's callbacks and activity records (tracing starts running, as roctracer's).
//!
//! Where ROCm is installed, its libraries win: the install tree keeps this one under
//! `lib/fallback/roctracer/`, which `hipkfd-env` adds to the loader's path only when the loader
//! finds no `libroctracer64.so.4` of its own (README, "CuPy").

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// `ROCTRACER_VERSION_MAJOR` / `ROCTX_VERSION_MAJOR` (inc/roctracer.h, inc/roctx.h).
const VERSION_MAJOR: u32 = 4;
/// `ROCTRACER_VERSION_MINOR` / `ROCTX_VERSION_MINOR`.
const VERSION_MINOR: u32 = 1;

/// `roctracer_status_t`: `ROCTRACER_STATUS_SUCCESS`.
const ROCTRACER_STATUS_SUCCESS: c_int = 0;
/// `roctracer_status_t`: `ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT`.
const ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT: c_int = -3;

/// roctracer's `stopped_status`: set by `roctracer_stop`, cleared by `roctracer_start`.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// The last `roctxRangeStartA` id (roctx's `roctx_range_counter`; the first range is 1).
static RANGE_COUNTER: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's `roctxRangePushA` messages, innermost last (roctx's `message_stack`).
    static RANGES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// What `roctracer_error_string` returns on this thread: the last error's message.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Whether hipkfd's trace is on (`HIPKFD_LOG`, read once, as libamdhip64 reads it).
fn log_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("HIPKFD_LOG").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// One roctx event on hipkfd's trace, unless tracing is stopped.
fn trace(event: std::fmt::Arguments) {
    if log_enabled() && !STOPPED.load(Ordering::Relaxed) {
        // SAFETY: gettid takes no arguments and cannot fail.
        let tid = unsafe { libc::gettid() };
        eprintln!("hipkfd[{}] roctx[{tid}]: {event}", std::process::id());
    }
}

fn set_error(message: &str) {
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(message).unwrap_or_default());
}

/// The message a caller passed, lossily decoded; `None` for a null pointer.
#[allow(clippy::not_unsafe_ptr_arg_deref)] // checked for null; validity is the caller's contract
fn message(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated string from the caller (roctx API contract), read now.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `roctracer_version_major`: 4.
#[no_mangle]
pub extern "C" fn roctracer_version_major() -> u32 {
    VERSION_MAJOR
}

/// `roctracer_version_minor`: 1.
#[no_mangle]
pub extern "C" fn roctracer_version_minor() -> u32 {
    VERSION_MINOR
}

/// `roctracer_error_string`: the message of this thread's last error ("" when none), valid until
/// this thread's next error.
#[no_mangle]
pub extern "C" fn roctracer_error_string() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// `roctracer_start`: resumes tracing (a no-op when it runs).
#[no_mangle]
pub extern "C" fn roctracer_start() {
    STOPPED.store(false, Ordering::Relaxed);
}

/// `roctracer_stop`: pauses tracing until `roctracer_start`: roctx events in between are not
/// traced.
#[no_mangle]
pub extern "C" fn roctracer_stop() {
    STOPPED.store(true, Ordering::Relaxed);
}

/// `roctracer_get_timestamp`: `CLOCK_MONOTONIC` in nanoseconds (ROCr's system clock, which
/// roctracer reads, is CLOCK_MONOTONIC on Linux). Null: `ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT`.
#[no_mangle]
#[allow(clippy::not_unsafe_ptr_arg_deref)] // C entry point: the pointer's validity is the caller's contract
pub extern "C" fn roctracer_get_timestamp(timestamp: *mut u64) -> c_int {
    if timestamp.is_null() {
        set_error("roctracer_get_timestamp: timestamp is null");
        return ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    // SAFETY: non-null out-pointer from the caller, who promises a writable u64.
    unsafe { timestamp.write_unaligned(ns) };
    ROCTRACER_STATUS_SUCCESS
}

/// `roctx_version_major`: 4.
#[no_mangle]
pub extern "C" fn roctx_version_major() -> u32 {
    VERSION_MAJOR
}

/// `roctx_version_minor`: 1.
#[no_mangle]
pub extern "C" fn roctx_version_minor() -> u32 {
    VERSION_MINOR
}

/// `roctxMarkA`: an instantaneous event with `message` (null: ignored).
#[no_mangle]
pub extern "C" fn roctxMarkA(message_: *const c_char) {
    if let Some(m) = message(message_) {
        trace(format_args!("mark {m:?}"));
    }
}

/// `roctxRangePushA`: opens a nested range on this thread. Returns its 0-based level (how many
/// ranges of this thread were open before it), or -1 for a null message.
#[no_mangle]
pub extern "C" fn roctxRangePushA(message_: *const c_char) -> c_int {
    let Some(m) = message(message_) else {
        set_error("roctxRangePushA: message is null");
        return -1;
    };
    RANGES.with(|r| {
        let mut r = r.borrow_mut();
        let level = r.len() as c_int;
        trace(format_args!("push {m:?} level {level}"));
        r.push(m);
        level
    })
}

/// `roctxRangePop`: closes this thread's innermost range. Returns how many stay open (roctx's
/// `message_stack->size()` after the pop), or -1 when none is open ("Pop from empty stack!").
#[no_mangle]
pub extern "C" fn roctxRangePop() -> c_int {
    RANGES.with(|r| {
        let mut r = r.borrow_mut();
        if r.pop().is_none() {
            set_error("roctxRangePop: Pop from empty stack!");
            return -1;
        }
        let level = r.len() as c_int;
        trace(format_args!("pop level {level}"));
        level
    })
}

/// `roctxRangeStartA`: starts a range that any thread may stop; returns its id (1, 2, ...,
/// process-wide), or `u64::MAX` (roctx's -1) for a null message.
#[no_mangle]
pub extern "C" fn roctxRangeStartA(message_: *const c_char) -> u64 {
    let Some(m) = message(message_) else {
        set_error("roctxRangeStartA: message is null");
        return u64::MAX;
    };
    let id = RANGE_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    trace(format_args!("range start {id} {m:?}"));
    id
}

/// `roctxRangeStop`: ends the range `id` returned by `roctxRangeStartA`.
#[no_mangle]
pub extern "C" fn roctxRangeStop(id: u64) {
    trace(format_args!("range stop {id}"));
}
