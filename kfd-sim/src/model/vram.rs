//! VRAM use per simulated GPU across every process of a session, as the kernel counts it
//! device-wide (`amdgpu_amdkfd_reserve_mem_limit` adds to `adev->kfd.vram_used`, which
//! `amdgpu_amdkfd_get_available_memory` subtracts from the VRAM size): so that
//! `AVAILABLE_MEMORY` (`hipMemGetInfo`) in one process sees what another holds, and an
//! allocation fails once the GPU is full whoever filled it.
//!
//! The ledger is a file of the session directory, `vram-ledger`, mapped shared by every process:
//! [`SLOTS`] slots of (pid, bytes reserved on each GPU of the topology, by topology index). A
//! process claims a free slot (or one whose pid is dead) on its first allocation and stores its
//! own totals there after each change; a reader sums the slots of live pids. A process that
//! dies (even killed) stops counting at once, as the kernel frees a dead process's BOs. Without
//! a session directory (or when the file cannot be made) each process counts only its own.

use super::gpus;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Processes of a session that can hold VRAM at once.
pub const SLOTS: usize = 256;
/// GPUs a ledger slot counts (topology order); further GPUs count per process only.
pub const MAX_GPUS: usize = 31;
/// Name of the ledger file in the session directory.
pub const LEDGER_FILE: &str = "vram-ledger";

#[repr(C)]
struct Slot {
    pid: AtomicU32,
    _pad: u32,
    used: [AtomicU64; MAX_GPUS],
}

struct Ledger {
    slots: &'static [Slot],
    /// (pid, slot index) this process claimed; a forked child claims its own.
    mine: parking_lot::Mutex<Option<(u32, usize)>>,
}

fn ledger() -> Option<&'static Ledger> {
    static L: OnceLock<Option<Ledger>> = OnceLock::new();
    L.get_or_init(|| {
        // A new ledger reads as zeroes: all slots free.
        let p = super::sys::session_table(LEDGER_FILE, SLOTS * std::mem::size_of::<Slot>(), false)?;
        // SAFETY: the mapping is `len` bytes, page-aligned, never unmapped, and `Slot` is plain
        // atomics (valid for any bytes, zero included); other processes touch it only through
        // atomics too.
        let slots = unsafe { std::slice::from_raw_parts(p as *const Slot, SLOTS) };
        Some(Ledger { slots, mine: parking_lot::Mutex::new(None) })
    })
    .as_ref()
}

/// Records that this process now holds `bytes` of VRAM on the GPU with `gpu_id`.
pub fn publish(gpu_id: u32, bytes: u64) {
    let (Some(l), Some(g)) = (ledger(), gpu_index(gpu_id)) else { return };
    let me = std::process::id();
    let mut mine = l.mine.lock();
    let slot = match *mine {
        Some((pid, i)) if pid == me => i,
        _ => {
            let Some(i) = (0..SLOTS).find(|&i| {
                let s = &l.slots[i];
                let cur = s.pid.load(Ordering::Acquire);
                (cur == 0 || (cur != me && !super::sys::pid_alive(cur)))
                    && s.pid.compare_exchange(cur, me, Ordering::AcqRel, Ordering::Acquire).is_ok()
            }) else {
                return;
            };
            for u in &l.slots[i].used {
                u.store(0, Ordering::Release);
            }
            *mine = Some((me, i));
            i
        }
    };
    l.slots[slot].used[g].store(bytes, Ordering::Release);
}

/// Bytes of VRAM the other live processes of the session hold on the GPU with `gpu_id`.
pub fn others(gpu_id: u32) -> u64 {
    held(gpu_id, Some(std::process::id()))
}

/// Bytes of VRAM that the live processes of the session, this one included, hold on the GPU with
/// `gpu_id`: the device's use as amdgpu's `mem_info_vram_used` shows it (there TTM's count of
/// the VRAM manager; here each KFD allocation counts rounded up to 2 MiB, as the kernel's
/// `vram_used_aligned`). 0 without a ledger (no session directory).
pub fn used(gpu_id: u32) -> u64 {
    held(gpu_id, None)
}

/// The sum of the live slots' bytes on the GPU with `gpu_id`, leaving out `except`'s slot.
fn held(gpu_id: u32, except: Option<u32>) -> u64 {
    let (Some(l), Some(g)) = (ledger(), gpu_index(gpu_id)) else { return 0 };
    l.slots
        .iter()
        .filter(|s| {
            let pid = s.pid.load(Ordering::Acquire);
            pid != 0 && Some(pid) != except && s.used[g].load(Ordering::Acquire) != 0 && super::sys::pid_alive(pid)
        })
        .map(|s| s.used[g].load(Ordering::Acquire))
        .sum()
}

fn gpu_index(gpu_id: u32) -> Option<usize> {
    gpus::index_below(gpu_id, MAX_GPUS)
}
