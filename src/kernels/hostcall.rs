//! Hostcall: kernels calling the host. Device `printf` and device `malloc`/`free` (the device
//! library's heap asks the host for memory) reach the host this way. The
//! device side is the device library's (ROCm-Device-Libs `ockl/src/hostcall_impl.cl`); the host
//! side serves it as clr does (`rocclr/device/devhostcall.cpp`, `devhcmessages.cpp`,
//! `devhcprintf.cpp`).
//!
//! A kernel whose metadata has a `hidden_hostcall_buffer` argument gets its device's hostcall
//! buffer: one system-memory BO, mapped on that device, holding
//! - the `buffer_t` the argument points to: `headers` (VA) at +0, `payloads` at +8, `doorbell`
//!   (an `amd_signal_t` VA) at +16, `free_stack` at +24, `ready_stack` at +32, `index_mask` at
//!   +40; the stacks are tagged pointers (packet index in the `index_mask` bits, an ABA tag
//!   above);
//! - the doorbell signal (64 bytes; no event mailbox: the host polls);
//! - one 24-byte header per packet (`next` u64, `activemask` u64, `service` u32, `control` u32,
//!   bit 0 READY) and one 4096-byte payload per packet (8 u64 slots for each of 64 lanes).
//!
//! A wave pops a free packet, fills its lanes' slots, sets READY, pushes it on the ready stack,
//! adds 1 to the doorbell and waits for READY to clear; the host takes the whole ready stack,
//! serves each active lane and clears READY. The device library assumes a free packet is always
//! there, so the buffer has one per wave slot of the device (CUs × SIMDs × waves per SIMD), as
//! clr sizes it.
//!
//! The device library's heap state lives in the code object (v4) or, for code object v5, in a
//! zeroed 128 KiB buffer per device that the `hidden_heap_v1` argument points to (clr's heap
//! buffer, without its optional initial slabs).
//!
//! The host side is one thread (`hipkfd-hostcall`) that polls the device buffers while a kernel
//! that may call the host is in flight, and sleeps on a condition variable otherwise.
//!
//! Services: `SERVICE_PRINTF` (2), messages of up to 7 u64s each assembled per lane until the
//! END flag, then formatted with the C library's `fprintf` onto the program's `stdout` (or
//! `stderr` when the control word's bit 0 is set); `SERVICE_DEVMEM` (3), slot 0 an address to
//! free or slot 1 a size to allocate on the buffer's device (the new address, or 0, goes back in
//! slot 0). Other services (clr's `SERVICE_FUNCTION_CALL`, which calls a host function pointer
//! read from GPU memory) are answered with zeros and logged.
//!
//! Layer `kernels`: may call `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::hipError_t;
use crate::core::memory::{gtt_flags, Bo};
use crate::core::runtime::Runtime;
use crate::core::stream::Fence;
use kfd_ioctl::kfd::KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// clr `ServiceID` (`devhcmessages.hpp`).
const SERVICE_PRINTF: u32 = 2;
const SERVICE_DEVMEM: u32 = 3;

/// `buffer_t` fields (the BO's first bytes): headers, payloads and doorbell VAs, the free and
/// ready stacks (tagged pointers), the index mask.
const HEADERS_VA: u64 = 0;
const PAYLOADS_VA: u64 = 8;
const DOORBELL_VA: u64 = 16;
const FREE_STACK: u64 = 24;
const READY_STACK: u64 = 32;
const INDEX_MASK: u64 = 40;

/// Offsets in the BO: `buffer_t`, the doorbell `amd_signal_t`, then the headers.
const DOORBELL_AT: u64 = 64;
const HEADERS_AT: u64 = 128;
const HEADER_BYTES: u64 = 24;
/// 64 lanes × 8 u64 slots.
const PAYLOAD_BYTES: u64 = 64 * 8 * 8;
/// `amd_signal_t.kind` `AMD_SIGNAL_KIND_USER` (ROCr `amd_hsa_signal.h`).
const AMD_SIGNAL_KIND_USER: i64 = 1;

/// One device's hostcall buffer.
#[derive(Debug)]
struct Buffer {
    dev: usize,
    bo: Bo,
    index_mask: u64,
}

impl Buffer {
    fn u64_at(&self, off: u64) -> &AtomicU64 {
        debug_assert!(off.is_multiple_of(8) && off + 8 <= self.bo.size);
        // SAFETY: `off` is 8-aligned and inside the BO, which stays CPU-mapped (at its VA) for
        // as long as `self` lives; the GPU accesses these words with aligned (atomic) accesses.
        unsafe { &*((self.bo.va + off) as *const AtomicU64) }
    }

    fn u32_at(&self, off: u64) -> &AtomicU32 {
        debug_assert!(off.is_multiple_of(4) && off + 4 <= self.bo.size);
        // SAFETY: as `u64_at`, 4-aligned.
        unsafe { &*((self.bo.va + off) as *const AtomicU32) }
    }

    fn payloads_at(&self) -> u64 {
        HEADERS_AT + HEADER_BYTES * (self.index_mask + 1)
    }

    /// Lays out an empty buffer: every packet on the free stack (packet 0 at the bottom, the
    /// pointer to it tagged 1 so that it is never the null pointer), the ready stack empty.
    fn init(&self) {
        let n = self.index_mask + 1;
        let va = self.bo.va;
        self.u64_at(HEADERS_VA).store(va + HEADERS_AT, Ordering::Relaxed);
        self.u64_at(PAYLOADS_VA).store(va + self.payloads_at(), Ordering::Relaxed);
        self.u64_at(DOORBELL_VA).store(va + DOORBELL_AT, Ordering::Relaxed);
        // amd_signal_t: kind at +0, value at +8, event_mailbox_ptr +16 and event_id +24 zero.
        self.u64_at(DOORBELL_AT).store(AMD_SIGNAL_KIND_USER as u64, Ordering::Relaxed);
        let header = |i: u64| HEADERS_AT + HEADER_BYTES * i;
        self.u64_at(header(0)).store(0, Ordering::Relaxed);
        let mut next = n;
        for i in 1..n {
            self.u64_at(header(i)).store(next, Ordering::Relaxed);
            next = i;
        }
        self.u64_at(FREE_STACK).store(next, Ordering::Relaxed);
        self.u64_at(INDEX_MASK).store(self.index_mask, Ordering::Relaxed);
        self.u64_at(READY_STACK).store(0, Ordering::Release);
    }

    /// Serves every packet on the ready stack; whether there was any.
    fn serve(&self, rt: &Runtime, messages: &mut Messages) -> bool {
        let mut ptr = self.u64_at(READY_STACK).swap(0, Ordering::Acquire);
        let any = ptr != 0;
        while ptr != 0 {
            let i = ptr & self.index_mask;
            let h = HEADERS_AT + HEADER_BYTES * i;
            // Read before READY clears: the packet is the device's again after that.
            let next = self.u64_at(h).load(Ordering::Relaxed);
            let mut active = self.u64_at(h + 8).load(Ordering::Relaxed);
            let service = self.u32_at(h + 16).load(Ordering::Relaxed);
            while active != 0 {
                let lane = active.trailing_zeros() as u64;
                active &= active - 1;
                let at = self.payloads_at() + PAYLOAD_BYTES * i + 64 * lane;
                let mut slot: [u64; 8] =
                    std::array::from_fn(|k| self.u64_at(at + 8 * k as u64).load(Ordering::Relaxed));
                rt.hostcall_service(self.dev, service, &mut slot, messages);
                for (k, v) in slot.iter().enumerate() {
                    self.u64_at(at + 8 * k as u64).store(*v, Ordering::Relaxed);
                }
            }
            self.u32_at(h + 20).fetch_and(!1, Ordering::Release);
            ptr = next;
        }
        any
    }
}

/// Printf messages being assembled, by message id (clr `MessageHandler`).
#[derive(Debug, Default)]
struct Messages {
    live: HashMap<u64, Vec<u64>>,
    next_id: u64,
}

/// The listener's state.
#[derive(Debug, Default)]
struct Listener {
    /// Completion fences of launched kernels that may call the host.
    in_flight: Vec<Fence>,
    started: bool,
}

/// Bytes of a device heap (clr's `HeapBufferSize`, 128 KiB, which the device library's `heap_t`
/// fits; all zero is its initial state, ROCm-Device-Libs `ockl/src/dm.cl`).
const HEAP_BYTES: u64 = 128 << 10;

/// The process's hostcall buffers and their listener, and the device heaps.
#[derive(Debug, Default)]
pub struct Hostcalls {
    buffers: Mutex<HashMap<usize, Arc<Buffer>>>,
    heaps: Mutex<HashMap<usize, Bo>>,
    listener: Mutex<Listener>,
    wake: Condvar,
}

impl Runtime {
    /// The VA of device `dev`'s hostcall buffer (what a kernel's `hidden_hostcall_buffer`
    /// argument holds), made on first use. Errors: `hipErrorOutOfMemory`.
    pub fn hostcall_buffer(&self, dev: usize) -> Result<u64, hipError_t> {
        let mut bufs = self.hostcalls().buffers.lock();
        if let Some(b) = bufs.get(&dev) {
            return Ok(b.bo.va);
        }
        let props = &self.devices[dev].topo.node.props;
        let get = |k: &str| props.get(k).copied().unwrap_or(0);
        let packets = (get("simd_count") * get("max_waves_per_simd")).max(64).next_power_of_two();
        let size = HEADERS_AT + (HEADER_BYTES + PAYLOAD_BYTES) * packets;
        let flags = gtt_flags(true) | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
        let bo = self.bo_alloc(dev, size, flags, &[dev], true)?;
        let b = Buffer { dev, bo, index_mask: packets - 1 };
        b.init();
        crate::core::log::hipkfd_log!("hostcall buffer of device {dev}: {:#x}, {packets} packets", b.bo.va);
        let va = b.bo.va;
        bufs.insert(dev, Arc::new(b));
        Ok(va)
    }

    /// The VA of device `dev`'s heap (what a code object v5 kernel's `hidden_heap_v1` argument
    /// holds): the device library's allocator state, zeroed, made on first use; it asks the host
    /// for slabs through the hostcall buffer. Errors: `hipErrorOutOfMemory`.
    pub fn device_heap(&self, dev: usize) -> Result<u64, hipError_t> {
        let mut heaps = self.hostcalls().heaps.lock();
        if let Some(b) = heaps.get(&dev) {
            return Ok(b.va);
        }
        let bo = self.bo_alloc(dev, HEAP_BYTES, gtt_flags(true), &[dev], true)?;
        heap_clear(&bo);
        let va = bo.va;
        heaps.insert(dev, bo);
        Ok(va)
    }

    /// `hipDeviceReset` of device `dev` (its memory freed, the device idle): the device heap
    /// goes back to its empty state, as its slabs are gone. (A code object v4 heap lives in the
    /// code object, which is loaded again.)
    pub fn hostcall_reset(&self, dev: usize) {
        if let Some(bo) = self.hostcalls().heaps.lock().get(&dev) {
            heap_clear(bo);
        }
    }

    /// Serves the hostcall buffers until the kernel whose completion is `f` is done.
    pub fn hostcall_watch(&self, f: Fence) {
        let mut l = self.hostcalls().listener.lock();
        l.in_flight.push(f);
        if !l.started {
            let listen = || {
                if let Ok(rt) = crate::core::runtime::runtime() {
                    rt.hostcall_listen()
                }
            };
            let spawned = std::thread::Builder::new().name("hipkfd-hostcall".into()).spawn(listen);
            match spawned {
                Ok(_) => l.started = true,
                Err(e) => crate::core::log::hipkfd_log!("hostcall listener thread: {e}"),
            }
        }
        self.hostcalls().wake.notify_one();
    }

    fn hostcall_listen(&self) {
        let mut messages = Messages::default();
        let mut idle = Duration::from_micros(20);
        loop {
            {
                let mut l = self.hostcalls().listener.lock();
                // A GPU fault ends every kernel (their fences may never be written).
                let faulted = self.check_fault().is_err();
                l.in_flight.retain(|f| !faulted && !f.done());
                if l.in_flight.is_empty() {
                    self.hostcalls().wake.wait(&mut l);
                    continue;
                }
            }
            let bufs: Vec<Arc<Buffer>> = self.hostcalls().buffers.lock().values().cloned().collect();
            let mut served = false;
            for b in &bufs {
                served |= b.serve(self, &mut messages);
            }
            if served {
                idle = Duration::from_micros(20);
            } else {
                std::thread::sleep(idle);
                idle = (idle * 2).min(Duration::from_millis(1));
            }
        }
    }

    /// Serves one lane's request of service `service` from a kernel on device `dev`; the
    /// answer goes back in `slot`.
    fn hostcall_service(&self, dev: usize, service: u32, slot: &mut [u64; 8], messages: &mut Messages) {
        match service {
            SERVICE_DEVMEM => {
                if slot[0] != 0 {
                    // The device library frees only what it was given.
                    if self.allocs.get(slot[0]).is_some_and(|a| matches!(a.kind, crate::core::memory::MemKind::Device))
                    {
                        self.mem_free_idle(slot[0]);
                    } else {
                        crate::core::log::hipkfd_log!("hostcall devmem: free of unknown pointer {:#x}", slot[0]);
                    }
                } else if slot[1] != 0 {
                    slot[0] = self.mem_alloc_device(dev, slot[1]).unwrap_or(0);
                }
            }
            SERVICE_PRINTF => printf_message(slot, messages),
            _ => {
                crate::core::log::hipkfd_log!("hostcall: service {service} is not served");
                *slot = [0; 8];
            }
        }
    }
}

/// Zeroes a device heap (its empty state); no kernel may be using it.
fn heap_clear(bo: &Bo) {
    // SAFETY: a heap BO is CPU-mapped at its VA for HEAP_BYTES bytes; the callers hold it before
    // any kernel got it, or while its device is idle.
    unsafe { std::ptr::write_bytes(bo.va as *mut u8, 0, HEAP_BYTES as usize) };
}

/// One printf message part (clr `MessageHandler::handlePayload`): slot 0 the descriptor (bit 0
/// BEGIN, bit 1 END, bits 5..8 the count of u64s that follow, bits 8.. the message id, which a
/// BEGIN part gets back), then the data.
fn printf_message(slot: &mut [u64; 8], messages: &mut Messages) {
    const ID_SHIFT: u32 = 8;
    let desc = slot[0];
    let (begin, end, len) = (desc & 1 != 0, desc & 2 != 0, ((desc >> 5) & 7) as usize);
    let id = if begin {
        let id = messages.next_id;
        messages.next_id = (id + 1) & ((1 << 56) - 1);
        messages.live.insert(id, Vec::new());
        slot[0] = (desc & !1 & ((1 << ID_SHIFT) - 1)) | id << ID_SHIFT;
        id
    } else {
        desc >> ID_SHIFT
    };
    let Some(m) = messages.live.get_mut(&id) else {
        crate::core::log::hipkfd_log!("hostcall printf: no message {id}");
        return;
    };
    m.extend_from_slice(&slot[1..1 + len.min(7)]);
    if end {
        let m = messages.live.remove(&id).unwrap_or_default();
        // SAFETY: glibc's `stdout`/`stderr` are initialised before any program code runs.
        let (out, err) = unsafe { (stdout, stderr) };
        slot[0] = printf_format(&m, out, err) as u64;
    }
}

extern "C" {
    static stdout: *mut libc::FILE;
    static stderr: *mut libc::FILE;
}

/// Formats a whole printf message (clr `handlePrintf`/`format`): the control word (bit 0: to
/// `stderr`; other bits: refused, -1), the format string padded to 8 bytes, then one u64 per
/// integer, double or pointer argument and each `%s` string inline, padded to 8 bytes. Each
/// conversion goes to the C library's `fprintf` (onto `out`, or `err`) with its own argument;
/// returns the characters written, or a negative value as `printf` does.
fn printf_format(m: &[u64], out: *mut libc::FILE, err: *mut libc::FILE) -> i64 {
    let Some((&control, rest)) = m.split_first() else { return -1 };
    if control & !1 != 0 {
        return -1;
    }
    let stream = if control & 1 != 0 { err } else { out };
    let bytes: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(fmt_len) = bytes.iter().position(|&b| b == 0) else { return -1 };
    let fmt = &bytes[..fmt_len];
    let mut args = &rest[(fmt_len + 8) / 8..];
    let mut out = Output { stream, count: 0 };
    let mut point = 0;
    loop {
        let mark = point;
        let Some(pct) = fmt[point..].iter().position(|&b| b == b'%').map(|p| p + point) else {
            out.literal(&fmt[mark..]);
            return out.count;
        };
        out.literal(&fmt[mark..pct]);
        point = pct + 1;
        if fmt.get(point) == Some(&b'%') {
            out.literal(b"%");
            point += 1;
            continue;
        }
        if args.is_empty() || out.count < 0 {
            return out.count;
        }
        let Some(conv) = fmt[point..].iter().position(|b| b"diouxXfFeEgGaAcspn".contains(b)).map(|p| p + point) else {
            return out.count;
        };
        point = conv + 1;
        let spec = &fmt[pct..point];
        let stars = spec.iter().filter(|&&b| b == b'*').count();
        if stars > 2 || args.len() <= stars {
            return out.count;
        }
        let widths: Vec<libc::c_int> = args[..stars].iter().map(|&w| w as libc::c_int).collect();
        args = &args[stars..];
        let used = out.conversion(spec, &widths, args);
        args = &args[used.min(args.len())..];
        if out.count < 0 {
            return out.count;
        }
    }
}

/// Where formatted output goes, and the characters written so far (negative after an error).
struct Output {
    stream: *mut libc::FILE,
    count: i64,
}

impl Output {
    fn add(&mut self, r: libc::c_int) {
        self.count = if r < 0 || self.count < 0 { -1 } else { self.count + r as i64 };
    }

    fn literal(&mut self, s: &[u8]) {
        if s.is_empty() || self.count < 0 {
            return;
        }
        // SAFETY: "%.*s" prints exactly `s.len()` bytes of `s`, which is that long.
        let r = unsafe { libc::fprintf(self.stream, c"%.*s".as_ptr(), s.len() as libc::c_int, s.as_ptr()) };
        self.add(r);
    }

    /// Prints one conversion `spec` (with its `*` values) taking its argument from `args`;
    /// returns how many u64s the argument took.
    fn conversion(&mut self, spec: &[u8], widths: &[libc::c_int], args: &[u64]) -> usize {
        let last = *spec.last().unwrap_or(&0);
        // The arguments are narrow strings, ints and doubles: wide (`%ls`, `%lc`) and long
        // double (`%Lf`) conversions print them as those.
        let drop: &[u8] = if b"sc".contains(&last) {
            b"l"
        } else if b"fFeEgGaA".contains(&last) {
            b"L"
        } else {
            b""
        };
        let spec: Vec<u8> = spec.iter().copied().filter(|c| !drop.contains(c)).collect();
        let Ok(cspec) = std::ffi::CString::new(spec) else { return args.len() };
        let f = cspec.as_ptr();
        let s = self.stream;
        // A string argument is inline: NUL-terminated within the message (else cut at its end).
        let string: Option<Vec<u8>> = (last == b's').then(|| {
            let b: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
            let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            let mut v = b[..n].to_vec();
            v.push(0);
            v
        });
        let used = string.as_ref().map_or(1, |v| v.len().div_ceil(8));
        let a = args[0];
        let d = f64::from_bits(a);
        let p = a as *const libc::c_void;
        let st = string.as_ref().map_or(std::ptr::null(), |v| v.as_ptr() as *const libc::c_char);
        // SAFETY: `spec` is one complete conversion ending in `last`, whose argument is passed
        // with the C type it reads (integers as 64-bit values, as clr passes them; doubles;
        // pointers; a NUL-terminated string), after its `*` values as C ints.
        let r = unsafe {
            match (last, widths) {
                (b'n', _) => return 1,
                (b's', []) => libc::fprintf(s, f, st),
                (b's', [w]) => libc::fprintf(s, f, *w, st),
                (b's', [w, q]) => libc::fprintf(s, f, *w, *q, st),
                (b'p', []) => libc::fprintf(s, f, p),
                (b'p', [w]) => libc::fprintf(s, f, *w, p),
                (b'p', [w, q]) => libc::fprintf(s, f, *w, *q, p),
                (b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A', []) => libc::fprintf(s, f, d),
                (b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A', [w]) => libc::fprintf(s, f, *w, d),
                (b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A', [w, q]) => libc::fprintf(s, f, *w, *q, d),
                (_, []) => libc::fprintf(s, f, a),
                (_, [w]) => libc::fprintf(s, f, *w, a),
                (_, [w, q]) => libc::fprintf(s, f, *w, *q, a),
                _ => return args.len(),
            }
        };
        self.add(r);
        used
    }
}

impl crate::core::runtime::Runtime {
    /// This module's process-wide state, in the runtime's [`Feature::Hostcalls`](crate::core::runtime::Feature) slot.
    pub fn hostcalls(&self) -> &Hostcalls {
        self.feature(crate::core::runtime::Feature::Hostcalls, |_| Hostcalls::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message as the device library builds it: control word, format, then arguments.
    fn message(fmt: &str, args: &[u64]) -> Vec<u64> {
        let mut b = fmt.as_bytes().to_vec();
        b.push(0);
        b.resize(b.len().div_ceil(8) * 8, 0);
        let mut m = vec![0u64];
        m.extend(b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())));
        m.extend_from_slice(args);
        m
    }

    /// What printf_format writes for message `m`, and its return value.
    fn formatted(m: &[u64]) -> (String, i64) {
        // SAFETY: a temporary FILE of our own, read back and closed here.
        unsafe {
            let f = libc::tmpfile();
            assert!(!f.is_null());
            let r = printf_format(m, f, f);
            libc::fflush(f);
            libc::rewind(f);
            let mut buf = vec![0u8; 4096];
            let n = libc::fread(buf.as_mut_ptr().cast(), 1, buf.len(), f);
            libc::fclose(f);
            buf.truncate(n);
            (String::from_utf8(buf).unwrap(), r)
        }
    }

    #[test]
    fn printf_conversions_as_the_c_library_prints_them() {
        let mut args = vec![7u64, (-3i64) as u64, 1.5f64.to_bits(), 4, 42];
        args.extend(&message("str", &[])[1..]);
        args.extend([0x1234, b'Z' as u64]);
        let m = message("a=%d b=%lld c=%6.2Lf d=%*d|%%|%ls|%p|%c.", &args);
        let want = format!("a=7 b=-3 c={:>6} d={:>4}|%|str|0x1234|Z.", "1.50", 42);
        assert_eq!(formatted(&m), (want.clone(), want.len() as i64));
        // Fewer arguments than conversions: printing stops there (clr `format`).
        assert_eq!(formatted(&message("x%dy%d", &[1])), ("x1y".into(), 3));
        // An unknown control word is refused; so is an empty message.
        let mut bad = message("x", &[]);
        bad[0] = 2;
        assert_eq!(formatted(&bad), (String::new(), -1));
        assert_eq!(formatted(&[]), (String::new(), -1));
    }

    #[test]
    fn printf_message_parts_are_kept_per_id() {
        let mut msgs = Messages::default();
        // Two lanes' messages interleaved: each BEGIN part gets its own id back in slot 0.
        let mut a = [1 | 1 << 5, 0, 0, 0, 0, 0, 0, 0];
        let mut b = a;
        printf_message(&mut a, &mut msgs);
        printf_message(&mut b, &mut msgs);
        let (ida, idb) = (a[0] >> 8, b[0] >> 8);
        assert_ne!(ida, idb);
        assert_eq!(a[0] & 0xff, 1 << 5, "BEGIN cleared, length kept");
        // A middle part appends its data to its own message only.
        let mut mid = [3 << 5 | ida << 8, 10, 11, 12, 0, 0, 0, 0];
        printf_message(&mut mid, &mut msgs);
        assert_eq!(msgs.live[&ida], [0, 10, 11, 12]);
        assert_eq!(msgs.live[&idb], [0]);
        // A part for an unknown id changes nothing.
        let mut stray = [3 << 5 | 999 << 8, 1, 2, 3, 0, 0, 0, 0];
        printf_message(&mut stray, &mut msgs);
        assert_eq!(stray[1..4], [1, 2, 3]);
        assert_eq!(msgs.live.len(), 2);
    }
}
