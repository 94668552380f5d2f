//! SMI events (`kfd_smi_events.c`): `AMDKFD_IOC_SMI_EVENTS` gives a client fd for one GPU; the
//! client writes a u64 mask of the events it wants (`1 << (event - 1)`), polls for input and
//! reads text lines `"<event hex> <fields>\n"`.
//!
//! The model's fd is one end of a Unix stream socket pair; the model keeps the other end. A mask
//! the client wrote is read back from that end when the next event of the client's GPU is
//! delivered (`kfd_smi_ev_write` stores it at once; only the delivery looks at it). Events reach
//! clients of the process that caused them (the model runs in each process; a
//! `KFD_SMI_EVENT_ALL_PROCESS` client of another process sees nothing from this one).
//! Delivered now: `KFD_SMI_EVENT_MIGRATE_START`/`_END` from SVM prefetch migrations.

use super::sys;
use kfd_ioctl::kfd::{KFD_SMI_EVENT_ALL_PROCESS, KFD_SMI_EVENT_MSG_SIZE};
use nix::errno::Errno;
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// One open client (`struct kfd_smi_client`).
struct Client {
    gpu_id: u32,
    /// The model's end of the socket pair.
    fd: OwnedFd,
    /// `task_tgid_nr(current)` at open.
    pid: u32,
    /// `capable(CAP_SYS_ADMIN)` at open.
    suser: bool,
    /// The last mask the client wrote.
    events: u64,
}

static CLIENTS: Mutex<Vec<Client>> = Mutex::new(Vec::new());

/// `KFD_SMI_EVENT_MASK_FROM_INDEX`.
fn mask(event: u32) -> u64 {
    1u64 << (event - 1)
}

/// `kfd_smi_event_open`: a new client of GPU `gpu_id`; returns the client's fd (not
/// close-on-exec, as `anon_inode_getfd(..., O_RDWR)` makes it).
pub fn open(gpu_id: u32) -> Result<RawFd, Errno> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair writes two fds into the array it is given.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Err(Errno::last());
    }
    // SAFETY: both fds were just created and are owned by no one else.
    let (user, model) = unsafe { (fds[0], OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on an fd this function owns.
    unsafe {
        libc::fcntl(model.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(model.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
    }
    // SAFETY: geteuid has no preconditions; root stands for CAP_SYS_ADMIN.
    let suser = unsafe { libc::geteuid() } == 0;
    CLIENTS.lock().push(Client { gpu_id, fd: model, pid: sys::getpid(), suser, events: 0 });
    Ok(user)
}

impl Client {
    /// Reads the masks the client wrote since the last look; false once the client closed.
    fn refresh(&mut self) -> bool {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: reads into a local buffer of the stated length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match n {
                0 => return false,
                n if n < 0 => return Errno::last() == Errno::EAGAIN,
                n => {
                    for w in buf[..n as usize].chunks_exact(8) {
                        self.events = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                    }
                }
            }
        }
    }

    /// `kfd_smi_ev_enabled`.
    fn enabled(&self, pid: u32, event: u32) -> bool {
        if pid != 0 && self.pid != pid && !(self.suser && self.events & mask(KFD_SMI_EVENT_ALL_PROCESS) != 0) {
            return false;
        }
        self.events & mask(event) != 0
    }
}

/// `kfd_smi_event_add`: `"<event hex> " + text` to every client of `gpu_id` that enabled `event`
/// for process `pid` (0: any). Clients that closed their fd are dropped.
pub fn add(pid: u32, gpu_id: u32, event: u32, text: std::fmt::Arguments) {
    let mut clients = CLIENTS.lock();
    if !clients.iter().any(|c| c.gpu_id == gpu_id) {
        return;
    }
    let mut msg = format!("{event:x} {text}");
    msg.truncate(KFD_SMI_EVENT_MSG_SIZE - 1);
    clients.retain_mut(|c| {
        if c.gpu_id != gpu_id {
            return true;
        }
        if !c.refresh() {
            return false;
        }
        if !c.enabled(pid, event) {
            return true;
        }
        // SAFETY: sends from a live local buffer; MSG_NOSIGNAL turns a closed peer into EPIPE.
        let n = unsafe {
            libc::send(c.fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
        };
        // A full socket drops the event, as a full kfifo does ("no space left").
        n >= 0 || Errno::last() == Errno::EAGAIN
    });
}

/// `ktime_get_boottime_ns`.
pub fn boottime_ns() -> u64 {
    sys::clock_ns(libc::CLOCK_BOOTTIME)
}
