//! Instruction decoding: one machine instruction (1 to 3 dwords) into an [`Inst`], fields named
//! as the MI200 ISA guide's microcode formats name them (GFX9 encodings).

use crate::optab::{self, Op};

/// The microcode format an instruction was encoded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
}

impl Enc {
    pub fn name(self) -> &'static str {
        match self {
            Enc::Sop2 => "SOP2",
            Enc::Sopk => "SOPK",
            Enc::Sop1 => "SOP1",
            Enc::Sopc => "SOPC",
            Enc::Sopp => "SOPP",
            Enc::Smem => "SMEM",
            Enc::Vop1 => "VOP1",
            Enc::Vop2 => "VOP2",
            Enc::Vopc => "VOPC",
            Enc::Vop3 => "VOP3",
            Enc::Vop3p => "VOP3P",
            Enc::Ds => "DS",
            Enc::Flat => "FLAT",
            Enc::Global => "GLOBAL",
            Enc::Scratch => "SCRATCH",
            Enc::Mubuf => "MUBUF",
        }
    }
}

/// A source operand, as its 9-bit (VALU) or 8-bit (SALU) operand code names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// SGPR, or a special scalar register at its operand code (VCC 106, M0 124, EXEC 126, ...).
    S(u8),
    /// VGPR (0..=255) or AGPR (256..=511).
    V(u16),
    /// An inline constant, by operand code (128..=248).
    Inline(u8),
    /// A 32-bit literal that followed the instruction (or the K of madmk/madak).
    Lit(u32),
    /// The aperture and status pseudo-registers (235..=239, 251..=253), by operand code.
    Special(u8),
}

impl Default for Src {
    fn default() -> Self {
        Src::Inline(128)
    }
}

/// SDWA sub-dword selection (GFX9 `SDWA` second dword).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sdwa {
    pub dst_sel: u8,
    pub dst_unused: u8,
    pub src_sel: [u8; 2],
    pub sext: [bool; 2],
}

/// DPP lane movement (GFX9 `DPP` second dword).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dpp {
    pub ctrl: u16,
    pub bound_ctrl: bool,
    pub bank_mask: u8,
    pub row_mask: u8,
}

/// One decoded instruction. Fields not used by its format are zero.
#[derive(Clone, Debug)]
pub struct Inst {
    pub op: Op,
    pub enc: Enc,
    /// Size in bytes (4, 8 or 12).
    pub size: u8,
    /// The raw first two dwords (for error reports).
    pub raw: u64,
    /// Destination: SGPR code (scalar formats, VOPC/VOP3 compare results) or VGPR index.
    pub dst: u16,
    /// Carry-out / compare destination SGPR pair code (VOP2 carry ops, VOPC: VCC = 106).
    pub sdst: u8,
    pub src: [Src; 3],
    /// SOPK/SOPP 16-bit immediate.
    pub simm16: u16,
    /// VOP3 input modifiers, one bit per source.
    pub abs: u8,
    pub neg: u8,
    pub neg_hi: u8,
    pub opsel: u8,
    pub opsel_hi: u8,
    pub clamp: bool,
    pub omod: u8,
    pub sdwa: Option<Sdwa>,
    pub dpp: Option<Dpp>,
    /// Memory: immediate offset (SMEM, FLAT, MUBUF offset, DS offset0).
    pub offset: i32,
    /// DS offset1.
    pub offset1: u8,
    /// Memory: VGPR address, data, second data.
    pub addr: u16,
    pub data: u16,
    pub data1: u16,
    /// Memory: scalar base (SMEM sbase SGPR index, FLAT saddr code, MUBUF srsrc SGPR index).
    pub sbase: u8,
    /// SMEM soffset / MUBUF soffset operand code; `None` for SMEM when `imm`.
    pub soffset: Option<u8>,
    pub glc: bool,
    pub offen: bool,
    pub idxen: bool,
    pub gds: bool,
    /// Compares: the parsed condition (from the mnemonic).
    pub cmp: Option<Cmp>,
    /// Memory instructions: what they do (from the mnemonic).
    pub mem: Option<MemKind>,
}

impl Inst {
    fn new(op: Op, enc: Enc, raw: u64, size: u8) -> Inst {
        Inst {
            op,
            enc,
            size,
            raw,
            dst: 0,
            sdst: 0,
            src: [Src::default(); 3],
            simm16: 0,
            abs: 0,
            neg: 0,
            neg_hi: 0,
            opsel: 0,
            opsel_hi: 0,
            clamp: false,
            omod: 0,
            sdwa: None,
            dpp: None,
            offset: 0,
            offset1: 0,
            addr: 0,
            data: 0,
            data1: 0,
            sbase: 0,
            soffset: None,
            glc: false,
            offen: false,
            idxen: false,
            gds: false,
            cmp: None,
            mem: None,
        }
    }
}

/// Why an instruction could not be decoded: the encoding (first dwords), its format and what
/// was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub encoding: u64,
    pub what: String,
}

/// The code of VCC's low half.
pub const VCC: u8 = 106;

fn src9(code: u32, lit: &mut Option<u32>, need_lit: &mut bool) -> Src {
    match code {
        0..=127 => Src::S(code as u8),
        128..=208 | 240..=248 => Src::Inline(code as u8),
        255 => {
            *need_lit = true;
            Src::Lit(lit.unwrap_or(0))
        }
        256..=511 => Src::V((code - 256) as u16),
        235..=239 | 251..=253 => Src::Special(code as u8),
        // Reserved codes (and DPP/SDWA markers where they are not allowed).
        c => Src::Special(c as u8),
    }
}

/// Whether a source code is one the hardware defines (reserved codes fail at run time).
pub fn src_valid(s: Src) -> bool {
    !matches!(s, Src::Special(c) if !matches!(c, 235..=239 | 251..=253))
}

/// Decodes the instruction whose first dwords are `w` (`w[1]`, `w[2]` may be garbage when
/// the instruction is shorter). Returns the instruction (its `size` says how many dwords it
/// took).
pub fn decode(w: [u32; 3]) -> Result<Inst, DecodeError> {
    let mut i = decode_fields(w)?;
    if let Some(s) = i.src.iter().find(|s| !src_valid(**s)) {
        return Err(DecodeError {
            encoding: i.raw,
            what: format!("{} {} with reserved operand {s:?}", i.enc.name(), i.op.name()),
        });
    }
    let name = i.op.name();
    if name.starts_with("v_cmp") {
        i.cmp = parse_cmp(name);
    }
    if matches!(i.enc, Enc::Flat | Enc::Global | Enc::Scratch | Enc::Mubuf | Enc::Ds) {
        i.mem = parse_mem(name);
    }
    Ok(i)
}

/// A VALU compare, parsed from its mnemonic (`v_cmp[x]_<cond>_<type>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmp {
    /// Condition: for integers F, LT, EQ, LE, GT, NE, GE, T (0..=7); for floats the 16 IEEE
    /// predicates F LT EQ LE GT LG GE O U NGE NLG NGT NLE NEQ NLT TRU (0..=15); `CLASS` = 16.
    pub cond: u8,
    pub ty: CmpTy,
    /// `v_cmpx`: also writes EXEC.
    pub x: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpTy {
    F16,
    F32,
    F64,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

fn parse_cmp(name: &str) -> Option<Cmp> {
    let (x, rest) =
        if let Some(r) = name.strip_prefix("v_cmpx_") { (true, r) } else { (false, name.strip_prefix("v_cmp_")?) };
    let (c, t) = rest.rsplit_once('_')?;
    let ty = match t {
        "f16" => CmpTy::F16,
        "f32" => CmpTy::F32,
        "f64" => CmpTy::F64,
        "i16" => CmpTy::I16,
        "u16" => CmpTy::U16,
        "i32" => CmpTy::I32,
        "u32" => CmpTy::U32,
        "i64" => CmpTy::I64,
        "u64" => CmpTy::U64,
        _ => return None,
    };
    let float = matches!(ty, CmpTy::F16 | CmpTy::F32 | CmpTy::F64);
    let cond = if float {
        const F: [&str; 17] = [
            "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru", "class",
        ];
        F.iter().position(|n| *n == c)?
    } else {
        const I: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];
        I.iter().position(|n| *n == c)?
    } as u8;
    Some(Cmp { cond, ty, x })
}

/// What a memory instruction does, parsed from its mnemonic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    /// Load `bytes` (1, 2, 4, 8, 12, 16); `sext` for signed sub-dword loads; `d16`: 0 whole
    /// dwords, 1 into the low 16 bits, 2 into the high 16 bits (the other half kept).
    Load {
        bytes: u8,
        sext: bool,
        d16: u8,
    },
    /// Store `bytes`; `hi`: store the high 16 bits of the data dword (`*_d16_hi`).
    Store {
        bytes: u8,
        hi: bool,
    },
    /// Atomic read-modify-write of 4 or 8 bytes; `rtn`: returns the old value.
    Atomic {
        op: AtomicOp,
        bytes: u8,
        rtn: bool,
    },
    /// LDS-only two-address forms (`ds_read2*`/`ds_write2*`); `st64`: offsets in 64-element units.
    Read2 {
        bytes: u8,
        st64: bool,
    },
    Write2 {
        bytes: u8,
        st64: bool,
    },
    /// `ds_bpermute_b32` / `ds_permute_b32` / `ds_swizzle_b32`.
    Bpermute,
    Permute,
    Swizzle,
    /// Cache maintenance (`buffer_wbinvl1*`, `buffer_invl2`, ...): no effect here.
    Nop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Swap,
    CmpSwap,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    AddF32,
    AddF64,
    MinF64,
    MaxF64,
    PkAddF16,
}

/// An SMEM atomic's operation and width: `s_atomic_add_x2`, `s_buffer_atomic_cmpswap`.
pub(crate) fn smem_atomic(name: &str) -> Option<(AtomicOp, u8)> {
    let t = name.strip_prefix("s_atomic_").or_else(|| name.strip_prefix("s_buffer_atomic_"))?;
    match parse_mem(&format!("global_atomic_{t}"))? {
        MemKind::Atomic { op, bytes, .. } => Some((op, bytes)),
        _ => None,
    }
}

fn parse_mem(name: &str) -> Option<MemKind> {
    let (_, rest) = name.split_once('_')?;
    if name.starts_with("buffer_wbinvl1") || name.starts_with("buffer_inv") || name == "buffer_wbl2" {
        return Some(MemKind::Nop);
    }
    match rest {
        "bpermute_b32" => return Some(MemKind::Bpermute),
        "permute_b32" => return Some(MemKind::Permute),
        "swizzle_b32" => return Some(MemKind::Swizzle),
        _ => {}
    }
    let size = |t: &str| -> Option<u8> {
        Some(match t {
            "ubyte" | "sbyte" | "byte" | "u8" | "i8" | "b8" => 1,
            "ushort" | "sshort" | "short" | "u16" | "i16" | "b16" => 2,
            "dword" | "b32" => 4,
            "dwordx2" | "b64" => 8,
            "dwordx3" | "b96" => 12,
            "dwordx4" | "b128" => 16,
            _ => return None,
        })
    };
    if let Some(t) = rest.strip_prefix("load_").or_else(|| rest.strip_prefix("read_")) {
        let (t, d16) = if let Some(t) = t.strip_suffix("_d16_hi") {
            (t, 2)
        } else if let Some(t) = t.strip_suffix("_d16") {
            (t, 1)
        } else {
            (t, 0)
        };
        let sext = matches!(t, "sbyte" | "sshort" | "i8" | "i16");
        return Some(MemKind::Load { bytes: size(t)?, sext, d16 });
    }
    if let Some(t) = rest.strip_prefix("store_").or_else(|| rest.strip_prefix("write_")) {
        let (t, hi) = match t.strip_suffix("_d16_hi") {
            Some(t) => (t, true),
            None => (t, false),
        };
        return Some(MemKind::Store { bytes: size(t)?, hi });
    }
    for (p, read) in [("read2", true), ("write2", false)] {
        if let Some(t) = rest.strip_prefix(p) {
            let (st64, t) = match t.strip_prefix("st64_") {
                Some(t) => (true, t),
                None => (false, t.strip_prefix('_')?),
            };
            let bytes = size(t)?;
            return Some(if read { MemKind::Read2 { bytes, st64 } } else { MemKind::Write2 { bytes, st64 } });
        }
    }
    // Atomics: `global_atomic_add_x2`, `ds_add_rtn_u32`, `ds_cmpst_b64`, `buffer_atomic_add`.
    let (t, ds) = match rest.strip_prefix("atomic_") {
        Some(t) => (t, false),
        None => (rest, true),
    };
    let mut parts: Vec<&str> = t.split('_').collect();
    let mut bytes = 4;
    let mut rtn = !ds;
    if !ds && parts.last() == Some(&"x2") {
        bytes = 8;
        parts.pop();
    }
    if ds {
        match parts.pop()? {
            "u32" | "i32" | "b32" | "f32" => {}
            "u64" | "i64" | "b64" | "f64" => bytes = 8,
            _ => return None,
        }
        if parts.last() == Some(&"rtn") {
            rtn = true;
            parts.pop();
        }
    }
    let op = match parts.join("_").as_str() {
        "swap" | "wrxchg" => AtomicOp::Swap,
        "cmpswap" | "cmpst" => AtomicOp::CmpSwap,
        "add" => AtomicOp::Add,
        "sub" => AtomicOp::Sub,
        "smin" | "min" if ds || parts[0] == "smin" => AtomicOp::SMin,
        "umin" => AtomicOp::UMin,
        "smax" | "max" if ds || parts[0] == "smax" => AtomicOp::SMax,
        "umax" => AtomicOp::UMax,
        "and" => AtomicOp::And,
        "or" => AtomicOp::Or,
        "xor" => AtomicOp::Xor,
        "inc" => AtomicOp::Inc,
        "dec" => AtomicOp::Dec,
        "add_f32" => AtomicOp::AddF32,
        "add_f64" => AtomicOp::AddF64,
        "min_f64" => AtomicOp::MinF64,
        "max_f64" => AtomicOp::MaxF64,
        "pk_add_f16" => AtomicOp::PkAddF16,
        _ => return None,
    };
    // ds_add_f32 etc. are float forms spelled by type.
    let op = match (ds, op, name.ends_with("_f32"), name.ends_with("_f64")) {
        (true, AtomicOp::Add, true, _) => AtomicOp::AddF32,
        (true, AtomicOp::Add, _, true) => AtomicOp::AddF64,
        (true, AtomicOp::SMin, _, true) => AtomicOp::MinF64,
        (true, AtomicOp::SMax, _, true) => AtomicOp::MaxF64,
        (true, AtomicOp::SMin | AtomicOp::SMax, true, _) => return None,
        (true, AtomicOp::SMin, _, _) if name.contains("_u") => AtomicOp::UMin,
        (true, AtomicOp::SMax, _, _) if name.contains("_u") => AtomicOp::UMax,
        (_, op, _, _) => op,
    };
    if op == AtomicOp::AddF64 || op == AtomicOp::MinF64 || op == AtomicOp::MaxF64 {
        bytes = 8;
    }
    Some(MemKind::Atomic { op, bytes, rtn })
}

fn decode_fields(w: [u32; 3]) -> Result<Inst, DecodeError> {
    let w0 = w[0];
    let raw = w0 as u64 | (w[1] as u64) << 32;
    let err = |what: String| DecodeError { encoding: raw, what };
    let unknown = |enc: Enc, op: u32| err(format!("{} opcode {op}", enc.name()));
    let look = |tab: &[Option<Op>], enc: Enc, op: u32| -> Result<Op, DecodeError> {
        tab.get(op as usize).copied().flatten().ok_or_else(|| unknown(enc, op))
    };
    // Scalar formats first: their prefixes nest (SOPP/SOPC/SOP1 inside SOPK inside SOP2).
    if w0 >> 30 == 0b10 {
        let mut lit;
        let mut need = false;
        let mut inst;
        if w0 >> 23 == 0b1_0111_1111 {
            let op = (w0 >> 16) & 0x7f;
            inst = Inst::new(look(&optab::SOPP, Enc::Sopp, op)?, Enc::Sopp, raw, 4);
            inst.simm16 = w0 as u16;
            return Ok(inst);
        } else if w0 >> 23 == 0b1_0111_1110 {
            let op = (w0 >> 16) & 0x7f;
            inst = Inst::new(look(&optab::SOPC, Enc::Sopc, op)?, Enc::Sopc, raw, 4);
            lit = Some(w[1]);
            inst.src[0] = src9(w0 & 0xff, &mut lit, &mut need);
            inst.src[1] = src9((w0 >> 8) & 0xff, &mut lit, &mut need);
        } else if w0 >> 23 == 0b1_0111_1101 {
            let op = (w0 >> 8) & 0xff;
            inst = Inst::new(look(&optab::SOP1, Enc::Sop1, op)?, Enc::Sop1, raw, 4);
            lit = Some(w[1]);
            inst.src[0] = src9(w0 & 0xff, &mut lit, &mut need);
            inst.dst = ((w0 >> 16) & 0x7f) as u16;
        } else if w0 >> 28 == 0b1011 {
            let op = (w0 >> 23) & 0x1f;
            inst = Inst::new(look(&optab::SOPK, Enc::Sopk, op)?, Enc::Sopk, raw, 4);
            inst.dst = ((w0 >> 16) & 0x7f) as u16;
            inst.simm16 = w0 as u16;
            if inst.op == Op::s_setreg_imm32_b32 {
                inst.src[0] = Src::Lit(w[1]);
                inst.size = 8;
            }
            return Ok(inst);
        } else {
            let op = (w0 >> 23) & 0x7f;
            inst = Inst::new(look(&optab::SOP2, Enc::Sop2, op)?, Enc::Sop2, raw, 4);
            lit = Some(w[1]);
            inst.src[0] = src9(w0 & 0xff, &mut lit, &mut need);
            inst.src[1] = src9((w0 >> 8) & 0xff, &mut lit, &mut need);
            inst.dst = ((w0 >> 16) & 0x7f) as u16;
        }
        if need {
            inst.size = 8;
        }
        let _ = lit;
        return Ok(inst);
    }
    if w0 >> 31 == 0 {
        // VOP2 / VOP1 / VOPC (32-bit VALU), possibly SDWA/DPP/literal.
        let mut lit = Some(w[1]);
        let mut need = false;
        let top = (w0 >> 25) & 0x3f;
        let mut inst = if top == 0x3f {
            let op = (w0 >> 9) & 0xff;
            let mut i = Inst::new(look(&optab::VOP1, Enc::Vop1, op)?, Enc::Vop1, raw, 4);
            i.dst = ((w0 >> 17) & 0xff) as u16;
            i
        } else if top == 0x3e {
            let op = (w0 >> 17) & 0xff;
            let mut i = Inst::new(look(&optab::VOPC, Enc::Vopc, op)?, Enc::Vopc, raw, 4);
            i.src[1] = Src::V(((w0 >> 9) & 0xff) as u16);
            i.sdst = VCC;
            i
        } else {
            let mut i = Inst::new(look(&optab::VOP2, Enc::Vop2, top)?, Enc::Vop2, raw, 4);
            i.dst = ((w0 >> 17) & 0xff) as u16;
            i.src[1] = Src::V(((w0 >> 9) & 0xff) as u16);
            i.sdst = VCC;
            i
        };
        let s0 = w0 & 0x1ff;
        match s0 {
            0xf9 => {
                let d = w[1];
                inst.size = 8;
                inst.src[0] =
                    if d & (1 << 23) != 0 { src9(d & 0xff, &mut None, &mut need) } else { Src::V((d & 0xff) as u16) };
                if (d >> 23) & 1 != 0 && matches!(inst.src[0], Src::Lit(_)) {
                    return Err(err("SDWA literal".into()));
                }
                if inst.enc == Enc::Vopc {
                    if d & (1 << 15) != 0 {
                        inst.sdst = ((d >> 8) & 0x7f) as u8;
                    }
                    inst.clamp = d & (1 << 13) != 0;
                } else {
                    inst.clamp = d & (1 << 13) != 0;
                    inst.omod = ((d >> 14) & 3) as u8;
                }
                if d & (1 << 31) != 0 {
                    if let Src::V(r) = inst.src[1] {
                        inst.src[1] = src9(r as u32, &mut None, &mut need);
                    }
                }
                inst.neg = ((d >> 20) & 1 | ((d >> 28) & 1) << 1) as u8;
                inst.abs = ((d >> 21) & 1 | ((d >> 29) & 1) << 1) as u8;
                if (d >> 8) & 7 == 7 || (d >> 16) & 7 == 7 || (d >> 24) & 7 == 7 {
                    return Err(err("SDWA select 7 (reserved)".into()));
                }
                inst.sdwa = Some(Sdwa {
                    dst_sel: if inst.enc == Enc::Vopc { 6 } else { ((d >> 8) & 7) as u8 },
                    dst_unused: if inst.enc == Enc::Vopc { 0 } else { ((d >> 11) & 3) as u8 },
                    src_sel: [((d >> 16) & 7) as u8, ((d >> 24) & 7) as u8],
                    sext: [d & (1 << 19) != 0, d & (1 << 27) != 0],
                });
                if need {
                    return Err(err("SDWA operand".into()));
                }
            }
            0xfa => {
                let d = w[1];
                inst.size = 8;
                inst.src[0] = Src::V((d & 0xff) as u16);
                inst.neg = ((d >> 20) & 1 | ((d >> 22) & 1) << 1) as u8;
                inst.abs = ((d >> 21) & 1 | ((d >> 23) & 1) << 1) as u8;
                inst.dpp = Some(Dpp {
                    ctrl: ((d >> 8) & 0x1ff) as u16,
                    bound_ctrl: d & (1 << 19) != 0,
                    bank_mask: ((d >> 24) & 0xf) as u8,
                    row_mask: ((d >> 28) & 0xf) as u8,
                });
            }
            _ => {
                inst.src[0] = src9(s0, &mut lit, &mut need);
                if need {
                    inst.size = 8;
                }
            }
        }
        // Normalise: carry-in / mask / accumulator / constant K become explicit sources.
        match inst.op {
            Op::v_cndmask_b32 | Op::v_addc_co_u32 | Op::v_subb_co_u32 | Op::v_subbrev_co_u32 => {
                inst.src[2] = Src::S(VCC)
            }
            Op::v_mac_f32 | Op::v_fmac_f32 | Op::v_mac_f16 | Op::v_fmac_f64 | Op::v_pk_fmac_f16 => {
                inst.src[2] = Src::V(inst.dst)
            }
            Op::v_dot2c_f32_f16 | Op::v_dot2c_i32_i16 | Op::v_dot4c_i32_i8 | Op::v_dot8c_i32_i4 => {
                inst.src[2] = Src::V(inst.dst)
            }
            Op::v_madmk_f32 | Op::v_madmk_f16 => {
                if inst.size != 4 {
                    return Err(err("madmk with literal/SDWA/DPP source".into()));
                }
                inst.size = 8;
                inst.src[2] = inst.src[1];
                inst.src[1] = Src::Lit(w[1]);
            }
            Op::v_madak_f32 | Op::v_madak_f16 => {
                if inst.size != 4 {
                    return Err(err("madak with literal/SDWA/DPP source".into()));
                }
                inst.size = 8;
                inst.src[2] = Src::Lit(w[1]);
            }
            _ => {}
        }
        return Ok(inst);
    }
    let w1 = w[1];
    let none = &mut None;
    let mut need = false;
    match w0 >> 26 {
        0b110000 => {
            let op = (w0 >> 18) & 0xff;
            let mut i = Inst::new(look(&optab::SMEM, Enc::Smem, op)?, Enc::Smem, raw, 8);
            i.sbase = ((w0 & 0x3f) << 1) as u8;
            i.dst = ((w0 >> 6) & 0x7f) as u16;
            i.glc = w0 & (1 << 16) != 0;
            let imm = w0 & (1 << 17) != 0;
            let soe = w0 & (1 << 14) != 0;
            // GFX9: a 21-bit signed byte offset when IMM, else SOFFSET (w1[31:25]) or, with
            // SOE, both.
            if imm {
                i.offset = ((w1 << 11) as i32) >> 11;
                if soe {
                    i.soffset = Some((w1 >> 25) as u8);
                }
            } else {
                i.soffset = Some((w1 & 0x7f) as u8);
            }
            Ok(i)
        }
        0b110100 => {
            if (w0 >> 23) & 0x7 == 0b111 {
                let op = (w0 >> 16) & 0x7f;
                let mut i = Inst::new(look(&optab::VOP3P, Enc::Vop3p, op)?, Enc::Vop3p, raw, 8);
                i.dst = (w0 & 0xff) as u16;
                i.neg_hi = ((w0 >> 8) & 7) as u8;
                i.opsel = ((w0 >> 11) & 7) as u8;
                i.opsel_hi = ((w1 >> 27) & 3) as u8 | (((w0 >> 14) & 1) << 2) as u8;
                i.clamp = w0 & (1 << 15) != 0;
                i.neg = (w1 >> 29) as u8;
                for k in 0..3 {
                    i.src[k] = src9((w1 >> (9 * k)) & 0x1ff, none, &mut need);
                }
                if w0 & (1 << 15) != 0 && i.op.name().starts_with("v_mfma") {
                    return Err(unknown(Enc::Vop3p, op));
                }
                if need {
                    return Err(err("VOP3P literal".into()));
                }
                return Ok(i);
            }
            let op = (w0 >> 16) & 0x3ff;
            let mut i = Inst::new(look(&optab::VOP3, Enc::Vop3, op)?, Enc::Vop3, raw, 8);
            i.dst = (w0 & 0xff) as u16;
            i.clamp = w0 & (1 << 15) != 0;
            for k in 0..3 {
                i.src[k] = src9((w1 >> (9 * k)) & 0x1ff, none, &mut need);
            }
            if need {
                return Err(err("VOP3 literal (not on GFX9)".into()));
            }
            i.omod = ((w1 >> 27) & 3) as u8;
            i.neg = (w1 >> 29) as u8;
            let vop3b = matches!(
                i.op,
                Op::v_add_co_u32
                    | Op::v_sub_co_u32
                    | Op::v_subrev_co_u32
                    | Op::v_addc_co_u32
                    | Op::v_subb_co_u32
                    | Op::v_subbrev_co_u32
                    | Op::v_div_scale_f32
                    | Op::v_div_scale_f64
                    | Op::v_mad_u64_u32
                    | Op::v_mad_i64_i32
            );
            if vop3b {
                i.sdst = ((w0 >> 8) & 0x7f) as u8;
            } else {
                i.abs = ((w0 >> 8) & 7) as u8;
                i.opsel = ((w0 >> 11) & 0xf) as u8;
            }
            if op < 256 {
                // A compare: the destination is an SGPR pair.
                i.sdst = (w0 & 0xff) as u8;
            }
            if matches!(i.op, Op::v_mac_f32 | Op::v_fmac_f32 | Op::v_mac_f16 | Op::v_fmac_f64) {
                i.src[2] = Src::V(i.dst);
            }
            Ok(i)
        }
        0b110110 => {
            let op = (w0 >> 17) & 0xff;
            let mut i = Inst::new(look(&optab::DS, Enc::Ds, op)?, Enc::Ds, raw, 8);
            i.offset = (w0 & 0xff) as i32;
            i.offset1 = ((w0 >> 8) & 0xff) as u8;
            i.gds = w0 & (1 << 16) != 0;
            let acc = if w0 & (1 << 25) != 0 { 256 } else { 0 };
            i.addr = (w1 & 0xff) as u16;
            i.data = ((w1 >> 8) & 0xff) as u16 + acc;
            i.data1 = ((w1 >> 16) & 0xff) as u16 + acc;
            i.dst = ((w1 >> 24) & 0xff) as u16 + acc;
            Ok(i)
        }
        0b110111 => {
            let op = (w0 >> 18) & 0x7f;
            let seg = (w0 >> 14) & 3;
            let (tab, enc): (&[Option<Op>], Enc) = match seg {
                0 => (&optab::FLAT, Enc::Flat),
                1 => (&optab::SCRATCH, Enc::Scratch),
                2 => (&optab::GLOBAL, Enc::Global),
                _ => return Err(err("FLAT segment 3".into())),
            };
            let mut i = Inst::new(look(tab, enc, op)?, enc, raw, 8);
            i.offset = if seg == 0 { (w0 & 0xfff) as i32 } else { ((w0 << 19) as i32) >> 19 };
            i.glc = w0 & (1 << 16) != 0;
            let acc = if w1 & (1 << 23) != 0 { 256 } else { 0 };
            i.addr = (w1 & 0xff) as u16;
            i.data = ((w1 >> 8) & 0xff) as u16 + acc;
            i.sbase = ((w1 >> 16) & 0x7f) as u8;
            i.dst = ((w1 >> 24) & 0xff) as u16 + acc;
            Ok(i)
        }
        0b111000 => {
            let op = (w0 >> 18) & 0x7f;
            let mut i = Inst::new(look(&optab::MUBUF, Enc::Mubuf, op)?, Enc::Mubuf, raw, 8);
            i.offset = (w0 & 0xfff) as i32;
            i.offen = w0 & (1 << 12) != 0;
            i.idxen = w0 & (1 << 13) != 0;
            i.glc = w0 & (1 << 14) != 0;
            if w0 & (1 << 16) != 0 {
                return Err(err("MUBUF lds".into()));
            }
            let acc = if w1 & (1 << 23) != 0 { 256 } else { 0 };
            i.addr = (w1 & 0xff) as u16;
            i.data = ((w1 >> 8) & 0xff) as u16 + acc;
            i.dst = i.data;
            i.sbase = (((w1 >> 16) & 0x1f) << 2) as u8;
            i.soffset = Some((w1 >> 24) as u8);
            Ok(i)
        }
        f => Err(err(format!("format {f:#08b} (MTBUF/MIMG/EXP not supported)"))),
    }
}
