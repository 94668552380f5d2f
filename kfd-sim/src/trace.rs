//! The simulator's trace: `KFDSIM_TRACE=1` prints one line per ioctl (and per device open) to
//! stderr, prefixed with the process id:
//!
//! ```text
//! kfdsim[1234] AMDKFD_IOC_ALLOC_MEMORY_OF_GPU {va_addr: 0x7f.., size: 4096, ..} = 0 {handle: 0x..}
//! kfdsim[1234] AMDKFD_IOC_MAP_MEMORY_TO_GPU {..} = -1 EINVAL
//! ```
//! Off by default. The model formats ioctl lines with [`ioctl`]; anything else goes through the
//! [`kfdsim_trace!`](crate::kfdsim_trace) macro.

use std::fmt;
use std::sync::OnceLock;

/// Environment variable that switches the trace on.
pub const ENV_TRACE: &str = "KFDSIM_TRACE";

static ENABLED: OnceLock<bool> = OnceLock::new();

/// True if `KFDSIM_TRACE` is set to anything but "" or "0" (read once per process).
pub fn enabled() -> bool {
    *ENABLED.get_or_init(|| std::env::var_os(ENV_TRACE).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Formats one trace line: `kfdsim[<pid>] <args>\n`.
pub fn line(pid: u32, args: fmt::Arguments<'_>) -> String {
    let mut s = format!("kfdsim[{pid}] {args}");
    // One event per line, whatever the arguments contain.
    s.retain(|c| c != '\n');
    s.push('\n');
    s
}

/// Writes one line to stderr with a single write(2), so lines of concurrent threads and
/// processes do not interleave. Does not check [`enabled`].
pub fn emit(args: fmt::Arguments<'_>) {
    emit_raw(&line(std::process::id(), args));
}

/// Writes `s` to stderr as it is, with as few write(2)s as the pipe allows.
pub fn emit_raw(s: &str) {
    let mut buf = s.as_bytes();
    while !buf.is_empty() {
        // SAFETY: buf is a valid, initialised byte slice for its whole length.
        let n = unsafe { libc::write(2, buf.as_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        buf = &buf[n as usize..];
    }
}

/// The uapi name of an ioctl request (`AMDKFD_IOC_*`, `DRM_IOCTL_*`), or its number in hex.
pub fn ioctl_name(request: libc::c_ulong) -> String {
    match kfd_ioctl::ioctl_name(request) {
        Some(n) => n.to_string(),
        None => format!("ioctl({request:#x})"),
    }
}

/// Traces one ioctl if the trace is on: name, decoded arguments in, result (return value or
/// `-1 <ERRNO>`), decoded arguments out (only on success). `args_in` / `args_out` are usually
/// the argument struct's `Debug`.
pub fn ioctl(
    request: libc::c_ulong,
    args_in: &dyn fmt::Debug,
    result: Result<libc::c_int, nix::errno::Errno>,
    args_out: &dyn fmt::Debug,
) {
    if !enabled() {
        return;
    }
    emit(format_args!("{}", ioctl_line(request, args_in, result, args_out)));
}

/// The text of an ioctl trace line (without the pid prefix).
pub fn ioctl_line(
    request: libc::c_ulong,
    args_in: &dyn fmt::Debug,
    result: Result<libc::c_int, nix::errno::Errno>,
    args_out: &dyn fmt::Debug,
) -> String {
    match result {
        Ok(r) => format!("{} {:?} = {} {:?}", ioctl_name(request), args_in, r, args_out),
        Err(e) => format!("{} {:?} = -1 {:?}", ioctl_name(request), args_in, e),
    }
}

/// `kfdsim_trace!("fmt", args..)`: prints a trace line if `KFDSIM_TRACE` is on; the arguments are
/// not evaluated otherwise.
#[macro_export]
macro_rules! kfdsim_trace {
    ($($arg:tt)*) => {
        if $crate::trace::enabled() {
            $crate::trace::emit(format_args!($($arg)*));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    #[allow(dead_code)]
    struct Args {
        size: u64,
    }

    #[test]
    fn lines_have_pid_prefix_and_one_newline() {
        assert_eq!(line(42, format_args!("open /dev/kfd = {}", 5)), "kfdsim[42] open /dev/kfd = 5\n");
        assert_eq!(line(1, format_args!("a\nb")), "kfdsim[1] ab\n");
    }

    #[test]
    fn ioctl_lines_name_the_request_and_result() {
        let req = kfd_ioctl::kfd::AMDKFD_IOC_GET_VERSION;
        let ok = ioctl_line(req, &Args { size: 1 }, Ok(0), &Args { size: 2 });
        assert_eq!(ok, "AMDKFD_IOC_GET_VERSION Args { size: 1 } = 0 Args { size: 2 }");
        let e = ioctl_line(0x1234, &Args { size: 1 }, Err(nix::errno::Errno::EINVAL), &());
        assert_eq!(e, "ioctl(0x1234) Args { size: 1 } = -1 EINVAL");
    }
}
