//! One dispatch: the kernel descriptor, workgroups handed to a pool of host threads, the waves
//! of each workgroup run interleaved on one thread (switching at `s_barrier`), decoded
//! instructions cached per thread by code address.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::decode::{decode, Enc, Inst};
use crate::memops::{exec_ds, exec_smem, exec_vmem, Clock, Local, Mem};
use crate::salu::{exec_scalar, Env, Flow};
use crate::valu::exec_vector;
use crate::wave::{Status, Wave, EXEC, M0, VCC};
use crate::{Dispatch, ExecError, Fault, Memory, Options, Stats};

/// The fields of the 64-byte kernel descriptor (AMDGPUUsage "Kernel Descriptor", code object
/// V4/V5) the interpreter uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
}

impl KernelDescriptor {
    pub fn parse(b: &[u8; 64]) -> KernelDescriptor {
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        KernelDescriptor {
            group_segment_fixed_size: u32at(0),
            private_segment_fixed_size: u32at(4),
            kernarg_size: u32at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(b[16..24].try_into().unwrap()),
            compute_pgm_rsrc3: u32at(44),
            compute_pgm_rsrc1: u32at(48),
            compute_pgm_rsrc2: u32at(52),
            kernel_code_properties: u16::from_le_bytes([b[56], b[57]]),
        }
    }
}

// kernel_code_properties bits.
const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;

/// Fast hasher for code addresses.
#[derive(Default)]
struct PcHasher(u64);
impl Hasher for PcHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v >> 2).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Code = HashMap<u64, Inst, BuildHasherDefault<PcHasher>>;

/// Everything the waves of one dispatch share (read-only).
struct Shared<'a> {
    d: &'a Dispatch,
    kd: KernelDescriptor,
    entry: u64,
    nwg: [u64; 3],
    lds_size: usize,
    priv_size: u32,
    opts: &'a Options,
    clock: Clock,
    abort: AtomicBool,
}

pub fn run(mem: &dyn Memory, d: &Dispatch, threads: usize, opts: &Options) -> Result<Stats, ExecError> {
    let mut b = [0u8; 64];
    mem.read(d.kernel_object, &mut b)?;
    let kd = KernelDescriptor::parse(&b);
    if kd.kernel_code_properties & ENABLE_WAVEFRONT_SIZE32 != 0 {
        return Err(ExecError::Invalid("wave32 kernel (gfx90a runs wave64 only)".into()));
    }
    if d.workgroup_size.contains(&0) {
        return Err(ExecError::Invalid(format!("workgroup size {:?}", d.workgroup_size)));
    }
    let wg_items = d.workgroup_size.iter().map(|&x| x as u64).product::<u64>();
    if wg_items > 1024 {
        return Err(ExecError::Invalid(format!("workgroup of {wg_items} work-items (max 1024)")));
    }
    if d.grid_size.contains(&0) {
        return Ok(Stats::default());
    }
    let nwg: [u64; 3] = std::array::from_fn(|k| (d.grid_size[k] as u64).div_ceil(d.workgroup_size[k] as u64));
    let lds_size = d.group_segment_size.max(kd.group_segment_fixed_size) as usize;
    if lds_size > 64 * 1024 {
        return Err(ExecError::Invalid(format!("{lds_size} bytes of LDS (max 65536)")));
    }
    let priv_size = d.private_segment_size.max(kd.private_segment_fixed_size);
    if priv_size > 1 << 20 {
        return Err(ExecError::Invalid(format!("{priv_size} bytes of scratch per work-item")));
    }
    let entry = (d.kernel_object as i64).wrapping_add(kd.kernel_code_entry_byte_offset) as u64;
    let sh = Shared {
        d,
        kd,
        entry,
        nwg,
        lds_size,
        priv_size,
        opts,
        clock: Clock { start: std::time::Instant::now() },
        abort: AtomicBool::new(false),
    };
    let total = nwg[0] * nwg[1] * nwg[2];
    let next = AtomicU64::new(0);
    let first_err: Mutex<Option<(u64, ExecError)>> = Mutex::new(None);
    let wave_insts = AtomicU64::new(0);
    let lane_insts = AtomicU64::new(0);
    let nthreads = threads.max(1).min(total.min(256) as usize);
    let work = |_t: usize| {
        let mut code = Code::default();
        let mut m = Mem::new(mem);
        let mut waves: Vec<Wave> = Vec::new();
        let mut lds = vec![0u8; sh.lds_size];
        let mut stats = Stats::default();
        loop {
            if sh.abort.load(Ordering::Relaxed) {
                break;
            }
            let idx = next.fetch_add(1, Ordering::Relaxed);
            if idx >= total {
                break;
            }
            if let Err(e) = run_workgroup(&sh, idx, &mut code, &mut m, &mut waves, &mut lds, &mut stats) {
                let mut g = first_err.lock().unwrap_or_else(|p| p.into_inner());
                if g.as_ref().is_none_or(|(i, _)| idx < *i) {
                    *g = Some((idx, e));
                }
                sh.abort.store(true, Ordering::Relaxed);
                break;
            }
        }
        wave_insts.fetch_add(stats.wave_instructions, Ordering::Relaxed);
        lane_insts.fetch_add(stats.lane_instructions, Ordering::Relaxed);
    };
    if nthreads <= 1 {
        work(0);
    } else {
        std::thread::scope(|s| {
            for t in 0..nthreads {
                let work = &work;
                s.spawn(move || work(t));
            }
        });
    }
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(Stats { wave_instructions: wave_insts.into_inner(), lane_instructions: lane_insts.into_inner() }),
    }
}

fn run_workgroup(
    sh: &Shared,
    idx: u64,
    code: &mut Code,
    m: &mut Mem,
    waves: &mut Vec<Wave>,
    lds: &mut [u8],
    stats: &mut Stats,
) -> Result<(), ExecError> {
    let d = sh.d;
    let wg = [idx % sh.nwg[0], (idx / sh.nwg[0]) % sh.nwg[1], idx / (sh.nwg[0] * sh.nwg[1])];
    // Partial workgroups at the grid's end.
    let size: [u32; 3] = std::array::from_fn(|k| {
        let full = d.workgroup_size[k] as u64;
        (d.grid_size[k] as u64 - wg[k] * full).min(full) as u32
    });
    let items = size[0] * size[1] * size[2];
    let nwaves = items.div_ceil(64) as usize;
    while waves.len() < nwaves {
        waves.push(Wave::new());
    }
    lds.fill(0);
    let kd = &sh.kd;
    let props = kd.kernel_code_properties;
    let rsrc2 = kd.compute_pgm_rsrc2;
    let vgprs = ((kd.compute_pgm_rsrc1 & 0x3f) as usize + 1) * 8;
    for (n, w) in waves.iter_mut().take(nwaves).enumerate() {
        w.s = [0; 256];
        for r in w.v.iter_mut().take(vgprs.min(512)) {
            *r = [0; 64];
        }
        for r in w.v.iter_mut().skip(256).take(vgprs.min(256)) {
            *r = [0; 64];
        }
        w.scc = false;
        w.pc = sh.entry;
        w.status = Status::Running;
        w.id = n as u32;
        w.mode = 0;
        w.count = 0;
        w.priv_size = sh.priv_size;
        let sbytes = sh.priv_size as usize * 64;
        if w.scratch.len() != sbytes {
            w.scratch = vec![0; sbytes];
        } else {
            w.scratch.fill(0);
        }
        // User SGPRs, in AMDGPUUsage order.
        let mut s = 0usize;
        let put = |w: &mut Wave, s: &mut usize, v: u32| {
            w.set_s(*s, v);
            *s += 1;
        };
        if props & ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER != 0 {
            // A V# for the swizzled private segment: ADD_TID_ENABLE marks it per-lane.
            put(w, &mut s, 0);
            put(w, &mut s, 0);
            put(w, &mut s, u32::MAX);
            put(w, &mut s, 1 << 23 | 0x27000);
        }
        for (bit, v) in [
            (ENABLE_SGPR_DISPATCH_PTR, d.dispatch_ptr),
            (ENABLE_SGPR_QUEUE_PTR, d.queue_ptr),
            (ENABLE_SGPR_KERNARG_SEGMENT_PTR, d.kernarg_address),
            (ENABLE_SGPR_DISPATCH_ID, 0),
            (ENABLE_SGPR_FLAT_SCRATCH_INIT, 0),
        ] {
            if props & bit != 0 {
                put(w, &mut s, v as u32);
                put(w, &mut s, (v >> 32) as u32);
            }
        }
        if props & ENABLE_SGPR_PRIVATE_SEGMENT_SIZE != 0 {
            put(w, &mut s, sh.priv_size);
        }
        // System SGPRs start at USER_SGPR_COUNT.
        s = ((rsrc2 >> 1) & 0x1f) as usize;
        for k in 0..3 {
            if rsrc2 & (1 << (7 + k)) != 0 {
                put(w, &mut s, wg[k] as u32);
            }
        }
        if rsrc2 & (1 << 10) != 0 {
            put(w, &mut s, 0);
        }
        if rsrc2 & 1 != 0 {
            // Private segment wave offset: each wave's scratch is its own buffer.
            put(w, &mut s, 0);
        }
        // Work-item ids packed in v0 (gfx90a): x [9:0], y [19:10], z [29:20].
        let mut exec = 0u64;
        for l in 0..64u32 {
            let t = n as u32 * 64 + l;
            if t >= items {
                break;
            }
            let x = t % size[0];
            let y = (t / size[0]) % size[1];
            let z = t / (size[0] * size[1]);
            w.v[0][l as usize] = x | y << 10 | z << 20;
            exec |= 1 << l;
        }
        w.set_exec(exec);
        w.s[VCC] = 0;
        w.s[M0] = u32::MAX;
        let _ = EXEC;
    }
    let env_base = Env {
        hw_id: 0,
        lds_alloc: (sh.lds_size as u32).div_ceil(512),
        gpr_alloc: ((kd.compute_pgm_rsrc1 & 0x3f) << 8) | ((kd.compute_pgm_rsrc1 >> 6) & 0xf) << 24,
    };
    let mut local = Local { lds };
    loop {
        let mut running = false;
        for (n, w) in waves.iter_mut().take(nwaves).enumerate() {
            if w.status != Status::Running {
                continue;
            }
            running = true;
            let env = Env { hw_id: (n as u32 & 15) | ((n as u32 % 4) << 4) | (((idx % 16) as u32) << 8), ..env_base };
            run_wave(sh, w, code, m, &mut local, &env, stats)?;
        }
        let live: Vec<usize> = (0..nwaves).filter(|&n| waves[n].status != Status::Done).collect();
        if live.is_empty() {
            return Ok(());
        }
        if live.iter().all(|&n| waves[n].status == Status::Barrier) {
            for &n in &live {
                waves[n].status = Status::Running;
            }
        } else if !running {
            return Err(ExecError::Invalid("workgroup deadlocked".into()));
        }
    }
}

/// Decodes the instruction at `pc` (reading up to 12 bytes, less at the end of a mapping).
fn fetch(m: &mut Mem, pc: u64) -> Result<Inst, ExecError> {
    let mut b = [0u8; 12];
    let mut have = 0;
    for n in [12usize, 8, 4] {
        if m.read(pc, &mut b[..n]).is_ok() {
            have = n;
            break;
        }
    }
    if have == 0 {
        return Err(ExecError::Fault(Fault { va: pc & !0xfff, write: false }));
    }
    let w = [0, 1, 2].map(|k| u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap()));
    let inst = decode(w).map_err(|e| ExecError::Unsupported { pc, encoding: e.encoding, what: e.what })?;
    if inst.size as usize > have {
        return Err(ExecError::Fault(Fault { va: (pc + have as u64) & !0xfff, write: false }));
    }
    Ok(inst)
}

fn run_wave(
    sh: &Shared,
    w: &mut Wave,
    code: &mut Code,
    m: &mut Mem,
    loc: &mut Local,
    env: &Env,
    stats: &mut Stats,
) -> Result<(), ExecError> {
    let budget = sh.opts.max_wave_instructions.unwrap_or(u64::MAX);
    loop {
        let pc = w.pc;
        if !code.contains_key(&pc) {
            let inst = fetch(m, pc)?;
            code.insert(pc, inst);
        }
        let i = &code[&pc];
        w.count += 1;
        stats.wave_instructions += 1;
        stats.lane_instructions += w.exec().count_ones() as u64;
        if w.count > budget {
            return Err(ExecError::Invalid(format!("wave ran past its budget of {budget} instructions (pc {pc:#x})")));
        }
        let flow = match i.enc {
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp => exec_scalar(w, i, pc, env)?,
            Enc::Smem => {
                exec_smem(w, i, pc, m, &sh.clock)?;
                Flow::Next
            }
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3p => {
                exec_vector(w, i, pc)?;
                Flow::Next
            }
            Enc::Ds => {
                exec_ds(w, i, pc, m, loc)?;
                Flow::Next
            }
            Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf => {
                exec_vmem(w, i, pc, m, loc)?;
                Flow::Next
            }
        };
        match flow {
            Flow::Next => w.pc = pc.wrapping_add(i.size as u64),
            Flow::Jump(t) => w.pc = t,
            Flow::Barrier => {
                w.pc = pc.wrapping_add(i.size as u64);
                w.status = Status::Barrier;
                return Ok(());
            }
            Flow::End => {
                w.status = Status::Done;
                return Ok(());
            }
        }
    }
}
