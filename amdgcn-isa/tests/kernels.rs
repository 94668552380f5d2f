//! Real hipcc-built kernels run through the interpreter, results checked against Rust.

mod common;
use common::{Args, Gpu};

fn gpu() -> Option<Gpu> {
    Gpu::new("basic.hip", &["-O3"])
}

#[test]
fn saxpy() {
    let Some(g) = gpu() else { return };
    check_saxpy(&g);
}

fn check_saxpy(g: &Gpu) {
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let (xa, ya) = (g.upload(&x), g.upload(&y));
    let args = Args::default().i32(n as i32).f32(2.5).ptr(xa).ptr(ya);
    g.launch("saxpy", [1024, 1, 1], [256, 1, 1], args, 2).unwrap();
    let out: Vec<f32> = g.download(ya, n);
    for i in 0..n {
        assert_eq!(out[i], 2.5 * x[i] + y[i], "lane {i}");
    }
}

fn f32_bits_eq(a: f32, b: f32) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[test]
fn vadd_int() {
    let Some(g) = gpu() else { return };
    let n = 3000usize;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 7 - 5000).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| i32::MAX - i).collect();
    let (aa, ba, ca) = (g.upload(&a), g.upload(&b), g.mem.alloc(4 * n as u64));
    let args = Args::default().ptr(aa).ptr(ba).ptr(ca).i32(n as i32);
    g.launch("vadd_int", [3072, 1, 1], [128, 1, 1], args, 2).unwrap();
    let c: Vec<i32> = g.download(ca, n);
    for i in 0..n {
        assert_eq!(c[i], a[i].wrapping_add(b[i]), "lane {i}");
    }
}

#[test]
fn reduce_with_lds_barrier_atomic() {
    let Some(g) = gpu() else { return };
    check_reduce(&g);
}

fn check_reduce(g: &Gpu) {
    let n = 10_000usize;
    let v: Vec<i32> = (0..n as i32).map(|i| (i * 31) % 1000 - 300).collect();
    let (ia, oa) = (g.upload(&v), g.mem.alloc(4));
    let args = Args::default().ptr(ia).ptr(oa).i32(n as i32);
    let blocks = n.div_ceil(256) as u32;
    g.launch("reduce_sum", [blocks * 256, 1, 1], [256, 1, 1], args, 2).unwrap();
    let out: Vec<i32> = g.download(oa, 1);
    assert_eq!(out[0], v.iter().sum::<i32>());
}

#[test]
fn index_2d() {
    let Some(g) = gpu() else { return };
    let (w, h) = (100usize, 37usize);
    let oa = g.mem.alloc(4 * (w * h) as u64);
    let args = Args::default().ptr(oa).i32(w as i32).i32(h as i32);
    // 16x8 blocks: 7 x 5 of them.
    g.launch("index2d", [112, 40, 1], [16, 8, 1], args, 2).unwrap();
    let out: Vec<i32> = g.download(oa, w * h);
    for y in 0..h {
        for x in 0..w {
            assert_eq!(out[y * w + x], (x * 1000 + y) as i32, "({x},{y})");
        }
    }
}

#[test]
fn loop_divergent_branches() {
    let Some(g) = gpu() else { return };
    check_collatz(&g);
}

fn check_collatz(g: &Gpu) {
    let n = 500usize;
    let v: Vec<u32> = (1..=n as u32).collect();
    let (ia, oa) = (g.upload(&v), g.mem.alloc(4 * n as u64));
    let args = Args::default().ptr(ia).ptr(oa).i32(n as i32);
    g.launch("collatz", [512, 1, 1], [64, 1, 1], args, 1).unwrap();
    let out: Vec<u32> = g.download(oa, n);
    for i in 0..n {
        let (mut x, mut s) = (v[i], 0u32);
        while x != 1 && s < 1000 {
            x = if x & 1 == 1 { 3 * x + 1 } else { x >> 1 };
            s += 1;
        }
        assert_eq!(out[i], s, "n={}", v[i]);
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let s = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f32;
    match e {
        0 => s * m * 2f32.powi(-24),
        31 => {
            if m == 0.0 {
                s * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => s * (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    }
}

fn f32_to_f16(f: f32) -> u16 {
    // Exhaustive nearest search (test-only; values are small and normal).
    let mut best = 0u16;
    let mut err = f32::INFINITY;
    for h in 0..=0xffffu16 {
        let v = f16_to_f32(h);
        if v.is_finite() && (v - f).abs() < err {
            err = (v - f).abs();
            best = h;
        }
    }
    best
}

#[test]
fn double_and_half() {
    let Some(g) = gpu() else { return };
    let n = 200usize;
    let a: Vec<f64> = (0..n).map(|i| i as f64 * 1.25 + 0.1).collect();
    let h: Vec<u16> = (0..n).map(|i| f32_to_f16((i % 40) as f32 * 0.25 - 3.0)).collect();
    let (aa, ha) = (g.upload(&a), g.upload(&h));
    let (od, oh) = (g.mem.alloc(8 * n as u64), g.mem.alloc(2 * n as u64));
    let args = Args::default().ptr(aa).ptr(ha).ptr(od).ptr(oh).i32(n as i32);
    g.launch("dbl_half", [256, 1, 1], [64, 1, 1], args, 2).unwrap();
    let d: Vec<f64> = g.download(od, n);
    let e: Vec<u16> = g.download(oh, n);
    for i in 0..n {
        let x = a[i];
        let want = x * x + x.sqrt() - x / 3.0;
        assert!((d[i] - want).abs() <= want.abs() * 1e-15, "double {i}: {} vs {want}", d[i]);
        let y = f16_to_f32(h[i]);
        let yy = f16_to_f32(f32_to_f16(y * y));
        assert_eq!(e[i], f32_to_f16(yy + 1.0), "half {i}");
    }
}

#[test]
fn scratch_local_array() {
    let Some(g) = gpu() else { return };
    check_scratch_array(&g);
}

fn check_scratch_array(g: &Gpu) {
    let n = 300usize;
    let idx: Vec<i32> = (0..n as i32).map(|i| i * 13 + 1).collect();
    let (ia, oa) = (g.upload(&idx), g.mem.alloc(4 * n as u64));
    let args = Args::default().ptr(ia).ptr(oa).i32(n as i32);
    g.launch("scratch_array", [320, 1, 1], [64, 1, 1], args, 2).unwrap();
    let out: Vec<i32> = g.download(oa, n);
    for i in 0..n {
        let j = (idx[i] % 48) as usize;
        let arr = |k: usize| (k as i32) * i as i32 + 7;
        assert_eq!(out[i], arr(j) + arr((j + 5) % 48), "lane {i}");
    }
}

#[test]
fn atomic_cas_loop() {
    let Some(g) = gpu() else { return };
    let n = 1000usize;
    let ca = g.mem.alloc(4);
    let args = Args::default().ptr(ca).i32(n as i32);
    g.launch("cas_add", [1024, 1, 1], [256, 1, 1], args, 2).unwrap();
    let out: Vec<u32> = g.download(ca, 1);
    assert_eq!(out[0], (0..n as u32).map(|i| i % 7).sum::<u32>());
}

#[test]
fn grid_stride_loop() {
    let Some(g) = gpu() else { return };
    let n = 5000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let xa = g.upload(&x);
    let args = Args::default().ptr(xa).i32(n as i32);
    // 4 blocks of 128: each thread handles ~10 elements.
    g.launch("grid_stride", [512, 1, 1], [128, 1, 1], args, 2).unwrap();
    let out: Vec<f32> = g.download(xa, n);
    for i in 0..n {
        assert_eq!(out[i], x[i] * 2.0 + 1.0, "elem {i}");
    }
}

#[test]
fn count_reverse_64bit_index_loop() {
    let Some(g) = gpu() else { return };
    // 1000 elements over a grid of 384: each thread walks 2 or 3 indices down.
    let n = 1000usize;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 700).collect();
    let (aa, ca) = (g.upload(&a), g.mem.alloc(4 * n as u64));
    let args = Args::default().ptr(aa).ptr(ca).i64(n as i64).i32(7);
    g.launch("count_reverse", [384, 1, 1], [128, 1, 1], args, 2).unwrap();
    let c: Vec<i32> = g.download(ca, n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + 7, "elem {i}");
    }
}

#[test]
fn copy_dwordx2_dwordx4_and_memset() {
    let Some(g) = gpu() else { return };
    let n = 700usize;
    let src: Vec<u32> = (0..4 * n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let sa = g.upload(&src);
    let d2 = g.mem.alloc(8 * n as u64);
    let d4 = g.mem.alloc(16 * n as u64);
    g.launch("copy64", [768, 1, 1], [256, 1, 1], Args::default().ptr(sa).ptr(d2).i32(n as i32), 2).unwrap();
    g.launch("copy128", [768, 1, 1], [256, 1, 1], Args::default().ptr(sa).ptr(d4).i32(n as i32), 2).unwrap();
    let o2: Vec<u32> = g.download(d2, 2 * n);
    let o4: Vec<u32> = g.download(d4, 4 * n);
    assert_eq!(&o2[..], &src[..2 * n]);
    for i in 0..4 * n {
        let want = if i % 4 == 0 { src[i] ^ 1 } else { src[i] };
        assert_eq!(o4[i], want, "dword {i}");
    }
    let m = g.mem.alloc(1000);
    g.launch("memset8", [1024, 1, 1], [256, 1, 1], Args::default().ptr(m).u8(0xa5).i32(999), 2).unwrap();
    let b = g.mem.read_vec(m, 1000);
    assert!(b[..999].iter().all(|&x| x == 0xa5));
    assert_eq!(b[999], 0);
}

#[test]
fn shfl_and_ballot() {
    let Some(g) = gpu() else { return };
    let n = 128usize;
    let v: Vec<i32> = (0..n as i32).map(|i| i * 3 + (i % 5)).collect();
    let (ia, oa) = (g.upload(&v), g.mem.alloc(16 * n as u64));
    g.launch("shfl_ballot", [128, 1, 1], [128, 1, 1], Args::default().ptr(ia).ptr(oa), 1).unwrap();
    let out: Vec<i32> = g.download(oa, 4 * n);
    for i in 0..n {
        let wave = i / 64 * 64;
        let t = i % 64;
        let sum: i32 = v[wave..wave + 64].iter().sum();
        let odd = v[wave..wave + 64].iter().filter(|&&x| x & 1 == 1).count() as i32;
        assert_eq!(out[4 * i], sum, "xor-reduce lane {i}");
        assert_eq!(out[4 * i + 1], odd, "ballot lane {i}");
        assert_eq!(out[4 * i + 2], v[wave + (t + 3) % 64], "shfl lane {i}");
        let down = if t + 1 < 64 { v[i + 1] } else { v[i] };
        assert_eq!(out[4 * i + 3], down, "shfl_down lane {i}");
    }
}

#[test]
fn out_of_bounds_read_faults() {
    let Some(g) = gpu() else { return };
    let (pa, oa) = (g.mem.alloc(256), g.mem.alloc(256));
    let r = g.launch("oob_read", [64, 1, 1], [64, 1, 1], Args::default().ptr(pa).ptr(oa), 1);
    let want = (pa + (1 << 28)) & !0xfff;
    assert_eq!(r, Err(amdgcn_isa::ExecError::Fault(amdgcn_isa::Fault { va: want, write: false })));
}

#[test]
fn float_math() {
    let Some(g) = gpu() else { return };
    let n = 256usize;
    let a: Vec<f32> = (0..n).map(|i| (i as f32 - 100.0) * 0.37).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i * 7) % 23) as f32 * 0.5 - 3.0).collect();
    let (aa, ba, oa) = (g.upload(&a), g.upload(&b), g.mem.alloc(16 * n as u64));
    g.launch("fmath", [256, 1, 1], [256, 1, 1], Args::default().ptr(aa).ptr(ba).ptr(oa).i32(n as i32), 1).unwrap();
    let o: Vec<f32> = g.download(oa, 4 * n);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        assert!(f32_bits_eq(o[4 * i], x / y), "div {i}: {} vs {}", o[4 * i], x / y);
        assert_eq!(o[4 * i + 1], x.abs().sqrt() + x.min(y), "sqrt/min {i}");
        assert_eq!(o[4 * i + 2], ((x * 3.5) as i32) as f32 + ((y * 10.0) as u32) as f32, "cvt {i}");
        assert_eq!(o[4 * i + 3], if x > y { x - y } else { y * 0.25 }, "select {i}");
    }
}

#[test]
fn atomics_variety() {
    let Some(g) = gpu() else { return };
    let n = 1000usize;
    let ia = g.upload(&[0i32, 0, 1000, -5]);
    let ua = g.upload(&[u32::MAX, 0, 0, 0, 0, u32::MAX]);
    let u64a = g.upload(&[0u64]);
    let fa = g.upload(&[0f32]);
    let args = Args::default().ptr(ia).ptr(ua).ptr(u64a).ptr(fa).i32(n as i32);
    g.launch("atomics", [1024, 1, 1], [256, 1, 1], args, 2).unwrap();
    let i: Vec<i32> = g.download(ia, 4);
    let u: Vec<u32> = g.download(ua, 6);
    let q: Vec<u64> = g.download(u64a, 1);
    let f: Vec<f32> = g.download(fa, 1);
    let n32 = n as i32;
    assert_eq!(i, vec![(0..n32).sum(), -n32, -100, n32 - 1]);
    assert_eq!(u[0], 0);
    assert_eq!(u[1], u32::MAX);
    assert_eq!(u[2], (0..n as u32).fold(0, |a, b| a ^ b));
    // atomicInc wraps at 16: n increments from 0 end at n % 17.
    assert_eq!(u[3], n as u32 % 17);
    assert_eq!(u[4], 77);
    assert_eq!(u[5], 5);
    assert_eq!(q[0], (0..n as u64).map(|i| i << 20).sum::<u64>());
    assert_eq!(f[0], 0.5 * n as f32);
}

#[test]
fn lds_tile_transpose_2d() {
    let Some(g) = gpu() else { return };
    let w = 64usize;
    let m: Vec<f32> = (0..w * w).map(|i| i as f32).collect();
    let (ia, oa) = (g.upload(&m), g.mem.alloc(4 * (w * w) as u64));
    g.launch("lds_transpose", [64, 64, 1], [16, 16, 1], Args::default().ptr(ia).ptr(oa).i32(w as i32), 2).unwrap();
    let o: Vec<f32> = g.download(oa, w * w);
    for y in 0..w {
        for x in 0..w {
            assert_eq!(o[x * w + y], m[y * w + x], "({x},{y})");
        }
    }
}

#[test]
fn integer_division() {
    let Some(g) = gpu() else { return };
    let n = 500usize;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 7919 - 1_000_000).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| if i % 2 == 0 { i + 1 } else { -(i * 3 + 2) }).collect();
    let (aa, ba) = (g.upload(&a), g.upload(&b));
    let (qa, q64a) = (g.mem.alloc(8 * n as u64), g.mem.alloc(8 * n as u64));
    g.launch("int_div", [512, 1, 1], [128, 1, 1], Args::default().ptr(aa).ptr(ba).ptr(qa).ptr(q64a).i32(n as i32), 2)
        .unwrap();
    let q: Vec<i32> = g.download(qa, 2 * n);
    let q64: Vec<u64> = g.download(q64a, n);
    for i in 0..n {
        assert_eq!(q[2 * i], a[i] / b[i], "div {i}");
        assert_eq!(q[2 * i + 1], a[i] % b[i], "rem {i}");
        assert_eq!(q64[i], ((a[i] as u32 as u64) << 20) / (b[i] as u32 as u64), "div64 {i}");
    }
}

fn math() -> Option<Gpu> {
    Gpu::new("math.hip", &["-O3"])
}

fn close32(got: f32, want: f64, rel: f64) -> bool {
    let g = got as f64;
    (g - want).abs() <= rel * want.abs().max(1e-30) + 1e-6
}

#[test]
fn device_math_f32() {
    let Some(g) = math() else { return };
    let n = 256usize;
    let a: Vec<f32> = (0..n).map(|i| (i as f32 - 128.0) * 0.173).collect();
    let (aa, oa) = (g.upload(&a), g.mem.alloc(32 * n as u64));
    g.launch("math_f32", [256, 1, 1], [128, 1, 1], Args::default().ptr(aa).ptr(oa).i32(n as i32), 2).unwrap();
    let o: Vec<f32> = g.download(oa, 8 * n);
    for i in 0..n {
        let x = a[i] as f64;
        let xf = a[i];
        let want = [
            x.sin(),
            x.cos(),
            (xf * 0.1) as f64,
            (x.abs() + 1.0).ln(),
            (x.abs() + 0.5).powf(1.7),
            (xf * 0.2) as f64,
            xf.floor() as f64 + (xf * 0.3).ceil() as f64 + (-xf).trunc() as f64,
            xf.mul_add(xf, -1.0) as f64 + 1.0 / ((xf.abs() + 1.0) as f64).sqrt(),
        ];
        let want = [want[0], want[1], want[2].exp(), want[3], want[4], want[5].tanh(), want[6], want[7]];
        for k in 0..8 {
            assert!(close32(o[8 * i + k], want[k], 4e-6), "f32 fn {k} x={x}: {} vs {}", o[8 * i + k], want[k]);
        }
    }
}

#[test]
fn device_math_f64() {
    let Some(g) = math() else { return };
    let n = 256usize;
    let a: Vec<f64> = (0..n).map(|i| (i as f64 - 128.0) * 0.731).collect();
    let (aa, oa) = (g.upload(&a), g.mem.alloc(32 * n as u64));
    g.launch("math_f64", [256, 1, 1], [64, 1, 1], Args::default().ptr(aa).ptr(oa).i32(n as i32), 2).unwrap();
    let o: Vec<f64> = g.download(oa, 4 * n);
    for i in 0..n {
        let x = a[i];
        let want = [x.sin(), (x * 0.1).exp(), (x.abs() + 1.0).ln(), x / (x * x + 1.0) + x.floor()];
        for k in 0..4 {
            let got = o[4 * i + k];
            assert!(
                (got - want[k]).abs() <= 1e-14 * want[k].abs().max(1e-300) + 1e-300,
                "f64 fn {k} x={x}: {got} vs {}",
                want[k]
            );
        }
    }
}

#[test]
fn bit_intrinsics() {
    let Some(g) = math() else { return };
    let n = 256usize;
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e3779b9) ^ (i << 3)).collect();
    let (aa, oa) = (g.upload(&a), g.mem.alloc(32 * n as u64));
    g.launch("bits", [256, 1, 1], [256, 1, 1], Args::default().ptr(aa).ptr(oa).i32(n as i32), 1).unwrap();
    let o: Vec<u32> = g.download(oa, 8 * n);
    for i in 0..n {
        let x = a[i];
        let y = ((x as u64) << 32) | x.wrapping_mul(2654435761) as u64;
        let fsl = {
            let s = (i % 32) as u32;
            // __funnelshift_l(lo, hi, s): the high word of (hi:lo) << s.
            ((((x.wrapping_mul(3) as u64) << 32 | x as u64) << s) >> 32) as u32
        };
        let perm = {
            let b = ((x.wrapping_mul(7) as u64) << 32 | x as u64).to_le_bytes();
            u32::from_le_bytes([b[0], b[4], b[1], b[5]])
        };
        let want = [
            x.count_ones(),
            x.leading_zeros(),
            if x == 0 { 0 } else { x.trailing_zeros() + 1 },
            x.reverse_bits(),
            fsl,
            y.count_ones() + y.leading_zeros(),
            perm,
            (x >> 5) & 0x3ff,
        ];
        for k in 0..8 {
            assert_eq!(o[8 * i + k], want[k], "bits fn {k} x={x:#x}");
        }
    }
}

#[test]
fn half_precision() {
    let Some(g) = math() else { return };
    let n = 128usize;
    let a: Vec<u16> = (0..n).map(|i| f32_to_f16((i as f32 - 64.0) * 0.0625)).collect();
    let (aa, oa) = (g.upload(&a), g.mem.alloc(8 * n as u64));
    g.launch("half_math", [128, 1, 1], [64, 1, 1], Args::default().ptr(aa).ptr(oa).i32(n as i32), 1).unwrap();
    let o: Vec<u16> = g.download(oa, 4 * n);
    let r = |f: f32| f32_to_f16(f);
    for i in 0..n {
        let x = f16_to_f32(a[i]);
        let sq = f16_to_f32(r(x * x));
        assert_eq!(o[4 * i], r(x * x), "mul2 lo {i}");
        // hipcc contracts hadd2(hmul2(p, p), p) into v_pk_fma_f16: one rounding.
        assert_eq!(o[4 * i + 1], r(x * x - x), "fma2 hi {i}");
        let _ = sq;
        let q = f16_to_f32(o[4 * i + 2]);
        assert!((q - x / 3.0).abs() <= 1e-3 * (x / 3.0).abs() + 1e-7, "div {i}: {q} vs {}", x / 3.0);
        assert_eq!(o[4 * i + 3], if x > 0.5 { a[i] } else { r(x - 2.0) }, "select {i}");
    }
}

#[test]
fn syncthreads_count_and_or() {
    let Some(g) = math() else { return };
    let v: Vec<i32> = (0..512).map(|i| if i == 300 { 77 } else { i % 20 }).collect();
    let (ia, oa) = (g.upload(&v), g.mem.alloc(4 * 6));
    g.launch("sync_count", [512, 1, 1], [256, 1, 1], Args::default().ptr(ia).ptr(oa), 2).unwrap();
    let o: Vec<i32> = g.download(oa, 6);
    for b in 0..2 {
        let s = &v[b * 256..(b + 1) * 256];
        assert_eq!(o[3 * b], s.iter().filter(|&&x| x > 10).count() as i32);
        assert_eq!(o[3 * b + 1], 1);
        assert_eq!(o[3 * b + 2], s.contains(&77) as i32);
    }
}

#[test]
#[ignore = "debug helper: AMDGCN_ISA_TRACE=1 cargo test -- --ignored trace_one"]
fn trace_one() {
    let Some(g) = math() else { return };
    let a: Vec<f32> = vec![-22.144; 64];
    let (aa, oa) = (g.upload(&a), g.mem.alloc(32 * 64));
    g.launch("math_f32", [1, 1, 1], [1, 1, 1], Args::default().ptr(aa).ptr(oa).i32(1), 1).unwrap();
    let o: Vec<f32> = g.download(oa, 8);
    eprintln!("{o:?}");
}

/// Every instruction hipcc emitted for the test kernels decodes and executes (no
/// `Unsupported`), walking `.text` linearly.
#[test]
fn test_kernels_fully_supported() {
    use object::{Object, ObjectSection};
    for (file, opt) in [("basic.hip", "-O3"), ("math.hip", "-O3"), ("coop.hip", "-O3"), ("basic.hip", "-O0")] {
        let Some(elf) = common::build(file, &[opt]) else { return };
        let f = object::File::parse(&*elf).unwrap();
        let code = f.section_by_name(".text").unwrap().data().unwrap().to_vec();
        let (mut off, mut n) = (0, 0);
        while off + 4 <= code.len() {
            let w = [0, 1, 2].map(|k| {
                let o = off + 4 * k;
                code.get(o..o + 4).map_or(0, |c| u32::from_le_bytes(c.try_into().unwrap()))
            });
            match amdgcn_isa::probe(w) {
                Ok(size) => off += size,
                Err(e) => panic!("{file} +{off:#x}: {e}"),
            }
            n += 1;
        }
        assert!(n > 300, "{file}: {n} instructions");
    }
}

#[test]
fn grid_sync_over_more_workgroups_than_threads() {
    let Some(g) = Gpu::new("coop.hip", &["-O3"]) else { return };
    let nb = 7usize;
    let pa = g.mem.alloc(8 * nb as u64);
    g.launch("grid_sync", [128 * nb as u32, 1, 1], [128, 1, 1], Args::default().ptr(pa), 2).unwrap();
    let o: Vec<i32> = g.download(pa, 2 * nb);
    for b in 0..nb {
        assert_eq!(o[b], b as i32 + 1);
        assert_eq!(o[nb + b], ((b + 1) % nb) as i32 + 1, "block {b} read before the grid barrier");
    }
}

#[test]
fn wave_spinning_on_lds_flag_of_another_wave() {
    let Some(g) = gpu() else { return };
    let oa = g.mem.alloc(16);
    g.launch("lds_flag_spin", [128, 1, 1], [128, 1, 1], Args::default().ptr(oa), 1).unwrap();
    let o: Vec<i32> = g.download(oa, 3);
    assert_eq!(o[1], 42);
    assert_eq!(o[2], 100000);
}

#[test]
fn index_3d() {
    let Some(g) = gpu() else { return };
    let (w, h, d) = (20usize, 12usize, 9usize);
    let oa = g.mem.alloc(4 * (w * h * d) as u64);
    // Blocks of 8x4x2 (one wave): 3 x 3 x 5 blocks.
    g.launch("index3d", [24, 12, 10], [8, 4, 2], Args::default().ptr(oa).i32(w as i32).i32(h as i32).i32(d as i32), 2)
        .unwrap();
    let out: Vec<i32> = g.download(oa, w * h * d);
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                assert_eq!(out[(z * h + y) * w + x], (x + 100 * y + 10000 * z + 1000000 * 5) as i32, "({x},{y},{z})");
            }
        }
    }
}

/// The same kernels built at -O0: everything lives in scratch, other instruction mix.
#[test]
fn unoptimised_kernels() {
    let Some(g) = Gpu::new("basic.hip", &["-O0"]) else { return };
    check_saxpy(&g);
    check_collatz(&g);
    check_reduce(&g);
    check_scratch_array(&g);
}

#[test]
fn workgroups_take_turns_when_one_waits_for_a_later_one() {
    let Some(g) = gpu() else { return };
    let n = 6usize;
    let fa = g.mem.alloc(8 * n as u64);
    g.launch("wait_for_next", [64 * n as u32, 1, 1], [64, 1, 1], Args::default().ptr(fa).i32(n as i32), 1).unwrap();
    let f: Vec<i32> = g.download(fa, 2 * n);
    assert_eq!(f, [vec![1; n], vec![2; n]].concat());
}

#[test]
fn workgroups_up_to_the_wave_slots_are_resident_together() {
    let Some(g) = gpu() else { return };
    let n = 40usize;
    let launch = |wave_slots| {
        let (ca, oa) = (g.mem.alloc(4), g.mem.alloc(4 * n as u64));
        let opts = amdgcn_isa::Options { max_wave_instructions: Some(2_000_000), wave_slots, ..Default::default() };
        let args = Args::default().ptr(ca).ptr(oa).i32(n as i32);
        g.launch_with("all_arrive", [64 * n as u32, 1, 1], [64, 1, 1], args, 1, &opts)
            .map(|()| g.download::<i32>(oa, n))
    };
    // A gfx90a's 104 CUs × 4 SIMDs × 8 waves: all 40 one-wave blocks fit and meet.
    assert_eq!(launch(Some(3328)).unwrap(), vec![n as i32; n]);
    // Fewer slots than blocks: the resident ones wait forever (here: until the budget ends).
    assert!(matches!(launch(Some(16)), Err(amdgcn_isa::ExecError::Invalid(_))));
}

#[test]
fn recursive_device_function_calls() {
    let Some(g) = gpu() else { return };
    let n = 100usize;
    let v: Vec<i32> = (0..n as i32).map(|i| i % 15).collect();
    let (ia, oa) = (g.upload(&v), g.mem.alloc(4 * n as u64));
    g.launch("recurse", [128, 1, 1], [64, 1, 1], Args::default().ptr(ia).ptr(oa).i32(n as i32), 2).unwrap();
    let o: Vec<i32> = g.download(oa, n);
    fn fib(n: i32) -> i32 {
        if n < 2 {
            n
        } else {
            fib(n - 1) + fib(n - 2)
        }
    }
    for i in 0..n {
        assert_eq!(o[i], fib(v[i]), "fib({})", v[i]);
    }
}
