//! Peer to peer: which GPU may reach which other GPU's VRAM, the GPUVM peer mappings that
//! `hipDeviceEnablePeerAccess` creates and `hipDeviceDisablePeerAccess` revokes, and copies
//! between the VRAM of two devices (`hipMemcpyPeer(Async)`, cross-device `hipMemcpy(Async)`).
//!
//! **Accessibility** comes from the KFD topology only: device A can access device B when A's node
//! has a direct link to B's node, i.e. an xGMI `io_link` (type 11, same hive) or a `p2p_link`
//! (PCIe peer-to-peer, published by kernels built with `CONFIG_HSA_AMD_P2P` when
//! `amdgpu_device_is_peer_accessible` holds: large BAR, P2PDMA path; `kfd_topology.c`
//! `kfd_dev_create_p2p_links`). On kernels that publish no `p2p_links` at all (no
//! `p2p_links_count` in the node properties), libhsakmt synthesises indirect GPU↔CPU↔GPU links
//! (`topology_create_indirect_gpu_links`) and ROCr then reports every pair as accessible. We do
//! **not** invent links: such a link says nothing about whether the kernel can map the peer's
//! VRAM into this GPU's VM (small BAR, no P2PDMA route), so PCIe pairs on those kernels report
//! `canAccessPeer = 0` and their copies go through host staging. xGMI pairs are unaffected (their
//! links are `io_links`, published by every kernel).
//!
//! **Enable** (current device C, peer P): every existing VRAM allocation of P is mapped into C's
//! GPUVM with one `AMDKFD_IOC_MAP_MEMORY_TO_GPU` per BO ({C}); every later allocation of P is
//! mapped on P and on all devices that enabled access to P in its one MAP ioctl (device list).
//! Unlike ROCr, we map only into the devices that asked (field issue: the map ioctl is what
//! costs, `ROCm/legacy-rocm-build#4152`). **Disable** waits for the runtime's own copies that used
//! the mapping, then unmaps (`AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU`, {C}) every BO of P: afterwards an
//! access from C's engines faults (CUDA's rule; stock ROCm never revokes).
//!
//! **Copies** between the VRAM of two devices run on the runtime's peer-copy SDMA queues, never
//! on the host: on the source device when its GPUVM maps the destination (peer access enabled
//! source → destination), else on the destination device when it maps the source, with a
//! `KFD_IOC_QUEUE_TYPE_SDMA_XGMI` queue where an xGMI link joins the two. Without any peer
//! mapping (access not enabled, or not possible) the copy goes through a pinned 8 MiB host
//! staging buffer in chunks: source engines → buffer → destination engines, the two legs of
//! consecutive chunks running at once on the two devices' engines, with all the ordering done by
//! POLL_REGMEM on the GPUs, so it is still asynchronous to the host. Every copy
//! waits (POLL_REGMEM) for the prior work of all streams of both devices and of the issuing
//! stream, and leaves a marker on the issuing stream (and on the null streams of both devices
//! when issued on a null stream) so that later work and `hipStreamQuery` see it. Direct copies
//! of at least [`SPREAD_MIN`] bytes are split, in pieces of at least [`SPREAD_PIECE_MIN`], over
//! up to [`MAX_PEER_QUEUES`] queues, i.e. several SDMA engines (the KFD spreads a process's SDMA
//! queues over the engines), which copy at once.
//!
//! Layer `share`: may call `mem`, `core`, `abi` and its own layer.

use crate::abi::types::{hipError_t, hipMemcpyKind};
use crate::core::device::TopologyGpu;
use crate::core::memory::{gtt_flags, Bo, MemKind};
use crate::core::queue::SdmaQueue;
use crate::core::runtime::Runtime;
use crate::core::stream::{Fence, Stream};
use kfd_ioctl::kfd::{KFD_IOC_QUEUE_TYPE_SDMA, KFD_IOC_QUEUE_TYPE_SDMA_XGMI};
use kfd_ioctl::sdma;
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// io_link `type` of an xGMI link (`CRAT_IOLINK_TYPE_XGMI`, kfd_crat.h).
pub const IOLINK_TYPE_XGMI: u32 = 11;
/// io_link `type` of a PCIe link (`CRAT_IOLINK_TYPE_PCIEXPRESS`).
#[allow(dead_code)] // the unit tests and the docs name it
pub const IOLINK_TYPE_PCIE: u32 = 2;
/// Most peer-copy queues per device and kind (each lands on an SDMA engine of its own while the
/// engines last).
pub const MAX_PEER_QUEUES: usize = 4;
/// Direct copies of at least this many bytes are split over several queues (one engine copying
/// a MiB alone takes as long as the submission, wake-up and completion of several together).
pub const SPREAD_MIN: u64 = 1 << 20;
/// Smallest piece of a split copy: each piece costs a submission and a completion.
pub const SPREAD_PIECE_MIN: u64 = 256 << 10;
/// Bytes of the pinned staging buffer of copies without a peer mapping.
pub const PEER_STAGING_SIZE: u64 = 8 << 20;
/// Bounds of the chunk of a staged copy ([`staging_chunk`]).
pub const STAGING_CHUNK_MIN: u64 = 256 << 10;
pub const STAGING_CHUNK_MAX: u64 = 1 << 20;
// The staging ring holds at least two of the largest chunks, so that the legs of a staged copy
// overlap.
const _: () = assert!(PEER_STAGING_SIZE >= 2 * STAGING_CHUNK_MAX);

/// The type of the direct link from `from`'s node to `to`'s node (`io_links` or `p2p_links`),
/// if any. Indirect paths through the CPU are never links here (see the module docs).
pub fn direct_link(from: &TopologyGpu, to: &TopologyGpu) -> Option<u32> {
    link_to(&from.links, to.node.node_id)
}

/// As [`direct_link`], on a node's `(node_to, type)` list.
pub fn link_to(links: &[(u32, u32)], node_to: u32) -> Option<u32> {
    links.iter().find(|(t, _)| *t == node_to).map(|(_, ty)| *ty)
}

/// Peer-access state of the process.
#[derive(Debug)]
pub struct PeerState {
    /// `enabled[c][p]`: device c's GPUVM maps every VRAM allocation of device p. Read-locked by
    /// allocations and copies, write-locked by enable/disable.
    enabled: RwLock<Vec<Vec<bool>>>,
    /// Per device: peer-copy queues (type SDMA) and xGMI peer-copy queues (type SDMA_XGMI).
    queues: Vec<Mutex<[Vec<Arc<SdmaQueue>>; 2]>>,
    next: AtomicUsize,
    /// Direct copies still possibly running: (engine device, other device, fence).
    uses: Mutex<Vec<(usize, usize, Fence)>>,
    /// The pinned staging buffer and its readers.
    staging: Mutex<PeerStaging>,
    /// Recent stream markers of peer copies, with the copy fences each one stands for: a later
    /// copy waits for those directly (FIFO on the same queue) instead of for the marker.
    markers: Mutex<Vec<(Fence, Vec<Fence>)>>,
    /// Copies of `hipMemcpyPeer` (asynchronous to the host) not yet known done, with the devices
    /// whose later work, on any stream, must follow them (the current, source and destination
    /// devices: CUDA's `cudaMemcpyPeer` contract). [`Runtime::implicit_waits`] adds them.
    pending: Mutex<Vec<(usize, Fence)>>,
    /// `pending` is not empty (a submission's fast path skips its lock).
    any_pending: std::sync::atomic::AtomicBool,
}

impl PeerState {
    pub fn new(n: usize) -> PeerState {
        PeerState {
            enabled: RwLock::new(vec![vec![false; n]; n]),
            queues: (0..n).map(|_| Mutex::new([vec![], vec![]])).collect(),
            next: AtomicUsize::new(0),
            uses: Mutex::new(vec![]),
            staging: Mutex::new(PeerStaging::default()),
            markers: Mutex::new(vec![]),
            pending: Mutex::new(vec![]),
            any_pending: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The pending `hipMemcpyPeer` copies later work on device `dev` must wait for.
    pub fn pending_for(&self, dev: usize) -> Vec<Fence> {
        use std::sync::atomic::Ordering;
        if !self.any_pending.load(Ordering::Acquire) {
            return vec![];
        }
        let mut p = self.pending.lock();
        p.retain(|(_, f)| !f.done());
        self.any_pending.store(!p.is_empty(), Ordering::Release);
        p.iter().filter(|(d, _)| *d == dev).map(|(_, f)| f.clone()).collect()
    }
}

impl Runtime {
    /// `hipDeviceCanAccessPeer`: whether `dev` can map `peer`'s memory (a direct xGMI or PCIe
    /// P2P link in the KFD topology). A device never "accesses itself as a peer" (false).
    pub fn can_access_peer(&self, dev: usize, peer: usize) -> bool {
        dev != peer
            && dev < self.devices.len()
            && peer < self.devices.len()
            && direct_link(&self.devices[dev].topo, &self.devices[peer].topo).is_some()
    }

    /// Whether an xGMI link joins `a` and `b`.
    pub fn xgmi_linked(&self, a: usize, b: usize) -> bool {
        a != b && direct_link(&self.devices[a].topo, &self.devices[b].topo) == Some(IOLINK_TYPE_XGMI)
    }

    /// Whether `dev` has enabled access to `peer`'s memory.
    pub fn peer_enabled(&self, dev: usize, peer: usize) -> bool {
        self.peer().enabled.read().get(dev).and_then(|v| v.get(peer)).copied().unwrap_or(false)
    }

    /// For a new VRAM allocation of `owner`: the devices to map it on (`owner` first, then every
    /// device that enabled access to `owner`), and a guard that keeps enable/disable out until
    /// the allocation is registered.
    pub fn peer_alloc_targets(&self, owner: usize) -> (RwLockReadGuard<'_, Vec<Vec<bool>>>, Vec<usize>) {
        let g = self.peer().enabled.read();
        let mut v = vec![owner];
        v.extend((0..g.len()).filter(|&c| c != owner && g[c][owner]));
        (g, v)
    }

    /// Holds peer enable/disable off (while an allocation is freed).
    pub fn peer_guard(&self) -> RwLockReadGuard<'_, Vec<Vec<bool>>> {
        self.peer().enabled.read()
    }

    /// `hipDeviceEnablePeerAccess(peer, flags)` from device `dev`: maps every VRAM allocation
    /// of `peer` into `dev`'s GPUVM, one `MAP_MEMORY_TO_GPU` per BO, and later ones as they come.
    /// Errors (clr `hipDeviceEnablePeerAccess` order): `hipErrorInvalidValue` (flags ≠ 0),
    /// `hipErrorInvalidDevice` (bad ordinal, same device, no link),
    /// `hipErrorPeerAccessAlreadyEnabled`, `hipErrorOutOfMemory` (a map failed; nothing is left
    /// mapped).
    pub fn peer_enable(&self, dev: usize, peer: usize, flags: u32) -> Result<(), hipError_t> {
        if flags != 0 {
            return Err(hipError_t::hipErrorInvalidValue);
        }
        if !self.can_access_peer(dev, peer) {
            return Err(hipError_t::hipErrorInvalidDevice);
        }
        let mut en = self.peer().enabled.write();
        if en[dev][peer] {
            return Err(hipError_t::hipErrorPeerAccessAlreadyEnabled);
        }
        // Free slots of small hipMallocs need no mapping: give their wholly free blocks back.
        self.small_trim();
        let gpu = self.devices[dev].gpu_id;
        let mut done: Vec<&Bo> = vec![];
        // Every block, its cached slots' too (a block's slots are all mapped alike); the pool's
        // lock keeps blocks from being made or freed meanwhile.
        let blocks = self.small_blocks();
        let all = self.allocs.all_but_slots();
        let bos = all
            .iter()
            .filter(|a| matches!(a.kind, MemKind::Device | MemKind::Array) && a.owner == peer)
            .filter_map(|a| a.bo())
            .chain(blocks.blocks.iter().filter(|b| b.bo.owner == peer).map(|b| &b.bo));
        for bo in bos {
            match self.bo_map_on(bo, gpu) {
                Ok(false) => {}
                Ok(true) => done.push(bo),
                Err(e) => {
                    for bo in done {
                        let _ = self.kfd.unmap_memory_from_gpu(bo.handle, &[gpu]);
                        bo.mapped.lock().retain(|g| *g != gpu);
                    }
                    return Err(e);
                }
            }
        }
        crate::core::log::hipkfd_log!("peer access {dev} -> {peer}: {} BO(s) mapped", done.len());
        en[dev][peer] = true;
        Ok(())
    }

    /// `hipDeviceDisablePeerAccess(peer)` from device `dev`: waits for the runtime's copies that
    /// used the mapping, then unmaps every BO of `peer` from `dev`'s GPUVM. Errors:
    /// `hipErrorInvalidDevice` (bad ordinal, same device, no link), `hipErrorPeerAccessNotEnabled`.
    pub fn peer_disable(&self, dev: usize, peer: usize) -> Result<(), hipError_t> {
        if !self.can_access_peer(dev, peer) {
            return Err(hipError_t::hipErrorInvalidDevice);
        }
        let mut en = self.peer().enabled.write();
        if !en[dev][peer] {
            return Err(hipError_t::hipErrorPeerAccessNotEnabled);
        }
        self.small_trim();
        let users: Vec<Fence> = {
            let mut u = self.peer().uses.lock();
            u.retain(|(_, _, f)| !f.done());
            u.iter().filter(|(e, o, _)| *e == dev && *o == peer).map(|(_, _, f)| f.clone()).collect()
        };
        let mut res = Ok(());
        for f in users {
            if let Err(e) = self.fence_wait(&f) {
                res = Err(e);
            }
        }
        let gpu = self.devices[dev].gpu_id;
        let mut n = 0;
        let blocks = self.small_blocks();
        let all = self.allocs.all_but_slots();
        let bos = all
            .iter()
            .filter(|a| matches!(a.kind, MemKind::Device | MemKind::Array) && a.owner == peer)
            .filter_map(|a| a.bo())
            .chain(blocks.blocks.iter().filter(|b| b.bo.owner == peer).map(|b| &b.bo));
        for bo in bos {
            let mut m = bo.mapped.lock();
            if !m.contains(&gpu) {
                continue;
            }
            if let Err((e, _)) = self.kfd.unmap_memory_from_gpu(bo.handle, &[gpu]) {
                crate::core::log::hipkfd_log!("peer unmap {:#x} from gpu {gpu:#x}: {e}", bo.va);
            }
            m.retain(|g| *g != gpu);
            n += 1;
        }
        crate::core::log::hipkfd_log!("peer access {dev} -> {peer} disabled: {n} BO(s) unmapped");
        en[dev][peer] = false;
        res
    }

    /// `hipDeviceReset` of `dev`: disables `dev`'s access to every peer (unmapping) and every
    /// peer's access to `dev` (whose allocations the reset has freed).
    pub fn peer_reset(&self, dev: usize) -> Result<(), hipError_t> {
        for p in 0..self.devices.len() {
            if self.peer_enabled(dev, p) {
                self.peer_disable(dev, p)?;
            }
        }
        let mut en = self.peer().enabled.write();
        for row in en.iter_mut() {
            row[dev] = false;
        }
        Ok(())
    }

    /// The peer-copy queues of `dev` (created on first use): SDMA_XGMI queues when `xgmi`, else
    /// SDMA queues, up to one per engine the topology reports, at most [`MAX_PEER_QUEUES`].
    fn peer_queues(&self, dev: usize, xgmi: bool) -> Result<Vec<Arc<SdmaQueue>>, hipError_t> {
        let mut qs = self.peer().queues[dev].lock();
        let k = xgmi as usize;
        if qs[k].is_empty() {
            let props = &self.devices[dev].topo.node.props;
            let key = if xgmi { "num_sdma_xgmi_engines" } else { "num_sdma_engines" };
            let engines = (props.get(key).copied().unwrap_or(1) as usize).clamp(1, MAX_PEER_QUEUES);
            let ty = if xgmi { KFD_IOC_QUEUE_TYPE_SDMA_XGMI } else { KFD_IOC_QUEUE_TYPE_SDMA };
            for i in 0..engines {
                match self.queue_create_typed(dev, ty) {
                    Ok(q) => qs[k].push(Arc::new(q)),
                    Err(e) if i == 0 => {
                        if xgmi {
                            drop(qs);
                            return self.peer_queues(dev, false);
                        }
                        return Err(e);
                    }
                    Err(_) => break,
                }
            }
            crate::core::log::hipkfd_log!("device {dev}: {} peer-copy queue(s), xgmi {xgmi}", qs[k].len());
        }
        Ok(qs[k].clone())
    }

    /// Submits `build` to queue `q` after `waits` (POLL_REGMEM on each other queue's signal),
    /// trapping when `trap` ([`Runtime::queue_submit_with`]).
    fn submit_after(
        &self,
        q: &Arc<SdmaQueue>,
        waits: &[Fence],
        trap: bool,
        build: impl FnOnce(&mut Vec<u32>) -> Result<(), sdma::EncodeError>,
    ) -> Result<Fence, hipError_t> {
        let seq = self.queue_submit_with(q, trap, |pk| {
            for f in waits {
                if !Arc::ptr_eq(&f.queue, q) && !f.done() {
                    sdma::poll_seq_ge(pk, f.queue.signal.addr, f.seq)?;
                }
            }
            build(pk)
        })?;
        Ok(Fence { queue: q.clone(), seq })
    }

    /// Copies `len` bytes from VRAM of `sdev` at `src` to VRAM of `ddev` at `dst`, ordered after
    /// the prior work of both devices and of `s`, asynchronous to the host unless `sync` (see
    /// the module docs for the path). Errors: `hipErrorOutOfMemory` (no queue or staging
    /// buffer), `hipErrorIllegalAddress` (VM fault, sticky).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_peer(
        &self,
        dst: u64,
        ddev: usize,
        src: u64,
        sdev: usize,
        len: u64,
        s: &Arc<Stream>,
        sync: bool,
    ) -> Result<(), hipError_t> {
        let mut waits = self.device_last_fences(sdev);
        waits.extend(self.device_last_fences(ddev));
        if s.dev != sdev && s.dev != ddev {
            if s.is_null {
                waits.extend(self.device_last_fences(s.dev));
            } else {
                waits.extend(s.last_fence());
            }
        }
        // A wait for the marker of an earlier peer copy is a wait for that copy's fences.
        {
            let mut m = self.peer().markers.lock();
            m.retain(|(f, _)| !f.done());
            let mut expanded = Vec::with_capacity(waits.len());
            for w in waits {
                match m.iter().find(|(f, _)| Arc::ptr_eq(&f.queue, &w.queue) && f.seq == w.seq) {
                    Some((_, copies)) => expanded.extend(copies.iter().filter(|c| !c.done()).cloned()),
                    None => expanded.push(w),
                }
            }
            waits = expanded;
        }
        let on_stream;
        let done = {
            let en = self.peer().enabled.read();
            // A direct copy runs on one GPU, whose GPUVM must reach the other side: peer access
            // covers hipMalloc memory, VMM memory needs hipMemSetAccess for that GPU.
            let engine = if en[sdev][ddev] && self.vmm_reaches(sdev, dst, len, true) {
                Some((sdev, ddev))
            } else if en[ddev][sdev] && self.vmm_reaches(ddev, src, len, false) {
                Some((ddev, sdev))
            } else {
                None
            };
            on_stream = len < SPREAD_MIN && engine.is_some_and(|(e, _)| e == s.dev);
            match engine {
                Some((e, other)) => {
                    // A copy of one piece issued on a stream of the engine's device runs on that
                    // stream's queue: its fence is the stream's own, so the stream needs no
                    // marker, and whoever waits for the stream waits for one engine, not for a
                    // second engine's poll of the copy's fence.
                    let fences = if on_stream {
                        vec![self.stream_submit(s, &waits, |pk| {
                            sdma::copy_linear(pk, dst, src, len);
                            Ok(())
                        })?]
                    } else {
                        self.copy_direct(e, other, dst, src, len, &waits)?
                    };
                    let mut u = self.peer().uses.lock();
                    u.retain(|(_, _, f)| !f.done());
                    u.extend(fences.iter().map(|f| (e, other, f.clone())));
                    fences
                }
                None => {
                    drop(en);
                    self.copy_staged(dst, ddev, src, sdev, len, &waits)?
                }
            }
        };
        // Stream order: a marker on `s` (unless the copy ran on `s`'s queue) and on the null
        // streams of both devices when `s` is a null stream (legacy default-stream semantics)
        // completes after the copy.
        let mut markers = if on_stream { vec![] } else { vec![s.clone()] };
        if s.is_null {
            for d in [sdev, ddev] {
                let n = self.null_stream(d)?;
                if !Arc::ptr_eq(&n, s) && !markers.iter().any(|m| Arc::ptr_eq(m, &n)) {
                    markers.push(n);
                }
            }
        }
        for m in &markers {
            let f = self.stream_submit(m, &done, |_| Ok(()))?;
            let mut ms = self.peer().markers.lock();
            if ms.len() >= 64 {
                ms.remove(0);
            }
            ms.push((f, done.clone()));
        }
        if sync {
            for f in &done {
                self.fence_wait(f)?;
            }
        } else if s.is_null {
            // hipMemcpyPeer: later work on the three devices, non-blocking streams included,
            // follows the copy, though the host does not wait for it.
            self.peer_pending_add(&[s.dev, sdev, ddev], &done);
        }
        Ok(())
    }

    /// Makes later work on each device of `devs`, on any stream, wait for `fences`.
    fn peer_pending_add(&self, devs: &[usize], fences: &[Fence]) {
        let mut p = self.peer().pending.lock();
        for &d in devs {
            p.extend(fences.iter().map(|f| (d, f.clone())));
        }
        self.peer().any_pending.store(true, std::sync::atomic::Ordering::Release);
    }

    /// `hipMemcpyPeer`: copies `len` bytes from `src` (memory of device `sdev`) to `dst` (of
    /// `ddev`) on the null stream `s` of the current device, asynchronous to the host and
    /// ordered as `cudaMemcpyPeer` is: after all work of both devices so far and before all
    /// later work of the three devices, non-blocking streams included. A copy between the VRAM
    /// of two devices gets that order in [`memcpy_peer`](Self::memcpy_peer); any other (one that
    /// a single device can make, from memory both devices map) gets it here. Errors: as
    /// [`memcpy`](Self::memcpy).
    pub fn memcpy_peer_call(
        &self,
        dst: u64,
        ddev: usize,
        src: u64,
        sdev: usize,
        len: u64,
        s: &Arc<Stream>,
    ) -> Result<(), hipError_t> {
        if self.is_two_device_vram_copy(dst, src, len) {
            return self.memcpy(dst, src, len, hipMemcpyKind::hipMemcpyDeviceToDevice, s, false);
        }
        let mut before = self.device_last_fences(sdev);
        before.extend(self.device_last_fences(ddev));
        if !before.is_empty() {
            self.stream_submit(s, &before, |_| Ok(()))?;
        }
        self.memcpy(dst, src, len, hipMemcpyKind::hipMemcpyDeviceToDevice, s, false)?;
        if let Some(f) = s.last_fence().filter(|f| !f.done()) {
            self.peer_pending_add(&[s.dev, sdev, ddev], &[f]);
        }
        Ok(())
    }

    /// A direct copy on the peer queues of `engine` (whose GPUVM maps `other`'s memory); large
    /// copies are split over the queues. Returns the fences of the pieces.
    fn copy_direct(
        &self,
        engine: usize,
        other: usize,
        dst: u64,
        src: u64,
        len: u64,
        waits: &[Fence],
    ) -> Result<Vec<Fence>, hipError_t> {
        let qs = self.peer_queues(engine, self.xgmi_linked(engine, other))?;
        let pieces = if len >= SPREAD_MIN { qs.len().min((len / SPREAD_PIECE_MIN) as usize).max(1) } else { 1 };
        // A copy in one piece goes to the first idle queue (a run of copies stays on one engine,
        // which is still polling its doorbell); the pieces of a copy that finds every queue idle
        // go to them in order (a repeated copy keeps each part on one engine); pieces and copies
        // meeting busy queues rotate over them (several engines at once).
        let idle = |q: &Arc<SdmaQueue>| q.done(q.last_seq());
        let first = match pieces {
            1 => qs.iter().position(idle),
            _ => qs.iter().all(idle).then_some(0),
        }
        .unwrap_or_else(|| self.peer().next.fetch_add(1, Ordering::Relaxed));
        let piece = len.div_ceil(pieces as u64).next_multiple_of(4096);
        let mut fences = vec![];
        let mut off = 0;
        let mut i = 0;
        while off < len {
            let n = (len - off).min(piece);
            let q = &qs[(first + i) % qs.len()];
            fences.push(self.submit_after(q, waits, true, |pk| {
                sdma::copy_linear(pk, dst + off, src + off, n);
                Ok(())
            })?);
            off += n;
            i += 1;
        }
        Ok(fences)
    }

    /// A copy through the pinned staging buffer, in chunks of [`staging_chunk`] bytes taken in
    /// turn from the buffer (a ring, from its start): for chunk k a source-engine leg (source → buffer, on
    /// source queue k mod n, after `waits` and after the earlier legs that read that part of the
    /// buffer) and a destination-engine leg (buffer → destination, on destination queue k mod n,
    /// after the source leg: POLL_REGMEM). The source engines copy chunk k+1 while the
    /// destination engines copy chunk k. Returns the last destination-leg fence of every queue
    /// used.
    fn copy_staged(
        &self,
        dst: u64,
        ddev: usize,
        src: u64,
        sdev: usize,
        len: u64,
        waits: &[Fence],
    ) -> Result<Vec<Fence>, hipError_t> {
        let sq = self.peer_queues(sdev, false)?;
        let dq = self.peer_queues(ddev, false)?;
        let mut st = self.peer().staging.lock();
        let buf = match &st.bo {
            Some(bo) => bo.va,
            None => {
                let all: Vec<usize> = (0..self.devices.len()).collect();
                let bo = self.bo_alloc(0, PEER_STAGING_SIZE, gtt_flags(false), &all, false)?;
                let va = bo.va;
                st.bo = Some(bo);
                va
            }
        };
        st.readers.retain(|(_, _, f)| !f.done());
        let chunk = staging_chunk(len);
        let chunks = len.div_ceil(chunk) as usize;
        let mut last: Vec<Option<Fence>> = vec![None; dq.len()];
        let mut off = 0;
        let mut k = 0;
        // Every copy starts at the buffer's start: a small copy touches no more of it than its
        // size (caches), and its chunks wait only for the readers of that part.
        let mut next = 0;
        while off < len {
            let n = (len - off).min(chunk);
            if next + n > PEER_STAGING_SIZE {
                next = 0;
            }
            let at = next;
            next += n;
            let mut w = waits.to_vec();
            w.extend(st.readers.iter().filter(|(o, l, _)| *o < at + n && at < o + l).map(|(_, _, f)| f.clone()));
            let va = buf + at;
            // Only the last leg on each queue traps (for the host waiters); the others signal.
            let a = self.submit_after(&sq[k % sq.len()], &w, k + sq.len() >= chunks, |pk| {
                sdma::copy_linear(pk, va, src + off, n);
                Ok(())
            })?;
            let b = self.submit_after(&dq[k % dq.len()], &[a], k + dq.len() >= chunks, |pk| {
                sdma::copy_linear(pk, dst + off, va, n);
                Ok(())
            })?;
            // Readers inside this chunk are covered by `b` (it runs after `a`, which waited for
            // them); one that reaches past it is not: the next chunk, on another queue, must
            // still wait for it.
            st.readers.retain(|(o, l, _)| !(at <= *o && *o + *l <= at + n));
            st.readers.push((at, n, b.clone()));
            last[k % dq.len()] = Some(b);
            off += n;
            k += 1;
        }
        Ok(last.into_iter().flatten().collect())
    }
}

/// The chunk of a staged copy of `len` bytes: about an eighth of it, so that the two legs
/// overlap for most of the copy (it takes about (k+1)/k of one leg for k chunks), in 64 KiB
/// steps, at least [`STAGING_CHUNK_MIN`] (each chunk costs two submissions) and at most
/// [`STAGING_CHUNK_MAX`].
pub fn staging_chunk(len: u64) -> u64 {
    len.div_ceil(8).next_multiple_of(64 << 10).clamp(STAGING_CHUNK_MIN, STAGING_CHUNK_MAX)
}

/// The staging buffer of copies without a peer mapping (allocated on first use, mapped on every
/// device), used as a ring of chunks.
#[derive(Debug, Default)]
struct PeerStaging {
    bo: Option<Bo>,
    /// Destination legs that may still read the buffer: (offset, bytes, fence).
    readers: Vec<(u64, u64, Fence)>,
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::Peer`](crate::core::runtime::Feature) slot.
    pub fn peer(&self) -> &PeerState {
        self.feature(crate::core::runtime::Feature::Peer, |rt| PeerState::new(rt.devices.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_chunks_are_an_eighth_within_bounds() {
        assert_eq!(staging_chunk(4 << 10), STAGING_CHUNK_MIN);
        assert_eq!(staging_chunk(4 << 20), 512 << 10);
        assert_eq!(staging_chunk(3 << 20), 384 << 10);
        assert_eq!(staging_chunk((3 << 20) + 1), 448 << 10);
        assert_eq!(staging_chunk(1 << 30), STAGING_CHUNK_MAX);
    }

    #[test]
    fn links_are_direct_only() {
        // xgmi-2, node 1: io_links to the CPU (PCIe) and to node 2 (xGMI).
        let xgmi = [(0, IOLINK_TYPE_PCIE), (2, IOLINK_TYPE_XGMI)];
        assert_eq!(link_to(&xgmi, 2), Some(IOLINK_TYPE_XGMI));
        // pcie-p2p-3, node 3: io_link to the CPU, p2p_links to nodes 1 and 2.
        let p2p = [(0, IOLINK_TYPE_PCIE), (1, IOLINK_TYPE_PCIE), (2, IOLINK_TYPE_PCIE)];
        assert_eq!(link_to(&p2p, 1), Some(IOLINK_TYPE_PCIE));
        // A kernel without p2p_links (or pcie-N, small BAR): only the CPU link. libhsakmt would
        // invent GPU↔CPU↔GPU links here; we do not.
        let none = [(0, IOLINK_TYPE_PCIE)];
        assert_eq!(link_to(&none, 2), None);
        assert_eq!(link_to(&[], 2), None);
    }
}
