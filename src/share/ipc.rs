//! IPC: sharing device memory and events between processes, on dma-bufs, with upstream kernels
//! only (`AMDKFD_IOC_EXPORT_DMABUF` / `IMPORT_DMABUF` / `MAP_MEMORY_TO_GPU`; none of the
//! DKMS-only `AMDKFD_IOC_IPC_*` ioctls).
//!
//! # How a handle becomes memory
//!
//! The exporting process owns an *instance id* (16 random bytes, drawn once) and serves fds on a
//! Unix `SOCK_SEQPACKET` socket bound in the **abstract** namespace at
//! `"\0hipkfd-ipc-<instance id in hex>"`. Each exported allocation (and each exported event) gets a
//! random 16-byte *token*. The 64-byte handle carries the instance id and the token, never a pid,
//! so exporter and importer may live in different PID namespaces. To open a handle, the importer
//! connects to the exporter's socket, sends the token, and receives the object's fd through
//! `SCM_RIGHTS` (no ptrace rights, no `pidfd_getfd`): for memory, the dma-buf the BO has kept
//! since `hipIpcGetMemHandle` exported it (the kernel too keeps one dma-buf per exported BO), so
//! an answer costs no ioctl. The exporter answers only tokens it issued for objects still alive;
//! a forged, stale (freed allocation, destroyed event) or foreign token is refused. A dead exporter has no socket: `connect` fails at once
//! (`ECONNREFUSED`); a live exporter that does not answer is given up on after
//! [`IO_TIMEOUT_MS`].
//!
//! What must be shared between the two processes: the **network namespace** (abstract Unix
//! sockets live there), the GPU device files (`/dev/kfd`, `/dev/dri/renderD*`) and, for IPC
//! events, nothing else (the event page is a memfd passed over the same socket). The PID, mount,
//! IPC and user namespaces may differ; `/dev/shm` is not used.
//!
//! # Memory handle layout (`hipIpcMemHandle_t`, 64 bytes, little endian)
//!
//! | Offset | Size | Content |
//! |---|---|---|
//! | 0 | 4 | magic `HANDLE_MAGIC` |
//! | 4 | 4 | kind: 1 = memory, 2 = event |
//! | 8 | 16 | exporter instance id |
//! | 24 | 16 | export token (per allocation; a recycled VA gets a new one) |
//! | 40 | 8 | size of the allocation (bytes) |
//! | 48 | 8 | offset of the exported pointer in the allocation (bytes) |
//! | 56 | 8 | zero |
//!
//! An event handle has the same first 40 bytes (kind 2) and zeroes after.
//!
//! # Import side
//!
//! Imports are keyed by (instance id, token): opening the same allocation again (through the
//! same handle, or a handle of another pointer into it) reuses the import and counts one
//! reference per open; the pointer returned is the import base + the handle's offset. A small
//! `hipMalloc` is a slot of a shared 2 MiB block (src/core/memory.rs): its dma-buf is the block's,
//! and the fd server's reply says where the allocation starts in it; the importer maps the whole
//! dma-buf but registers only the allocation (base = import VA + that offset, the handle's
//! size), so every API stops at the allocation's bounds. Importers keep their connection to
//! each fd server for the next request. The last
//! close unmaps the BO from every GPU, frees it (`FREE_MEMORY_OF_GPU`) and gives the VA back. An
//! import is mapped on every device of the process (which covers the current device and every
//! device with peer access).
//!
//! Layer `share`: may call `mem`, `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::event::Event;
use crate::core::memory::{Allocation, Bo, DmabufInfo, MemKind};
use crate::core::runtime::{runtime, Runtime};
use crate::share::event_page::{EventPage, EVENT_PAGE};
use kfd_ioctl::kfd::{KFD_IOC_ALLOC_MEM_FLAGS_GTT, KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, KFD_IOC_ALLOC_MEM_FLAGS_VRAM};
use nix::errno::Errno;
use nix::sys::socket::{
    accept4, bind, connect, listen, recvmsg, sendmsg, setsockopt, socket, sockopt, AddressFamily, Backlog,
    ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, UnixAddr,
};
use nix::sys::time::TimeVal;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// First 4 bytes of every handle we make: `"HKIP"`.
pub const HANDLE_MAGIC: u32 = u32::from_le_bytes(*b"HKIP");
/// Handle kind of device memory.
pub const KIND_MEM: u32 = 1;
/// Handle kind of an event.
pub const KIND_EVENT: u32 = 2;
/// Send/receive/connect timeout of the importer and of the exporter's server (ms).
pub const IO_TIMEOUT_MS: i64 = 1000;
/// How long the exporter's server keeps an answered connection open for the next request (ms).
pub const KEEP_MS: u64 = 30_000;
/// After an answer the server polls without sleeping this long, and an importer polls this long
/// for its reply before it sleeps: a request answered in microseconds then costs no wake-up.
/// Both yield the CPU between polls, so that where the two share a CPU the other side runs.
const SPIN: std::time::Duration = std::time::Duration::from_micros(100);
/// Requests whose reply the importer waits for asleep, without spinning first, and how many the
/// next spin that misses [`SPIN`] sets it to (see [`exchange`]).
static SPIN_SKIP: AtomicU32 = AtomicU32::new(0);
static SPIN_SKIP_NEXT: AtomicU32 = AtomicU32::new(1);
/// Random id of an exporting process, or token of one exported object.
pub type Id = crate::core::memory::ExportToken;

/// A parsed handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub kind: u32,
    pub instance: Id,
    pub token: Id,
    /// Allocation size (bytes), memory handles only.
    pub size: u64,
    /// Offset of the exported pointer in its allocation (bytes), memory handles only.
    pub offset: u64,
}

impl Handle {
    pub fn to_bytes(self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&HANDLE_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.kind.to_le_bytes());
        b[8..24].copy_from_slice(&self.instance);
        b[24..40].copy_from_slice(&self.token);
        b[40..48].copy_from_slice(&self.size.to_le_bytes());
        b[48..56].copy_from_slice(&self.offset.to_le_bytes());
        b
    }

    /// Parses 64 bytes. `None` unless the magic and `kind` match and the fields are consistent
    /// (memory: `offset < size`; event: zero size and offset; reserved bytes zero).
    pub fn parse(b: &[u8; 64], kind: u32) -> Option<Handle> {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        if u32_at(0) != HANDLE_MAGIC || u32_at(4) != kind || b[56..64].iter().any(|&x| x != 0) {
            return None;
        }
        let h = Handle {
            kind,
            instance: b[8..24].try_into().unwrap(),
            token: b[24..40].try_into().unwrap(),
            size: u64_at(40),
            offset: u64_at(48),
        };
        let ok = match kind {
            KIND_MEM => h.size > 0 && h.offset < h.size,
            _ => h.size == 0 && h.offset == 0,
        };
        ok.then_some(h)
    }
}

fn random_id() -> Id {
    let mut id = [0u8; 16];
    let mut got = 0;
    while got < id.len() {
        // SAFETY: writes at most `len - got` bytes into our own buffer.
        let n = unsafe { libc::getrandom(id[got..].as_mut_ptr().cast(), id.len() - got, 0) };
        if n > 0 {
            got += n as usize;
        } else if Errno::last() != Errno::EINTR {
            panic!("getrandom: {}", Errno::last());
        }
    }
    id
}

fn socket_name(instance: &Id) -> Vec<u8> {
    let hex: String = instance.iter().map(|b| format!("{b:02x}")).collect();
    format!("hipkfd-ipc-{hex}").into_bytes()
}

/// Exported events: token → page. (Memory exports live in the allocation registry,
/// [`crate::core::memory::Registry::export_token`], so that hipFree forgets them.)
#[derive(Default)]
struct Exports {
    events: HashMap<Id, Weak<EventPage>>,
}

/// One imported allocation.
struct Import {
    base: u64,
    /// Pointers handed out by `hipIpcOpenMemHandle` → open count.
    refs: HashMap<u64, u32>,
}

#[derive(Default)]
struct Imports {
    by_key: HashMap<(Id, Id), Import>,
    /// Import base → key.
    by_base: HashMap<u64, (Id, Id)>,
}

/// Process-wide IPC state (started on first use).
pub struct Ipc {
    pub instance: Id,
    server: Mutex<Option<OwnedFd>>,
    exports: Mutex<Exports>,
    imports: Mutex<Imports>,
    /// Connections to other processes' fd servers, kept for the next request: exporter
    /// instance → (the pid that connected, socket). A forked child does not use its parent's.
    conns: Mutex<HashMap<Id, (u32, OwnedFd)>>,
}

static IPC: OnceLock<Ipc> = OnceLock::new();

/// The process's IPC state.
pub fn ipc() -> &'static Ipc {
    IPC.get_or_init(|| Ipc {
        instance: random_id(),
        server: Mutex::new(None),
        exports: Mutex::new(Exports::default()),
        imports: Mutex::new(Imports::default()),
        conns: Mutex::new(HashMap::new()),
    })
}

// ---- wire protocol -----------------------------------------------------------------------

/// Request: magic, kind, token (24 bytes). Reply (32 bytes): status (0 or an errno, u32), the
/// allocation's offset in the dma-buf (u32; nonzero for a slot of a shared block of small
/// `hipMalloc`s), size (u64); then what `GET_DMABUF_INFO` would say of the dma-buf, so that the
/// importer need not ask: its size (u64), `gpu_id` (u32, 0 for an event page) and KFD flags
/// (u32). One fd in `SCM_RIGHTS` when the status is 0. Exporters that predate the last 16 bytes
/// send [`REPLY_LEN_V1`] bytes (offset 0); importers that predate them read the first 16.
const REQ_LEN: usize = 24;
const REPLY_LEN: usize = 32;
const REPLY_LEN_V1: usize = 16;

fn set_timeouts(fd: &OwnedFd) -> Result<(), Errno> {
    let tv = TimeVal::new(IO_TIMEOUT_MS / 1000, ((IO_TIMEOUT_MS % 1000) * 1000) as _);
    setsockopt(fd, sockopt::ReceiveTimeout, &tv)?;
    setsockopt(fd, sockopt::SendTimeout, &tv)?;
    Ok(())
}

impl Ipc {
    /// Starts the fd server (once). Errors: `hipErrorOutOfMemory` when no socket can be made.
    fn ensure_server(&'static self) -> Result<(), hipError_t> {
        let mut srv = self.server.lock();
        if srv.is_some() {
            return Ok(());
        }
        let start = || -> Result<OwnedFd, Errno> {
            let fd = socket(
                AddressFamily::Unix,
                SockType::SeqPacket,
                SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
                None,
            )?;
            bind(fd.as_raw_fd(), &UnixAddr::new_abstract(&socket_name(&self.instance))?)?;
            listen(&fd, Backlog::new(256)?)?;
            Ok(fd)
        };
        let fd = start().map_err(|e| {
            crate::core::log::hipkfd_log!("IPC server socket: {e}");
            hipError_t::hipErrorOutOfMemory
        })?;
        let raw = fd.as_raw_fd();
        std::thread::Builder::new()
            .name("hipkfd-ipc".into())
            .spawn(move || self.serve(raw))
            .map_err(|_| hipError_t::hipErrorOutOfMemory)?;
        *srv = Some(fd);
        Ok(())
    }

    /// The server loop. Connections are served as their requests arrive (poll), so a client
    /// that connects and stays silent delays nobody; it is dropped after [`IO_TIMEOUT_MS`]. A
    /// connection stays open after an answer, for the client's next request, until it has been
    /// idle for [`KEEP_MS`] (or the client closes it).
    fn serve(&self, listener: RawFd) {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::{AsFd, BorrowedFd};
        use std::time::{Duration, Instant};
        // SAFETY: the listening socket is owned by `self.server`, which is never cleared: the fd
        // stays open for the life of the process.
        let lfd = unsafe { BorrowedFd::borrow_raw(listener) };
        // (connection, deadline: when it is dropped if no request came)
        let mut conns: Vec<(OwnedFd, Instant)> = vec![];
        let idle = Duration::from_millis(IO_TIMEOUT_MS as u64);
        let keep = Duration::from_millis(KEEP_MS);
        let mut answered = Instant::now() - SPIN;
        loop {
            let now = Instant::now();
            conns.retain(|(_, t)| now < *t);
            let ready: Vec<bool> = {
                let mut fds = vec![PollFd::new(lfd, PollFlags::POLLIN)];
                fds.extend(conns.iter().map(|(c, _)| PollFd::new(c.as_fd(), PollFlags::POLLIN)));
                // Until the first deadline (whole ms, rounded up), or not at all while spinning.
                let timeout = match conns.iter().map(|(_, t)| *t).min() {
                    _ if now.duration_since(answered) < SPIN => PollTimeout::ZERO,
                    None => PollTimeout::NONE,
                    Some(t) => PollTimeout::from((t.duration_since(now).as_millis() + 1).min(u16::MAX as u128) as u16),
                };
                match poll(&mut fds, timeout) {
                    Ok(0) if timeout == PollTimeout::ZERO => {
                        std::thread::yield_now();
                        continue;
                    }
                    Ok(_) => fds.iter().map(|f| f.revents().is_some_and(|r| !r.is_empty())).collect(),
                    Err(Errno::EINTR) => continue,
                    Err(e) => {
                        crate::core::log::hipkfd_log!("IPC poll: {e}");
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                }
            };
            for i in (0..conns.len()).rev() {
                if ready[i + 1] {
                    let (c, t) = conns.swap_remove(i);
                    match self.answer(&c) {
                        Ok(()) => {
                            answered = Instant::now();
                            conns.push((c, answered + keep));
                        }
                        Err(Errno::EAGAIN) => conns.push((c, t)), // woken without a request yet
                        Err(_) => {}                              // closed or broken: dropped
                    }
                }
            }
            if ready[0] {
                match accept4(listener, SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK) {
                    // SAFETY: accept4 returned a new fd that nobody else owns.
                    Ok(c) => conns.push((unsafe { OwnedFd::from_raw_fd(c) }, Instant::now() + idle)),
                    Err(Errno::EINTR) | Err(Errno::ECONNABORTED) | Err(Errno::EAGAIN) => {}
                    Err(e) => {
                        crate::core::log::hipkfd_log!("IPC accept: {e}");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
    }

    /// Answers the next request of `conn`. `Err(EAGAIN)` when no request has arrived yet (the
    /// connection stays open); other errors (`ECONNRESET`: the client closed it) drop the
    /// connection.
    fn answer(&self, conn: &OwnedFd) -> Result<(), Errno> {
        let mut req = [0u8; REQ_LEN];
        let n = nix::sys::socket::recv(conn.as_raw_fd(), &mut req, MsgFlags::empty())?;
        if n == 0 {
            return Err(Errno::ECONNRESET);
        }
        let kind = u32::from_le_bytes(req[4..8].try_into().unwrap());
        let token: Id = req[8..24].try_into().unwrap();
        let magic_ok = n == REQ_LEN && u32::from_le_bytes(req[0..4].try_into().unwrap()) == HANDLE_MAGIC;
        let result: Result<Served<ServedFd>, Errno> =
            if !magic_ok { Err(Errno::EINVAL) } else { self.lookup(kind, &token) };
        let mut reply = [0u8; REPLY_LEN];
        let fd = match result {
            Ok(Served { fd, offset, size, info }) => {
                reply[4..8].copy_from_slice(&offset.to_le_bytes());
                reply[8..16].copy_from_slice(&size.to_le_bytes());
                if let Some((dmabuf_size, gpu_id, flags)) = info {
                    reply[16..24].copy_from_slice(&dmabuf_size.to_le_bytes());
                    reply[24..28].copy_from_slice(&gpu_id.to_le_bytes());
                    reply[28..32].copy_from_slice(&flags.to_le_bytes());
                }
                Some(fd)
            }
            Err(e) => {
                reply[0..4].copy_from_slice(&(e as i32).to_le_bytes());
                None
            }
        };
        let fds: Vec<RawFd> = fd.iter().map(|f| f.as_raw_fd()).collect();
        let cmsg: Vec<ControlMessage> = if fds.is_empty() { vec![] } else { vec![ControlMessage::ScmRights(&fds)] };
        // The connection is non-blocking: a full socket buffer (EAGAIN) is retried for a while
        // rather than leaving the importer without an answer.
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(IO_TIMEOUT_MS as u64 / 2);
        loop {
            match sendmsg::<UnixAddr>(conn.as_raw_fd(), &[IoSlice::new(&reply)], &cmsg, MsgFlags::MSG_NOSIGNAL, None) {
                Err(Errno::EAGAIN) | Err(Errno::EINTR) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_micros(100))
                }
                Err(e) => {
                    crate::core::log::hipkfd_log!("IPC reply: {e}");
                    return Err(e);
                }
                Ok(_) => return Ok(()),
            }
        }
        // `fd` closes on return: the message in flight holds its own reference.
    }

    /// The fd behind a token: the dma-buf of the allocation's BO (the one the BO keeps since
    /// `hipIpcGetMemHandle`, else a fresh `EXPORT_DMABUF`; for a slot of a shared block, the
    /// block's, with the slot's offset) or a dup of an event page's memfd. Unknown token or dead
    /// object → `EINVAL`.
    fn lookup(&self, kind: u32, token: &Id) -> Result<Served<ServedFd>, Errno> {
        match kind {
            KIND_MEM => {
                let rt = runtime().map_err(|_| Errno::ENODEV)?;
                // The registry holds its export lock while we export: hipFree waits, so the BO is
                // live.
                rt.allocs
                    .with_export(token, |a| {
                        let bo = a.bo().ok_or(Errno::EINVAL)?;
                        let offset = u32::try_from(a.base - bo.va).map_err(|_| Errno::EINVAL)?;
                        // As GET_DMABUF_INFO reports it (`amdgpu_amdkfd_get_dmabuf_info`).
                        let flags = match bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM {
                            0 => KFD_IOC_ALLOC_MEM_FLAGS_GTT,
                            _ => bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC),
                        };
                        let info = Some((bo.size, rt.devices[bo.owner].gpu_id, flags));
                        Ok(Served { fd: ServedFd::Dmabuf(bo.ipc_dmabuf(&rt.kfd, false)?), offset, size: a.size, info })
                    })
                    .unwrap_or(Err(Errno::EINVAL))
            }
            KIND_EVENT => {
                let p = self.exports.lock().events.get(token).and_then(Weak::upgrade).ok_or(Errno::EINVAL)?;
                Ok(Served {
                    fd: ServedFd::Own(p.memfd.try_clone().map_err(|_| Errno::EMFILE)?),
                    offset: 0,
                    size: EVENT_PAGE,
                    info: None,
                })
            }
            _ => Err(Errno::EINVAL),
        }
    }
}

/// What the fd server hands out for a token: the fd, where the object starts in it (bytes), its
/// size (bytes), and for memory (from exporters that send it) the dma-buf's size, `gpu_id` and
/// KFD flags.
#[derive(Debug)]
pub struct Served<F = OwnedFd> {
    pub fd: F,
    pub offset: u32,
    pub size: u64,
    pub info: Option<(u64, u32, u32)>,
}

/// The fd the server sends: its own (an event page's dup, closed once sent) or the dma-buf its
/// BO keeps ([`crate::core::memory::Bo::ipc_dmabuf`]; held open here until sent even if the BO is
/// freed meanwhile).
#[derive(Debug)]
enum ServedFd {
    Own(OwnedFd),
    Dmabuf(Arc<crate::core::memory::DmabufFd>),
}

impl AsRawFd for ServedFd {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            ServedFd::Own(fd) => fd.as_raw_fd(),
            ServedFd::Dmabuf(d) => d.fd.as_raw_fd(),
        }
    }
}

/// [`request_fd`], asked again (at most twice more) when the connection broke without an answer
/// (`EPROTO`, `ECONNRESET`, `EINTR`): those say nothing about the exporter or the token. A dead
/// exporter (`ECONNREFUSED`) or a timeout (`EAGAIN`) is final, which keeps the 1 s bound.
fn request_fd_retrying(instance: &Id, kind: u32, token: &Id) -> Result<Served, Errno> {
    let mut attempt = 0;
    loop {
        match request_fd(instance, kind, token) {
            Err(e @ (Errno::EPROTO | Errno::ECONNRESET | Errno::EINTR)) if attempt < 2 => {
                crate::core::log::hipkfd_log!("IPC request: {e}, asking again");
                attempt += 1;
            }
            r => return r,
        }
    }
}

/// Asks the exporter `instance` for the fd behind `token`, on the connection kept from the last
/// request to it if it still works, else on a new one (kept for the next; making one closes the
/// kept connections that have hung up). Errors:
/// `ECONNREFUSED`/`ENOENT` (no such exporter: exited, or another network namespace), `EAGAIN`
/// (timeout), the exporter's refusal (`EINVAL`), `EPROTO` (malformed reply).
pub fn request_fd(instance: &Id, kind: u32, token: &Id) -> Result<Served, Errno> {
    let conns = &ipc().conns;
    let pid = std::process::id();
    let cached = conns.lock().remove(instance);
    if let Some((owner, sock)) = cached.filter(|(owner, _)| *owner == pid) {
        match exchange(&sock, kind, token) {
            Ok(answer) => {
                conns.lock().insert(*instance, (owner, sock));
                return answer;
            }
            Err(Errno::EAGAIN) => return Err(Errno::EAGAIN), // an exporter that does not answer
            Err(_) => {} // a kept connection the server has since dropped (idle): a new one
        }
    }
    let sock = socket(AddressFamily::Unix, SockType::SeqPacket, SockFlag::SOCK_CLOEXEC, None)?;
    set_timeouts(&sock)?;
    connect(sock.as_raw_fd(), &UnixAddr::new_abstract(&socket_name(instance))?)?;
    let answer = exchange(&sock, kind, token)?;
    let mut kept = conns.lock();
    // Only here, where a connection is made (a reopen on a kept one costs nothing more): the
    // connections whose exporter has gone or dropped them (hung up), and those a parent process
    // made before a fork, are closed, so that a long-lived importer holds one fd per exporter
    // still connected, not one per exporter it ever heard from.
    kept.retain(|_, (owner, s)| *owner == pid && !hung_up(s));
    kept.insert(*instance, (pid, sock));
    answer
}

/// Whether the other end of a kept connection has closed it (or it failed).
fn hung_up(sock: &OwnedFd) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    // POLLHUP and POLLERR are always reported: a Unix SEQPACKET socket whose peer has closed
    // reports POLLHUP (the peer's release sets our shutdown to both directions).
    let mut fds = [PollFd::new(sock.as_fd(), PollFlags::empty())];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(0) => false,
        Ok(_) => fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL)),
        Err(_) => true,
    }
}

/// One request on `sock`: `Ok(the exporter's answer)`, or `Err` when the connection failed
/// (it is not to be used again).
fn exchange(sock: &OwnedFd, kind: u32, token: &Id) -> Result<Result<Served, Errno>, Errno> {
    let mut req = [0u8; REQ_LEN];
    req[0..4].copy_from_slice(&HANDLE_MAGIC.to_le_bytes());
    req[4..8].copy_from_slice(&kind.to_le_bytes());
    req[8..24].copy_from_slice(token);
    nix::sys::socket::send(sock.as_raw_fd(), &req, MsgFlags::MSG_NOSIGNAL)?;
    if SPIN_SKIP.load(Ordering::Relaxed) == 0 {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let t0 = std::time::Instant::now();
        let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
        let in_time = loop {
            let ready = poll(&mut fds, PollTimeout::ZERO) != Ok(0);
            let in_time = t0.elapsed() < SPIN;
            if ready || !in_time {
                break ready && in_time;
            }
            std::thread::yield_now();
        };
        // A reply that came (or was seen) only after SPIN: the CPU is contended, where sleeping
        // serves better than yielding to other work: skip the next 1, 2, 4 ... 64 spins.
        let skip = if in_time { 0 } else { SPIN_SKIP_NEXT.load(Ordering::Relaxed) };
        SPIN_SKIP.store(skip, Ordering::Relaxed);
        SPIN_SKIP_NEXT.store(if in_time { 1 } else { (skip * 2).min(64) }, Ordering::Relaxed);
    } else {
        let _ = SPIN_SKIP.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
    let mut reply = [0u8; REPLY_LEN];
    let mut cmsg_buf = nix::cmsg_space!([RawFd; 4]);
    let mut iov = [IoSliceMut::new(&mut reply)];
    let msg = recvmsg::<UnixAddr>(sock.as_raw_fd(), &mut iov, Some(&mut cmsg_buf), MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut fds: Vec<OwnedFd> = vec![];
    for c in msg.cmsgs().map_err(|_| Errno::EPROTO)? {
        if let ControlMessageOwned::ScmRights(v) = c {
            // SAFETY: the kernel installed these fds in our table for us alone.
            fds.extend(v.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
        }
    }
    let (n, truncated) = (msg.bytes, msg.flags.contains(MsgFlags::MSG_CTRUNC));
    if n == 0 {
        return Err(Errno::ECONNRESET);
    }
    if (n != REPLY_LEN && n != REPLY_LEN_V1) || truncated {
        return Err(Errno::EPROTO);
    }
    let status = i32::from_le_bytes(reply[0..4].try_into().unwrap());
    if status != 0 {
        return Ok(Err(Errno::from_raw(status)));
    }
    let offset = u32::from_le_bytes(reply[4..8].try_into().unwrap());
    let size = u64::from_le_bytes(reply[8..16].try_into().unwrap());
    let gpu_id = u32::from_le_bytes(reply[24..28].try_into().unwrap());
    let info = (n == REPLY_LEN && gpu_id != 0).then(|| {
        let dmabuf_size = u64::from_le_bytes(reply[16..24].try_into().unwrap());
        (dmabuf_size, gpu_id, u32::from_le_bytes(reply[28..32].try_into().unwrap()))
    });
    match (fds.pop(), fds.is_empty()) {
        (Some(fd), true) => Ok(Ok(Served { fd, offset, size, info })),
        _ => Err(Errno::EPROTO),
    }
}

// ---- memory --------------------------------------------------------------------------------

impl Runtime {
    /// `hipIpcGetMemHandle`: a handle for `ptr`, which must lie inside a live `hipMalloc`
    /// allocation of this process (interior pointers allowed). The same allocation always gets
    /// the same token; a new allocation (even at a recycled VA) a new one. The BO's dma-buf is
    /// exported here and kept open until the BO is freed (one fd per exported BO, at most
    /// [`crate::core::memory::DMABUF_KEEP_MAX`]), so that opens cost the fd server no ioctl.
    /// Errors: `hipErrorInvalidValue` (not device memory of ours: freed, one past the end, host,
    /// imported), `hipErrorOutOfMemory` (no server socket).
    pub fn ipc_get_mem_handle(&self, ptr: u64) -> Result<Handle, hipError_t> {
        let a = self.allocs.find(ptr).ok_or(hipError_t::hipErrorInvalidValue)?;
        if a.kind != MemKind::Device {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let ipc = ipc();
        ipc.ensure_server()?;
        let token = self.allocs.export_token(&a, random_id).ok_or(hipError_t::hipErrorInvalidValue)?;
        // Exported now, once, and kept with the BO, so that the fd server answers requests
        // without an ioctl; past the limit of kept fds (or if this fails) it exports per request.
        if let Some(bo) = a.bo() {
            let _ = bo.ipc_dmabuf(&self.kfd, true);
        }
        Ok(Handle { kind: KIND_MEM, instance: ipc.instance, token, size: a.size, offset: ptr - a.base })
    }

    /// The base of this process's own allocation that memory handle `h` names, if it is one
    /// of ours and still live (`hipMemPoolImportPointer` in the exporting process).
    pub fn ipc_local_base(&self, h: &Handle) -> Option<u64> {
        if h.instance != ipc().instance {
            return None;
        }
        self.allocs.with_export(&h.token, |a| (a.size == h.size).then_some(a.base)).flatten()
    }

    /// `hipIpcOpenMemHandle`: maps the exporter's allocation (or reuses this process's import of
    /// it) and returns base + the handle's offset. `dev` is the current device (used when the
    /// memory's own GPU is not visible here). Errors: `hipErrorInvalidContext` (our own handle),
    /// `hipErrorInvalidDevicePointer` (exporter gone or refusing: freed, forged, stale),
    /// `hipErrorOutOfMemory`.
    pub fn ipc_open_mem(&self, h: &Handle, dev: usize) -> Result<u64, hipError_t> {
        let ipc = ipc();
        if h.instance == ipc.instance {
            return Err(hipError_t::hipErrorInvalidContext);
        }
        let key = (h.instance, h.token);
        let mut im = ipc.imports.lock();
        if let Some(i) = im.by_key.get_mut(&key) {
            let a = self.allocs.get(i.base).ok_or(hipError_t::hipErrorInvalidDevicePointer)?;
            if h.size != a.size {
                return Err(hipError_t::hipErrorInvalidDevicePointer);
            }
            let p = i.base + h.offset;
            *i.refs.entry(p).or_insert(0) += 1;
            return Ok(p);
        }
        let Served { fd, offset, size, info } = request_fd_retrying(&h.instance, KIND_MEM, &h.token).map_err(|e| {
            crate::core::log::hipkfd_log!("hipIpcOpenMemHandle: exporter refused or unreachable: {e}");
            hipError_t::hipErrorInvalidDevicePointer
        })?;
        if size != h.size {
            return Err(hipError_t::hipErrorInvalidDevicePointer);
        }
        // The whole dma-buf is imported (a slot's is its block's); the registry entry is the
        // exporter's allocation alone, so every API stops at its bounds.
        // What the exporter says of its dma-buf spares the GET_DMABUF_INFO round trip.
        let info = info.map(|(size, gpu_id, flags)| DmabufInfo {
            size,
            owner: self.device_of_gpu(gpu_id),
            flags,
            foreign: false,
        });
        let bo = self.ipc_import_dmabuf(&fd, offset as u64 + size, dev, info)?;
        drop(fd);
        let base = bo.va + offset as u64;
        self.allocs.insert(Allocation::with_bo_at(base, size, MemKind::Ipc, bo));
        let p = base + h.offset;
        im.by_key.insert(key, Import { base, refs: HashMap::from([(p, 1)]) });
        im.by_base.insert(base, key);
        crate::core::log::hipkfd_log!("hipIpcOpenMemHandle: {size} bytes at {base:#x}");
        Ok(p)
    }

    /// Imports an amdgpu dma-buf of at least `want` bytes ([`Runtime::dmabuf_info`], unless the
    /// exporter said it (`info`), then [`Runtime::dmabuf_import`]). Any failure is
    /// `hipErrorInvalidDevicePointer` but running out of VA or memory.
    fn ipc_import_dmabuf(
        &self,
        fd: &OwnedFd,
        want: u64,
        dev: usize,
        info: Option<DmabufInfo>,
    ) -> Result<Bo, hipError_t> {
        let bad = hipError_t::hipErrorInvalidDevicePointer;
        let info = match info {
            Some(i) => i,
            None => self.dmabuf_info(fd.as_raw_fd()).map_err(|_| bad)?,
        };
        if info.size < want {
            return Err(bad);
        }
        self.dmabuf_import(fd.as_raw_fd(), &info, dev).map_err(|e| {
            if e == hipError_t::hipErrorInvalidValue {
                bad
            } else {
                e
            }
        })
    }

    /// `hipIpcCloseMemHandle`: drops one open of `ptr`; the last one waits for every device, then
    /// unmaps and frees the import and its VA. Errors: `hipErrorInvalidValue` when `ptr` is not
    /// a pointer `hipIpcOpenMemHandle` returned and that is still open.
    pub fn ipc_close_mem(&self, ptr: u64) -> Result<(), hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        let a = self.allocs.find(ptr).ok_or(inv)?;
        if a.kind != MemKind::Ipc {
            return Err(inv);
        }
        let ipc = ipc();
        let mut im = ipc.imports.lock();
        let key = *im.by_base.get(&a.base).ok_or(inv)?;
        let i = im.by_key.get_mut(&key).ok_or(inv)?;
        let n = i.refs.get_mut(&ptr).ok_or(inv)?;
        *n -= 1;
        if *n == 0 {
            i.refs.remove(&ptr);
        }
        if !i.refs.is_empty() {
            return Ok(());
        }
        for d in 0..self.devices.len() {
            self.device_sync(d)?;
        }
        im.by_key.remove(&key);
        im.by_base.remove(&a.base);
        drop(im);
        let a = self.allocs.remove(a.base).ok_or(inv)?;
        if let Some(bo) = a.bo() {
            self.bo_free(bo);
        }
        Ok(())
    }
}

// ---- events --------------------------------------------------------------------------------

impl Runtime {
    /// `hipIpcGetEventHandle`: the handle of `e` (made on first use, with the event's shared
    /// page). Errors: `hipErrorInvalidConfiguration` (not `hipEventInterprocess`),
    /// `hipErrorOutOfMemory`.
    pub fn ipc_get_event_handle(&self, e: &Event) -> Result<Handle, hipError_t> {
        if e.flags & crate::core::event::EVENT_INTERPROCESS == 0 {
            return Err(hipError_t::hipErrorInvalidConfiguration);
        }
        let ipc = ipc();
        ipc.ensure_server()?;
        let page = match e.ipc.get() {
            Some(p) => event_page_of(p),
            None => {
                let name = c"hipkfd-ipc-event";
                // SAFETY: valid NUL-terminated name; returns a new fd or -1.
                let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
                if raw < 0 {
                    return Err(hipError_t::hipErrorOutOfMemory);
                }
                // SAFETY: a fresh fd that nobody else owns.
                let memfd = unsafe { OwnedFd::from_raw_fd(raw) };
                nix::unistd::ftruncate(&memfd, EVENT_PAGE as i64).map_err(|_| hipError_t::hipErrorOutOfMemory)?;
                let page = self.event_page_map(memfd, random_id())?;
                page.init(self.seq_start);
                let page = Arc::new(page);
                // A racing first call may have won: use its page.
                let _ = e.ipc.set(page);
                let page = event_page_of(e.ipc.get().expect("just set"));
                let mut ex = ipc.exports.lock();
                // Forget the tokens of destroyed events while here.
                ex.events.retain(|_, w| w.strong_count() != 0);
                ex.events.insert(page.token, Arc::downgrade(&page));
                drop(ex);
                page
            }
        };
        Ok(Handle { kind: KIND_EVENT, instance: ipc.instance, token: page.token, size: 0, offset: 0 })
    }

    /// `hipEventDestroy` of an event whose handle was given out: its token is refused from now on,
    /// even while queued work still holds the page (a stream's wait, a record in flight).
    pub fn ipc_event_unexport(&self, page: &EventPage) {
        if let Some(ipc) = IPC.get() {
            ipc.exports.lock().events.remove(&page.token);
        }
    }

    /// `hipIpcOpenEventHandle`: an event (`hipEventDisableTiming | hipEventInterprocess`) on
    /// device `dev` sharing the exporter's page. Errors: `hipErrorInvalidContext` (own handle),
    /// `hipErrorInvalidValue` (exporter gone or refusing), `hipErrorOutOfMemory`.
    pub fn ipc_open_event(&self, h: &Handle, dev: usize) -> Result<Event, hipError_t> {
        let ipc = ipc();
        if h.instance == ipc.instance {
            return Err(hipError_t::hipErrorInvalidContext);
        }
        let Served { fd, .. } = request_fd_retrying(&h.instance, KIND_EVENT, &h.token).map_err(|e| {
            crate::core::log::hipkfd_log!("hipIpcOpenEventHandle: exporter refused or unreachable: {e}");
            hipError_t::hipErrorInvalidValue
        })?;
        let st = nix::sys::stat::fstat(&fd).map_err(|_| hipError_t::hipErrorInvalidValue)?;
        if st.st_size as u64 != EVENT_PAGE {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let page = self.event_page_map(fd, h.token)?;
        if !page.valid() {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let e =
            self.event_create(crate::core::event::EVENT_DISABLE_TIMING | crate::core::event::EVENT_INTERPROCESS, dev)?;
        let _ = e.ipc.set(Arc::new(page));
        Ok(e)
    }
}

/// The IPC event page behind an event's shared state (the only kind there is).
fn event_page_of(p: &Arc<dyn crate::core::event::SharedEvent>) -> Arc<EventPage> {
    (p.clone() as Arc<dyn std::any::Any + Send + Sync>).downcast().expect("an event's shared state is its IPC page")
}

/// IPC of pool memory (`hipMemPoolExportPointer` / `hipMemPoolImportPointer`).
impl Runtime {
    /// `hipMemPoolImportPointer`: maps the exporter's pool allocation named by IPC handle `h`
    /// (`hipMemPoolExportPointer`) into this process through the IPC path (src/share/ipc.rs,
    /// `ipc_open_mem`), on `p`'s device, and records it; `hipFree`/`hipFreeAsync` release it. A handle of this process's own allocation gives that allocation's pointer.
    /// Errors: `hipErrorOutOfMemory` (exporter gone, freed or forged handle; clr's
    /// `IpcAttach` failing).
    pub fn mempool_import_pointer(&self, p: &crate::mem::mempool::MemPool, h: &Handle) -> Result<u64, hipError_t> {
        if let Some(base) = self.ipc_local_base(h) {
            return Ok(base + h.offset);
        }
        let ptr = self.ipc_open_mem(h, p.dev).map_err(|_| hipError_t::hipErrorOutOfMemory)?;
        *self.mempools().imported.lock().entry(ptr).or_insert(0) += 1;
        Ok(ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_round_trip_and_rejects() {
        let h = Handle { kind: KIND_MEM, instance: [1; 16], token: [2; 16], size: 4096, offset: 100 };
        let b = h.to_bytes();
        assert_eq!(&b[0..4], b"HKIP");
        assert_eq!(Handle::parse(&b, KIND_MEM), Some(h));
        assert_eq!(Handle::parse(&b, KIND_EVENT), None);
        assert_eq!(Handle::parse(&[0; 64], KIND_MEM), None);
        let mut bad = b;
        bad[60] = 1;
        assert_eq!(Handle::parse(&bad, KIND_MEM), None);
        let past = Handle { offset: 4096, ..h }.to_bytes();
        assert_eq!(Handle::parse(&past, KIND_MEM), None);
        let e = Handle { kind: KIND_EVENT, size: 0, offset: 0, ..h };
        assert_eq!(Handle::parse(&e.to_bytes(), KIND_EVENT), Some(e));
    }

    #[test]
    fn ids_are_random_and_names_differ() {
        let (a, b) = (random_id(), random_id());
        assert_ne!(a, b);
        assert_ne!(socket_name(&a), socket_name(&b));
        assert!(socket_name(&a).starts_with(b"hipkfd-ipc-"));
    }
}
