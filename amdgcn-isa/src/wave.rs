//! One wave's architectural state (SGPRs, VGPRs/AGPRs, EXEC, VCC, SCC, M0, PC) and operand
//! access: register files, inline constants, literals, the aperture pseudo-registers.

use crate::decode::{Inst, Src};
use crate::ExecError;

/// Special SGPR codes (operand encodings).
pub const VCC: usize = 106;
pub const M0: usize = 124;
pub const EXEC: usize = 126;

/// Flat-address apertures, as KFD sets them up on GFX9 (`MAKE_LDS_APP_BASE_V9`,
/// `MAKE_SCRATCH_APP_BASE_V9`): 4 GiB windows at 1<<48 (LDS) and 2<<48 (scratch).
pub const SHARED_BASE: u64 = 1 << 48;
pub const PRIVATE_BASE: u64 = 2 << 48;
pub const APERTURE_SIZE: u64 = 1 << 32;

/// Operand value type, for inline constants and literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    B32,
    F32,
    F16,
    B64,
    F64,
}

/// A resolved VALU operand: uniform across lanes, a VGPR, or one of the wave's temporary
/// per-lane arrays (DPP/SDWA-transformed sources).
#[derive(Clone, Copy, Debug)]
pub enum Opnd {
    U(u64),
    V(u16),
    T(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Barrier,
    /// Waiting in `ds_gws_barrier` (the workgroup is parked).
    Gws,
    /// Queued at a GWS semaphore by `ds_gws_sema_p` ([`Wave::gws_wait`]; the workgroup is
    /// parked, and the wave runs the instruction again once released).
    Sema,
    Done,
}

/// Number of VGPR slots: 256 arch + 256 acc, plus slack so a register tuple starting at the
/// last register never indexes out of the file.
pub const NVGPR: usize = 512 + 16;

pub struct Wave {
    /// SGPRs and the special scalar registers at their operand codes (0..=127); the rest is
    /// slack for tuples that run past 127 (writes there are dropped).
    pub s: [u32; 256],
    pub v: Vec<[u32; 64]>,
    /// Temporary per-lane arrays for DPP/SDWA sources and SDWA destination merging.
    pub tmp: [[u32; 64]; 4],
    pub scc: bool,
    pub pc: u64,
    pub status: Status,
    /// Wave index within its workgroup.
    pub id: u32,
    /// Linear index of its workgroup in the dispatch.
    pub wg: u64,
    /// Per-lane private memory: `priv_size` bytes per lane.
    pub scratch: Vec<u8>,
    /// `scratch` was written since the wave (slot) started.
    pub scratch_used: bool,
    pub priv_size: u32,
    /// Instructions executed (for `s_memtime` and the instruction budget).
    pub count: u64,
    /// MODE register (`s_setreg`/`s_getreg`), TRAPSTS kept as values only.
    pub mode: u32,
    /// The wave's last turn ended at an `s_sleep` (it is spin-waiting).
    pub slept: bool,
    /// Its place in a GWS semaphore's queue while `ds_gws_sema_p` waits.
    pub(crate) gws_wait: Option<crate::gws::Wait>,
    /// In a trap handler (privileged): from trap entry to `s_rfe_b64`.
    pub trap_mode: bool,
    /// The [`crate::HostTrap`] hook's word for this wave.
    pub host_trap_seen: u64,
    /// In the trap handler for a host trap.
    pub in_host_trap: bool,
}

impl Wave {
    pub fn new() -> Wave {
        Wave {
            s: [0; 256],
            v: vec![[0; 64]; NVGPR],
            tmp: [[0; 64]; 4],
            scc: false,
            pc: 0,
            status: Status::Running,
            id: 0,
            wg: 0,
            scratch: Vec::new(),
            scratch_used: false,
            priv_size: 0,
            count: 0,
            mode: 0,
            slept: false,
            gws_wait: None,
            trap_mode: false,
            host_trap_seen: u64::MAX,
            in_host_trap: false,
        }
    }

    #[inline(always)]
    pub fn exec(&self) -> u64 {
        self.s[EXEC] as u64 | (self.s[EXEC + 1] as u64) << 32
    }

    #[inline(always)]
    pub fn set_exec(&mut self, v: u64) {
        self.s[EXEC] = v as u32;
        self.s[EXEC + 1] = (v >> 32) as u32;
    }

    #[inline(always)]
    pub fn vcc(&self) -> u64 {
        self.sgpr64(VCC)
    }

    #[inline(always)]
    pub fn sgpr64(&self, i: usize) -> u64 {
        let i = i & 0xff;
        self.s[i] as u64 | (self.s[(i + 1) & 0xff] as u64) << 32
    }

    /// Writes SGPR `i` (a scalar destination code); codes past 127 are dropped.
    #[inline(always)]
    pub fn set_s(&mut self, i: usize, v: u32) {
        if i < 128 {
            self.s[i] = v;
        }
    }

    #[inline(always)]
    pub fn set_s64(&mut self, i: usize, v: u64) {
        self.set_s(i, v as u32);
        self.set_s(i + 1, (v >> 32) as u32);
    }

    /// An inline constant or special source as a `ty` value.
    pub fn konst(&self, code: u8, ty: Ty) -> u64 {
        match code {
            128..=192 => (code - 128) as u64,
            193..=208 => {
                let v = -((code - 192) as i64);
                match ty {
                    Ty::B64 | Ty::F64 => v as u64,
                    Ty::F16 => v as u16 as u64,
                    _ => v as u32 as u64,
                }
            }
            240..=248 => {
                let k = (code - 240) as usize;
                const F: [f64; 8] = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0];
                match (ty, k) {
                    (Ty::F64 | Ty::B64, 8) => 0x3fc4_5f30_6dc9_c882,
                    (Ty::F16, 8) => 0x3118,
                    (_, 8) => 0x3e22_f983,
                    (Ty::F64 | Ty::B64, k) => F[k].to_bits(),
                    (Ty::F16, k) => f32_to_f16(F[k] as f32) as u64,
                    (_, k) => (F[k] as f32).to_bits() as u64,
                }
            }
            _ => 0,
        }
    }

    /// A special source (apertures, VCCZ/EXECZ/SCC).
    pub fn special(&self, code: u8, ty: Ty) -> u64 {
        let wide = matches!(ty, Ty::B64 | Ty::F64);
        let ap = |base: u64| if wide { base } else { base >> 32 };
        match code {
            235 => ap(SHARED_BASE),
            236 => ap(SHARED_BASE + APERTURE_SIZE - 1),
            237 => ap(PRIVATE_BASE),
            238 => ap(PRIVATE_BASE + APERTURE_SIZE - 1),
            251 => (self.vcc() == 0) as u64,
            252 => (self.exec() == 0) as u64,
            253 => self.scc as u64,
            _ => 0,
        }
    }

    /// A scalar operand's value (SALU, or a uniform VALU source) as a `ty` value.
    #[inline]
    pub fn scalar(&self, s: Src, ty: Ty) -> u64 {
        match s {
            Src::S(i) => match ty {
                Ty::B64 | Ty::F64 => self.sgpr64(i as usize),
                _ => self.s[i as usize] as u64,
            },
            Src::Inline(c) => self.konst(c, ty),
            Src::Lit(l) => match ty {
                Ty::F64 => (l as u64) << 32,
                _ => l as u64,
            },
            Src::Special(c) => self.special(c, ty),
            Src::V(_) => 0,
        }
    }

    #[inline]
    pub fn opnd(&self, s: Src, ty: Ty) -> Opnd {
        match s {
            Src::V(r) => Opnd::V(r),
            s => Opnd::U(self.scalar(s, ty)),
        }
    }

    #[inline(always)]
    pub fn rd(&self, o: Opnd, l: usize) -> u32 {
        match o {
            Opnd::U(x) => x as u32,
            Opnd::V(r) => self.v[r as usize][l],
            Opnd::T(k) => self.tmp[k as usize][l],
        }
    }

    /// Operand `o` in all 64 lanes (a constant in each): lane loops then index a plain array,
    /// with no per-lane operand match or register-file bounds check.
    #[inline(always)]
    pub fn lanes(&self, o: Opnd) -> [u32; 64] {
        match o {
            Opnd::U(x) => [x as u32; 64],
            Opnd::V(r) => self.v[r as usize],
            Opnd::T(k) => self.tmp[k as usize],
        }
    }

    /// The 64-bit operand `o` (a register pair, or a constant) in all 64 lanes.
    #[inline(always)]
    pub fn lanes64(&self, o: Opnd) -> [u64; 64] {
        match o {
            Opnd::U(x) => [x; 64],
            Opnd::V(r) => {
                let (lo, hi) = (&self.v[r as usize], &self.v[r as usize + 1]);
                std::array::from_fn(|l| lo[l] as u64 | (hi[l] as u64) << 32)
            }
            Opnd::T(k) => {
                let (lo, hi) = (&self.tmp[k as usize], &self.tmp[(k as usize + 1) & 3]);
                std::array::from_fn(|l| lo[l] as u64 | (hi[l] as u64) << 32)
            }
        }
    }

    #[inline(always)]
    pub fn rd64(&self, o: Opnd, l: usize) -> u64 {
        match o {
            Opnd::U(x) => x,
            Opnd::V(r) => self.v[r as usize][l] as u64 | (self.v[r as usize + 1][l] as u64) << 32,
            Opnd::T(k) => self.tmp[k as usize][l] as u64 | (self.tmp[(k as usize + 1) & 3][l] as u64) << 32,
        }
    }

    #[inline(always)]
    pub fn wr(&mut self, r: u16, l: usize, v: u32) {
        self.v[r as usize][l] = v;
    }

    #[inline(always)]
    pub fn wr64(&mut self, r: u16, l: usize, v: u64) {
        self.v[r as usize][l] = v as u32;
        self.v[r as usize + 1][l] = (v >> 32) as u32;
    }
}

impl Default for Wave {
    fn default() -> Self {
        Wave::new()
    }
}

/// The `Unsupported` error for `inst` at `pc`.
pub fn unsupported(inst: &Inst, pc: u64, why: &str) -> ExecError {
    ExecError::Unsupported {
        pc,
        encoding: inst.raw,
        what: if why.is_empty() {
            format!("{} {}", inst.enc.name(), inst.op.name())
        } else {
            format!("{} {}: {why}", inst.enc.name(), inst.op.name())
        },
    }
}

/// IEEE binary16 -> binary32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let s = ((h >> 15) as u32) << 31;
    let e = ((h >> 10) & 0x1f) as u32;
    let m = (h & 0x3ff) as u32;
    let bits = if e == 0 {
        if m == 0 {
            s
        } else {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            s | (e as u32) << 23 | (m & 0x3ff) << 13
        }
    } else if e == 31 {
        s | 0x7f80_0000 | m << 13 | if m != 0 { 0x40_0000 } else { 0 }
    } else {
        s | (e + 127 - 15) << 23 | m << 13
    };
    f32::from_bits(bits)
}

/// IEEE binary32 -> binary16, round to nearest even.
pub fn f32_to_f16(f: f32) -> u16 {
    let x = f.to_bits();
    let s = ((x >> 16) & 0x8000) as u16;
    let e = ((x >> 23) & 0xff) as i32;
    let m = x & 0x7f_ffff;
    if e == 255 {
        return s | 0x7c00 | if m != 0 { 0x200 | (m >> 13) as u16 } else { 0 };
    }
    let e16 = e - 127 + 15;
    if e16 >= 31 {
        return s | 0x7c00;
    }
    if e16 <= 0 {
        if e16 < -10 {
            return s;
        }
        let m = m | 0x80_0000;
        let shift = (14 - e16) as u32;
        let half = 1u32 << (shift - 1);
        let r = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let r = if rem > half || (rem == half && r & 1 == 1) { r + 1 } else { r };
        return s | r as u16;
    }
    let r = (e16 as u32) << 10 | m >> 13;
    let rem = m & 0x1fff;
    let r = if rem > 0x1000 || (rem == 0x1000 && r & 1 == 1) { r + 1 } else { r };
    s | r as u16
}
