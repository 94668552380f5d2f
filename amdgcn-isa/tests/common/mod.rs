//! Test harness: a `Vec`-backed GPU address space, a minimal code-object loader (PT_LOAD
//! segments at a base, `<name>.kd` symbols) and hipcc-built kernels from `tests/kernels/`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use amdgcn_isa::{Dispatch, ExecError, Fault, Memory};
use object::{Object, ObjectSegment, ObjectSymbol};

/// One mapped range of the test address space.
struct Region {
    va: u64,
    len: u64,
    /// 8-byte aligned backing (atomics need natural alignment).
    data: Box<[AtomicU64]>,
    writable: bool,
}

impl Region {
    fn ptr(&self) -> *mut u8 {
        self.data.as_ptr() as *mut u8
    }
}

/// A sparse GPU VA space made of heap buffers.
#[derive(Default)]
pub struct VecMem {
    regions: Mutex<Vec<Region>>,
    /// Next VA `alloc` hands out.
    next: AtomicU64,
}

const PAGE: u64 = 4096;

impl VecMem {
    pub fn new() -> VecMem {
        VecMem { regions: Mutex::new(Vec::new()), next: AtomicU64::new(0x1_0000_0000) }
    }

    /// Maps `len` zeroed bytes at `va` (page aligned).
    pub fn map(&self, va: u64, len: u64, writable: bool) {
        let len = len.max(1).div_ceil(PAGE) * PAGE;
        let data = (0..len / 8).map(|_| AtomicU64::new(0)).collect();
        self.regions.lock().unwrap().push(Region { va, len, data, writable });
    }

    /// Allocates `len` bytes (page granular, a guard page between allocations).
    pub fn alloc(&self, len: u64) -> u64 {
        let l = len.max(1).div_ceil(PAGE) * PAGE;
        let va = self.next.fetch_add(l + PAGE, Ordering::Relaxed);
        self.map(va, l, true);
        va
    }

    pub fn alloc_with(&self, bytes: &[u8]) -> u64 {
        let va = self.alloc(bytes.len() as u64);
        self.write(va, bytes).unwrap();
        va
    }

    fn find(&self, va: u64, len: u64) -> Option<(*mut u8, bool)> {
        let r = self.regions.lock().unwrap_or_else(|p| p.into_inner());
        r.iter()
            .find(|r| va >= r.va && va.checked_add(len).is_some_and(|e| e <= r.va + r.len))
            .map(|r| (r.ptr().wrapping_add((va - r.va) as usize), r.writable))
    }

    /// The page of the first unmapped byte of `[va, va+len)`.
    fn fault(&self, va: u64, len: u64, write: bool) -> Fault {
        let r = self.regions.lock().unwrap_or_else(|p| p.into_inner());
        let mut a = va;
        while a < va.saturating_add(len) {
            match r.iter().find(|r| a >= r.va && a < r.va + r.len) {
                Some(r) if !write || r.writable => a = r.va + r.len,
                _ => break,
            }
        }
        Fault { va: a & !(PAGE - 1), write }
    }

    pub fn read_vec(&self, va: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read(va, &mut v).unwrap();
        v
    }
}

impl Memory for VecMem {
    fn read(&self, va: u64, dst: &mut [u8]) -> Result<(), Fault> {
        let (p, _) = self.find(va, dst.len() as u64).ok_or(self.fault(va, dst.len() as u64, false))?;
        // SAFETY: `find` returned a pointer to `dst.len()` bytes inside a live region
        // (regions are never unmapped while the VecMem lives).
        unsafe { std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn write(&self, va: u64, src: &[u8]) -> Result<(), Fault> {
        match self.find(va, src.len() as u64) {
            // SAFETY: as in `read`; the region is writable.
            Some((p, true)) => unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) },
            _ => return Err(self.fault(va, src.len() as u64, true)),
        }
        Ok(())
    }

    fn atomic(&self, va: u64, width: u32, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, Fault> {
        let Some((p, true)) = self.find(va, width as u64) else {
            return Err(self.fault(va, width as u64, true));
        };
        assert!(va.is_multiple_of(width as u64));
        if width == 8 {
            // SAFETY: `p` is 8-byte aligned (region backing is AtomicU64, `va` aligned) and
            // lives as long as `self`.
            let a = unsafe { AtomicU64::from_ptr(p as *mut u64) };
            let mut old = a.load(Ordering::SeqCst);
            loop {
                match a.compare_exchange(old, op(old), Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(o) => return Ok(o),
                    Err(o) => old = o,
                }
            }
        } else {
            // SAFETY: as above, 4-byte aligned.
            let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
            let mut old = a.load(Ordering::SeqCst);
            loop {
                match a.compare_exchange(old, op(old as u64) as u32, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(o) => return Ok(o as u64),
                    Err(o) => old = o,
                }
            }
        }
    }

    fn host_ptr(&self, va: u64, len: u64, write: bool) -> Result<Option<*mut u8>, Fault> {
        match self.find(va, len) {
            Some((p, w)) if w || !write => Ok(Some(p)),
            _ => Err(self.fault(va, len, write)),
        }
    }
}

/// A loaded code object: its base and kernel descriptor addresses by name.
pub struct CodeObject {
    pub base: u64,
    pub kds: Vec<(String, u64)>,
}

impl CodeObject {
    pub fn kd(&self, name: &str) -> u64 {
        self.kds.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no kernel {name}")).1
    }
}

/// Loads the PT_LOAD segments of `elf` at `base` (read-only), returns its `.kd` symbols.
pub fn load(mem: &VecMem, elf: &[u8], base: u64) -> CodeObject {
    let f = object::File::parse(elf).expect("code object ELF");
    let end = f.segments().map(|s| s.address() + s.size()).max().unwrap_or(0);
    mem.map(base, end, false);
    let regions = mem.regions.lock().unwrap();
    let r = regions.iter().find(|r| r.va == base).unwrap();
    for s in f.segments() {
        let data = s.data().unwrap();
        // SAFETY: the region was just mapped with `end` bytes, covering every segment.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), r.ptr().add(s.address() as usize), data.len()) };
    }
    drop(regions);
    let kds = f
        .symbols()
        .filter_map(|s| {
            let n = s.name().ok()?;
            n.strip_suffix(".kd").map(|k| (k.to_string(), base + s.address()))
        })
        .collect();
    CodeObject { base, kds }
}

/// Builds `tests/kernels/<file>` for gfx90a with hipcc and returns the device ELF, or `None`
/// (after saying so loudly) when hipcc is not installed.
pub fn build(file: &str, flags: &[&str]) -> Option<Vec<u8>> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if Command::new("hipcc").arg("--version").output().is_err() {
        eprintln!("\n*** SKIPPED: hipcc not found; install Debian's hipcc to build the test kernels ***\n");
        return None;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(file);
    // Integration tests get CARGO_TARGET_TMPDIR; examples use target/tmp next to them.
    let out = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp"));
    std::fs::create_dir_all(&out).unwrap();
    let tag = flags.join("").replace(['-', '='], "");
    let elf = out.join(format!("{file}{tag}.elf"));
    let fresh = |p: &Path| {
        let t = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        matches!((t(p), t(&src)), (Some(a), Some(b)) if a >= b)
    };
    if !fresh(&elf) {
        let co = out.join(format!("{file}{tag}.co"));
        let st = Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "--genco"])
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&co)
            .status()
            .expect("hipcc");
        assert!(st.success(), "hipcc failed on {file}");
        let st = Command::new(bundler())
            .args(["--type=o", "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a", "--unbundle"])
            .arg(format!("--input={}", co.display()))
            .arg(format!("--output={}", elf.display()))
            .status()
            .expect("clang-offload-bundler");
        assert!(st.success(), "clang-offload-bundler failed");
    }
    Some(std::fs::read(&elf).unwrap())
}

fn bundler() -> String {
    for p in [
        "/usr/lib/llvm-15/bin/clang-offload-bundler",
        "/usr/lib/llvm-16/bin/clang-offload-bundler",
        "/usr/lib/llvm-17/bin/clang-offload-bundler",
    ] {
        if Path::new(p).exists() {
            return p.into();
        }
    }
    "clang-offload-bundler".into()
}

/// Kernel arguments, laid out by natural alignment (explicit args, then V4 hidden args zeroed).
#[derive(Default)]
pub struct Args(pub Vec<u8>);

impl Args {
    fn put(mut self, b: &[u8], align: usize) -> Self {
        while !self.0.len().is_multiple_of(align) {
            self.0.push(0);
        }
        self.0.extend_from_slice(b);
        self
    }
    pub fn ptr(self, v: u64) -> Self {
        self.put(&v.to_le_bytes(), 8)
    }
    pub fn i32(self, v: i32) -> Self {
        self.put(&v.to_le_bytes(), 4)
    }
    pub fn i64(self, v: i64) -> Self {
        self.put(&v.to_le_bytes(), 8)
    }
    pub fn f32(self, v: f32) -> Self {
        self.put(&v.to_le_bytes(), 4)
    }
    pub fn u8(self, v: u8) -> Self {
        self.put(&[v], 1)
    }
}

/// A loaded kernel file ready to launch.
pub struct Gpu {
    pub mem: VecMem,
    pub co: CodeObject,
}

impl Gpu {
    pub fn new(file: &str, flags: &[&str]) -> Option<Gpu> {
        let elf = build(file, flags)?;
        let mem = VecMem::new();
        let co = load(&mem, &elf, 0x7000_0000_0000);
        Some(Gpu { mem, co })
    }

    /// Launches `name` over `grid` work-items in workgroups of `block` on `threads` host threads.
    pub fn launch(
        &self,
        name: &str,
        grid: [u32; 3],
        block: [u16; 3],
        args: Args,
        threads: usize,
    ) -> Result<(), ExecError> {
        let max_wave_instructions = std::env::var("AMDGCN_ISA_MAX_WAVE_INSTRUCTIONS").ok().and_then(|v| v.parse().ok());
        self.launch_with(
            name,
            grid,
            block,
            args,
            threads,
            &amdgcn_isa::Options { max_wave_instructions, ..Default::default() },
        )
    }

    pub fn launch_with(
        &self,
        name: &str,
        grid: [u32; 3],
        block: [u16; 3],
        args: Args,
        threads: usize,
        opts: &amdgcn_isa::Options,
    ) -> Result<(), ExecError> {
        let kd = self.co.kd(name);
        let mut b = [0u8; 64];
        self.mem.read(kd, &mut b).unwrap();
        let kd_parsed = amdgcn_isa::KernelDescriptor::parse(&b);
        let mut ka = args.0;
        ka.resize((kd_parsed.kernarg_size as usize).max(ka.len()).max(8), 0);
        let kernarg = self.mem.alloc_with(&ka);
        // The AQL dispatch packet (hsa_kernel_dispatch_packet_t).
        let mut p = [0u8; 64];
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        p[2..4].copy_from_slice(&(dims as u16).to_le_bytes());
        for k in 0..3 {
            p[4 + 2 * k..6 + 2 * k].copy_from_slice(&block[k].to_le_bytes());
            p[12 + 4 * k..16 + 4 * k].copy_from_slice(&grid[k].to_le_bytes());
        }
        // Like the runtime: the kernel's fixed scratch plus a stack for dynamic-stack kernels
        // (kernel_code_properties USES_DYNAMIC_STACK).
        let dynamic = if kd_parsed.kernel_code_properties & (1 << 11) != 0 { 16384 } else { 0 };
        let private = kd_parsed.private_segment_fixed_size + dynamic;
        p[24..28].copy_from_slice(&private.to_le_bytes());
        p[28..32].copy_from_slice(&kd_parsed.group_segment_fixed_size.to_le_bytes());
        p[32..40].copy_from_slice(&kd.to_le_bytes());
        p[40..48].copy_from_slice(&kernarg.to_le_bytes());
        let pkt = self.mem.alloc_with(&p);
        let queue = self.mem.alloc(256);
        let d = Dispatch {
            kernel_object: kd,
            kernarg_address: kernarg,
            dispatch_ptr: pkt,
            queue_ptr: queue,
            grid_size: grid,
            workgroup_size: block,
            group_segment_size: kd_parsed.group_segment_fixed_size,
            private_segment_size: private,
            registers: None,
            dispatch_id: 0,
        };
        amdgcn_isa::run_with(&self.mem, &d, threads, opts).map(|_| ())
    }

    pub fn upload<T: Copy>(&self, v: &[T]) -> u64 {
        // SAFETY: reading the bytes of a slice of plain `Copy` numbers.
        let b = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
        self.mem.alloc_with(b)
    }

    pub fn download<T: Copy + Default>(&self, va: u64, n: usize) -> Vec<T> {
        let mut v = vec![T::default(); n];
        // SAFETY: writing the bytes of a slice of plain `Copy` numbers (any bit pattern valid
        // for the integer/float types the tests use).
        let b = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(&v[..])) };
        self.mem.read(va, b).unwrap();
        v
    }
}
