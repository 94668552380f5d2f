//! Scalar ALU and program control: SOP2, SOPK, SOP1, SOPC, SOPP.

use crate::decode::Inst;
use crate::optab::Op;
use crate::wave::{unsupported, Status, Ty, Wave, EXEC, M0};
use crate::ExecError;

/// Hardware register ids (`s_getreg`/`s_setreg` `hwreg(ID, offset, size)`), GFX9.
const HW_REG_MODE: u16 = 1;
const HW_REG_STATUS: u16 = 2;
const HW_REG_TRAPSTS: u16 = 3;
const HW_REG_HW_ID: u16 = 4;
const HW_REG_GPR_ALLOC: u16 = 5;
const HW_REG_LDS_ALLOC: u16 = 6;
const HW_REG_IB_STS: u16 = 7;
const HW_REG_SH_MEM_BASES: u16 = 15;

/// What the instruction did to control flow.
pub enum Flow {
    Next,
    Jump(u64),
    /// `s_barrier`: continue at the next instruction once the workgroup has arrived.
    Barrier,
    /// `s_sleep`: continue at the next instruction after the other waves had a turn.
    Yield,
    /// `ds_gws_barrier`: continue once this many waves of the dispatch have arrived.
    Gws(u32),
    /// `s_sendmsg sendmsg(MSG_INTERRUPT)`: M0[23:0] and whether the wave is privileged
    /// ([`crate::Trap::interrupt`]).
    Interrupt(u32, bool),
    /// `ds_gws_init` or a `ds_gws_sema_*` instruction: the dispatch's GWS carries it out
    /// (`dispatch::gws_sema`).
    GwsSema,
    End,
}

/// What the wave's environment says for `s_getreg`: its place on the (pretend) chip.
#[derive(Clone, Copy, Default)]
pub struct Env<'a> {
    /// Wave slot / SIMD / CU / SE ids for HW_ID.
    pub hw_id: u32,
    /// LDS allocation granules for LDS_ALLOC.
    pub lds_alloc: u32,
    pub gpr_alloc: u32,
    /// The dispatch's trap handling ([`crate::Options::trap`]; None: `s_trap` is an error).
    pub trap: Option<&'a crate::Trap>,
}

/// `s_sendmsg` message ids (SIMM16[3:0]), GFX9.
const MSG_INTERRUPT: u16 = 1;
const MSG_GET_DOORBELL: u16 = 10;

/// First trap temporary (`ttmp0`'s operand code).
pub(crate) const TTMP0: usize = 108;

/// `ttmp1`'s host-trap bit (HT; `S_SAVE_PC_HI_HT_MASK` of `cwsr_trap_handler_gfx9.asm`).
pub(crate) const TTMP1_HT: u32 = 1 << 24;

/// Hardware's trap entry and the first-level handler's jump to the second level
/// (`L_FETCH_2ND_TRAP`): `ttmp[0:1]` = `pc` with `ttmp1_bits` (trap id in [23:16], HT) above
/// PC[47:32], `ttmp12` = STATUS, `ttmp[14:15]` = TMA; the wave privileged. Returns the handler's
/// address.
pub(crate) fn enter_trap(w: &mut Wave, t: &crate::Trap, pc: u64, ttmp1_bits: u32) -> u64 {
    w.set_s(TTMP0, pc as u32);
    w.set_s(TTMP0 + 1, ((pc >> 32) as u32 & 0xffff) | ttmp1_bits);
    w.set_s(TTMP0 + 12, status(w));
    w.set_s64(TTMP0 + 14, t.tma);
    w.trap_mode = true;
    t.tba
}

/// SQ_WAVE_STATUS as `s_getreg` reads it: SCC, PRIV (bit 5: kernels run with it set here, as the
/// CP's dispatches of privileged queues do), EXECZ.
fn status(w: &Wave) -> u32 {
    (w.scc as u32) | 1 << 5 | ((w.exec() == 0) as u32) << 9
}

fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

fn branch(i: &Inst, pc: u64) -> Flow {
    let off = i.simm16 as i16 as i64 * 4;
    Flow::Jump((pc as i64 + 4 + off) as u64)
}

pub fn exec_scalar(w: &mut Wave, i: &Inst, pc: u64, env: &Env) -> Result<Flow, ExecError> {
    use Op::*;
    let d = i.dst as usize;
    let a32 = |w: &Wave| w.scalar(i.src[0], Ty::B32) as u32;
    let b32 = |w: &Wave| w.scalar(i.src[1], Ty::B32) as u32;
    let a64 = |w: &Wave| w.scalar(i.src[0], Ty::B64);
    let b64 = |w: &Wave| w.scalar(i.src[1], Ty::B64);
    macro_rules! op2 {
        ($f:expr) => {{
            let (r, scc): (u32, bool) = $f(a32(w), b32(w));
            w.set_s(d, r);
            w.scc = scc;
        }};
    }
    macro_rules! op2_64 {
        ($f:expr) => {{
            let (r, scc): (u64, bool) = $f(a64(w), b64(w));
            w.set_s64(d, r);
            w.scc = scc;
        }};
    }
    macro_rules! cmp {
        ($t:ty, $f:expr) => {{
            w.scc = $f(a32(w) as $t, b32(w) as $t);
        }};
    }
    macro_rules! saveexec {
        ($f:expr) => {{
            let old = w.exec();
            let s = a64(w);
            let new: u64 = $f(s, old);
            w.set_exec(new);
            w.set_s64(d, old);
            w.scc = new != 0;
        }};
    }
    macro_rules! cmpk {
        ($t:ty, $f:expr) => {{
            let k = if stringify!($t) == "i32" { i.simm16 as i16 as i32 as u32 } else { i.simm16 as u32 };
            w.scc = $f(w.s[d & 0xff] as $t, k as $t);
        }};
    }
    match i.op {
        // SOP2
        s_add_u32 => op2!(|a: u32, b: u32| {
            let (r, c) = a.overflowing_add(b);
            (r, c)
        }),
        s_sub_u32 => op2!(|a: u32, b: u32| {
            let (r, c) = a.overflowing_sub(b);
            (r, c)
        }),
        s_add_i32 => op2!(|a: u32, b: u32| {
            let (r, o) = (a as i32).overflowing_add(b as i32);
            (r as u32, o)
        }),
        s_sub_i32 => op2!(|a: u32, b: u32| {
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            (r as u32, o)
        }),
        s_addc_u32 => {
            let c = w.scc as u64;
            let r = a32(w) as u64 + b32(w) as u64 + c;
            w.set_s(d, r as u32);
            w.scc = r >> 32 != 0;
        }
        s_subb_u32 => {
            let c = w.scc as u64;
            let (a, b) = (a32(w) as u64, b32(w) as u64);
            w.set_s(d, a.wrapping_sub(b).wrapping_sub(c) as u32);
            w.scc = b + c > a;
        }
        s_min_i32 => op2!(|a: u32, b: u32| ((a as i32).min(b as i32) as u32, (a as i32) < (b as i32))),
        s_min_u32 => op2!(|a: u32, b: u32| (a.min(b), a < b)),
        s_max_i32 => op2!(|a: u32, b: u32| ((a as i32).max(b as i32) as u32, (a as i32) > (b as i32))),
        s_max_u32 => op2!(|a: u32, b: u32| (a.max(b), a > b)),
        s_cselect_b32 => {
            let r = if w.scc { a32(w) } else { b32(w) };
            w.set_s(d, r);
        }
        s_cselect_b64 => {
            let r = if w.scc { a64(w) } else { b64(w) };
            w.set_s64(d, r);
        }
        s_and_b32 => op2!(|a: u32, b: u32| (a & b, a & b != 0)),
        s_or_b32 => op2!(|a: u32, b: u32| (a | b, a | b != 0)),
        s_xor_b32 => op2!(|a: u32, b: u32| (a ^ b, a ^ b != 0)),
        s_andn2_b32 => op2!(|a: u32, b: u32| (a & !b, a & !b != 0)),
        s_orn2_b32 => op2!(|a: u32, b: u32| (a | !b, a | !b != 0)),
        s_nand_b32 => op2!(|a: u32, b: u32| (!(a & b), !(a & b) != 0)),
        s_nor_b32 => op2!(|a: u32, b: u32| (!(a | b), !(a | b) != 0)),
        s_xnor_b32 => op2!(|a: u32, b: u32| (!(a ^ b), !(a ^ b) != 0)),
        s_and_b64 => op2_64!(|a: u64, b: u64| (a & b, a & b != 0)),
        s_or_b64 => op2_64!(|a: u64, b: u64| (a | b, a | b != 0)),
        s_xor_b64 => op2_64!(|a: u64, b: u64| (a ^ b, a ^ b != 0)),
        s_andn2_b64 => op2_64!(|a: u64, b: u64| (a & !b, a & !b != 0)),
        s_orn2_b64 => op2_64!(|a: u64, b: u64| (a | !b, a | !b != 0)),
        s_nand_b64 => op2_64!(|a: u64, b: u64| (!(a & b), !(a & b) != 0)),
        s_nor_b64 => op2_64!(|a: u64, b: u64| (!(a | b), !(a | b) != 0)),
        s_xnor_b64 => op2_64!(|a: u64, b: u64| (!(a ^ b), !(a ^ b) != 0)),
        s_lshl_b32 => op2!(|a: u32, b: u32| (a << (b & 31), a << (b & 31) != 0)),
        s_lshr_b32 => op2!(|a: u32, b: u32| (a >> (b & 31), a >> (b & 31) != 0)),
        s_ashr_i32 => op2!(|a: u32, b: u32| {
            let r = ((a as i32) >> (b & 31)) as u32;
            (r, r != 0)
        }),
        s_lshl_b64 | s_lshr_b64 | s_ashr_i64 => {
            let a = a64(w);
            let s = b32(w) & 63;
            let r = match i.op {
                s_lshl_b64 => a << s,
                s_lshr_b64 => a >> s,
                _ => ((a as i64) >> s) as u64,
            };
            w.set_s64(d, r);
            w.scc = r != 0;
        }
        s_lshl1_add_u32 | s_lshl2_add_u32 | s_lshl3_add_u32 | s_lshl4_add_u32 => {
            let sh = match i.op {
                s_lshl1_add_u32 => 1,
                s_lshl2_add_u32 => 2,
                s_lshl3_add_u32 => 3,
                _ => 4,
            };
            let r = ((a32(w) as u64) << sh) + b32(w) as u64;
            w.set_s(d, r as u32);
            w.scc = r >> 32 != 0;
        }
        s_bfm_b32 => {
            let r = ((1u64 << (a32(w) & 31)) - 1) as u32;
            w.set_s(d, r.wrapping_shl(b32(w) & 31));
        }
        s_bfm_b64 => {
            let r = ((1u128 << (a32(w) & 63)) - 1) as u64;
            w.set_s64(d, r.wrapping_shl(b32(w) & 63));
        }
        s_mul_i32 => w.set_s(d, a32(w).wrapping_mul(b32(w))),
        s_mul_hi_u32 => w.set_s(d, ((a32(w) as u64 * b32(w) as u64) >> 32) as u32),
        s_mul_hi_i32 => w.set_s(d, ((a32(w) as i32 as i64 * b32(w) as i32 as i64) >> 32) as u32),
        s_bfe_u32 | s_bfe_i32 => {
            let (a, b) = (a32(w), b32(w));
            let off = b & 31;
            let width = (b >> 16) & 0x7f;
            let r = if width == 0 {
                0
            } else {
                let v = a >> off;
                let width = width.min(32);
                if i.op == s_bfe_i32 {
                    sext(v, width) as u32
                } else if width == 32 {
                    v
                } else {
                    v & ((1 << width) - 1)
                }
            };
            w.set_s(d, r);
            w.scc = r != 0;
        }
        s_bfe_u64 | s_bfe_i64 => {
            let (a, b) = (a64(w), b32(w));
            let off = b & 63;
            let width = ((b >> 16) & 0x7f).min(64);
            let v = a >> off;
            let r = if width == 0 {
                0
            } else if width == 64 {
                v
            } else if i.op == s_bfe_i64 {
                (((v << (64 - width)) as i64) >> (64 - width)) as u64
            } else {
                v & ((1 << width) - 1)
            };
            w.set_s64(d, r);
            w.scc = r != 0;
        }
        s_absdiff_i32 => op2!(|a: u32, b: u32| {
            let r = (a as i32 as i64 - b as i32 as i64).unsigned_abs() as u32;
            (r, r != 0)
        }),
        s_pack_ll_b32_b16 => w.set_s(d, (a32(w) & 0xffff) | b32(w) << 16),
        s_pack_lh_b32_b16 => w.set_s(d, (a32(w) & 0xffff) | (b32(w) & 0xffff_0000)),
        s_pack_hh_b32_b16 => w.set_s(d, a32(w) >> 16 | (b32(w) & 0xffff_0000)),
        // SOPK
        s_movk_i32 => w.set_s(d, i.simm16 as i16 as i32 as u32),
        s_cmovk_i32 => {
            if w.scc {
                w.set_s(d, i.simm16 as i16 as i32 as u32)
            }
        }
        s_cmpk_eq_i32 => cmpk!(i32, |a, b| a == b),
        s_cmpk_lg_i32 => cmpk!(i32, |a, b| a != b),
        s_cmpk_gt_i32 => cmpk!(i32, |a, b| a > b),
        s_cmpk_ge_i32 => cmpk!(i32, |a, b| a >= b),
        s_cmpk_lt_i32 => cmpk!(i32, |a, b| a < b),
        s_cmpk_le_i32 => cmpk!(i32, |a, b| a <= b),
        s_cmpk_eq_u32 => cmpk!(u32, |a, b| a == b),
        s_cmpk_lg_u32 => cmpk!(u32, |a, b| a != b),
        s_cmpk_gt_u32 => cmpk!(u32, |a, b| a > b),
        s_cmpk_ge_u32 => cmpk!(u32, |a, b| a >= b),
        s_cmpk_lt_u32 => cmpk!(u32, |a, b| a < b),
        s_cmpk_le_u32 => cmpk!(u32, |a, b| a <= b),
        s_addk_i32 => {
            let a = w.s[d & 0xff] as i32;
            let (r, o) = a.overflowing_add(i.simm16 as i16 as i32);
            w.set_s(d, r as u32);
            w.scc = o;
        }
        s_mulk_i32 => {
            let a = w.s[d & 0xff] as i32;
            w.set_s(d, a.wrapping_mul(i.simm16 as i16 as i32) as u32);
        }
        s_getreg_b32 => {
            let id = i.simm16 & 0x3f;
            let off = (i.simm16 >> 6) & 31;
            let size = ((i.simm16 >> 11) & 31) + 1;
            let v: u32 = match id {
                HW_REG_MODE => w.mode,
                HW_REG_STATUS => status(w),
                HW_REG_TRAPSTS | HW_REG_IB_STS => 0,
                HW_REG_HW_ID => env.hw_id,
                HW_REG_GPR_ALLOC => env.gpr_alloc,
                HW_REG_LDS_ALLOC => env.lds_alloc,
                HW_REG_SH_MEM_BASES => {
                    ((crate::wave::SHARED_BASE >> 48) as u32) << 16 | (crate::wave::PRIVATE_BASE >> 48) as u32
                }
                _ => return Err(unsupported(i, pc, &format!("hwreg {id}"))),
            };
            let v = v >> off;
            w.set_s(d, if size >= 32 { v } else { v & ((1 << size) - 1) });
        }
        s_setreg_b32 | s_setreg_imm32_b32 => {
            let id = i.simm16 & 0x3f;
            let off = (i.simm16 >> 6) & 31;
            let size = ((i.simm16 >> 11) & 31) + 1;
            let v = if i.op == s_setreg_b32 { w.s[d & 0xff] } else { a32(w) };
            let mask = (if size >= 32 { u32::MAX } else { (1 << size) - 1 }) << off;
            match id {
                HW_REG_MODE => w.mode = (w.mode & !mask) | ((v << off) & mask),
                // Nothing raises exceptions into TRAPSTS, and IB_STS (replay state) is empty: a
                // trap handler restoring them changes nothing.
                HW_REG_TRAPSTS | HW_REG_IB_STS => {}
                // A trap handler restores the STATUS it saved: SCC is the writable part that
                // matters here (PRIV ends with s_rfe_b64).
                HW_REG_STATUS => {
                    if mask & 1 != 0 {
                        w.scc = (v << off) & 1 != 0;
                    }
                }
                _ => return Err(unsupported(i, pc, &format!("s_setreg hwreg {id}"))),
            }
        }
        // SOP1
        s_mov_b32 => w.set_s(d, a32(w)),
        s_mov_b64 => w.set_s64(d, a64(w)),
        s_cmov_b32 => {
            if w.scc {
                w.set_s(d, a32(w))
            }
        }
        s_cmov_b64 => {
            if w.scc {
                w.set_s64(d, a64(w))
            }
        }
        s_not_b32 => {
            let r = !a32(w);
            w.set_s(d, r);
            w.scc = r != 0;
        }
        s_not_b64 => {
            let r = !a64(w);
            w.set_s64(d, r);
            w.scc = r != 0;
        }
        s_wqm_b64 => {
            let a = a64(w);
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (q * 4)) & 0xf != 0 {
                    r |= 0xf << (q * 4);
                }
            }
            w.set_s64(d, r);
            w.scc = r != 0;
        }
        s_bitreplicate_b64_b32 => {
            let a = a32(w) as u64;
            let r = (0..32).fold(0u64, |r, k| r | (((a >> k) & 1) * (3 << (2 * k))));
            w.set_s64(d, r);
        }
        s_brev_b32 => w.set_s(d, a32(w).reverse_bits()),
        s_brev_b64 => w.set_s64(d, a64(w).reverse_bits()),
        s_bcnt0_i32_b32 | s_bcnt1_i32_b32 | s_bcnt0_i32_b64 | s_bcnt1_i32_b64 => {
            let r = match i.op {
                s_bcnt0_i32_b32 => a32(w).count_zeros(),
                s_bcnt1_i32_b32 => a32(w).count_ones(),
                s_bcnt0_i32_b64 => a64(w).count_zeros(),
                _ => a64(w).count_ones(),
            };
            w.set_s(d, r);
            w.scc = r != 0;
        }
        s_ff0_i32_b32 => w.set_s(d, ff(!a32(w) as u64, 32)),
        s_ff1_i32_b32 => w.set_s(d, ff(a32(w) as u64, 32)),
        s_ff0_i32_b64 => w.set_s(d, ff(!a64(w), 64)),
        s_ff1_i32_b64 => w.set_s(d, ff(a64(w), 64)),
        s_flbit_i32_b32 => {
            let a = a32(w);
            w.set_s(d, if a == 0 { u32::MAX } else { a.leading_zeros() });
        }
        s_flbit_i32_b64 => {
            let a = a64(w);
            w.set_s(d, if a == 0 { u32::MAX } else { a.leading_zeros() });
        }
        s_flbit_i32 => {
            let a = a32(w) as i32;
            let r = if a == 0 || a == -1 { u32::MAX } else { (a ^ (a >> 31)).leading_zeros() };
            w.set_s(d, r);
        }
        s_sext_i32_i8 => w.set_s(d, a32(w) as i8 as i32 as u32),
        s_sext_i32_i16 => w.set_s(d, a32(w) as i16 as i32 as u32),
        s_bitset0_b32 => w.set_s(d, w.s[d & 0xff] & !(1 << (a32(w) & 31))),
        s_bitset1_b32 => w.set_s(d, w.s[d & 0xff] | 1 << (a32(w) & 31)),
        s_bitset0_b64 => w.set_s64(d, w.sgpr64(d) & !(1u64 << (a32(w) & 63))),
        s_bitset1_b64 => w.set_s64(d, w.sgpr64(d) | 1u64 << (a32(w) & 63)),
        s_abs_i32 => {
            let r = (a32(w) as i32).wrapping_abs() as u32;
            w.set_s(d, r);
            w.scc = r != 0;
        }
        s_getpc_b64 => w.set_s64(d, pc + 4),
        s_setpc_b64 => return Ok(Flow::Jump(a64(w))),
        s_swappc_b64 => {
            let target = a64(w);
            w.set_s64(d, pc + 4);
            return Ok(Flow::Jump(target));
        }
        s_and_saveexec_b64 => saveexec!(|s: u64, e: u64| s & e),
        s_or_saveexec_b64 => saveexec!(|s: u64, e: u64| s | e),
        s_xor_saveexec_b64 => saveexec!(|s: u64, e: u64| s ^ e),
        s_andn2_saveexec_b64 => saveexec!(|s: u64, e: u64| s & !e),
        s_orn2_saveexec_b64 => saveexec!(|s: u64, e: u64| s | !e),
        s_nand_saveexec_b64 => saveexec!(|s: u64, e: u64| !(s & e)),
        s_nor_saveexec_b64 => saveexec!(|s: u64, e: u64| !(s | e)),
        s_xnor_saveexec_b64 => saveexec!(|s: u64, e: u64| !(s ^ e)),
        s_andn1_saveexec_b64 => saveexec!(|s: u64, e: u64| !s & e),
        s_orn1_saveexec_b64 => saveexec!(|s: u64, e: u64| !s | e),
        s_andn1_wrexec_b64 | s_andn2_wrexec_b64 => {
            let (s, e) = (a64(w), w.exec());
            let r = if i.op == s_andn1_wrexec_b64 { !s & e } else { s & !e };
            w.set_exec(r);
            w.set_s64(d, r);
            w.scc = r != 0;
        }
        s_movrels_b32 => {
            let idx = (i.src[0], w.s[M0] as usize);
            if let crate::decode::Src::S(s) = idx.0 {
                w.set_s(d, w.s[(s as usize + idx.1) & 0xff]);
            }
        }
        s_movreld_b32 => {
            let v = a32(w);
            w.set_s(d + w.s[M0] as usize, v);
        }
        // SOPC
        s_cmp_eq_i32 | s_cmp_eq_u32 => cmp!(u32, |a, b| a == b),
        s_cmp_lg_i32 | s_cmp_lg_u32 => cmp!(u32, |a, b| a != b),
        s_cmp_gt_i32 => cmp!(i32, |a, b| a > b),
        s_cmp_ge_i32 => cmp!(i32, |a, b| a >= b),
        s_cmp_lt_i32 => cmp!(i32, |a, b| a < b),
        s_cmp_le_i32 => cmp!(i32, |a, b| a <= b),
        s_cmp_gt_u32 => cmp!(u32, |a, b| a > b),
        s_cmp_ge_u32 => cmp!(u32, |a, b| a >= b),
        s_cmp_lt_u32 => cmp!(u32, |a, b| a < b),
        s_cmp_le_u32 => cmp!(u32, |a, b| a <= b),
        s_cmp_eq_u64 => w.scc = a64(w) == b64(w),
        s_cmp_lg_u64 => w.scc = a64(w) != b64(w),
        s_bitcmp0_b32 => w.scc = (a32(w) >> (b32(w) & 31)) & 1 == 0,
        s_bitcmp1_b32 => w.scc = (a32(w) >> (b32(w) & 31)) & 1 == 1,
        s_bitcmp0_b64 => w.scc = (a64(w) >> (b32(w) & 63)) & 1 == 0,
        s_bitcmp1_b64 => w.scc = (a64(w) >> (b32(w) & 63)) & 1 == 1,
        // SOPP
        s_nop | s_waitcnt | s_setprio | s_icache_inv | s_incperflevel | s_decperflevel | s_ttracedata | s_setkill
        | s_wakeup => {}
        s_sleep => return Ok(Flow::Yield),
        s_endpgm | s_endpgm_saved | s_sethalt => {
            w.status = Status::Done;
            return Ok(Flow::End);
        }
        s_trap => {
            let id = (i.simm16 & 0xff) as u32;
            let Some(t) = env.trap else {
                return Err(ExecError::Invalid(format!("s_trap {id} at pc {pc:#x} (no trap handler)")));
            };
            if t.tba == 0 || id == 0 || w.trap_mode {
                // The first-level handler's L_TRAP_CASE: step over the s_trap.
                return Ok(Flow::Next);
            }
            return Ok(Flow::Jump(enter_trap(w, t, pc, id << 16)));
        }
        s_rfe_b64 => {
            w.trap_mode = false;
            if std::mem::take(&mut w.in_host_trap) {
                if let Some(h) = env.trap.and_then(|t| t.host_trap.as_ref()) {
                    (h.returned)();
                }
            }
            return Ok(Flow::Jump(a64(w) & 0xffff_ffff_ffff));
        }
        s_sendmsg | s_sendmsghalt => {
            match i.simm16 & 0xf {
                MSG_INTERRUPT if i.op == s_sendmsg => return Ok(Flow::Interrupt(w.s[M0] & 0xff_ffff, w.trap_mode)),
                // The SQ answers in EXEC_LO: the doorbell id, bit 31 clear once it is there.
                MSG_GET_DOORBELL => w.s[EXEC] = env.trap.map_or(0, |t| t.doorbell_id) & 0x3ff,
                // MSG_DEALLOC_VGPRS / GS messages mean nothing to a compute wave.
                _ => {}
            }
            // A halt stops it.
            if i.op == s_sendmsghalt {
                w.status = Status::Done;
                return Ok(Flow::End);
            }
        }
        s_barrier => return Ok(Flow::Barrier),
        s_branch => return Ok(branch(i, pc)),
        s_cbranch_scc0 if !w.scc => return Ok(branch(i, pc)),
        s_cbranch_scc1 if w.scc => return Ok(branch(i, pc)),
        s_cbranch_vccz if w.vcc() == 0 => return Ok(branch(i, pc)),
        s_cbranch_vccnz if w.vcc() != 0 => return Ok(branch(i, pc)),
        s_cbranch_execz if w.exec() == 0 => return Ok(branch(i, pc)),
        s_cbranch_execnz if w.exec() != 0 => return Ok(branch(i, pc)),
        s_cbranch_scc0 | s_cbranch_scc1 | s_cbranch_vccz | s_cbranch_vccnz | s_cbranch_execz | s_cbranch_execnz => {}
        s_cbranch_cdbgsys | s_cbranch_cdbguser | s_cbranch_cdbgsys_or_user | s_cbranch_cdbgsys_and_user => {}
        _ => return Err(unsupported(i, pc, "")),
    }
    let _ = EXEC;
    Ok(Flow::Next)
}

/// Index of the first set bit, or -1.
fn ff(v: u64, _bits: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v.trailing_zeros()
    }
}
