//! Per-instruction tests: snippets assembled with `llvm-mc -mcpu=gfx90a`, run as one
//! workgroup of one wave, results stored per lane and checked on the host. Also: random
//! bytes as code must end in an error, never a panic or a hang.

mod common;
use amdgcn_isa::{Dispatch, ExecError, Memory, Options};
use common::VecMem;
use object::{Object, ObjectSection};
use std::process::Command;

fn llvm_mc() -> Option<&'static str> {
    // LLVM 15 comes with Debian's hipcc (its llvm-15 dependency).
    ["/usr/lib/llvm-15/bin/llvm-mc", "llvm-mc"].into_iter().find(|p| Command::new(p).arg("--version").output().is_ok())
}

/// Assembles `src` (gfx90a) and returns the bytes of its .text.
fn assemble(src: &str) -> Option<Vec<u8>> {
    let Some(mc) = llvm_mc() else {
        eprintln!("\n*** SKIPPED: llvm-mc not found (Debian package llvm-15, a hipcc dependency) ***\n");
        return None;
    };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let tag = format!("{:?}-{}", std::thread::current().id(), std::process::id());
    let (s, o) = (dir.join(format!("snip{tag}.s")), dir.join(format!("snip{tag}.o")));
    std::fs::write(&s, src).unwrap();
    let out = Command::new(mc)
        .args(["-arch=amdgcn", "-mcpu=gfx90a", "-filetype=obj", "-o"])
        .arg(&o)
        .arg(&s)
        .output()
        .unwrap();
    assert!(out.status.success(), "llvm-mc: {}", String::from_utf8_lossy(&out.stderr));
    let b = std::fs::read(&o).unwrap();
    let f = object::File::parse(&*b).unwrap();
    let t = f.section_by_name(".text").unwrap().data().unwrap().to_vec();
    Some(t)
}

const KD_VA: u64 = 0x10_0000_0000;
const PRE: &str = "
    s_load_dwordx4 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v100, 2, v0
    global_load_dword v101, v100, s[6:7]
    s_waitcnt vmcnt(0)
";

/// Runs `body` (after a prologue: s[4:5] = output, s[6:7] = input, v0 = lane id,
/// v100 = lane*4, v101 = input[lane]) for one wave of `lanes` work-items. The body stores
/// its results itself; returns `nout` dwords per lane from the output (result k of lane l at
/// `out[k*64 + l]`).
fn run_snippet(body: &str, input: &[u32; 64], lanes: u32, nout: usize) -> Option<Vec<u32>> {
    run_snippet_in(&VecMem::new(), body, input, lanes, nout)
}

/// `run_snippet` in `mem` (which the test may have mapped more memory in).
fn run_snippet_in(mem: &VecMem, body: &str, input: &[u32; 64], lanes: u32, nout: usize) -> Option<Vec<u32>> {
    run_snippet_with(
        mem,
        body,
        input,
        lanes,
        nout,
        Options { max_wave_instructions: Some(100_000), ..Default::default() },
        0,
    )
}

/// `run_snippet_in` with `opts`, as dispatch `dispatch_id` ([`Dispatch::dispatch_id`]).
fn run_snippet_with(
    mem: &VecMem,
    body: &str,
    input: &[u32; 64],
    lanes: u32,
    nout: usize,
    opts: Options,
    dispatch_id: u64,
) -> Option<Vec<u32>> {
    let src = format!("{PRE}{body}\n    s_endpgm\n");
    let code = assemble(&src)?;
    // Kernel descriptor + code on one mapping: code at +256.
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&4096u32.to_le_bytes()); // LDS
    kd[4..8].copy_from_slice(&64u32.to_le_bytes()); // scratch per lane
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    // All VGPRs; f32 and f16/f64 denormals allowed, DX10 clamp and IEEE mode, as clang's HIP
    // kernels have them.
    kd[48..52].copy_from_slice(&(0x3fu32 | 0xf << 16 | 1 << 21 | 1 << 23).to_le_bytes());
    kd[52..56].copy_from_slice(&(2u32 << 1 | 1 << 7 | 1).to_le_bytes()); // 2 user SGPRs, wg id x
    kd[56..58].copy_from_slice(&(1u16 << 3).to_le_bytes()); // kernarg ptr
    let mut img = kd.to_vec();
    img.resize(256, 0);
    img.extend_from_slice(&code);
    write_ro(mem, KD_VA, &img);
    let out = mem.alloc(4 * 64 * nout as u64 + 4096);
    let inp = mem.alloc_with(&input.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    let ka = mem.alloc_with(&[out.to_le_bytes(), inp.to_le_bytes()].concat());
    let d = Dispatch {
        kernel_object: KD_VA,
        kernarg_address: ka,
        grid_size: [lanes, 1, 1],
        workgroup_size: [lanes as u16, 1, 1],
        dispatch_id,
        ..Default::default()
    };
    amdgcn_isa::run_with(mem, &d, 1, &opts).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let b = mem.read_vec(out, 4 * 64 * nout);
    Some(b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
}

/// Maps `b` at `va` (the code and descriptor of a snippet).
fn write_ro(mem: &VecMem, va: u64, b: &[u8]) {
    mem.map(va, b.len() as u64, true);
    mem.write(va, b).unwrap();
}

fn store(k: usize, v: &str) -> String {
    format!("    global_store_dword v100, {v}, s[4:5] offset:{}\n", k * 256)
}

fn lanes_in() -> [u32; 64] {
    std::array::from_fn(|l| (l as u32) * 3 + 1)
}

#[test]
fn dpp_row_shr_quad_perm_bcast() {
    let body = format!(
        "    v_mov_b32 v1, 0
    v_mov_b32 v2, 0
    v_mov_b32 v3, 0
    v_mov_b32 v4, -1
    v_mov_b32_dpp v1, v101 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
    v_mov_b32_dpp v2, v101 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
    v_add_u32_dpp v3, v101, v101 row_bcast:15 row_mask:0xa bank_mask:0xf
    v_mov_b32_dpp v4, v101 wave_shr:1 row_mask:0xf bank_mask:0xf
{}{}{}{}",
        store(0, "v1"),
        store(1, "v2"),
        store(2, "v3"),
        store(3, "v4")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 4) else { return };
    for l in 0..64 {
        let shr = if l % 16 == 0 { 0 } else { inp[l - 1] };
        assert_eq!(o[l], shr, "row_shr lane {l}");
        assert_eq!(o[64 + l], inp[(l & !3) | (3 - (l & 3))], "quad_perm lane {l}");
        let row = l / 16;
        let bc = if row == 1 || row == 3 { inp[row * 16 - 1] + inp[l] } else { 0 };
        assert_eq!(o[128 + l], bc, "row_bcast15 lane {l}");
        let ws = if l == 0 { u32::MAX } else { inp[l - 1] };
        assert_eq!(o[192 + l], ws, "wave_shr lane {l}");
    }
}

#[test]
fn sdwa_selects() {
    let body = format!(
        "    v_mov_b32 v2, 0x11223344
    v_add_u32_sdwa v1, v101, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_2
    v_mov_b32_sdwa v2, v101 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0
    v_mov_b32 v3, 0x80
    v_mov_b32_sdwa v4, sext(v3) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0
{}{}{}",
        store(0, "v1"),
        store(1, "v2"),
        store(2, "v4")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 3) else { return };
    for l in 0..64 {
        assert_eq!(o[l], (inp[l] & 0xff) + 0x22, "byte add lane {l}");
        assert_eq!(o[64 + l], (inp[l] & 0xffff) << 16 | 0x3344, "word_1 preserve lane {l}");
        assert_eq!(o[128 + l], 0xffff_ff80, "sext lane {l}");
    }
}

#[test]
fn packed_and_f64_constants() {
    let body = format!(
        "    v_mov_b32 v2, 0x3c003c00
    v_pk_add_f16 v1, v2, v2
    v_cvt_f64_u32 v[4:5], v101
    v_add_f64 v[4:5], v[4:5], 1.0
    v_cvt_u32_f64 v3, v[4:5]
    v_mov_b32 v6, v101
    v_mov_b32 v7, 2.0
    v_pk_mul_f32 v[8:9], v[6:7], v[6:7] op_sel_hi:[0,1]
    v_pk_mov_b32 v[10:11], v[6:7], v[6:7] op_sel:[1,0]
    v_cvt_f32_u32 v12, v101
    v_pk_fma_f32 v[12:13], v[12:13], v[6:7], v[12:13] op_sel_hi:[0,1,0]
{}{}{}{}{}",
        store(0, "v1"),
        store(1, "v3"),
        store(2, "v10"),
        store(3, "v11"),
        store(4, "v12")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 5) else { return };
    for l in 0..64 {
        assert_eq!(o[l], 0x4000_4000, "pk_add_f16 lane {l}");
        assert_eq!(o[64 + l], inp[l] + 1, "f64 inline 1.0 lane {l}");
        assert_eq!(o[128 + l], 2.0f32.to_bits(), "pk_mov lo lane {l}");
        assert_eq!(o[192 + l], inp[l], "pk_mov hi lane {l}");
        let x = inp[l] as f32;
        // v12 = x * bits(v101)?: src1 lo = v6 (raw lane value bits), fma(x, bits, x).
        let want = x.mul_add(f32::from_bits(inp[l]), x);
        assert_eq!(o[256 + l], want.to_bits(), "pk_fma lane {l}");
    }
}

#[test]
fn lanes_exec_and_scalar_ops() {
    let body = format!(
        "    v_readlane_b32 s10, v101, 5
    v_mov_b32 v1, s10
    v_cmpx_gt_u32 vcc, 32, v0
    v_mov_b32 v2, 7
    s_mov_b64 exec, -1
    s_bcnt1_i32_b64 s11, vcc
    v_mov_b32 v3, s11
    v_writelane_b32 v4, s11, 9
    s_mov_b32 s12, src_shared_base
    v_mov_b32 v5, s12
    s_getreg_b32 s13, hwreg(HW_REG_SH_MEM_BASES, 16, 16)
    s_lshl_b32 s13, s13, 16
    v_mov_b32 v6, s13
    s_ff1_i32_b32 s14, 0x100
    v_mov_b32 v7, s14
    v_mbcnt_lo_u32_b32 v8, -1, 0
    v_mbcnt_hi_u32_b32 v8, -1, v8
{}{}{}{}{}{}{}{}",
        store(0, "v1"),
        store(1, "v2"),
        store(2, "v3"),
        store(3, "v4"),
        store(4, "v5"),
        store(5, "v6"),
        store(6, "v7"),
        store(7, "v8")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 8) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[5], "readlane lane {l}");
        assert_eq!(o[64 + l], if l < 32 { 7 } else { 0 }, "cmpx lane {l}");
        assert_eq!(o[128 + l], 32, "bcnt lane {l}");
        assert_eq!(o[192 + l], if l == 9 { 32 } else { 0 }, "writelane lane {l}");
        assert_eq!(o[256 + l], o[320 + l], "shared base = SH_MEM_BASES lane {l}");
        assert_ne!(o[256 + l], 0);
        assert_eq!(o[384 + l], 8, "ff1 lane {l}");
        assert_eq!(o[448 + l], l as u32, "mbcnt lane {l}");
    }
}

#[test]
fn lds_read2_write2_swizzle_and_flat_lds() {
    let body = format!(
        "    v_mov_b32 v2, v101
    v_add_u32 v3, 1000, v101
    ds_write2_b32 v100, v2, v3 offset1:64
    s_waitcnt lgkmcnt(0)
    s_barrier
    v_xor_b32 v4, 4, v100
    ds_read2_b32 v[6:7], v4 offset1:64
    ds_swizzle_b32 v8, v101 offset:swizzle(SWAP,1)
    s_mov_b32 s12, src_shared_base
    v_mov_b32 v10, v100
    v_mov_b32 v11, s12
    flat_load_dword v9, v[10:11]
    s_waitcnt vmcnt(0) lgkmcnt(0)
{}{}{}{}",
        store(0, "v6"),
        store(1, "v7"),
        store(2, "v8"),
        store(3, "v9")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 4) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l ^ 1], "read2 lo lane {l}");
        assert_eq!(o[64 + l], inp[l ^ 1] + 1000, "read2 hi lane {l}");
        assert_eq!(o[128 + l], inp[l ^ 1], "swizzle swap1 lane {l}");
        assert_eq!(o[192 + l], inp[l], "flat load from LDS aperture lane {l}");
    }
}

#[test]
fn partial_wave_exec() {
    let body = format!("    v_add_u32 v1, 5, v101\n{}", store(0, "v1"));
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 40, 1) else { return };
    for l in 0..64 {
        assert_eq!(o[l], if l < 40 { inp[l] + 5 } else { 0 }, "lane {l}");
    }
}

#[test]
fn unknown_instruction_is_unsupported() {
    // An MIMG instruction (image_load): a format the interpreter does not implement.
    let src = "    v_mov_b32 v1, 0\n    image_load v[0:3], v[4:7], s[8:15] dmask:0xf unorm\n    s_endpgm\n";
    let Some(code) = assemble(src) else { return };
    let r = run_code(&code, Some(1000));
    match r {
        Err(ExecError::Unsupported { pc, what, .. }) => {
            assert_eq!(pc, KD_VA + 256 + 4, "{what}");
            assert!(what.contains("MIMG"), "{what}");
        }
        r => panic!("{r:?}"),
    }
}

fn run_code(code: &[u8], budget: Option<u64>) -> Result<amdgcn_isa::Stats, ExecError> {
    let mem = VecMem::new();
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&1024u32.to_le_bytes());
    kd[4..8].copy_from_slice(&16u32.to_le_bytes());
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    kd[48..52].copy_from_slice(&0x3fu32.to_le_bytes());
    kd[52..56].copy_from_slice(&(6u32 << 1 | 7 << 7 | 1 | 2 << 11).to_le_bytes());
    kd[56..58].copy_from_slice(&0x2fu16.to_le_bytes());
    let mut img = kd.to_vec();
    img.resize(256, 0);
    img.extend_from_slice(code);
    write_ro(&mem, KD_VA, &img);
    let buf = mem.alloc(1 << 16);
    let d = Dispatch {
        kernel_object: KD_VA,
        kernarg_address: buf,
        dispatch_ptr: buf,
        queue_ptr: buf,
        grid_size: [128, 2, 1],
        workgroup_size: [64, 2, 1],
        group_segment_size: 1024,
        private_segment_size: 16,
        registers: None,
        dispatch_id: 0,
    };
    amdgcn_isa::run_with(&mem, &d, 2, &Options { max_wave_instructions: budget, ..Default::default() })
}

/// Fuzz rounds: `AMDGCN_ISA_FUZZ_ROUNDS` for long runs, else `default`.
fn fuzz_rounds(default: u32) -> u32 {
    std::env::var("AMDGCN_ISA_FUZZ_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn random_code_never_panics_or_hangs() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut ok, mut err) = (0, 0);
    for round in 0..fuzz_rounds(2000) {
        let n = 16 + (rnd() % 512) as usize;
        let mut code: Vec<u8> = (0..n).map(|_| rnd() as u8).collect();
        if round % 2 == 0 {
            // Bias toward valid-looking VALU/SALU words: clear the top bit of some dwords.
            for c in code.chunks_exact_mut(8) {
                c[3] &= 0x7f;
            }
        }
        match run_code(&code, Some(20_000)) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    // Falling off the end of the code must fault (not silently succeed) in most rounds.
    assert!(err * 4 > (ok + err) * 3, "ok {ok} err {err}");
}

#[test]
fn probe_reports_missing_instructions() {
    // v_cubeid_f32 is not implemented; v_add_f32 is.
    let Some(b) = assemble("v_cubeid_f32 v0, v1, v2, v3\nv_add_f32 v0, v1, v2\n") else { return };
    let mut padded = b.clone();
    padded.resize(b.len() + 8, 0);
    let w2 = |o: usize| [0, 1, 2].map(|k| u32::from_le_bytes(padded[o + 4 * k..o + 4 * k + 4].try_into().unwrap()));
    match amdgcn_isa::probe(w2(0)) {
        Err(ExecError::Unsupported { what, .. }) => assert!(what.contains("v_cubeid_f32"), "{what}"),
        r => panic!("{r:?}"),
    }
    assert_eq!(amdgcn_isa::probe(w2(8)), Ok(4));
}

#[test]
fn store_to_unmapped_page_faults_as_write() {
    let Some(code) = assemble(
        "    s_mov_b32 s0, 0x5000
    s_mov_b32 s1, 0x77
    v_mov_b32 v0, 0
    v_mov_b32 v1, 42
    global_store_dword v0, v1, s[0:1] offset:16
    s_endpgm\n",
    ) else {
        return;
    };
    let r = run_code(&code, Some(1000));
    assert_eq!(r.map(|_| ()), Err(ExecError::Fault(amdgcn_isa::Fault { va: 0x77_0000_5000, write: true })));
}

#[test]
fn coalesced_accesses_match_lane_by_lane() {
    // Whole-wave accesses at consecutive addresses take one host pointer for the wave
    // (memops.rs `coalesced`); these must read and write what the per-lane path would: a
    // dwordx4 store then load (lane l at out + 2048 + 16l), a scattered read of the same bytes
    // (not coalesced), and a flat dwordx2 load whose destination is its own address pair.
    let body = format!(
        "    v_lshlrev_b32 v10, 4, v0
    v_mov_b32 v20, v101
    v_add_u32 v21, 1, v101
    v_add_u32 v22, 2, v101
    v_add_u32 v23, 3, v101
    global_store_dwordx4 v10, v[20:23], s[4:5] offset:2048
    s_waitcnt vmcnt(0)
    global_load_dwordx4 v[30:33], v10, s[4:5] offset:2048
    v_sub_u32 v11, 63, v0
    v_lshlrev_b32 v11, 4, v11
    global_load_dword v34, v11, s[4:5] offset:2052
    v_lshlrev_b32 v12, 3, v0
    v_mov_b32 v41, s5
    v_add_co_u32 v40, vcc, s4, v12
    v_addc_co_u32 v41, vcc, 0, v41, vcc
    v_add_co_u32 v40, vcc, 0x800, v40
    v_addc_co_u32 v41, vcc, 0, v41, vcc
    flat_load_dwordx2 v[40:41], v[40:41]
    s_waitcnt vmcnt(0) lgkmcnt(0)
{}{}{}{}{}",
        store(0, "v30"),
        store(1, "v33"),
        store(2, "v34"),
        store(3, "v40"),
        store(4, "v41")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 5) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "dwordx4 word 0, lane {l}");
        assert_eq!(o[64 + l], inp[l] + 3, "dwordx4 word 3, lane {l}");
        assert_eq!(o[128 + l], inp[63 - l] + 1, "scattered read, lane {l}");
        let w = inp[l / 2] + 2 * (l as u32 % 2);
        assert_eq!((o[192 + l], o[256 + l]), (w, w + 1), "flat dwordx2 over its address, lane {l}");
    }
}

#[test]
fn coalesced_access_across_two_host_pages() {
    // Three GPU pages at P, each its own host buffer: a wave's access that crosses a page
    // boundary takes two host pointers (memops.rs `coalesced`). A dword store and load at 128
    // bytes before the first boundary (lanes 0-31 on one page, 32-63 on the next), the same
    // bytes read lane by lane (lanes reversed: not coalesced), and a dwordx2 store and load at
    // 196 bytes before the second boundary (lane 24's pair straddles it); the host reads both
    // pages back.
    const P: u64 = 0x20_0000_0000;
    let mem = VecMem::new();
    for k in 0..3 {
        mem.map(P + k * 4096, 4096, true);
    }
    let body = format!(
        "    s_mov_b32 s8, 0xf80
    s_mov_b32 s9, 0x20
    global_store_dword v100, v101, s[8:9]
    v_mov_b32 v106, v101
    v_add_u32 v107, 7, v101
    v_lshlrev_b32 v103, 3, v0
    s_mov_b32 s10, 0x1f3c
    s_mov_b32 s11, 0x20
    global_store_dwordx2 v103, v[106:107], s[10:11]
    s_waitcnt vmcnt(0)
    global_load_dword v110, v100, s[8:9]
    global_load_dwordx2 v[112:113], v103, s[10:11]
    v_sub_u32 v104, 63, v0
    v_lshlrev_b32 v105, 2, v104
    global_load_dword v111, v105, s[8:9]
    s_waitcnt vmcnt(0)
{}{}{}{}",
        store(0, "v110"),
        store(1, "v111"),
        store(2, "v112"),
        store(3, "v113")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet_in(&mem, &body, &inp, 64, 4) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "dword load, lane {l}");
        assert_eq!(o[64 + l], inp[63 - l], "lane-by-lane load, lane {l}");
        assert_eq!((o[128 + l], o[192 + l]), (inp[l], inp[l] + 7), "dwordx2 load, lane {l}");
    }
    let words = |va: u64, n: usize| -> Vec<u32> {
        mem.read_vec(va, 4 * n).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    };
    let dwords: Vec<u32> = [words(P + 0xf80, 32), words(P + 0x1000, 32)].concat();
    assert_eq!(dwords, inp.to_vec(), "dword store as the host sees it");
    let pairs: Vec<u32> = [words(P + 0x1f3c, 49), words(P + 0x2000, 79)].concat();
    let want: Vec<u32> = inp.iter().flat_map(|&v| [v, v + 7]).collect();
    assert_eq!(pairs, want, "dwordx2 store as the host sees it");
}

#[test]
fn coalesced_access_into_an_unmapped_page_faults_there() {
    // 64 lanes' dwords from 128 bytes before the end of run_code's 64 KiB buffer: the second
    // half lies on the unmapped page after it, which faults (as a read, then as a write).
    for (op, write) in [("global_load_dword v2, v1, s[0:1]", false), ("global_store_dword v1, v1, s[0:1]", true)] {
        let Some(code) = assemble(&format!(
            "    s_mov_b32 s0, 0xff80
    s_mov_b32 s1, 1
    v_lshlrev_b32 v1, 2, v0
    {op}
    s_waitcnt vmcnt(0)
    s_endpgm\n"
        )) else {
            return;
        };
        let r = run_code(&code, Some(1000));
        assert_eq!(r.map(|_| ()), Err(ExecError::Fault(amdgcn_isa::Fault { va: 0x1_0001_0000, write })), "{op}");
    }
}

#[test]
fn mubuf_scratch_soffset_counts_the_whole_wave() {
    // A swizzled private-segment V# (ADD_TID_ENABLE): the SGPR offset is the wave's (a stack
    // pointer of 0x400 is 16 bytes per lane), the VGPR and immediate offsets each lane's. A store
    // at soffset 0x400 + 4 is read back at lane offset 20, and through the flat private aperture.
    let body = format!(
        "    s_mov_b32 s8, 0
    s_mov_b32 s9, 0
    s_mov_b32 s10, -1
    s_mov_b32 s11, 0x00800000
    s_movk_i32 s33, 0x400
    buffer_store_dword v101, off, s[8:11], s33 offset:4
    s_waitcnt vmcnt(0)
    v_mov_b32 v3, 20
    buffer_load_dword v1, v3, s[8:11], 0 offen
    s_mov_b32 s12, src_private_base
    v_mov_b32 v6, 20
    v_mov_b32 v7, s12
    flat_load_dword v4, v[6:7]
    s_waitcnt vmcnt(0) lgkmcnt(0)
{}{}",
        store(0, "v1"),
        store(1, "v4")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 2) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "buffer_load lane {l}");
        assert_eq!(o[64 + l], inp[l], "flat_load lane {l}");
    }
}

#[test]
fn flat_private_aperture_is_per_lane() {
    // Each lane stores its id through a flat pointer into the private aperture at the same
    // offset, then reads it back: lanes must not see each other's value.
    let body = format!(
        "    s_mov_b32 s12, src_private_base
    v_mov_b32 v2, 8
    v_mov_b32 v3, s12
    flat_store_dword v[2:3], v101
    s_waitcnt vmcnt(0) lgkmcnt(0)
    flat_load_dword v1, v[2:3]
    scratch_load_dword v4, v2, off
    s_waitcnt vmcnt(0) lgkmcnt(0)
{}{}",
        store(0, "v1"),
        store(1, "v4")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 2) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "flat private lane {l}");
        assert_eq!(o[64 + l], inp[l], "scratch_load lane {l}");
    }
}

/// A wave that sets FLAT_SCRATCH itself (kfdtest's PM4 dispatches: the scratch BO's address)
/// reaches memory there through the private aperture and SCRATCH instructions, interleaved by
/// dword: offset `o` of lane `l` at `base + (o / 4) * 256 + l * 4 + o % 4`, so the host sees it.
#[test]
fn flat_scratch_base_reaches_memory_interleaved() {
    let mem = VecMem::new();
    let scratch = mem.alloc(64 * 1024);
    let body = format!(
        "    s_mov_b32 flat_scratch_lo, {lo:#x}
    s_mov_b32 flat_scratch_hi, {hi:#x}
    s_mov_b32 s12, src_private_base
    v_mov_b32 v2, 8
    v_mov_b32 v3, s12
    flat_store_dword v[2:3], v101
    v_add_u32 v5, 0x1000, v101
    v_mov_b32 v6, 12
    scratch_store_dword v6, v5, off
    s_waitcnt vmcnt(0) lgkmcnt(0)
    flat_load_dword v1, v[2:3]
    scratch_load_dword v4, v6, off
    s_waitcnt vmcnt(0) lgkmcnt(0)
{}{}",
        store(0, "v1"),
        store(1, "v4"),
        lo = scratch as u32,
        hi = (scratch >> 32) as u32
    );
    let inp = lanes_in();
    let Some(o) = run_snippet_in(&mem, &body, &inp, 64, 2) else { return };
    let b = mem.read_vec(scratch, 4 * 1024);
    let at = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap());
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "flat private lane {l}");
        assert_eq!(o[64 + l], inp[l] + 0x1000, "scratch_load lane {l}");
        assert_eq!(at(2 * 256 + l * 4), inp[l], "memory of offset 8, lane {l}");
        assert_eq!(at(3 * 256 + l * 4), inp[l] + 0x1000, "memory of offset 12, lane {l}");
    }
}

#[test]
fn endless_loop_stops_at_the_budget() {
    let Some(code) = assemble("loop:\n    s_branch loop\n") else { return };
    match run_code(&code, Some(5000)) {
        Err(ExecError::Invalid(m)) => assert!(m.contains("budget"), "{m}"),
        r => panic!("{r:?}"),
    }
}

#[test]
fn wave32_descriptor_is_invalid() {
    let mem = VecMem::new();
    let mut kd = [0u8; 64];
    kd[56..58].copy_from_slice(&(1u16 << 10).to_le_bytes());
    write_ro(&mem, KD_VA, &kd);
    let d = Dispatch { kernel_object: KD_VA, grid_size: [64, 1, 1], workgroup_size: [64, 1, 1], ..Default::default() };
    assert!(matches!(amdgcn_isa::run(&mem, &d, 1), Err(ExecError::Invalid(_))));
}

#[test]
fn wide_integer_and_atomic_return() {
    let body = format!(
        "    v_mov_b32 v2, 0xffffffff
    v_mad_u64_u32 v[4:5], s[10:11], v101, v2, 0
    v_mov_b32 v6, 0
    v_mov_b32 v7, 5
    global_atomic_add_x2 v[8:9], v6, v[6:7], s[6:7] glc
    s_waitcnt vmcnt(0)
    s_mov_b64 s[12:13], 0x1234
    s_lshl_b64 s[12:13], s[12:13], 36
    v_mov_b32 v10, s13
    v_alignbit_b32 v11, v101, v2, 4
{}{}{}{}{}",
        store(0, "v4"),
        store(1, "v5"),
        store(2, "v8"),
        store(3, "v10"),
        store(4, "v11")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 5) else { return };
    let mut olds: Vec<u64> = (0..64).map(|l| o[128 + l] as u64).collect();
    olds.sort();
    for l in 0..64 {
        let p = inp[l] as u64 * 0xffff_ffff;
        assert_eq!(o[l], p as u32, "mad lo lane {l}");
        assert_eq!(o[64 + l], (p >> 32) as u32, "mad hi lane {l}");
        assert_eq!(o[192 + l], (0x1234u64 << 36 >> 32) as u32, "s_lshl_b64 lane {l}");
        assert_eq!(o[256 + l], (((inp[l] as u64) << 32 | 0xffff_ffff) >> 4) as u32, "alignbit lane {l}");
    }
    // The 64 atomic adds of (5 << 32) | 0 to in[0..2]: the returned olds are distinct steps.
    let base = inp[0] as u64 | (inp[1] as u64) << 32;
    for (k, v) in olds.iter().enumerate() {
        assert_eq!(*v, base as u32 as u64, "low word unchanged by adding 5<<32 ({k})");
    }
}

#[test]
fn agprs_round_trip() {
    let body = format!(
        "    v_accvgpr_write_b32 a1, v101
    v_accvgpr_mov_b32 a2, a1
    v_accvgpr_read_b32 v1, a2
    v_accvgpr_write_b32 a3, 7
    global_load_dword a4, v100, s[6:7]
    s_waitcnt vmcnt(0)
    v_accvgpr_read_b32 v2, a3
    v_accvgpr_read_b32 v3, a4
{}{}{}",
        store(0, "v1"),
        store(1, "v2"),
        store(2, "v3")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 3) else { return };
    for l in 0..64 {
        assert_eq!(o[l], inp[l], "agpr mov lane {l}");
        assert_eq!(o[64 + l], 7, "agpr const lane {l}");
        assert_eq!(o[128 + l], inp[l], "load into agpr lane {l}");
    }
}

#[test]
fn random_instructions_of_every_format_never_panic() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // (mask of the fixed prefix bits, prefix) for each microcode format.
    const FORMATS: [(u32, u32); 14] = [
        (0xc000_0000, 0x8000_0000), // SOP2
        (0xf000_0000, 0xb000_0000), // SOPK
        (0xff80_0000, 0xbe80_0000), // SOP1
        (0xff80_0000, 0xbf00_0000), // SOPC
        (0xff80_0000, 0xbf80_0000), // SOPP
        (0xfc00_0000, 0xc000_0000), // SMEM
        (0xfe00_0000, 0x7e00_0000), // VOP1
        (0xfe00_0000, 0x7c00_0000), // VOPC
        (0x8000_0000, 0x0000_0000), // VOP2
        (0xfc00_0000, 0xd000_0000), // VOP3
        (0xff80_0000, 0xd380_0000), // VOP3P
        (0xfc00_0000, 0xd800_0000), // DS
        (0xfc00_0000, 0xdc00_0000), // FLAT
        (0xfc00_0000, 0xe000_0000), // MUBUF
    ];
    let mut errs = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..fuzz_rounds(3000) {
        let n = 4 + (rnd() % 40) as usize;
        let mut code = Vec::new();
        for _ in 0..n {
            // Prefer words that decode, so execution gets past the first instruction.
            let mut w = [0u32; 3];
            for _ in 0..50 {
                let (m, p) = FORMATS[(rnd() % FORMATS.len() as u64) as usize];
                w = [(rnd() as u32 & !m) | p, rnd() as u32, rnd() as u32];
                if amdgcn_isa::decode(w).is_ok() {
                    break;
                }
            }
            let size = amdgcn_isa::decode(w).map_or(8, |i| i.size as usize);
            let bytes: Vec<u8> = w.iter().flat_map(|d| d.to_le_bytes()).collect();
            code.extend_from_slice(&bytes[..size]);
        }
        code.extend_from_slice(&0xbf81_0000u32.to_le_bytes()); // s_endpgm
        let e = match run_code(&code, Some(5_000)) {
            Ok(_) => "ok".to_string(),
            Err(ExecError::Fault(_)) => "fault".into(),
            Err(ExecError::Unsupported { what, .. }) => {
                format!("unsupported {}", what.split(' ').take(2).collect::<Vec<_>>().join(" "))
            }
            Err(ExecError::Invalid(m)) => format!("invalid: {}", m.split(' ').take(2).collect::<Vec<_>>().join(" ")),
            Err(ExecError::Cancelled) => "cancelled".into(),
        };
        *errs.entry(e).or_default() += 1;
    }
    eprintln!("{errs:#?}");
}

#[test]
fn dot_products() {
    let body = format!(
        "    v_mov_b32 v2, 0x40003c00
    v_mov_b32 v1, 1.0
    v_dot2c_f32_f16 v1, v2, v2
    v_mov_b32 v3, 0x02ff7f80
    v_dot4_i32_i8 v4, v3, v3, v101
    v_dot4_u32_u8 v5, v3, v3, 0
{}{}{}",
        store(0, "v1"),
        store(1, "v4"),
        store(2, "v5")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 3) else { return };
    for l in 0..64 {
        // (1, 2) . (1, 2) + 1 = 6
        assert_eq!(o[l], 6.0f32.to_bits(), "dot2c lane {l}");
        // bytes 0x80, 0x7f, 0xff, 0x02 signed: -128, 127, -1, 2
        let s: i32 = 128 * 128 + 127 * 127 + 1 + 4;
        assert_eq!(o[64 + l], (s + inp[l] as i32) as u32, "dot4 i8 lane {l}");
        assert_eq!(o[128 + l], 128 * 128 + 127 * 127 + 255 * 255 + 4, "dot4 u8 lane {l}");
    }
}

/// MODE starts as the descriptor's COMPUTE_PGM_RSRC1 sets it, and its FP_DENORM bits for f32
/// flush subnormal inputs (bit 4 clear) and results (bit 5 clear) to zero of their sign, as
/// -fgpu-flush-denormals-to-zero kernels run (hip-tests rtc's denormals kernel: powf(2, -126)
/// is 0 there, through ocml's final v_ldexp_f32).
#[test]
fn mode_fp_denorm_flushes_f32() {
    let body = format!(
        "    s_getreg_b32 s10, hwreg(HW_REG_MODE, 0, 10)
    v_mov_b32 v2, s10
    v_mov_b32 v3, 0x400000
    v_mov_b32 v4, 0x800000
    v_add_f32 v5, v3, 0
    v_mul_f32 v6, 0.5, v4
    s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0
    v_add_f32 v7, v3, 0
    v_mul_f32 v8, 0.5, v4
    v_ldexp_f32 v9, v4, -1
    v_fma_f32 v10, v3, 1.0, v4
    v_mul_f32 v11, -0.5, v4
    v_mov_b32 v14, 1
    v_cvt_f32_i32 v14, v14
    v_mov_b32 v15, 0
    v_cmp_eq_f32 vcc, 0, v3
    v_cndmask_b32 v15, 0, 1, vcc
    v_mov_b32 v20, v3
    v_mov_b32 v21, v4
    v_mov_b32 v24, 1.0
    v_mov_b32 v25, 0.5
    v_pk_mul_f32 v[22:23], v[20:21], v[24:25]
    v_mov_b32 v18, 0
    v_mov_b32 v19, 0x38000000
    v_cvt_f32_f64 v18, v[18:19]
    s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 1
    v_add_f32 v12, v3, v4
    v_mul_f32 v13, 0.5, v4
{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}",
        store(0, "v2"),
        store(1, "v5"),
        store(2, "v6"),
        store(3, "v7"),
        store(4, "v8"),
        store(5, "v9"),
        store(6, "v10"),
        store(7, "v11"),
        store(8, "v12"),
        store(9, "v13"),
        store(10, "v3"),
        store(11, "v14"),
        store(12, "v15"),
        store(13, "v22"),
        store(14, "v23"),
        store(15, "v18")
    );
    let Some(o) = run_snippet(&body, &lanes_in(), 64, 16) else { return };
    let (sub, min) = (0x40_0000u32, 0x80_0000u32); // 2^-127 (subnormal), 2^-126 (FLT_MIN)
    let r = |k: usize| o[k * 64 + 5];
    assert_eq!(r(0), 0xf << 4 | 1 << 8 | 1 << 9, "MODE from rsrc1: FP_DENORM 0xf, DX10_CLAMP, IEEE");
    assert_eq!((r(1), r(2)), (sub, sub), "denormals allowed: kept");
    assert_eq!((r(3), r(4), r(5)), (0, 0, 0), "flushed: a subnormal input, a subnormal result, ldexp's result");
    assert_eq!(r(6), min, "fma with its subnormal input flushed");
    assert_eq!(r(7), 0x8000_0000, "a negative subnormal result flushes to -0");
    assert_eq!(r(8), (f32::from_bits(sub) + f32::MIN_POSITIVE).to_bits(), "inputs allowed (mode 1)");
    assert_eq!(r(9), 0, "results still flushed (mode 1)");
    assert_eq!(r(10), sub, "moves never flush");
    assert_eq!(r(11), 1.0f32.to_bits(), "an integer source is no subnormal: v_cvt_f32_i32 1 is 1.0");
    assert_eq!(r(12), 1, "a compare sees a flushed subnormal as 0");
    assert_eq!((r(13), r(14)), (0, 0), "v_pk_mul_f32: a subnormal input, a subnormal result");
    assert_eq!(r(15), 0, "v_cvt_f32_f64 of 2^-127 flushes");
}

/// The 16-bit dot products' op_sel/op_sel_hi (which half feeds each element), neg_lo/neg_hi
/// (f16) and clamp (saturation), as clang emits them (`op_sel_hi:[0,0,1]` squares the low half).
#[test]
fn dot2_op_sel_neg_and_clamp() {
    let body = format!(
        "    v_mov_b32 v2, 0x30002
    v_mov_b32 v3, 0x50007
    v_dot2_u32_u16 v4, v2, v3, v101
    v_dot2_u32_u16 v5, v2, v3, v101 op_sel_hi:[0,0,1]
    v_dot2_u32_u16 v6, v2, v3, v101 op_sel:[1,0,0] op_sel_hi:[0,1,1]
    v_mov_b32 v7, -1
    v_dot2_u32_u16 v8, v2, v3, v7 clamp
    v_dot2_u32_u16 v9, v2, v3, v7
    v_mov_b32 v10, 0x40003c00
    v_dot2_f32_f16 v11, v10, v10, 0 neg_lo:[1,0,0]
    v_dot2_f32_f16 v12, v10, v10, 0 neg_hi:[0,1,0]
    v_bfrev_b32 v13, -2
    v_dot2_i32_i16 v14, v2, v3, v13 clamp
    v_mov_b32 v16, 0x41200000
    v_dot2_f32_f16 v15, v10, v10, v16 clamp
    s_mov_b32 s2, 0x42003c00
    v_mov_b32 v17, 0x4200
    v_dot2_f32_f16 v18, s2, v17, 2.0 op_sel_hi:[1,0,1] clamp
{}{}{}{}{}{}{}{}{}{}",
        store(0, "v4"),
        store(1, "v5"),
        store(2, "v6"),
        store(3, "v8"),
        store(4, "v9"),
        store(5, "v11"),
        store(6, "v12"),
        store(7, "v14"),
        store(8, "v15"),
        store(9, "v18")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 10) else { return };
    for l in 0..64 {
        let r = |k: usize| o[k * 64 + l];
        assert_eq!(r(0), 2 * 7 + 3 * 5 + inp[l], "default lane {l}");
        assert_eq!(r(1), 2 * 7 + 2 * 7 + inp[l], "op_sel_hi:[0,0,1] lane {l}");
        assert_eq!(r(2), 3 * 7 + 2 * 5 + inp[l], "op_sel:[1,0,0] op_sel_hi:[0,1,1] lane {l}");
        assert_eq!(r(3), u32::MAX, "clamp lane {l}");
        assert_eq!(r(4), 28, "no clamp wraps, lane {l}");
        assert_eq!(r(5), 3.0f32.to_bits(), "neg_lo lane {l}");
        assert_eq!(r(6), (-3.0f32).to_bits(), "neg_hi lane {l}");
        assert_eq!(r(7), i32::MAX as u32, "signed clamp lane {l}");
        // ocml's __ockl_fdot2 always sets clamp, and hip-tests' amd_mixed_dot expects 14 from it:
        // the f32 dot's clamp does not limit the result to [0, 1].
        assert_eq!(r(8), 15.0f32.to_bits(), "f32 dot with clamp lane {l}");
        // amd_mixed_dot({1, 3}, {3, 3}, 2, true) as clang 15 compiles it.
        assert_eq!(f32::from_bits(r(9)), 14.0, "amd_mixed_dot lane {l}");
    }
}

#[test]
fn packing_and_sad() {
    let body = format!(
        "    v_mov_b32 v2, 0.5
    v_mov_b32 v3, -1.0
    v_cvt_pknorm_i16_f32 v1, v2, v3
    v_mov_b32 v4, 0x10ff0380
    v_mov_b32 v5, 0x20000102
    v_sad_u8 v6, v4, v5, 7
    v_lerp_u8 v7, v4, v5, 1
    v_mov_b32 v8, 0xff80012c
    v_sat_pk_u8_i16 v9, v8
    s_bitreplicate_b64_b32 s[10:11], 0x80000005
    v_mov_b32 v10, s10
    v_mov_b32 v11, s11
{}{}{}{}{}{}",
        store(0, "v1"),
        store(1, "v6"),
        store(2, "v7"),
        store(3, "v9"),
        store(4, "v10"),
        store(5, "v11")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 6) else { return };
    let lerp = |a: u32, b: u32, c: u32| -> u32 {
        (0..4)
            .map(|k| ((((a >> (8 * k)) & 0xff) + ((b >> (8 * k)) & 0xff) + ((c >> (8 * k)) & 1)) >> 1) << (8 * k))
            .sum()
    };
    for l in 0..64 {
        assert_eq!(o[l], 16384 | 0x8001 << 16, "pknorm lane {l}");
        // |0x80-0x02| + |0x03-0x01| + |0xff-0x00| + |0x10-0x20| + 7
        assert_eq!(o[64 + l], 0x7e + 2 + 0xff + 0x10 + 7, "sad lane {l}");
        assert_eq!(o[128 + l], lerp(0x10ff0380, 0x20000102, 1), "lerp lane {l}");
        assert_eq!(o[192 + l], 0xff, "sat_pk lane {l}: 0x012c -> 255, 0xff80 -> 0");
        assert_eq!(o[256 + l], 0x33, "bitreplicate lo lane {l}");
        assert_eq!(o[320 + l], 0xc000_0000, "bitreplicate hi lane {l}");
    }
}

/// `v_cvt_f16_u16` / `v_cvt_f16_i16` read a 16-bit integer (the low half, or the SDWA
/// selection), not an f16, and round it to f16 once: what hipcc emits for `(__half)(short)x`,
/// and CuPy's int8/int16/uint8/uint16 -> float16 casts.
#[test]
fn int16_to_f16_conversions() {
    let body = format!(
        "    v_mov_b32 v2, 0xfff68003
    v_cvt_f16_u16_e32 v1, v2
    v_cvt_f16_i16_e32 v3, v2
    v_cvt_f16_i16_sdwa v4, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
    v_cvt_f16_i16_sdwa v5, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1
    v_cvt_f16_u16_e32 v6, v101
    v_cvt_f16_u16_e64 v7, -1
{}{}{}{}{}{}",
        store(0, "v1"),
        store(1, "v3"),
        store(2, "v4"),
        store(3, "v5"),
        store(4, "v6"),
        store(5, "v7")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 6) else { return };
    // f16 bits of a positive integer below 2048 (exact).
    let f16_of = |n: u32| {
        let e = 31 - n.leading_zeros();
        (e + 15) << 10 | (n << (10 - e)) & 0x3ff
    };
    for l in 0..64 {
        assert_eq!(o[l], 0x7800, "u16 32771 -> 32768 lane {l}");
        assert_eq!(o[64 + l], 0xf800, "i16 -32765 -> -32768 lane {l}");
        assert_eq!(o[128 + l], 0xc900, "i16 word_1 -10 lane {l}");
        assert_eq!(o[192 + l], 0xd800, "sext byte_1 0x80 -> -128 lane {l}");
        assert_eq!(o[256 + l], f16_of(inp[l]), "u16 {} lane {l}", inp[l]);
        assert_eq!(o[320 + l], 0x7c00, "u16 65535 -> +inf lane {l}");
    }
}

/// `v_min3`/`v_max3`/`v_med3` of 16-bit integers and f16 (VOP3, op_sel picking halves), as
/// rocPRIM's reductions of int8/int16 use them (CuPy's cub.so).
#[test]
fn min3_max3_med3_16bit() {
    let body = format!(
        "    v_mov_b32 v2, 0x80000005
    v_mov_b32 v3, 0x0007fffe
    v_min3_i16 v5, v2, v3, v101
    v_min3_u16 v6, v2, v3, v101
    v_max3_i16 v7, v2, v3, v101
    v_max3_u16 v8, v2, v3, v101
    v_med3_i16 v9, v2, v3, v101
    v_med3_u16 v10, v2, v3, v101
    v_mov_b32 v11, 0x1234
    v_max3_i16 v11, v2, v3, v101 op_sel:[1,1,0,1]
    v_mov_b32 v16, 0x3800
    v_med3_f16 v12, 1.0, -2.0, v16
    v_min3_f16 v13, 1.0, -2.0, v16
    v_max3_f16 v14, 1.0, -2.0, v16
{}{}{}{}{}{}{}{}{}{}",
        store(0, "v5"),
        store(1, "v6"),
        store(2, "v7"),
        store(3, "v8"),
        store(4, "v9"),
        store(5, "v10"),
        store(6, "v11"),
        store(7, "v12"),
        store(8, "v13"),
        store(9, "v14")
    );
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 10) else { return };
    for l in 0..64 {
        let x = inp[l]; // 1..=190: the same as i16 and u16
        assert_eq!(o[l], 0xfffe, "min3_i16(5, -2, {x}) lane {l}");
        assert_eq!(o[64 + l], x.min(5), "min3_u16(5, 65534, {x}) lane {l}");
        assert_eq!(o[128 + l], x.max(5), "max3_i16(5, -2, {x}) lane {l}");
        assert_eq!(o[192 + l], 65534, "max3_u16(5, 65534, {x}) lane {l}");
        assert_eq!(o[256 + l], x.clamp(0, 5), "med3_i16(5, -2, {x}) lane {l}");
        assert_eq!(o[320 + l], x.max(5), "med3_u16(5, 65534, {x}) lane {l}");
        assert_eq!(o[384 + l], x.max(7) << 16 | 0x1234, "max3_i16 op_sel(-32768, 7, {x}) lane {l}");
        assert_eq!(o[448 + l], 0x3800, "med3_f16(1, -2, 0.5) lane {l}");
        assert_eq!(o[512 + l], 0xc000, "min3_f16(1, -2, 0.5) lane {l}");
        assert_eq!(o[576 + l], 0x3c00, "max3_f16(1, -2, 0.5) lane {l}");
    }
}

/// Loads x = input[lane % 8] into v103 and y = input[lane / 8] into v102: the 64 pairs of the
/// input's first 8 values, one per lane.
const PAIRS: &str = "    v_and_b32 v1, 7, v0
    v_lshlrev_b32 v1, 2, v1
    global_load_dword v103, v1, s[6:7]
    v_lshrrev_b32 v1, 3, v0
    v_lshlrev_b32 v1, 2, v1
    global_load_dword v102, v1, s[6:7]
    s_waitcnt vmcnt(0)
";

/// Every VOPC condition of f32, f64, i32, u32, i64 and u64 (and f32 with VOP3 abs/neg), over
/// the 64 pairs of 8 values (NaN, -inf, -1.5, -0, +0, the smallest subnormal, 1.5, inf; as
/// integers their bit patterns), against Rust's comparisons.
#[test]
fn compares_every_condition() {
    const F: [&str; 16] =
        ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"];
    const I: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];
    // x = vals[lane % 8] in v103, y = vals[lane / 8] in v102; 64-bit integers are
    // (bits >> 1) << 32 | bits in v[104:105] and v[106:107]; f64s are the f32s converted.
    let mut body = String::from(PAIRS)
        + "    v_mov_b32 v104, v103
    v_lshrrev_b32 v105, 1, v103
    v_mov_b32 v106, v102
    v_lshrrev_b32 v107, 1, v102
    v_cvt_f64_f32 v[108:109], v103
    v_cvt_f64_f32 v[110:111], v102
";
    let mut tests: Vec<String> = Vec::new();
    for c in F {
        tests.push(format!("v_cmp_{c}_f32 vcc, v103, v102"));
    }
    for c in F {
        tests.push(format!("v_cmp_{c}_f64 vcc, v[108:109], v[110:111]"));
    }
    for t in ["i32", "u32"] {
        for c in I {
            tests.push(format!("v_cmp_{c}_{t} vcc, v103, v102"));
        }
    }
    for t in ["i64", "u64"] {
        for c in I {
            tests.push(format!("v_cmp_{c}_{t} vcc, v[104:105], v[106:107]"));
        }
    }
    for c in ["lt", "eq", "nge", "o"] {
        tests.push(format!("v_cmp_{c}_f32_e64 vcc, |v103|, -v102"));
    }
    for (k, t) in tests.iter().enumerate() {
        if k > 0 && k % 16 == 0 {
            body += "    v_add_u32 v100, 0x1000, v100\n";
        }
        body += &format!("    {t}\n    v_cndmask_b32 v2, 0, 1, vcc\n{}", store(k % 16, "v2"));
    }
    let vals: [f32; 8] = [f32::NAN, f32::NEG_INFINITY, -1.5, -0.0, 0.0, f32::from_bits(1), 1.5, f32::INFINITY];
    let mut inp = [0u32; 64];
    for (k, v) in vals.iter().enumerate() {
        inp[k] = v.to_bits();
    }
    let Some(o) = run_snippet(&body, &inp, 64, tests.len().div_ceil(16) * 16) else { return };
    // (lt, eq, gt, unordered) -> the condition (bit 0 LT, 1 EQ, 2 GT, 3 unordered).
    let pick = |c: usize, lt: bool, eq: bool, gt: bool, un: bool| {
        let rel = lt as usize | (eq as usize) << 1 | (gt as usize) << 2 | (un as usize) << 3;
        (c & rel != 0) as u32
    };
    let f = |c: usize, x: f64, y: f64| pick(c, x < y, x == y, x > y, x.is_nan() || y.is_nan());
    let ord = |c: usize, o: std::cmp::Ordering| pick(c, o.is_lt(), o.is_eq(), o.is_gt(), false);
    let wide = |b: u32| ((b >> 1) as u64) << 32 | b as u64;
    for l in 0..64 {
        let (x, y) = (vals[l % 8], vals[l / 8]);
        let (xb, yb) = (x.to_bits(), y.to_bits());
        let mut want = Vec::new();
        want.extend((0..16).map(|c| f(c, x as f64, y as f64)));
        want.extend((0..16).map(|c| f(c, x as f64, y as f64)));
        want.extend((0..8).map(|c| ord(c, (xb as i32).cmp(&(yb as i32)))));
        want.extend((0..8).map(|c| ord(c, xb.cmp(&yb))));
        want.extend((0..8).map(|c| ord(c, (wide(xb) as i64).cmp(&(wide(yb) as i64)))));
        want.extend((0..8).map(|c| ord(c, wide(xb).cmp(&wide(yb)))));
        want.extend([1, 2, 9, 7].map(|c| f(c, x.abs() as f64, -y as f64)));
        for (k, w) in want.iter().enumerate() {
            assert_eq!(o[k * 64 + l], *w, "{} lane {l}: x {x:?} y {y:?}", tests[k]);
        }
    }
}

/// The six carry ops (VOP3, carry-in from an SGPR pair where they take one) over the 64 pairs
/// of 8 edge values, with a carry-in that differs by lane: results and carry-outs against
/// Rust's u64 arithmetic.
#[test]
fn carry_ops_every_edge() {
    const CIN: u64 = 0x9d2c_5680_f0f0_3c5a;
    let ops = ["v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"];
    let mut body =
        format!("{PAIRS}    s_mov_b32 s20, {:#x}\n    s_mov_b32 s21, {:#x}\n", CIN as u32, (CIN >> 32) as u32);
    for (k, op) in ops.iter().enumerate() {
        let cin = if k >= 3 { ", s[20:21]" } else { "" };
        body += &format!(
            "    {op}_e64 v2, s[22:23], v103, v102{cin}\n    v_cndmask_b32 v3, 0, 1, s[22:23]\n{}{}",
            store(2 * k, "v2"),
            store(2 * k + 1, "v3")
        );
    }
    let vals: [u32; 8] = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff, 12345, 0xdead_beef];
    let mut inp = [0u32; 64];
    inp[..8].copy_from_slice(&vals);
    let Some(o) = run_snippet(&body, &inp, 64, 12) else { return };
    for l in 0..64 {
        let (a, b, c) = (vals[l % 8] as u64, vals[l / 8] as u64, CIN >> l & 1);
        let want: [(u64, bool); 6] = [
            (a + b, a + b > 0xffff_ffff),
            (a.wrapping_sub(b), b > a),
            (b.wrapping_sub(a), a > b),
            (a + b + c, a + b + c > 0xffff_ffff),
            (a.wrapping_sub(b).wrapping_sub(c), b + c > a),
            (b.wrapping_sub(a).wrapping_sub(c), a + c > b),
        ];
        for (k, (r, co)) in want.iter().enumerate() {
            assert_eq!(o[2 * k * 64 + l], *r as u32, "{} lane {l}: a {a:#x} b {b:#x} cin {c}", ops[k]);
            assert_eq!(o[(2 * k + 1) * 64 + l], *co as u32, "{} carry lane {l}: a {a:#x} b {b:#x} cin {c}", ops[k]);
        }
    }
}

/// 64-bit lane ops: the three 64-bit shifts by a per-lane amount (masked to 6 bits), the 64-bit
/// multiply-adds with their overflow carry-out, and f64 ops of one, two and three sources with
/// VOP3 neg/abs, against Rust.
#[test]
fn sixty_four_bit_lane_ops() {
    // v101 = input[l] (3l + 1); x = (v101 << 32 | v101 * 0x9e3779b9) with bit 63 set on odd
    // lanes; the shift amount is 5l + 3 (past 63 from lane 13: only its low 6 bits count).
    let body = format!(
        "    v_mov_b32 v5, 0x9e3779b9
    v_mul_lo_u32 v2, v101, v5
    v_lshlrev_b32 v3, 31, v0
    v_or_b32 v3, v3, v101
    v_mad_u32_u24 v4, v0, 5, 3
    v_lshlrev_b64 v[6:7], v4, v[2:3]
    v_lshrrev_b64 v[8:9], v4, v[2:3]
    v_ashrrev_i64 v[10:11], v4, v[2:3]
    v_mad_u64_u32 v[12:13], s[10:11], v2, v3, v[2:3]
    v_cndmask_b32 v14, 0, 1, s[10:11]
    v_mad_i64_i32 v[16:17], s[12:13], v2, v3, v[2:3]
    v_cndmask_b32 v15, 0, 1, s[12:13]
    v_cvt_f64_u32 v[18:19], v101
    v_cvt_f64_i32 v[20:21], v2
    v_add_f64 v[22:23], -v[18:19], |v[20:21]|
    v_fma_f64 v[24:25], v[18:19], -v[20:21], v[22:23]
    v_sqrt_f64 v[26:27], v[18:19]
{}{}{}{}{}{}{}{}{}{}{}{}{}{}",
        store(0, "v6"),
        store(1, "v7"),
        store(2, "v8"),
        store(3, "v9"),
        store(4, "v10"),
        store(5, "v11"),
        store(6, "v12"),
        store(7, "v13"),
        store(8, "v14"),
        store(9, "v16"),
        store(10, "v17"),
        store(11, "v15"),
        store(12, "v22"),
        store(13, "v23")
    ) + "    v_add_u32 v100, 0x1000, v100\n"
        + &store(0, "v24")
        + &store(1, "v25")
        + &store(2, "v26")
        + &store(3, "v27");
    let inp = lanes_in();
    let Some(o) = run_snippet(&body, &inp, 64, 20) else { return };
    let pair = |k: usize, l: usize| o[k * 64 + l] as u64 | (o[(k + 1) * 64 + l] as u64) << 32;
    for l in 0..64 {
        let v = inp[l];
        let lo = v.wrapping_mul(0x9e37_79b9);
        let hi = v | (l as u32) << 31;
        let x = lo as u64 | (hi as u64) << 32;
        let s = (5 * l as u32 + 3) & 63;
        assert_eq!(pair(0, l), x << s, "lshlrev_b64 lane {l}");
        assert_eq!(pair(2, l), x >> s, "lshrrev_b64 lane {l}");
        assert_eq!(pair(4, l), ((x as i64) >> s) as u64, "ashrrev_i64 lane {l}");
        let pu = lo as u128 * hi as u128 + x as u128;
        assert_eq!(pair(6, l), pu as u64, "mad_u64_u32 lane {l}");
        assert_eq!(o[8 * 64 + l], (pu >> 64 != 0) as u32, "mad_u64_u32 carry lane {l}");
        let pi = lo as i32 as i128 * hi as i32 as i128 + x as i64 as i128;
        assert_eq!(pair(9, l), pi as u64, "mad_i64_i32 lane {l}");
        assert_eq!(o[11 * 64 + l], (pi != pi as i64 as i128) as u32, "mad_i64_i32 carry lane {l}");
        let (a, b) = (v as f64, lo as i32 as f64);
        let sum = -a + b.abs();
        assert_eq!(pair(12, l), sum.to_bits(), "add_f64 lane {l}");
        let f = o[(16 * 64)..].to_vec();
        let fp = |k: usize| f[k * 64 + l] as u64 | (f[(k + 1) * 64 + l] as u64) << 32;
        assert_eq!(fp(0), a.mul_add(-b, sum).to_bits(), "fma_f64 lane {l}");
        assert_eq!(fp(2), a.sqrt().to_bits(), "sqrt_f64 lane {l}");
    }
}

#[test]
fn throttle_runs_before_each_workgroup() {
    // s_endpgm: 40 workgroups of one wave each, on 3 host threads.
    let mem = VecMem::new();
    let mut kd = [0u8; 64];
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    kd[52..56].copy_from_slice(&(1u32 << 7).to_le_bytes()); // wg id x
    let mut img = kd.to_vec();
    img.resize(256, 0);
    img.extend_from_slice(&0xbf81_0000u32.to_le_bytes());
    write_ro(&mem, KD_VA, &img);
    let d =
        Dispatch { kernel_object: KD_VA, grid_size: [40 * 64, 1, 1], workgroup_size: [64, 1, 1], ..Default::default() };
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = calls.clone();
    let throttle = amdgcn_isa::Throttle(std::sync::Arc::new(move || {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }));
    let opts = Options { throttle: Some(throttle), ..Default::default() };
    let s = amdgcn_isa::run_with(&mem, &d, 3, &opts).unwrap();
    assert_eq!(s.wave_instructions, 40);
    // Once per workgroup taken, and once more per thread when none is left.
    let n = calls.load(std::sync::atomic::Ordering::Relaxed);
    assert!((40..=43).contains(&n), "{n} calls");
}

#[test]
fn cancel_ends_an_endless_dispatch() {
    // LOOP: s_branch LOOP, over 1000 workgroups of one wave, on 2 host threads: runs until the
    // cancel hook (polled between workgroups and every 4096 instructions) says stop.
    let mem = VecMem::new();
    let mut kd = [0u8; 64];
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    kd[52..56].copy_from_slice(&(1u32 << 7).to_le_bytes()); // wg id x
    let mut img = kd.to_vec();
    img.resize(256, 0);
    img.extend_from_slice(&0xbf82_ffffu32.to_le_bytes());
    img.extend_from_slice(&0xbf81_0000u32.to_le_bytes());
    write_ro(&mem, KD_VA, &img);
    let d = Dispatch {
        kernel_object: KD_VA,
        grid_size: [1000 * 64, 1, 1],
        workgroup_size: [64, 1, 1],
        ..Default::default()
    };
    let polls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let p = polls.clone();
    let cancel =
        amdgcn_isa::Cancel(std::sync::Arc::new(move || p.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 50));
    let opts = Options { cancel: Some(cancel), ..Default::default() };
    let t0 = std::time::Instant::now();
    assert!(matches!(amdgcn_isa::run_with(&mem, &d, 2, &opts), Err(ExecError::Cancelled)));
    assert!(t0.elapsed() < std::time::Duration::from_secs(10));
    assert!(polls.load(std::sync::atomic::Ordering::Relaxed) >= 51);
}

/// A dispatch started from compute registers (a PM4 DISPATCH_DIRECT): no kernel descriptor; the
/// first COMPUTE_PGM_RSRC2.USER_SGPR SGPRs are COMPUTE_USER_DATA_*, the workgroup id X follows
/// (TGID_X_EN), the code starts at the program address. kfdtest's dispatches: one work-item per
/// workgroup, 4 user SGPRs.
#[test]
fn register_started_dispatch_loads_user_data_and_workgroup_ids() {
    let mem = VecMem::new();
    // v_mov_b32 v1, s2; v_add_u32 v1, s4, v1; v_mov_b32 v3, s4; v_lshlrev_b32 v3, 2, v3;
    // global_store_dword v3, v1, s[0:1]; s_endpgm (llvm-mc -mcpu=gfx90a -show-encoding).
    let code: [u32; 7] = [0x7e02_0202, 0x6802_0204, 0x7e06_0204, 0x2406_0682, 0xdc70_8000, 0x0000_0103, 0xbf81_0000];
    let pgm = 0x20_0000_0000u64;
    write_ro(&mem, pgm, &code.iter().flat_map(|d| d.to_le_bytes()).collect::<Vec<_>>());
    let out = mem.alloc(4096);
    let mut user_data = [0u32; 16];
    (user_data[0], user_data[1], user_data[2]) = (out as u32, (out >> 32) as u32, 1000);
    let registers = amdgcn_isa::ComputeRegisters {
        pgm_addr: pgm,
        pgm_rsrc1: 0x000c_0084,
        // USER_SGPR 4, TRAP_PRESENT, TGID_X_EN, TIDIG_COMP_CNT 1 (kfdtest Dispatch::BuildIb).
        pgm_rsrc2: 4 << 1 | 1 << 6 | 1 << 7 | 1 << 11,
        pgm_rsrc3: 9,
        user_data,
    };
    let d = Dispatch {
        // Never read: the registers are the state.
        kernel_object: 0xdead_0000,
        grid_size: [5, 1, 1],
        workgroup_size: [1, 1, 1],
        registers: Some(registers),
        ..Default::default()
    };
    amdgcn_isa::run_with(&mem, &d, 2, &Options::default()).unwrap();
    let b = mem.read_vec(out, 24);
    let w: Vec<u32> = b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(w, [1000, 1001, 1002, 1003, 1004, 0]);
}

/// Runs `src` (kernarg pointer in s[0:1], workgroup id X in s2) over `nwg` workgroups of one
/// wave each on 3 host threads, with `gws` as the dispatch's GWS.
fn run_gws_kernel(
    mem: &VecMem,
    src: &str,
    nwg: u32,
    kernarg: u64,
    gws: Option<std::sync::Arc<amdgcn_isa::Gws>>,
) -> Option<Result<amdgcn_isa::Stats, ExecError>> {
    let code = assemble(src)?;
    let mut kd = [0u8; 64];
    kd[16..24].copy_from_slice(&256i64.to_le_bytes());
    kd[48..52].copy_from_slice(&0x3fu32.to_le_bytes());
    kd[52..56].copy_from_slice(&(2u32 << 1 | 1 << 7).to_le_bytes()); // 2 user SGPRs, wg id x
    kd[56..58].copy_from_slice(&(1u16 << 3).to_le_bytes()); // kernarg ptr
    let mut img = kd.to_vec();
    img.resize(256, 0);
    img.extend_from_slice(&code);
    let va = mem.alloc(img.len() as u64);
    mem.write(va, &img).unwrap();
    let d = Dispatch {
        kernel_object: va,
        kernarg_address: kernarg,
        grid_size: [64 * nwg, 1, 1],
        workgroup_size: [64, 1, 1],
        ..Default::default()
    };
    let opts = Options { max_wave_instructions: Some(1_000_000), gws, ..Default::default() };
    Some(amdgcn_isa::run_with(mem, &d, 3, &opts))
}

/// The GWS semaphore tests' start: memory with a 4 KiB buffer and a kernarg holding its
/// address, a GWS, and `init` (a `ds_gws_init` kernel) run once with it. `None` without an
/// assembler.
fn gws_start(init: &str) -> Option<(VecMem, std::sync::Arc<amdgcn_isa::Gws>, u64, u64)> {
    let mem = VecMem::new();
    let gws = std::sync::Arc::new(amdgcn_isa::Gws::new());
    let buf = mem.alloc(4096);
    let ka = mem.alloc_with(&buf.to_le_bytes());
    run_gws_kernel(&mem, init, 1, ka, Some(gws.clone()))?.unwrap();
    Some((mem, gws, buf, ka))
}

/// The counter and the `n` logged workgroup ids the GWS kernels write at `buf`.
fn gws_counter_log(mem: &VecMem, buf: u64, n: usize) -> (u32, Vec<u32>) {
    let w: Vec<u32> =
        mem.read_vec(buf, 4 * (n + 1)).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    (w[0], w[1..].to_vec())
}

/// GWS semaphores (`ds_gws_init`, `ds_gws_sema_p`/`_v`, resource `(M0[21:16] + offset) % 64`)
/// as kfdtest `KFDGWSTest.Semaphore` uses them: one dispatch sets resource 5's count to 1
/// (M0[21:16] = 4, offset 1), the next runs 200 workgroups that each increment a counter in
/// memory non-atomically between P and V, sleeping inside (so other workgroups queue and park).
/// No increment is lost, each workgroup logged its turn once, and the count persists (1 again).
#[test]
fn gws_semaphore_persists_across_dispatches_and_excludes() {
    let init = "
        v_mov_b32 v0, 1
        s_mov_b32 m0, 0x40000
        ds_gws_init v0 offset:1 gds
        s_endpgm
    ";
    let Some((mem, gws, buf, ka)) = gws_start(init) else { return };
    assert_eq!(gws.resource(5), (1, 0));
    let inc = "
        s_load_dwordx2 s[4:5], s[0:1], 0x0
        s_mov_b32 m0, 0x40000
        s_waitcnt lgkmcnt(0)
        ds_gws_sema_p offset:1 gds
        s_load_dword s6, s[4:5], 0x0 glc
        s_waitcnt lgkmcnt(0)
        s_sleep 1
        s_add_u32 s7, s6, 1
        s_store_dword s7, s[4:5], 0x0 glc
        s_lshl_b32 s8, s7, 2
        v_mov_b32 v1, s8
        v_mov_b32 v2, s2
        global_store_dword v1, v2, s[4:5]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        ds_gws_sema_v offset:1 gds
        s_endpgm
    ";
    run_gws_kernel(&mem, inc, 200, ka, Some(gws.clone())).unwrap().unwrap();
    let (count, mut log) = gws_counter_log(&mem, buf, 200);
    assert_eq!(count, 200, "increments lost");
    log.sort_unstable();
    assert_eq!(log, (0..200).collect::<Vec<u32>>());
    assert_eq!(gws.resource(5), (1, 0));
}

/// A token handed down a chain of semaphores: workgroup k waits at resource k and then releases
/// resource k - 1; only the last workgroup's resource starts with a count (set by a first
/// dispatch). 40 workgroups on 3 host threads, so most wait parked while the others start; the
/// log shows the token's path, 39 down to 0, and the counts end at 0 with nothing queued.
#[test]
fn gws_semaphore_chain_hands_a_token_down_in_order() {
    let init = "
        v_mov_b32 v0, 1
        s_mov_b32 m0, 0
        ds_gws_init v0 offset:39 gds
        s_endpgm
    ";
    let Some((mem, gws, buf, ka)) = gws_start(init) else { return };
    let chain = "
        s_load_dwordx2 s[4:5], s[0:1], 0x0
        s_lshl_b32 m0, s2, 16
        s_waitcnt lgkmcnt(0)
        ds_gws_sema_p offset:0 gds
        s_load_dword s6, s[4:5], 0x0 glc
        s_waitcnt lgkmcnt(0)
        s_add_u32 s7, s6, 1
        s_store_dword s7, s[4:5], 0x0 glc
        s_lshl_b32 s8, s7, 2
        v_mov_b32 v1, s8
        v_mov_b32 v2, s2
        global_store_dword v1, v2, s[4:5]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        s_cmp_eq_u32 s2, 0
        s_cbranch_scc1 END
        s_sub_u32 s9, s2, 1
        s_lshl_b32 m0, s9, 16
        ds_gws_sema_v offset:0 gds
    END:
        s_endpgm
    ";
    run_gws_kernel(&mem, chain, 40, ka, Some(gws.clone())).unwrap().unwrap();
    let (count, log) = gws_counter_log(&mem, buf, 40);
    assert_eq!(count, 40);
    assert_eq!(log, (0..40).rev().collect::<Vec<u32>>());
    for rid in 0..64 {
        assert_eq!(gws.resource(rid), (0, 0), "resource {rid}");
    }
}

/// `ds_gws_sema_br` releases queued waves and banks the rest; `ds_gws_sema_p` with no release
/// coming ends the dispatch (the waves wait on a semaphore nothing is left to release) and its
/// waves leave the queue; a dispatch without GWS cannot use the instructions.
#[test]
fn gws_semaphore_bulk_release_deadlock_and_no_gws() {
    let mem = VecMem::new();
    let gws = std::sync::Arc::new(amdgcn_isa::Gws::new());
    let ka = mem.alloc(64);
    let br = "
        v_mov_b32 v0, 7
        s_mov_b32 m0, 0x3f0000
        ds_gws_sema_br v0 offset:3 gds
        s_endpgm
    ";
    let Some(r) = run_gws_kernel(&mem, br, 1, ka, Some(gws.clone())) else { return };
    r.unwrap();
    // (63 + 3) % 64 = 2.
    assert_eq!(gws.resource(2), (7, 0));
    let p = "
        s_mov_b32 m0, 0
        ds_gws_sema_p offset:2 gds
        s_endpgm
    ";
    // 7 workgroups pass, 3 wait forever.
    let e = run_gws_kernel(&mem, p, 10, ka, Some(gws.clone())).unwrap().unwrap_err();
    assert!(matches!(&e, ExecError::Invalid(m) if m.contains("ds_gws_sema_p")), "{e}");
    assert_eq!(gws.resource(2), (0, 0));
    let e = run_gws_kernel(&mem, p, 1, ka, None).unwrap().unwrap_err();
    assert!(matches!(&e, ExecError::Invalid(m) if m.contains("no GWS")), "{e}");
}

/// kfdtest's `TrapHandlerIsa` (ROCT-Thunk-Interface rocm-6.2.4 `ShaderStore.cpp`, the gfx9 path):
/// a second-level trap handler that asks the SQ for the queue's doorbell, sends KFD an interrupt
/// with `M0 = doorbell | 0x800` (trap code 2: `EC_QUEUE_WAVE_TRAP`), puts `ttmp1` in v4 and
/// returns past the `s_trap`.
const TRAP_HANDLER: &str = "
    s_getreg_b32 ttmp14, hwreg(HW_REG_TRAPSTS)
    s_and_b32 ttmp2, ttmp14, 0x800
    s_cbranch_scc1 RESTORE_AND_EXIT
    s_and_b32 ttmp2, ttmp14, 0x7080
    s_cbranch_scc0 GET_DOORBELL
    v_mov_b32 v5, v4
    v_mov_b32 v6, ttmp14
    s_branch RESTORE_AND_EXIT
GET_DOORBELL:
    s_mov_b32 ttmp2, exec_lo
    s_mov_b32 ttmp3, exec_hi
    s_mov_b32 exec_lo, 0x80000000
    s_sendmsg 10
WAIT_SENDMSG:
    s_nop 7
    s_bitcmp0_b32 exec_lo, 0x1F
    s_cbranch_scc0 WAIT_SENDMSG
    s_mov_b32 exec_hi, ttmp3
    s_and_b32 exec_lo, exec_lo, 0xfff
    s_mov_b32 ttmp3, exec_lo
    s_mov_b32 exec_lo, ttmp2
    s_mov_b32 ttmp2, m0
    s_or_b32 ttmp3, ttmp3, 0x800
    s_mov_b32 m0, ttmp3
    s_nop 0x0
    s_sendmsg sendmsg(MSG_INTERRUPT)
    s_waitcnt lgkmcnt(0)
    s_mov_b32 m0, ttmp2
    v_mov_b32 v4, ttmp1
    s_add_u32 ttmp0, ttmp0, 4
    s_addc_u32 ttmp1, ttmp1, 0
    s_and_b32 ttmp1, ttmp1, 0xffff
RESTORE_AND_EXIT:
    s_lshr_b32 ttmp2, ttmp11, (26 - 15)
    s_and_b32 ttmp2, ttmp2, (0x8000 | 0x1F0000)
    s_setreg_b32 hwreg(HW_REG_IB_STS), ttmp2
    s_and_b64 exec, exec, exec
    s_and_b64 vcc, vcc, vcc
    s_setreg_b32 hwreg(HW_REG_STATUS), ttmp12
    s_rfe_b64 [ttmp0, ttmp1]
";

/// A wave's `s_trap 1` runs the second-level handler of [`amdgcn_isa::Trap`] with the registers
/// kfdtest's handler expects, its `MSG_GET_DOORBELL` answers the queue's doorbell id, its
/// `MSG_INTERRUPT` reaches the host with M0 and PRIV set, and `s_rfe_b64` returns past the
/// `s_trap` with SCC and EXEC as they were (kfdtest `KFDDBGTest.HitTrapEvent`'s shaders).
#[test]
fn s_trap_enters_the_second_level_handler_and_returns() {
    let Some(handler) = assemble(TRAP_HANDLER) else { return };
    let mem = VecMem::new();
    const TBA: u64 = 0x20_0000_0000;
    write_ro(&mem, TBA, &handler);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let opts = Options {
        max_wave_instructions: Some(100_000),
        trap: Some(amdgcn_isa::Trap {
            tba: TBA,
            tma: 0x30_0000_0000,
            doorbell_id: 0x1a3,
            interrupt: std::sync::Arc::new(move |data, privileged| s2.lock().unwrap().push((data, privileged))),
            host_trap: None,
        }),
        ..Default::default()
    };
    // kfdtest's JumpToTrapIsa: v4 = 0, trap, spin until the handler set v4; SCC set before the
    // trap must survive it.
    let body = format!(
        "    v_mov_b32 v4, 0
    s_cmp_eq_u32 0, 0
    s_trap 1
    s_cselect_b32 s8, 7, 9
EXIT_LOOP:
    v_cmp_eq_u32 vcc, v4, 0
    s_cbranch_vccnz EXIT_LOOP
    v_mov_b32 v5, s8
{}{}",
        store(0, "v4"),
        store(1, "v5")
    );
    let Some(o) = run_snippet_with(&mem, &body, &lanes_in(), 64, 2, opts, 0) else { return };
    // ttmp1 as the handler saw it: the s_trap's PC bits 47:32 (the code sits at KD_VA + 256)
    // and trap id 1 in bits 23:16.
    let ttmp1 = ((KD_VA >> 32) as u32 & 0xffff) | 1 << 16;
    assert!(o[..64].iter().all(|&v| v == ttmp1), "v4 {:#x}, want {ttmp1:#x}", o[0]);
    assert!(o[64..].iter().all(|&v| v == 7), "SCC after the trap: s8 = {}", o[64]);
    assert_eq!(*seen.lock().unwrap(), vec![(0x1a3 | 0x800, true)], "one privileged interrupt, doorbell | trap code 2");
}

/// SMEM atomics (ROCr's trap handler claims sample slots with `s_atomic_add_x2`): the old
/// value comes back in SDATA with GLC only, `_x2` works on 64 bits, cmpswap takes the compare
/// value from the register after the source.
#[test]
fn smem_atomics_return_the_old_value_with_glc() {
    let vals = ["s10", "s12", "s13", "s14", "s16", "s20", "s21", "s22", "s23"];
    let mut body = "    s_mov_b32 s10, 5
    s_atomic_add s10, s[6:7], 0x0 glc
    s_mov_b32 s12, 100
    s_mov_b32 s13, 0
    s_atomic_add_x2 s[12:13], s[6:7], 0x8 glc
    s_mov_b32 s14, 42
    s_mov_b32 s15, 6
    s_atomic_cmpswap s[14:15], s[6:7], 0x0 glc
    s_mov_b32 s16, 1
    s_atomic_add s16, s[6:7], 0x4
    s_waitcnt lgkmcnt(0)
    s_load_dwordx4 s[20:23], s[6:7], 0x0 glc
    s_waitcnt lgkmcnt(0)
"
    .to_string();
    for (k, r) in vals.iter().enumerate() {
        body += &format!("    v_mov_b32 v4, {r}\n{}", store(k, "v4"));
    }
    // Input dwords 0..4: 1, 4, 7, 10.
    let Some(o) = run_snippet(&body, &lanes_in(), 64, vals.len()) else { return };
    let got: Vec<u32> = o.chunks(64).map(|c| c[0]).collect();
    assert_eq!(got, [1, 7, 10, 6, 1, 42, 5, 107, 10]);
}

/// A host trap ([`amdgcn_isa::HostTrap`]) enters the second-level handler between two
/// instructions with `ttmp1` = PC[47:32] | trap id << 16 | HT (bit 24) and the dispatch id in
/// `ttmp6-7`, and `s_rfe_b64` resumes
/// the wave where it was, SCC included: the loop below (whose `s_cmp`/`s_cbranch` pair a trap
/// may split) ends only after three host traps.
#[test]
fn host_trap_enters_the_second_level_handler_between_instructions() {
    // s20 counts entries; s21-s23 keep ttmp1, ttmp6 and ttmp7 as the handler found them.
    let handler = "    s_add_u32 s20, s20, 1
    s_mov_b32 s21, ttmp1
    s_mov_b32 s22, ttmp6
    s_mov_b32 s23, ttmp7
    s_and_b32 ttmp1, ttmp1, 0xffff
    s_setreg_b32 hwreg(HW_REG_STATUS), ttmp12
    s_rfe_b64 [ttmp0, ttmp1]
";
    let Some(handler) = assemble(handler) else { return };
    let mem = VecMem::new();
    const TBA: u64 = 0x20_0000_0000;
    write_ro(&mem, TBA, &handler);
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let a2 = asked.clone();
    let returned = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let r2 = returned.clone();
    let opts = Options {
        max_wave_instructions: Some(10_000_000),
        trap: Some(amdgcn_isa::Trap {
            tba: TBA,
            tma: 0x30_0000_0000,
            doorbell_id: 0,
            interrupt: std::sync::Arc::new(|_, _| {}),
            // Every other time the wave is asked: a host trap with id 4 (PC sampling's).
            host_trap: Some(amdgcn_isa::HostTrap {
                take: std::sync::Arc::new(move |_, seen| {
                    a2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    *seen = seen.wrapping_add(1);
                    (*seen % 2 == 1).then_some(4)
                }),
                returned: std::sync::Arc::new(move || {
                    r2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }),
            }),
        }),
        ..Default::default()
    };
    let body = format!(
        "    s_mov_b32 s20, 0
    s_mov_b32 s9, 0
LOOP:
    s_add_u32 s9, s9, 1
    s_cmp_lt_u32 s20, 3
    s_cbranch_scc1 LOOP
    v_mov_b32 v4, s20
    v_mov_b32 v5, s21
    v_mov_b32 v6, s22
    v_mov_b32 v7, s23
{}{}{}{}",
        store(0, "v4"),
        store(1, "v5"),
        store(2, "v6"),
        store(3, "v7")
    );
    let Some(o) = run_snippet_with(&mem, &body, &lanes_in(), 64, 4, opts, 0x7_1234_5678) else { return };
    let ttmp1 = ((KD_VA >> 32) as u32 & 0xffff) | 4 << 16 | 1 << 24;
    assert!(o[..64].iter().all(|&v| v == 3), "handler entries {}", o[0]);
    assert!(o[64..128].iter().all(|&v| v == ttmp1), "ttmp1 {:#x}, want {ttmp1:#x}", o[64]);
    assert_eq!((o[128], o[192]), (0x1234_5678, 7), "ttmp6, ttmp7: the dispatch id");
    // Not asked while in the handler: two asks per trap taken, three traps.
    assert!(asked.load(std::sync::atomic::Ordering::Relaxed) >= 6);
    assert_eq!(returned.load(std::sync::atomic::Ordering::Relaxed), 3, "returns from host traps");
}

/// With no second-level handler the first-level handler steps over `s_trap`; with no trap
/// handling at all (`Options::trap` None) `s_trap` ends the dispatch with an error.
#[test]
fn s_trap_without_a_second_level_handler_is_stepped_over() {
    let body = format!("    v_mov_b32 v4, 5\n    s_trap 2\n    v_mov_b32 v4, 6\n{}", store(0, "v4"));
    let opts = Options {
        max_wave_instructions: Some(100_000),
        trap: Some(amdgcn_isa::Trap {
            tba: 0,
            tma: 0,
            doorbell_id: 0,
            interrupt: std::sync::Arc::new(|_, _| {}),
            host_trap: None,
        }),
        ..Default::default()
    };
    let Some(o) = run_snippet_with(&VecMem::new(), &body, &lanes_in(), 64, 1, opts, 0) else { return };
    assert!(o.iter().all(|&v| v == 6));
    let src = "    s_trap 2\n    s_endpgm\n";
    let Some(code) = assemble(src) else { return };
    let mem = VecMem::new();
    let mut img = vec![0u8; 256];
    img[16..24].copy_from_slice(&256i64.to_le_bytes());
    img[48..52].copy_from_slice(&0x3fu32.to_le_bytes());
    img[52..56].copy_from_slice(&(2u32 << 1).to_le_bytes());
    img[56..58].copy_from_slice(&(1u16 << 3).to_le_bytes());
    img.extend_from_slice(&code);
    write_ro(&mem, KD_VA, &img);
    let ka = mem.alloc_with(&[0u8; 16]);
    let d = Dispatch {
        kernel_object: KD_VA,
        kernarg_address: ka,
        grid_size: [64, 1, 1],
        workgroup_size: [64, 1, 1],
        ..Default::default()
    };
    let e = amdgcn_isa::run_with(&mem, &d, 1, &Options::default()).unwrap_err();
    assert!(matches!(e, ExecError::Invalid(ref m) if m.contains("s_trap 2")), "{e}");
}
