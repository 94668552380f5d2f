//! `/dev/udmabuf` (linux `drivers/dma-buf/udmabuf.c`): dma-bufs made of memfd pages, the
//! simplest "foreign" dma-buf (not amdgpu's) there is.
//!
//! UDMABUF_CREATE / UDMABUF_CREATE_LIST check what the driver checks, with its errnos: at most
//! 1024 list items (`list_limit`) and 64 MiB in all (`size_limit_mb`), page-aligned offsets and
//! sizes, no empty buffer, ranges inside the file → EINVAL; a bad fd → EBADF; a file that is not
//! shmem (a memfd) → EBADFD; seals without `F_SEAL_SHRINK` or with `F_SEAL_WRITE` /
//! `F_SEAL_FUTURE_WRITE` → EINVAL. `UDMABUF_FLAGS_CLOEXEC` is honoured, other flag bits ignored.
//!
//! The dma-buf fd: the model's dma-bufs must carry their pages to any process that receives the
//! fd (SCM_RIGHTS, fork) without a table the receiver could lack. A udmabuf is a Unix datagram
//! socket whose receive queue holds one message: a header (magic, item count, then each item's
//! offset and size) with the memfds in `SCM_RIGHTS`. Whoever holds the socket peeks the message
//! (`MSG_PEEK` installs fresh fds of the memfds) and maps the ranges back to back
//! ([`open_pages`]); the queued message keeps the memfds alive as long as the socket lives, as
//! the dma-buf pins the pages. Not modelled: `mmap` of the udmabuf fd itself (map the memfd) and
//! the DMA-BUF sync ioctls.

use super::bo::FileKey;
use super::memfd::MemfdMap;
use super::sys;
use libc::c_ulong;
use nix::errno::Errno;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `struct udmabuf_create` (`include/uapi/linux/udmabuf.h`).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct udmabuf_create {
    pub memfd: u32,
    pub flags: u32,
    pub offset: u64,
    pub size: u64,
}

/// `struct udmabuf_create_item`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct udmabuf_create_item {
    pub memfd: u32,
    pub pad: u32,
    pub offset: u64,
    pub size: u64,
}

/// `struct udmabuf_create_list` (header; `count` items follow).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct udmabuf_create_list {
    pub flags: u32,
    pub count: u32,
}

pub const UDMABUF_FLAGS_CLOEXEC: u32 = 0x01;
pub const UDMABUF_CREATE: c_ulong =
    nix::request_code_write!(b'u', 0x42, std::mem::size_of::<udmabuf_create>()) as c_ulong;
pub const UDMABUF_CREATE_LIST: c_ulong =
    nix::request_code_write!(b'u', 0x43, std::mem::size_of::<udmabuf_create_list>()) as c_ulong;

/// `list_limit` and `size_limit_mb` module parameters (defaults).
const LIST_LIMIT: u32 = 1024;
const SIZE_LIMIT: u64 = 64 << 20;
const MAGIC: u64 = u64::from_le_bytes(*b"KSUDMABF");
const F_SEAL_FUTURE_WRITE: i32 = 0x0010;

/// `udmabuf_ioctl`. Unknown request → ENOTTY.
pub fn ioctl(request: c_ulong, arg: u64) -> Result<i32, Errno> {
    let items: Vec<udmabuf_create_item>;
    let flags;
    match request {
        UDMABUF_CREATE => {
            let mut c = udmabuf_create::default();
            sys::copy_from_user(as_bytes_mut(&mut c), arg).map_err(|_| Errno::EFAULT)?;
            flags = c.flags;
            items = vec![udmabuf_create_item { memfd: c.memfd, pad: 0, offset: c.offset, size: c.size }];
        }
        UDMABUF_CREATE_LIST => {
            let mut h = udmabuf_create_list::default();
            sys::copy_from_user(as_bytes_mut(&mut h), arg).map_err(|_| Errno::EFAULT)?;
            if h.count > LIST_LIMIT {
                return Err(Errno::EINVAL);
            }
            let mut v = vec![udmabuf_create_item::default(); h.count as usize];
            let bytes = std::mem::size_of_val(v.as_slice());
            // SAFETY: viewing our own Vec of plain C structs as bytes.
            let b = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, bytes) };
            sys::copy_from_user(b, arg + std::mem::size_of::<udmabuf_create_list>() as u64)
                .map_err(|_| Errno::EFAULT)?;
            flags = h.flags;
            items = v;
        }
        _ => return Err(Errno::ENOTTY),
    }
    create(&items, flags & UDMABUF_FLAGS_CLOEXEC != 0)
}

fn as_bytes_mut<T>(v: &mut T) -> &mut [u8] {
    // SAFETY: plain C structs without padding invariants, viewed as bytes for the copy-in.
    unsafe { std::slice::from_raw_parts_mut(v as *mut T as *mut u8, std::mem::size_of::<T>()) }
}

/// `udmabuf_create`: validates the items, then makes the dma-buf socket → its fd.
pub fn create(items: &[udmabuf_create_item], cloexec: bool) -> Result<i32, Errno> {
    let page = sys::PAGE_SIZE;
    let mut total = 0u64;
    for it in items {
        if it.offset % page != 0 || it.size % page != 0 {
            return Err(Errno::EINVAL);
        }
        total = total.checked_add(it.size).ok_or(Errno::EINVAL)?;
        if total > SIZE_LIMIT {
            return Err(Errno::EINVAL);
        }
        let st = sys::fstat(it.memfd as RawFd).map_err(|_| Errno::EBADF)?;
        // SAFETY: F_GET_SEALS on the caller's fd; no memory is passed.
        let seals = unsafe { libc::fcntl(it.memfd as RawFd, libc::F_GET_SEALS) };
        let link = sys::fd_link(it.memfd as RawFd).unwrap_or_default();
        if seals < 0 || !link.starts_with("/memfd:") {
            return Err(Errno::EBADFD);
        }
        if seals & libc::F_SEAL_SHRINK == 0 || seals & (libc::F_SEAL_WRITE | F_SEAL_FUTURE_WRITE) != 0 {
            return Err(Errno::EINVAL);
        }
        if it.offset.checked_add(it.size).is_none_or(|e| e > st.st_size as u64) {
            return Err(Errno::EINVAL);
        }
    }
    if total == 0 {
        return Err(Errno::EINVAL);
    }
    let mut sv = [0 as RawFd; 2];
    let ty = libc::SOCK_DGRAM | libc::SOCK_CLOEXEC;
    // SAFETY: socketpair writes two fds into `sv`.
    if unsafe { libc::socketpair(libc::AF_UNIX, ty, 0, sv.as_mut_ptr()) } != 0 {
        return Err(Errno::last());
    }
    // SAFETY: fresh fds owned by nobody else.
    let (tx, rx) = unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) };
    let mut hdr: Vec<u64> = vec![MAGIC, items.len() as u64];
    for it in items {
        hdr.push(it.offset);
        hdr.push(it.size);
    }
    let fds: Vec<RawFd> = items.iter().map(|it| it.memfd as RawFd).collect();
    send(&tx, &hdr, &fds)?;
    drop(tx);
    if !cloexec {
        // SAFETY: clears FD_CLOEXEC on our fresh fd.
        unsafe { libc::fcntl(rx.as_raw_fd(), libc::F_SETFD, 0) };
    }
    Ok(std::os::fd::IntoRawFd::into_raw_fd(rx))
}

fn send(sock: &OwnedFd, hdr: &[u64], fds: &[RawFd]) -> Result<(), Errno> {
    let fdbytes = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE is pure arithmetic.
    let space = unsafe { libc::CMSG_SPACE(fdbytes as u32) } as usize;
    let mut cbuf = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec { iov_base: hdr.as_ptr() as *mut libc::c_void, iov_len: std::mem::size_of_val(hdr) };
    // SAFETY: a zeroed msghdr is a valid "no name, no control" header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = space;
    // SAFETY: the control buffer holds one SCM_RIGHTS message of `fds` (sized by CMSG_SPACE);
    // sendmsg only reads the header, iovec and control buffer we built.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(fdbytes as u32) as usize;
        std::ptr::copy_nonoverlapping(fds.as_ptr() as *const u8, libc::CMSG_DATA(c), fdbytes);
        if libc::sendmsg(sock.as_raw_fd(), &msg, 0) < 0 {
            return Err(Errno::last());
        }
    }
    Ok(())
}

/// The size of the udmabuf behind `fd` (bytes), `None` when `fd` is no udmabuf. Peeks the header
/// only (no control buffer: no fds are installed).
pub fn size_of(fd: RawFd) -> Option<u64> {
    let st = sys::fstat(fd).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return None;
    }
    let mut hdr = vec![0u64; 2 + 2 * LIST_LIMIT as usize];
    // SAFETY: recv writes at most the buffer's size; MSG_PEEK leaves the message queued.
    let n = unsafe {
        libc::recv(fd, hdr.as_mut_ptr() as *mut libc::c_void, hdr.len() * 8, libc::MSG_PEEK | libc::MSG_DONTWAIT)
    };
    if n < 16 || hdr[0] != MAGIC || n as usize != 16 + 16 * hdr[1] as usize {
        return None;
    }
    Some((0..hdr[1] as usize).map(|i| hdr[3 + 2 * i]).sum())
}

/// `dma_buf_llseek` on a udmabuf: only offset 0; `SEEK_END` → the size, `SEEK_SET` → 0, else
/// EINVAL. `None` when `fd` is no udmabuf.
pub fn llseek(fd: RawFd, off: i64, whence: i32) -> Option<Result<i64, Errno>> {
    let size = size_of(fd)?;
    Some(match (off, whence) {
        (0, libc::SEEK_END) => Ok(size as i64),
        (0, libc::SEEK_SET) => Ok(0),
        _ => Err(Errno::EINVAL),
    })
}

/// The pages of a udmabuf fd (`st`: its fstat), mapped back to back for the model, and its size;
/// `None` when `fd` is no udmabuf. The fds the peek installed are closed again (the mapping holds
/// the files).
pub fn open_pages(fd: RawFd, st: &libc::stat) -> Option<(MemfdMap, u64)> {
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return None;
    }
    let mut hdr = [0u64; 2 + 2 * LIST_LIMIT as usize];
    let mut cbuf = vec![0u64; 1024];
    let mut iov = libc::iovec { iov_base: hdr.as_mut_ptr() as *mut libc::c_void, iov_len: std::mem::size_of_val(&hdr) };
    // SAFETY: a zeroed msghdr is a valid empty header; we fill iovec and control below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = cbuf.len() * 8;
    // SAFETY: recvmsg writes at most the iovec and control sizes we give; MSG_PEEK leaves the
    // message queued.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_PEEK | libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    let mut fds: Vec<OwnedFd> = vec![];
    // SAFETY: walking the control messages recvmsg filled in; SCM_RIGHTS data is an int array
    // of fds the kernel installed for us.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let k = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                let p = libc::CMSG_DATA(c) as *const i32;
                fds.extend((0..k).map(|i| OwnedFd::from_raw_fd(p.add(i).read_unaligned())));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    if n < 16 || hdr[0] != MAGIC || hdr[1] as usize != fds.len() || n as usize != 16 + 16 * fds.len() {
        return None;
    }
    let ranges: Vec<(u64, u64)> = (0..fds.len()).map(|i| (hdr[2 + 2 * i], hdr[3 + 2 * i])).collect();
    let total: u64 = ranges.iter().map(|r| r.1).sum();
    // One reservation, then each range MAP_FIXED at its place.
    // SAFETY: a fresh anonymous reservation the kernel places.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let mut at = 0u64;
    for (fd, (off, len)) in fds.iter().zip(&ranges) {
        // SAFETY: MAP_FIXED inside the reservation we just made and own.
        let p = unsafe {
            libc::mmap(
                (base as u64 + at) as *mut libc::c_void,
                *len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd.as_raw_fd(),
                *off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            // SAFETY: unmapping our own reservation.
            unsafe { libc::munmap(base, total as usize) };
            return None;
        }
        at += len;
    }
    let key: FileKey = (st.st_dev, st.st_ino);
    let dup = sys::dup(fd, true).ok()?;
    // SAFETY: a fresh dup owned by nobody else.
    let own = unsafe { OwnedFd::from_raw_fd(dup) };
    Some((MemfdMap::from_mapping(base as *mut u8, total, key, own), total))
}
