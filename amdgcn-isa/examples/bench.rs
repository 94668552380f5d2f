//! Kernels through the interpreter: prints lane-instructions per second (total and per host
//! thread). `cargo run --release -p amdgcn-isa --example bench [kernel] [n] [threads]`, where
//! kernel is `saxpy` (y += 3x over n floats, the default) or `count_reverse` (hip-tests'
//! addCountReverse, Unit_hipEvent's kernel: c = a + 100 written 100 times over n ints by a
//! 64-bit index loop, one element per thread) or `copy128` (dst = src over n 16-byte elements,
//! the first dword of each xor 1:
//! full-wave `global_load_dwordx4`/`global_store_dwordx4`, the fast path's wide accesses).
#[path = "../tests/common/mod.rs"]
mod common;

use amdgcn_isa::{Dispatch, Memory, Options};
use common::{Args, Gpu};

/// Checks the kernel's results after the runs.
type Check = Box<dyn Fn(&Gpu)>;

fn main() {
    let mut a = std::env::args().skip(1).peekable();
    let kernel = match a.peek() {
        Some(k) if k.parse::<usize>().is_err() => a.next().unwrap(),
        _ => "saxpy".to_string(),
    };
    let n: usize = a.next().and_then(|v| v.parse().ok()).unwrap_or(1 << 22);
    let threads: usize = a.next().and_then(|v| v.parse().ok()).unwrap_or(1);
    let Some(g) = Gpu::new("basic.hip", &["-O3"]) else { return };
    let (args, check): (Args, Check) = match kernel.as_str() {
        "saxpy" => {
            let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let y: Vec<f32> = vec![1.0; n];
            let (xa, ya) = (g.upload(&x), g.upload(&y));
            let check = move |g: &Gpu| {
                let out: Vec<f32> = g.download(ya, 4);
                assert_eq!(out[3], 1.0 + 3.0 * 3.0 * 3.0, "three runs of y += 3x");
            };
            (Args::default().i32(n as i32).f32(3.0).ptr(xa).ptr(ya), Box::new(check))
        }
        "count_reverse" => {
            let x: Vec<i32> = (0..n as i32).collect();
            let (xa, ca) = (g.upload(&x), g.mem.alloc(4 * n as u64));
            let check = move |g: &Gpu| {
                let out: Vec<i32> = g.download(ca, n);
                assert!(out.iter().enumerate().all(|(i, &v)| v == i as i32 + 100), "c = a + 100");
            };
            (Args::default().ptr(xa).ptr(ca).i64(n as i64).i32(100), Box::new(check))
        }
        "copy128" => {
            let x: Vec<u32> = (0..4 * n as u32).collect();
            let (xa, ya) = (g.upload(&x), g.mem.alloc(16 * n as u64));
            let check = move |g: &Gpu| {
                let out: Vec<u32> = g.download(ya, 4 * n);
                let want = |i: usize| i as u32 ^ i.is_multiple_of(4) as u32;
                assert!(out.iter().enumerate().all(|(i, &v)| v == want(i)), "dst = src, x ^= 1");
            };
            (Args::default().ptr(xa).ptr(ya).i32(n as i32), Box::new(check))
        }
        k => panic!("unknown kernel {k} (saxpy, count_reverse or copy128)"),
    };
    let kd = g.co.kd(&kernel);
    let mut b = [0u8; 64];
    g.mem.read(kd, &mut b).unwrap();
    let mut k = args.0;
    k.resize(256, 0);
    let kernarg = g.mem.alloc_with(&k);
    let grid = n.div_ceil(256) as u32 * 256;
    let mut p = [0u8; 64];
    p[4..6].copy_from_slice(&256u16.to_le_bytes());
    p[6..8].copy_from_slice(&1u16.to_le_bytes());
    p[8..10].copy_from_slice(&1u16.to_le_bytes());
    p[12..16].copy_from_slice(&grid.to_le_bytes());
    p[16..20].copy_from_slice(&1u32.to_le_bytes());
    p[20..24].copy_from_slice(&1u32.to_le_bytes());
    let pkt = g.mem.alloc_with(&p);
    let d = Dispatch {
        kernel_object: kd,
        kernarg_address: kernarg,
        dispatch_ptr: pkt,
        queue_ptr: 0,
        grid_size: [grid, 1, 1],
        workgroup_size: [256, 1, 1],
        group_segment_size: 0,
        private_segment_size: 0,
        registers: None,
        dispatch_id: 0,
    };
    let mut best = 0f64;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let s = amdgcn_isa::run_with(&g.mem, &d, threads, &Options::default()).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let rate = s.lane_instructions as f64 / dt;
        best = best.max(rate);
        println!(
            "{kernel} n={n} threads={threads}: {} wave-instr, {} lane-instr in {:.3}s: {:.1} M lane-instr/s ({:.1} M per thread, {:.1} ns per wave-instr per thread)",
            s.wave_instructions,
            s.lane_instructions,
            dt,
            rate / 1e6,
            rate / 1e6 / threads as f64,
            dt * threads as f64 * 1e9 / s.wave_instructions as f64
        );
    }
    check(&g);
    println!("best: {:.1} M lane-instr/s", best / 1e6);
}
