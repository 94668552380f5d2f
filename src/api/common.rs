//! What every entry point shares: the result plumbing (last error, panics never cross the FFI),
//! the current device, and handle look-ups for streams and events.
//!
//! Layer `api`: may call `graph`, `kernels`, `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::{hipError_t, hipEvent_t, hipStream_t};
use crate::api::error::set_last_error;
use crate::core::event::Event;
use crate::core::runtime::{runtime, Runtime};
use crate::core::stream::Stream;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

/// Runs an entry point's body: records a failure as the thread's last error, and turns a panic
/// into `hipErrorUnknown` instead of unwinding into C.
pub fn api(f: impl FnOnce() -> Result<(), hipError_t>) -> hipError_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => hipError_t::hipSuccess,
        Ok(Err(e)) => set_last_error(e),
        Err(_) => set_last_error(hipError_t::hipErrorUnknown),
    }
}

/// `Err(hipErrorInvalidValue)` unless `cond`.
pub use crate::abi::ffi::{read_in, slice_in};

pub fn check(cond: bool) -> Result<(), hipError_t> {
    if cond {
        Ok(())
    } else {
        Err(hipError_t::hipErrorInvalidValue)
    }
}

/// Writes `v` through an out-pointer. Errors: `hipErrorInvalidValue` when it is null.
/// (Safe by the FFI contract: every caller passes a pointer it got from C.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn write_out<T>(p: *mut T, v: T) -> Result<(), hipError_t> {
    check(!p.is_null())?;
    // SAFETY: non-null out-pointer from the caller, who promises it points to a writable `T`
    // (the HIP API contract); unaligned writes are tolerated.
    unsafe { p.write_unaligned(v) };
    Ok(())
}

/// Writes `v` to the array the out-pointer `p` points to, element by element (unaligned).
/// Errors: `hipErrorInvalidValue` when `p` is null. (Safe by the FFI contract: the caller's
/// array holds at least `v.len()` elements.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn write_slice<T: Copy>(p: *mut T, v: &[T]) -> Result<(), hipError_t> {
    check(!p.is_null())?;
    for (i, x) in v.iter().enumerate() {
        // SAFETY: `p` is non-null and the caller promises room for `v.len()` elements (HIP API
        // contract); i < v.len().
        unsafe { p.add(i).write_unaligned(*x) };
    }
    Ok(())
}

/// The C string an in-pointer points to. Errors: `hipErrorInvalidValue` when it is null.
/// (Safe by the FFI contract: the caller passes a NUL-terminated string.)
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn cstr_in<'a>(p: *const std::ffi::c_char) -> Result<&'a std::ffi::CStr, hipError_t> {
    check(!p.is_null())?;
    // SAFETY: non-null, NUL-terminated string from the caller (HIP API contract), only read
    // during the call.
    Ok(unsafe { std::ffi::CStr::from_ptr(p) })
}

pub use crate::core::caller::rocm5_caller;

/// The answer of an entry point for a feature these devices do not have (images, OpenGL interop;
/// `hipDeviceAttributeImageSupport` = 0), after its argument checks: the runtime's errors
/// (`hipErrorNoDevice`, ...), else `hipErrorNotSupported`, as clr answers on such a device.
pub fn unsupported() -> Result<(), hipError_t> {
    rt_dev()?;
    Err(hipError_t::hipErrorNotSupported)
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
    /// Whether this thread called `hipSetDevice` (clr `tls.isSetDeviceCalled`).
    static SET_CALLED: Cell<bool> = const { Cell::new(false) };
}

/// Records that this thread chose its device with `hipSetDevice`.
pub fn mark_device_set() {
    SET_CALLED.with(|c| c.set(true));
}

/// Whether this thread called `hipSetDevice` (`hipSetValidDevices` then leaves it alone).
pub fn device_was_set() -> bool {
    SET_CALLED.with(|c| c.get())
}

/// The calling thread's current device (`hipSetDevice`), default 0.
pub fn current_device() -> usize {
    CURRENT.with(|c| c.get())
}

pub fn set_current_device(d: usize) {
    CURRENT.with(|c| c.set(d));
}

/// The runtime and the current device's ordinal.
pub fn rt_dev() -> Result<(&'static Runtime, usize), hipError_t> {
    let rt = runtime()?;
    let d = current_device();
    if d >= rt.devices.len() {
        return Err(hipError_t::hipErrorInvalidDevice);
    }
    Ok((rt, d))
}

/// Live API objects by handle: the address of their `Arc`'s value, stable while registered
/// (streams, events, graphs, executable graphs, hiprtc programs and links). A handle is only
/// looked up, never dereferenced, so a stale or garbage one is an error, not a crash.
pub struct Handles<T>(OnceLock<Mutex<HashMap<usize, Arc<T>>>>);

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Handles<T> {
    pub const fn new() -> Self {
        Handles(OnceLock::new())
    }

    fn map(&self) -> &Mutex<HashMap<usize, Arc<T>>> {
        self.0.get_or_init(Default::default)
    }

    /// Registers `v`; returns its handle.
    pub fn insert(&self, v: Arc<T>) -> usize {
        let handle = Arc::as_ptr(&v) as usize;
        self.map().lock().insert(handle, v);
        handle
    }

    pub fn get(&self, handle: usize) -> Option<Arc<T>> {
        self.map().lock().get(&handle).cloned()
    }

    pub fn remove(&self, handle: usize) -> Option<Arc<T>> {
        self.map().lock().remove(&handle)
    }

    /// Every registered object with its handle.
    pub fn all(&self) -> Vec<(usize, Arc<T>)> {
        self.map().lock().iter().map(|(k, v)| (*k, v.clone())).collect()
    }
}

static STREAMS: Handles<Stream> = Handles::new();
static EVENTS: Handles<Event> = Handles::new();

/// Registers a stream and returns its handle.
pub fn stream_handle(s: Arc<Stream>) -> hipStream_t {
    STREAMS.insert(s) as hipStream_t
}

/// Unregisters a stream handle. Errors: `hipErrorContextIsDestroyed` for an unknown or
/// destroyed handle (hip-tests' expectation on AMD).
pub fn stream_take(h: hipStream_t) -> Result<Arc<Stream>, hipError_t> {
    STREAMS.remove(h as usize).ok_or(hipError_t::hipErrorContextIsDestroyed)
}

/// The stream a handle names: null and `hipStreamLegacy` are the current device's null stream;
/// `hipStreamPerThread` is this thread's default stream of the current device, made on first
/// use: a blocking stream, so it follows and precedes the null stream's work but not other
/// streams' (CUDA's per-thread default stream; clr `getPerThreadDefaultStream`). Errors:
/// `hipErrorContextIsDestroyed` (unknown or destroyed), `hipErrorInvalidDevice`.
pub fn stream_of(rt: &Runtime, h: hipStream_t) -> Result<Arc<Stream>, hipError_t> {
    match h as usize {
        k @ 0..=2 => {
            let d = current_device();
            if d >= rt.devices.len() {
                return Err(hipError_t::hipErrorInvalidDevice);
            }
            if k < 2 {
                return rt.null_stream(d);
            }
            PER_THREAD_STREAMS.with(|p| {
                let p = &mut p.borrow_mut().0;
                if p.len() <= d {
                    p.resize(d + 1, None);
                }
                if let Some(s) = &p[d] {
                    return Ok(s.clone());
                }
                let s = rt.stream_create(d, 0, 0)?;
                p[d] = Some(s.clone());
                Ok(s)
            })
        }
        k => STREAMS.get(k).ok_or(hipError_t::hipErrorContextIsDestroyed),
    }
}

/// A thread's `hipStreamPerThread` streams, one per device (by ordinal). When the thread ends,
/// those with work still queued are kept in [`RETIRED_STREAMS`] until it is done, so the legacy
/// null stream and `hipDeviceSynchronize` still wait for it (clr destroys a thread's per-thread
/// streams at its exit, which finishes their work); the thread's exit does not wait.
struct PerThreadStreams(Vec<Option<Arc<Stream>>>);

impl Drop for PerThreadStreams {
    fn drop(&mut self) {
        let mut retired = RETIRED_STREAMS.lock();
        retired.retain(|s| !s.idle());
        retired.extend(self.0.drain(..).flatten().filter(|s| !s.idle()));
    }
}

/// Per-thread streams of threads that have ended, while their work runs (pruned at each thread's
/// end).
static RETIRED_STREAMS: Mutex<Vec<Arc<Stream>>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's `hipStreamPerThread` stream of each device.
    static PER_THREAD_STREAMS: std::cell::RefCell<PerThreadStreams> =
        const { std::cell::RefCell::new(PerThreadStreams(Vec::new())) };
}

/// Every registered stream (for `hipDeviceReset`).
pub fn all_streams() -> Vec<(usize, Arc<Stream>)> {
    STREAMS.all()
}

pub fn event_handle(e: Arc<Event>) -> hipEvent_t {
    EVENTS.insert(e) as hipEvent_t
}

/// Unregisters an event handle. Errors as [`event_of`].
pub fn event_take(h: hipEvent_t) -> Result<Arc<Event>, hipError_t> {
    check_event_handle(h)?;
    EVENTS.remove(h as usize).ok_or(hipError_t::hipErrorContextIsDestroyed)
}

fn check_event_handle(h: hipEvent_t) -> Result<(), hipError_t> {
    if h.is_null() {
        Err(hipError_t::hipErrorInvalidHandle)
    } else {
        Ok(())
    }
}

/// Errors: `hipErrorInvalidHandle` for null, `hipErrorContextIsDestroyed` for unknown or
/// destroyed events (hip-tests on AMD).
pub fn event_of(h: hipEvent_t) -> Result<Arc<Event>, hipError_t> {
    check_event_handle(h)?;
    EVENTS.get(h as usize).ok_or(hipError_t::hipErrorContextIsDestroyed)
}
