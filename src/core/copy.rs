//! Copies and fills: `hipMemcpy*` and `hipMemset*` turned into SDMA COPY_LINEAR and CONST_FILL
//! packets on a stream's queue, with pinned staging buffers for pageable host memory.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::{hipError_t, hipMemcpyKind};
use crate::core::memory::{gtt_flags, Bo, MemKind};
use crate::core::runtime::Runtime;
use crate::core::signal::Signal;
use crate::core::stream::{Fence, Stream};
use kfd_ioctl::sdma;
use parking_lot::Mutex;
use std::sync::Arc;

/// Bytes of each of a device's two staging buffers.
pub const STAGING_SIZE: u64 = 4 << 20;

/// Where a byte range lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    /// VRAM of a device.
    Vram(usize),
    /// Pinned system memory (hipHostMalloc), mapped on every device.
    Pinned,
    /// Memory the GPUs cannot reach.
    Pageable,
    /// VMM mappings that the devices in `mask` (bit per ordinal) may access as needed; `owner`
    /// is the chunk's device. [`Runtime::pick`] turns it into `Vram` of one of them.
    Vmm { mask: u64, owner: usize },
}

/// A device's staging buffers, each with the fence of its last use.
#[derive(Debug, Default)]
pub struct Staging {
    bufs: Mutex<Vec<(Bo, Option<Fence>)>>,
}

/// `hipMemcpyKind` check of every copy: `HostToHost` … `Default` and `DeviceToDeviceNoCU`.
/// Errors: `hipErrorInvalidMemcpyDirection`.
pub fn check_kind(kind: hipMemcpyKind) -> Result<(), hipError_t> {
    if (0..=4).contains(&kind.0) || kind == hipMemcpyKind::hipMemcpyDeviceToDeviceNoCU {
        Ok(())
    } else {
        Err(hipError_t::hipErrorInvalidMemcpyDirection)
    }
}

impl Runtime {
    /// The end of a copy's submissions: when the work went to another stream than the caller's
    /// `s` (a proxy, [`exec_stream`](Self::exec_stream)), `s`'s later work waits for it on the
    /// GPU; waits for the last fence when the caller asked (`sync`).
    fn finish(&self, last: Option<Fence>, es: &Arc<Stream>, s: &Arc<Stream>, sync: bool) -> Result<(), hipError_t> {
        let Some(f) = last else { return Ok(()) };
        if !Arc::ptr_eq(es, s) {
            // Work queued on `s` later comes after the proxy's (exec_stream).
            self.stream_submit(s, std::slice::from_ref(&f), |_| Ok(()))?;
        }
        if sync {
            self.fence_wait(&f)?;
        }
        Ok(())
    }

    /// Classifies `[ptr, ptr+len)` for a read (`write == false`) or a write: the one range check
    /// of every copy and fill path (hipMemcpy* of all kinds, peer copies, hipMemset*). Errors:
    /// `hipErrorInvalidValue` when `ptr + len` wraps past 2^64, when the range starts in an
    /// allocation and runs past its end (VMM: past the adjacent mappings), when it touches the
    /// GPU aperture outside any allocation, or is VMM memory no device may access that way.
    fn locate(&self, ptr: u64, len: u64, write: bool) -> Result<Loc, hipError_t> {
        let end = ptr.checked_add(len).ok_or(hipError_t::hipErrorInvalidValue)?;
        match self.allocs.find(ptr) {
            Some(a) if a.kind == MemKind::Vmm => match self.vmm_span_devices(&a, ptr, len, write)? {
                0 => Err(hipError_t::hipErrorInvalidValue),
                mask => Ok(Loc::Vmm { mask, owner: a.owner }),
            },
            // Registered pages end where the registration does; the user's memory goes on.
            Some(a) if a.kind == MemKind::Registered && end > a.end() => Ok(Loc::Pageable),
            Some(a) if end > a.end() => Err(hipError_t::hipErrorInvalidValue),
            Some(a) => Ok(match a.kind {
                MemKind::Host | MemKind::Registered | MemKind::Managed => Loc::Pinned,
                // A foreign dma-buf is system memory mapped on every device.
                MemKind::External
                    if a.bo().is_some_and(|b| b.flags & kfd_ioctl::kfd::KFD_IOC_ALLOC_MEM_FLAGS_VRAM == 0) =>
                {
                    Loc::Pinned
                }
                _ => Loc::Vram(a.owner),
            }),
            None if self.va.contains(ptr, len) => Err(hipError_t::hipErrorInvalidValue),
            None => Ok(Loc::Pageable),
        }
    }

    /// Settles a `Loc::Vmm` on one device: `near` when it may (the other side's device, or the
    /// stream's), else the chunk's owner, else the lowest one.
    fn pick(l: Loc, near: Option<usize>) -> Loc {
        match l {
            Loc::Vmm { mask, owner } => {
                let ok = |d: &usize| *d < 64 && mask & 1 << d != 0;
                Loc::Vram(near.filter(ok).or(Some(owner).filter(ok)).unwrap_or(mask.trailing_zeros() as usize))
            }
            l => l,
        }
    }

    /// Settles the two sides of a copy on `s`: a VMM side goes to a device the other side
    /// lives on if it may, so that the copy stays on one GPU when it can.
    fn pick_pair(&self, ld: Loc, ls: Loc, s: &Stream) -> (Loc, Loc) {
        let dev = |l: Loc| if let Loc::Vram(d) = l { Some(d) } else { None };
        if let (Loc::Vmm { mask: md, .. }, Loc::Vmm { mask: ms, .. }) = (ld, ls) {
            if md & ms != 0 {
                let both = |l: Loc| if let Loc::Vmm { owner, .. } = l { Loc::Vmm { mask: md & ms, owner } } else { l };
                let d = Self::pick(both(ld), Some(s.dev));
                return (d, Self::pick(both(ls), dev(d)));
            }
        }
        let d = Self::pick(ld, dev(ls).or(Some(s.dev)));
        let sr = Self::pick(ls, dev(d).or(Some(s.dev)));
        (d, sr)
    }

    /// The stream to run work touching memory of device `owner` on: `s` when it is on that
    /// device, else `s`'s proxy stream on `owner` ([`Runtime::stream_proxy`]), after a barrier
    /// that makes it wait (on the GPU) for `s`'s work so far and, as clr runs such work on
    /// `owner`'s null stream (hip_memory.cpp `ihipMemcpyCommand`), for the work of `owner`'s
    /// null and blocking streams so far. Never blocks the host: `s` may be waiting for an
    /// external semaphore that the caller signals only once this returns.
    /// [`finish`](Self::finish) then orders `s`'s later work after the proxy's.
    fn exec_stream(&self, s: &Arc<Stream>, owner: Option<usize>) -> Result<Arc<Stream>, hipError_t> {
        match owner {
            Some(d) if d != s.dev => {
                let p = self.stream_proxy(s, d)?;
                let before: Vec<Fence> =
                    self.implicit_waits(s).into_iter().chain(s.last_fence()).chain(self.blocking_fences(d)).collect();
                self.stream_submit(&p, &before, |_| Ok(()))?;
                Ok(p)
            }
            _ => Ok(s.clone()),
        }
    }

    fn staging_use<T>(
        &self,
        dev: usize,
        f: impl FnOnce(&mut Vec<(Bo, Option<Fence>)>) -> Result<T, hipError_t>,
    ) -> Result<T, hipError_t> {
        let mut bufs = self.staging[dev].bufs.lock();
        while bufs.len() < 2 {
            let bo = self.bo_alloc(dev, STAGING_SIZE, gtt_flags(false), &[dev], true)?;
            bufs.push((bo, None));
        }
        f(&mut bufs)
    }

    /// `hipMemcpy(Async)`: copies `len` bytes from `src` to `dst` in stream order; `sync` waits
    /// for completion. Errors: `hipErrorInvalidValue` (null pointers, ranges past an allocation),
    /// `hipErrorInvalidMemcpyDirection` (unknown kind), `hipErrorIllegalAddress` (VM fault).
    pub fn memcpy(
        &self,
        dst: u64,
        src: u64,
        len: u64,
        kind: hipMemcpyKind,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        check_kind(kind)?;
        if len == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let piece =
            [self.vmm_first_piece(dst, len, true), self.vmm_first_piece(src, len, false)].into_iter().flatten().min();
        if let Some(k) = piece {
            self.memcpy(dst, src, k, kind, s, false)?;
            return self.memcpy(dst + k, src + k, len - k, kind, s, sync);
        }
        let (ld, ls) = (self.locate(dst, len, true)?, self.locate(src, len, false)?);
        let host_async = self.d2d_host_async(ld, ls, dst, src);
        let (ld, ls) = self.pick_pair(ld, ls, s);
        match (ld, ls) {
            (Loc::Pageable, Loc::Pageable) => {
                self.stream_sync(s)?;
                // SAFETY: the user passed two host ranges of `len` bytes; copy as memmove in case
                // they overlap.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len as usize) };
                Ok(())
            }
            (Loc::Vram(ddev), Loc::Vram(sdev)) if ddev != sdev => self.memcpy_peer(dst, ddev, src, sdev, len, s, sync),
            (Loc::Pageable, other) => self.memcpy_to_pageable(dst, src, len, other, s),
            (other, Loc::Pageable) => self.memcpy_from_pageable(dst, src, len, other, s, sync),
            (d, sr) => {
                let owner = [d, sr].iter().find_map(|l| if let Loc::Vram(o) = l { Some(*o) } else { None });
                let es = self.exec_stream(s, owner)?;
                let f = self.stream_submit(&es, &[], |pk| {
                    sdma::copy_linear(pk, dst, src, len);
                    Ok(())
                })?;
                self.finish(Some(f), &es, s, sync && !host_async)
            }
        }
    }

    /// Whether a device-to-device copy of `len` bytes from `src` to `dst` is between the VRAM of
    /// two devices: [`memcpy`](Self::memcpy) hands it to [`Runtime::memcpy_peer`].
    pub(crate) fn is_two_device_vram_copy(&self, dst: u64, src: u64, len: u64) -> bool {
        matches!((self.locate(dst, len, true), self.locate(src, len, false)), (Ok(Loc::Vram(a)), Ok(Loc::Vram(b))) if a != b)
    }

    /// Whether a synchronous copy between `dst` and `src` (located as `ld`, `ls`, before a VMM
    /// side is settled) may return before it is done: device memory to device memory of one
    /// device is asynchronous to the host (CUDA's "API synchronization behavior"; clr
    /// `ihipMemcpy`: "Device to Device copies do not need to host side synchronization") unless
    /// both allocations have `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` set (`hipPointerSetAttribute`;
    /// clr `sync_mem_ops_`). VMM ranges, which the caller may unmap next, are waited for.
    fn d2d_host_async(&self, ld: Loc, ls: Loc, dst: u64, src: u64) -> bool {
        let sync_memops =
            |p: u64| self.allocs.find(p).is_some_and(|a| a.sync_memops.load(std::sync::atomic::Ordering::Relaxed));
        matches!((ld, ls), (Loc::Vram(a), Loc::Vram(b)) if a == b) && !(sync_memops(dst) && sync_memops(src))
    }

    /// The range checks [`memcpy`](Self::memcpy) makes, without copying (graph memcpy nodes are
    /// checked when added, as clr's `ihipMemcpy_validate`). Errors as `memcpy`'s.
    pub fn memcpy_check(&self, dst: u64, src: u64, len: u64, kind: hipMemcpyKind) -> Result<(), hipError_t> {
        check_kind(kind)?;
        if dst == 0 || src == 0 || len == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        self.locate_for_node(dst, len, true)?;
        self.locate_for_node(src, len, false)?;
        Ok(())
    }

    /// The range check of one side of a graph copy node (`hipDrvGraphAddMemcpyNode`): block
    /// `b` of `p` inside one allocation (graph memory not allocated yet included), or outside
    /// the GPU aperture (host memory). Errors: `hipErrorInvalidValue`.
    pub fn node_block_check(&self, p: &sdma::Pitched, b: &Block) -> Result<(), hipError_t> {
        if b.is_empty() {
            return Ok(());
        }
        self.locate_for_node(p.addr, b.span(p)?, false).map(drop)
    }

    /// [`locate`](Self::locate) for a graph node's parameters, which may name graph memory that
    /// its allocation node has not allocated yet (clr keeps the reserved range findable for the
    /// same reason). Errors as `locate`'s.
    fn locate_for_node(&self, ptr: u64, len: u64, write: bool) -> Result<Loc, hipError_t> {
        match self.graph_mem_range(ptr) {
            Some((dev, va, size)) if ptr.checked_add(len).is_some_and(|end| end <= va + size) => Ok(Loc::Vram(dev)),
            Some(_) => Err(hipError_t::hipErrorInvalidValue),
            None => self.locate(ptr, len, write),
        }
    }

    /// The range check [`memset`](Self::memset) makes, without filling: `len` bytes at `dst` of
    /// device or pinned memory. Errors: `hipErrorInvalidValue`.
    pub fn memset_check(&self, dst: u64, len: u64) -> Result<(), hipError_t> {
        if dst == 0 || len == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        match Self::pick(self.locate_for_node(dst, len, true)?, None) {
            Loc::Vram(_) | Loc::Pinned => Ok(()),
            _ => Err(hipError_t::hipErrorInvalidValue),
        }
    }

    /// Pinned staging memory reachable from every device, for the runtime's own use.
    pub fn host_alloc_internal(&self, size: u64) -> Result<Bo, hipError_t> {
        let all: Vec<usize> = (0..self.devices.len()).collect();
        self.bo_alloc(0, size, gtt_flags(false), &all, true)
    }

    /// Device (or pinned) memory to pageable host memory: synchronous, through staging.
    fn memcpy_to_pageable(&self, dst: u64, src: u64, len: u64, from: Loc, s: &Arc<Stream>) -> Result<(), hipError_t> {
        let owner = if let Loc::Vram(o) = from { Some(o) } else { None };
        let es = self.exec_stream(s, owner)?;
        self.staging_use(es.dev, |bufs| {
            let mut off = 0;
            while off < len {
                let n = (len - off).min(STAGING_SIZE);
                let (bo, last) = &mut bufs[0];
                if let Some(f) = last.take() {
                    self.fence_wait(&f)?;
                }
                let f = self.stream_submit(&es, &[], |pk| {
                    sdma::copy_linear(pk, bo.va, src + off, n);
                    Ok(())
                })?;
                self.fence_wait(&f)?;
                // SAFETY: the staging BO is CPU-mapped for STAGING_SIZE ≥ n bytes; the user's
                // destination holds `len` bytes.
                unsafe { std::ptr::copy_nonoverlapping(bo.va as *const u8, (dst + off) as *mut u8, n as usize) };
                off += n;
            }
            Ok(())
        })
    }

    /// Pageable host memory to device (or pinned) memory, double-buffered through staging.
    /// Returns once the source has been read (CUDA's rule for pageable async copies).
    fn memcpy_from_pageable(
        &self,
        dst: u64,
        src: u64,
        len: u64,
        to: Loc,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        let owner = if let Loc::Vram(o) = to { Some(o) } else { None };
        let es = self.exec_stream(s, owner)?;
        let mut last = None;
        self.staging_use(es.dev, |bufs| {
            let mut off = 0;
            let mut i = 0;
            while off < len {
                let n = (len - off).min(STAGING_SIZE);
                let (bo, used) = &mut bufs[i % 2];
                if let Some(f) = used.take() {
                    self.fence_wait(&f)?;
                }
                // SAFETY: the staging BO is CPU-mapped for STAGING_SIZE ≥ n bytes and no queued work
                // reads it any more (fence waited); the user's source holds `len` bytes.
                unsafe { std::ptr::copy_nonoverlapping((src + off) as *const u8, bo.va as *mut u8, n as usize) };
                let f = self.stream_submit(&es, &[], |pk| {
                    sdma::copy_linear(pk, dst + off, bo.va, n);
                    Ok(())
                })?;
                *used = Some(f.clone());
                last = Some(f);
                off += n;
                i += 1;
            }
            Ok(())
        })?;
        self.finish(last, &es, s, sync)
    }

    /// `hipMemset*`: fills `count` elements of `elem` bytes (1, 2 or 4) at `dst` with `value`.
    /// `sync` (the non-`Async` calls) waits unless `dst` is device memory (`hipMalloc`, imported
    /// VRAM; VMM ranges are waited for): there they are asynchronous to the host (CUDA's "API
    /// synchronization behavior"; hip-tests `hipMemsetSync.cc`, enabled in AMD's Linux config,
    /// wants the stream still busy after `hipMemset` behind a running kernel). Errors:
    /// `hipErrorInvalidValue` (null, not device or pinned memory, range past the allocation),
    /// `hipErrorIllegalAddress`.
    pub fn memset(
        &self,
        dst: u64,
        value: u32,
        elem: u64,
        count: u64,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        if count == 0 {
            return Ok(());
        }
        if dst == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let len = count.checked_mul(elem).ok_or(hipError_t::hipErrorInvalidValue)?;
        let loc = self.locate(dst, len, true)?;
        // Plain device memory only: VMM ranges (their chunks may be host memory) are waited for.
        let sync = sync && !matches!(loc, Loc::Vram(_));
        let owner = match Self::pick(loc, Some(s.dev)) {
            Loc::Vram(o) => Some(o),
            Loc::Pinned => None,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        let es = self.exec_stream(s, owner)?;
        let v = value.to_le_bytes();
        let byte_at = |addr: u64| v[((addr - dst) % elem) as usize];
        let head = ((4 - dst % 4) % 4).min(len);
        let body = (len - head) & !3;
        let tail = len - head - body;
        let body_start = dst + head;
        let fill = u32::from_le_bytes(std::array::from_fn(|j| byte_at(body_start + j as u64)));
        let edges = if head + tail > 0 {
            let slot = self.signal_alloc()?;
            let mut bytes = [0u8; 8];
            for k in 0..head {
                bytes[k as usize] = byte_at(dst + k);
            }
            for k in 0..tail {
                bytes[4 + k as usize] = byte_at(body_start + body + k);
            }
            slot.store(u64::from_le_bytes(bytes));
            Some(slot)
        } else {
            None
        };
        self.reclaim_deferred();
        let res = self.stream_submit(&es, &[], |pk| {
            if body > 0 {
                sdma::const_fill(pk, body_start, fill, body)?;
            }
            if let Some(slot) = edges {
                if head > 0 {
                    sdma::copy_linear(pk, dst, slot.addr, head);
                }
                if tail > 0 {
                    sdma::copy_linear(pk, body_start + body, slot.addr + 4, tail);
                }
            }
            Ok(())
        });
        let f = match res {
            Ok(f) => f,
            Err(e) => {
                if let Some(slot) = edges {
                    self.signal_free(slot);
                }
                return Err(e);
            }
        };
        if let Some(slot) = edges {
            self.defer_free(f.clone(), slot);
        }
        self.finish(Some(f), &es, s, sync)?;
        if sync {
            self.reclaim_deferred();
        }
        Ok(())
    }

    /// Frees signal slot `s` once `f` is done (the engine may still write or read it).
    pub fn defer_free(&self, f: Fence, s: Signal) {
        self.defer_free_after(vec![f], s);
    }

    /// Frees signal slot `s` once every fence of `fs` is done (at once when `fs` is empty).
    pub fn defer_free_after(&self, fs: Vec<Fence>, s: Signal) {
        if fs.is_empty() {
            self.signal_free(s);
        } else {
            self.deferred.lock().push((fs, s));
        }
    }

    /// Frees the deferred slots whose work is done.
    pub fn reclaim_deferred(&self) {
        let done: Vec<Signal> = {
            let mut d = self.deferred.lock();
            let (done, pending): (Vec<_>, Vec<_>) = d.drain(..).partition(|(fs, _)| fs.iter().all(|f| f.done()));
            *d = pending;
            done.into_iter().map(|(_, s)| s).collect()
        };
        for s in done {
            self.signal_free(s);
        }
    }
}

/// The extent of a pitched block: `width` bytes × `height` rows × `depth` slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub width: u64,
    pub height: u64,
    pub depth: u64,
}

/// COPY_LINEAR_SUB_WIND / COPY_LINEAR packets per submission of a block copy (13 dwords each at
/// most: well inside the half ring one submission may use).
const BLOCK_PACKETS_PER_SUBMIT: usize = 1024;

impl Block {
    fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0 || self.depth == 0
    }

    /// Bytes from the block's first byte in `p` to one past its last. Errors:
    /// `hipErrorInvalidValue` when it overflows.
    fn span(&self, p: &sdma::Pitched) -> Result<u64, hipError_t> {
        let inv = hipError_t::hipErrorInvalidValue;
        let z = (self.depth - 1).checked_mul(p.slice).ok_or(inv)?;
        let y = (self.height - 1).checked_mul(p.pitch).ok_or(inv)?;
        z.checked_add(y).and_then(|v| v.checked_add(self.width)).ok_or(inv)
    }

    /// Whether the block is one contiguous byte range of `p`.
    fn contiguous(&self, p: &sdma::Pitched) -> bool {
        (self.height == 1 || p.pitch == self.width)
            && (self.depth == 1 || p.slice == self.width.saturating_mul(self.height))
    }

    /// The rows of the block: the address of each in `p`, slice by slice.
    fn rows(self, p: sdma::Pitched) -> impl Iterator<Item = u64> {
        (0..self.depth).flat_map(move |z| (0..self.height).map(move |y| p.addr + z * p.slice + y * p.pitch))
    }
}

impl Runtime {
    /// `hipMemcpy2D`/`hipMemcpy3D` (+Async) on pitched pointers: copies block `b` from `src` to
    /// `dst` in stream order; `sync` waits, except from device to device memory of one device
    /// (see [`memcpy`](Self::memcpy)). Device and pinned memory of one device: SDMA
    /// COPY_LINEAR_SUB_WIND packets (`sdma::copy_3d`, per-row COPY_LINEAR where the pitches do
    /// not fit the packet); pageable host memory and peer copies: row by row through
    /// [`memcpy`](Self::memcpy) (staging, peer paths). Both blocks are range-checked first, so a
    /// failed call has copied nothing. Errors: `hipErrorInvalidMemcpyDirection`,
    /// `hipErrorInvalidValue` (null, a block past its allocation or overflowing),
    /// `hipErrorIllegalAddress`.
    pub fn memcpy_3d(
        &self,
        dst: sdma::Pitched,
        src: sdma::Pitched,
        b: Block,
        kind: hipMemcpyKind,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        check_kind(kind)?;
        if b.is_empty() {
            return Ok(());
        }
        if dst.addr == 0 || src.addr == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let (dspan, sspan) = (b.span(&dst)?, b.span(&src)?);
        if b.contiguous(&dst) && b.contiguous(&src) {
            return self.memcpy(dst.addr, src.addr, dspan, kind, s, sync);
        }
        let (ld, ls) = (self.locate(dst.addr, dspan, true)?, self.locate(src.addr, sspan, false)?);
        // As in `memcpy` (clr `ihipMemcpyParam3D`; hip-tests
        // `Unit_hipMemcpyParam2D_Positive_Synchronization_Behavior`).
        let host_async = self.d2d_host_async(ld, ls, dst.addr, src.addr);
        let (ld, ls) = self.pick_pair(ld, ls, s);
        let owner = match (ld, ls) {
            (Loc::Vram(a), Loc::Vram(c)) if a != c => None,
            (Loc::Vram(o), Loc::Pinned) | (Loc::Pinned, Loc::Vram(o)) | (Loc::Vram(o), Loc::Vram(_)) => Some(Some(o)),
            (Loc::Pinned, Loc::Pinned) => Some(None),
            _ => None,
        };
        let Some(owner) = owner else {
            // Pageable memory or two devices: row by row through the 1D paths.
            for (d, sr) in b.rows(dst).zip(b.rows(src)) {
                self.memcpy(d, sr, b.width, kind, s, false)?;
            }
            return if sync { self.stream_sync(s) } else { Ok(()) };
        };
        let es = self.exec_stream(s, owner)?;
        let mut packets = sdma::copy_3d(dst, src, b.width, b.height, b.depth).peekable();
        let mut last = None;
        while packets.peek().is_some() {
            let f = self.stream_submit(&es, &[], |pk| {
                for p in packets.by_ref().take(BLOCK_PACKETS_PER_SUBMIT) {
                    p.validate()?;
                    p.encode(pk);
                }
                Ok(())
            })?;
            last = Some(f);
        }
        self.finish(last, &es, s, sync && !host_async)
    }

    /// `hipMemset2D`/`hipMemset3D`/`hipMemsetD2D*` (+Async): sets block `b` (width in bytes, a
    /// multiple of `elem`) of `dst` to `elem`-byte elements (1, 2 or 4) of `value`, in stream
    /// order; `sync` waits unless `dst` is device memory, as [`memset`](Self::memset) (clr
    /// `ihipMemset3D`; hip-tests `Unit_hipMemset2DSync`/`3DSync` want the stream still busy
    /// behind a running kernel). One fill when the block is contiguous; else row 0 filled and
    /// copied over the rest by doubling, or one fill per row when rows are not whole dwords. The whole
    /// block is range-checked first. Errors: `hipErrorInvalidValue` (null, pageable or unknown
    /// memory, a block past its allocation or overflowing), `hipErrorIllegalAddress`.
    pub fn memset_3d(
        &self,
        dst: sdma::Pitched,
        value: u32,
        elem: u64,
        b: Block,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        if b.is_empty() {
            return Ok(());
        }
        if dst.addr == 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        let span = b.span(&dst)?;
        let loc = self.locate(dst.addr, span, true)?;
        let owner = match Self::pick(loc, Some(s.dev)) {
            Loc::Vram(o) => Some(o),
            Loc::Pinned => None,
            _ => return Err(hipError_t::hipErrorInvalidValue),
        };
        // As hipMemset: asynchronous to the host on device memory.
        let sync = sync && !matches!(loc, Loc::Vram(_));
        if b.contiguous(&dst) {
            self.memset(dst.addr, value, elem, span / elem, s, false)?;
            return if sync { self.stream_sync(s) } else { Ok(()) };
        }
        if ![dst.addr, dst.pitch, dst.slice, b.width].iter().all(|x| x.is_multiple_of(4)) {
            // Rows that are not whole dwords: one fill (with its edge bytes) per row.
            for row in b.rows(dst) {
                self.memset(row, value, elem, b.width / elem, s, false)?;
            }
            return if sync { self.stream_sync(s) } else { Ok(()) };
        }
        // Rows of whole dwords, each a whole number of elements (1, 2 or 4 bytes) after `dst`:
        // row 0 filled, then copied over the rest by doubling (rows [0, k) to [k, 2k) of slice 0,
        // then slices likewise), so a block of many rows takes a few packets, not one per row
        // (which would fill the ring and block the host behind the stream's earlier work). An
        // SDMA queue runs its packets one after another, so each copy reads finished rows.
        let v = value.to_le_bytes();
        let fill = u32::from_le_bytes(std::array::from_fn(|j| v[j % elem as usize]));
        let at = |y: u64, z: u64| sdma::Pitched { addr: dst.addr + z * dst.slice + y * dst.pitch, ..dst };
        // (first, count) of each doubling step over `total` rows or slices, the first done.
        let doubling = |total: u64| {
            std::iter::successors(Some(1u64), |&k| k.checked_mul(2))
                .take_while(move |&k| k < total)
                .map(move |k| (k, k.min(total - k)))
        };
        let rows = doubling(b.height).map(|(y, n)| sdma::copy_3d(at(y, 0), dst, b.width, n, 1));
        let slices = doubling(b.depth).map(|(z, n)| sdma::copy_3d(at(0, z), dst, b.width, b.height, n));
        let mut packets = rows.chain(slices).flatten().peekable();
        let es = self.exec_stream(s, owner)?;
        let mut last =
            Some(self.stream_submit(&es, &[], |pk| sdma::const_fill(pk, dst.addr, fill, b.width).map(drop))?);
        while packets.peek().is_some() {
            last = Some(self.stream_submit(&es, &[], |pk| {
                for p in packets.by_ref().take(BLOCK_PACKETS_PER_SUBMIT) {
                    p.validate()?;
                    p.encode(pk);
                }
                Ok(())
            })?);
        }
        self.finish(last, &es, s, sync)
    }
}
