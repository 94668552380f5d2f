//! What `hipFree` keeps for the next `hipMalloc`: the free slots of the blocks that small
//! allocations share ([`Block`]), and the BOs of larger ones (the BO cache).
//!
//! Slots live in three places: a block's pool list (under the pool's one lock), a thread's cache
//! (a "magazine", as tcmalloc's and jemalloc's per-thread caches: under that thread's own lock),
//! or in use (the slot's state word says so, [`crate::core::memory::SlotWord`]). A thread
//! allocates from and frees to its own cache, and takes the pool's lock only to refill it or to
//! hand back a batch when it overflows, once per [`batch`] slots. Everything a cache holds is
//! given back by [`Runtime::small_trim`] (`hipMemGetInfo`, out of memory, peer access changes,
//! `hipDeviceReset`) and when its thread exits.
//!
//! Lock order: the peer state (read, for a new block's mappings) → the pool → a block's free
//! list and the registry. A thread's cache lock is taken with none of these held, and only the
//! registry's export lock is taken under it.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{new_ids, vram_flags, Block, Bo, SlotWord, BLOCK_SIZE};
use crate::core::runtime::Runtime;
use parking_lot::{Mutex, MutexGuard};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The largest `hipMalloc` (bytes, page-rounded) whose BO [`hipFree`](Runtime::mem_free) keeps
/// for the next `hipMalloc` of the same page-rounded size, so that a steady-state
/// allocate/free cycle of up to this size makes no ioctl (ROCr keeps freed VRAM in its
/// fragment allocator's blocks the same way; CUDA's allocator caches too).
pub const BO_CACHE_MAX: u64 = 4 << 20;
/// VRAM bytes the cache keeps per device at most; past it, `hipFree` frees.
pub const BO_CACHE_BYTES: u64 = 64 << 20;

/// Bytes of slots a thread moves between its cache and the pool at once (see [`batch`]).
const BATCH_BYTES: u64 = 64 << 10;
/// Most slots a thread moves at once, whatever their size.
const BATCH_MAX: usize = 32;
/// Allocation ids a thread takes at once for its slots.
const ID_BATCH: u64 = 64;

/// How many `slot`-byte slots a thread takes from the pool when its cache has none, and hands
/// back when it holds twice as many: [`BATCH_BYTES`] worth, between 2 and [`BATCH_MAX`] (32 of
/// 256 B; 4 of 16 KiB; 2 of 256 KiB).
pub fn batch(slot: u64) -> usize {
    ((BATCH_BYTES / slot) as usize).clamp(2, BATCH_MAX)
}

/// (device, slot bytes) → the blocks of that class with a slot free in the pool, the one to take
/// from last. A block whose slots are all live or cached is in no list.
type Classes = HashMap<(usize, u64), Vec<Arc<Block>>>;

/// Free slots of one block held by a thread's cache (never empty).
#[derive(Debug)]
struct Group {
    block: Arc<Block>,
    free: Vec<u32>,
}

/// One (device, size class) of a thread's cache.
#[derive(Debug)]
struct ClassCache {
    dev: usize,
    slot: u64,
    /// By block; slots are taken from the last one.
    groups: Vec<Group>,
    /// Slots in `groups`.
    len: usize,
}

/// A thread's cache of free slots ("magazine"): only its thread allocates from it and frees to
/// it; [`Runtime::small_trim`] empties it.
#[derive(Debug, Default)]
pub struct Magazine {
    classes: Vec<ClassCache>,
    /// Ids for this thread's next slots.
    ids: std::ops::Range<u64>,
}

impl Magazine {
    fn class(&mut self, dev: usize, slot: u64) -> &mut ClassCache {
        let c = match self.classes.iter().position(|c| c.dev == dev && c.slot == slot) {
            Some(c) => c,
            None => {
                self.classes.push(ClassCache { dev, slot, groups: vec![], len: 0 });
                self.classes.len() - 1
            }
        };
        &mut self.classes[c]
    }

    /// Makes a cached slot of (`dev`, `slot`) live as an allocation of `size` bytes; returns
    /// its address, or `None` when the cache has no such slot.
    fn take(&mut self, dev: usize, slot: u64, size: u64) -> Option<u64> {
        let c = self.classes.iter().position(|c| c.dev == dev && c.slot == slot && c.len > 0)?;
        if self.ids.is_empty() {
            self.ids = new_ids(ID_BATCH);
        }
        let id = self.ids.next().expect("a fresh batch of ids");
        let cc = &mut self.classes[c];
        let g = cc.groups.last_mut().expect("a class with slots has a group");
        let i = g.free.pop().expect("groups are never empty") as usize;
        g.block.set_live(i, SlotWord::live(size, id));
        let p = g.block.slot_base(i);
        if g.free.is_empty() {
            cc.groups.pop();
        }
        cc.len -= 1;
        Some(p)
    }

    /// Adds free slots (a refill from the pool).
    fn fill(&mut self, groups: Vec<Group>) {
        for g in groups {
            let cc = self.class(g.block.bo.owner, g.block.slot);
            cc.len += g.free.len();
            match cc.groups.iter_mut().find(|h| Arc::ptr_eq(&h.block, &g.block)) {
                Some(h) => h.free.extend(g.free),
                None => cc.groups.push(g),
            }
        }
    }

    /// Adds slot `i` of `b` (just freed). Returns what the cache hands back to the pool when it
    /// now holds more than two batches of the class: one batch, the oldest groups first.
    fn put(&mut self, b: &Arc<Block>, i: u32) -> Vec<Group> {
        let c = self.class(b.bo.owner, b.slot);
        match c.groups.iter_mut().rev().find(|g| Arc::ptr_eq(&g.block, b)) {
            Some(g) => g.free.push(i),
            None => c.groups.push(Group { block: b.clone(), free: vec![i] }),
        }
        c.len += 1;
        Self::overflow(c)
    }

    fn overflow(c: &mut ClassCache) -> Vec<Group> {
        let want = batch(c.slot);
        if c.len <= 2 * want {
            return vec![];
        }
        let mut out = vec![];
        let mut n = 0;
        while n < want {
            let g = &mut c.groups[0];
            let k = (want - n).min(g.free.len());
            let part: Vec<u32> = g.free.drain(..k).collect();
            let block = if g.free.is_empty() { c.groups.remove(0).block } else { g.block.clone() };
            out.push(Group { block, free: part });
            n += k;
        }
        c.len -= n;
        out
    }

    /// Where slot `base` would be: (class, group) of the block at `block_va`, if this cache
    /// holds slots of it (so the block is live).
    fn group_of(&self, block_va: u64) -> Option<(usize, usize)> {
        self.classes
            .iter()
            .enumerate()
            .find_map(|(c, cc)| cc.groups.iter().position(|g| g.block.bo.va == block_va).map(|g| (c, g)))
    }

    /// Everything it holds.
    fn drain(&mut self) -> Vec<Group> {
        self.classes
            .iter_mut()
            .flat_map(|c| {
                c.len = 0;
                std::mem::take(&mut c.groups)
            })
            .collect()
    }
}

/// A thread's cache, shared with [`Runtime::small_trim`] (which empties it from any thread).
pub type ThreadCache = Mutex<Magazine>;

/// The state thread caches reach from their thread-exit destructor.
#[derive(Debug, Default)]
struct Shared {
    classes: Mutex<Classes>,
    /// Every live thread's cache.
    threads: Mutex<Vec<Arc<ThreadCache>>>,
}

/// Puts `g`'s slots back in its block's pool list (the caller holds the pool's lock); returns
/// whether every slot of the block is now free in the pool (none live or cached).
fn put_back(classes: &mut Classes, g: Group) -> bool {
    let list = classes.entry((g.block.bo.owner, g.block.slot)).or_default();
    let mut free = g.block.free.lock();
    if free.is_empty() {
        list.push(g.block.clone());
    }
    free.extend(g.free);
    free.len() == g.block.slots()
}

/// This thread's cache, and the pool it belongs to.
struct Local {
    pool: Arc<Shared>,
    cache: Arc<ThreadCache>,
}

impl Drop for Local {
    /// At thread exit, the cached slots go back to the pool (and the cache out of its list), so
    /// that a trim can free their blocks. No BO is freed here: a thread-exit destructor makes
    /// no ioctl.
    fn drop(&mut self) {
        let groups = self.cache.lock().drain();
        let mut classes = self.pool.classes.lock();
        for g in groups {
            put_back(&mut classes, g);
        }
        drop(classes);
        self.pool.threads.lock().retain(|c| !Arc::ptr_eq(c, &self.cache));
    }
}

thread_local! {
    static LOCAL: OnceCell<Local> = const { OnceCell::new() };
}

/// The blocks that small `hipMalloc`s are slots of, with the threads' caches of free slots, and
/// the BO cache.
#[derive(Debug, Default)]
pub struct SmallPool {
    shared: Arc<Shared>,
    /// Freed `hipMalloc` BOs kept for reuse ([`Runtime::bo_cache_put`]).
    cache: Mutex<BoCache>,
}

impl SmallPool {
    /// Runs `f` on this thread's cache (made and listed on first use). `None` when the thread
    /// has none to use: it is exiting (its cache is gone), or its cache is another pool's.
    fn with_cache<R>(&self, f: impl FnOnce(&ThreadCache) -> R) -> Option<R> {
        LOCAL
            .try_with(|l| {
                let l = l.get_or_init(|| {
                    let cache = Arc::new(ThreadCache::default());
                    self.shared.threads.lock().push(cache.clone());
                    Local { pool: self.shared.clone(), cache }
                });
                Arc::ptr_eq(&l.pool, &self.shared).then(|| f(&l.cache))
            })
            .ok()
            .flatten()
    }
}

/// The pool's lock, held, and every block: peer access changes map and unmap the blocks under
/// it, so that none is made or freed meanwhile ([`Runtime::small_blocks`]).
pub struct SmallBlocks<'a> {
    _pool: MutexGuard<'a, Classes>,
    pub blocks: Vec<Arc<Block>>,
}

/// Idle whole BOs of freed `hipMalloc`s: each was one allocation, is mapped as it was then, and
/// was never exported. Given back by [`Runtime::small_trim`] (hipMemGetInfo, out of memory,
/// peer access changes, hipDeviceReset).
#[derive(Debug, Default)]
struct BoCache {
    /// (device, page-rounded bytes) → BOs.
    bos: HashMap<(usize, u64), Vec<Bo>>,
    /// Bytes kept per device.
    bytes: HashMap<usize, u64>,
}

impl Runtime {
    /// A small `hipMalloc`: a slot of `slot` bytes on device `dev`, live as an allocation of
    /// `size` bytes; returns its address. From this thread's cache, refilled from the pool
    /// when empty (a new block, GPU-mapped on `dev` and the peers that enabled access to it, and
    /// CPU-mapped when the BAR is large, when no block has room). Errors: those of
    /// [`bo_alloc`](Self::bo_alloc).
    pub(crate) fn small_alloc(&self, dev: usize, slot: u64, size: u64) -> Result<u64, hipError_t> {
        match self.small.with_cache(|c| c.lock().take(dev, slot, size)) {
            Some(Some(p)) => return Ok(p),
            Some(None) => {}
            None => {
                // No cache (the thread is exiting): one slot straight from the pool.
                let mut g = self.small_refill(dev, slot, 1)?.pop().expect("a refill brings a slot");
                let i = g.free.pop().expect("groups are never empty") as usize;
                g.block.set_live(i, SlotWord::live(size, new_ids(1).start));
                return Ok(g.block.slot_base(i));
            }
        }
        let mut groups = Some(self.small_refill(dev, slot, batch(slot))?);
        let p = self.small.with_cache(|c| {
            let mut m = c.lock();
            m.fill(groups.take().expect("filled once"));
            m.take(dev, slot, size)
        });
        // Not run (cannot happen: the cache was there a moment ago): the batch goes back.
        if let Some(g) = groups {
            self.small_give_back(g);
        }
        p.flatten().ok_or(hipError_t::hipErrorOutOfMemory)
    }

    /// Up to `want` free slots of (`dev`, `slot`) from the pool, at least one: from the blocks
    /// with room, else from a new block (registered before the peer guard is dropped, so that a
    /// peer access change maps or unmaps it). Errors: those of [`bo_alloc`](Self::bo_alloc).
    fn small_refill(&self, dev: usize, slot: u64, want: usize) -> Result<Vec<Group>, hipError_t> {
        let (_peers, map_on) = self.peer_alloc_targets(dev);
        let mut classes = self.small.shared.classes.lock();
        let list = classes.entry((dev, slot)).or_default();
        let mut got = vec![];
        let mut n = 0;
        while n < want {
            let b = match list.last() {
                Some(b) => b.clone(),
                None if n > 0 => break,
                None => {
                    let large_bar = self.devices[dev].large_bar;
                    let bo = self.bo_alloc(dev, BLOCK_SIZE, vram_flags(large_bar), &map_on, large_bar)?;
                    let b = Arc::new(Block::new(bo, slot));
                    self.allocs.add_block(b.clone());
                    list.push(b.clone());
                    b
                }
            };
            let mut free = b.free.lock();
            let k = (want - n).min(free.len());
            let at = free.len() - k;
            let part = free.split_off(at);
            if free.is_empty() {
                list.pop();
            }
            drop(free);
            n += k;
            got.push(Group { block: b, free: part });
        }
        Ok(got)
    }

    /// Hands slots back to the pool. A block left wholly free is freed (`FREE_MEMORY_OF_GPU`)
    /// unless it is the only one of its class with room.
    fn small_give_back(&self, groups: Vec<Group>) {
        if groups.is_empty() {
            return;
        }
        let mut classes = self.small.shared.classes.lock();
        for g in groups {
            let (b, key) = (g.block.clone(), (g.block.bo.owner, g.block.slot));
            if put_back(&mut classes, g) {
                let list = classes.get_mut(&key).expect("put_back listed it");
                if list.len() > 1 {
                    list.retain(|x| !Arc::ptr_eq(x, &b));
                    self.allocs.forget_block(b.bo.va);
                    self.bo_free(&b.bo);
                }
            }
        }
    }

    /// Gives slot `i` of `b` back (no longer live, and no queued work uses it): to this thread's
    /// cache, which hands a batch to the pool when it holds too many.
    pub(crate) fn small_free(&self, b: &Arc<Block>, i: usize) {
        let back = self.small.with_cache(|c| c.lock().put(b, i as u32));
        self.small_give_back(back.unwrap_or_else(|| vec![Group { block: b.clone(), free: vec![i as u32] }]));
    }

    /// `hipFree` of `base` when it is in a block this thread caches slots of: `None` if it is
    /// not (or a device is busy, or a concurrent call changed the slot: the caller's general
    /// path decides). Such a block is live while the cache holds its slots, so the free reads
    /// no registry. Errors: `hipErrorInvalidValue` (not the start of a live slot: an interior
    /// pointer, or freed already).
    pub(crate) fn small_free_cached(&self, base: u64) -> Option<Result<(), hipError_t>> {
        let back = self.small.with_cache(|c| {
            let mut m = c.lock();
            let (ci, gi) = m.group_of(base & !(BLOCK_SIZE - 1))?;
            let b = &m.classes[ci].groups[gi].block;
            let i = b.index(base);
            let w = b.word(i);
            if !w.is_live() || b.slot_base(i) != base {
                return Some(Err(hipError_t::hipErrorInvalidValue));
            }
            // hipFree waits for the devices; the general path does that when one is busy.
            if !(0..self.devices.len()).all(|d| self.device_idle(d)) || !self.allocs.free_slot(b, i, w) {
                return None;
            }
            let c = &mut m.classes[ci];
            c.groups[gi].free.push(i as u32);
            c.len += 1;
            Some(Ok(Magazine::overflow(c)))
        })??;
        Some(back.map(|g| self.small_give_back(g)))
    }

    /// Holds the pool's lock and lists every block (see [`SmallBlocks`]).
    pub fn small_blocks(&self) -> SmallBlocks<'_> {
        let pool = self.small.shared.classes.lock();
        SmallBlocks { _pool: pool, blocks: self.allocs.blocks() }
    }

    /// Keeps the BO of a freed `hipMalloc` (removed from the registry, no queued work on it)
    /// for reuse, if it is plain device memory of at most [`BO_CACHE_MAX`] bytes that was never
    /// exported and the device's cache has room; else gives it back. Either way `bo` is spent:
    /// the caller must not free it again.
    pub(crate) fn bo_cache_put(&self, bo: &Bo) {
        let plain = bo.flags == vram_flags(self.devices[bo.owner].large_bar)
            && bo.size <= BO_CACHE_MAX
            && !bo.va_kept
            && !bo.exported.load(Ordering::Relaxed)
            && bo.dmabuf.lock().is_none();
        let mut c = self.small.cache.lock();
        let kept = c.bytes.get(&bo.owner).copied().unwrap_or(0);
        if !plain || kept + bo.size > BO_CACHE_BYTES {
            drop(c);
            return self.bo_free(bo);
        }
        *c.bytes.entry(bo.owner).or_default() += bo.size;
        let mapped = std::mem::take(&mut *bo.mapped.lock());
        let copy = Bo::new(bo.va, bo.size, bo.handle, bo.owner, bo.flags, mapped, bo.cpu_mapped);
        c.bos.entry((bo.owner, bo.size)).or_default().push(copy);
    }

    /// A cached BO of exactly `size` (page-rounded) bytes on device `dev` mapped on exactly the
    /// devices `map_on`, if there is one. A BO mapped otherwise (peer access changed since) is
    /// freed on the way.
    pub(crate) fn bo_cache_take(&self, dev: usize, size: u64, map_on: &[usize]) -> Option<Bo> {
        let mut c = self.small.cache.lock();
        let bo = c.bos.get_mut(&(dev, size))?.pop()?;
        *c.bytes.entry(dev).or_default() -= size;
        drop(c);
        let mut want: Vec<u32> = map_on.iter().map(|&d| self.devices[d].gpu_id).collect();
        let mut have = bo.mapped.lock().clone();
        want.sort_unstable();
        have.sort_unstable();
        if want != have {
            self.bo_free(&bo);
            return None;
        }
        Some(bo)
    }

    /// Gives back everything kept for reuse: every thread's cached slots go back to the pool,
    /// then every wholly free block and every cached BO ([`BO_CACHE_MAX`]) is freed (for
    /// `hipMemGetInfo`, peer access changes, `hipDeviceReset`, and before an allocation that ran
    /// out of memory gives up). Returns how many BOs were freed.
    pub fn small_trim(&self) -> usize {
        let cached: Vec<Bo> = {
            let mut c = self.small.cache.lock();
            c.bytes.clear();
            c.bos.drain().flat_map(|(_, v)| v).collect()
        };
        let mut n = cached.len();
        for bo in &cached {
            self.bo_free(bo);
        }
        let caches = self.small.shared.threads.lock().clone();
        let groups: Vec<Group> = caches.iter().flat_map(|c| c.lock().drain()).collect();
        let mut classes = self.small.shared.classes.lock();
        for g in groups {
            put_back(&mut classes, g);
        }
        for list in classes.values_mut() {
            list.retain(|b| {
                let empty = b.free.lock().len() == b.slots();
                if empty {
                    self.allocs.forget_block(b.bo.va);
                    self.bo_free(&b.bo);
                    n += 1;
                }
                !empty
            });
        }
        n
    }
}
