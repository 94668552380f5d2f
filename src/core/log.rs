//! The runtime's trace, on stderr when `HIPKFD_LOG` is set to anything but `0` (off by default).
//!
//! Layer `core`: may call `abi` and its own layer.

use std::sync::OnceLock;

/// Whether `HIPKFD_LOG` asks for the trace (read once).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("HIPKFD_LOG").map(|v| !v.is_empty() && v != "0").unwrap_or(false))
}

/// `hipkfd_log!("fmt", args..)`: one line on stderr, prefixed with `hipkfd[pid]`, when enabled.
macro_rules! hipkfd_log {
    ($($arg:tt)*) => {
        if $crate::core::log::enabled() {
            eprintln!("hipkfd[{}] {}", std::process::id(), format_args!($($arg)*));
        }
    };
}
pub(crate) use hipkfd_log;
