//! Real hipcc-built kernels run through the interpreter, results checked against Rust.

mod common;
use common::{Args, Gpu};

fn gpu() -> Option<Gpu> {
    Gpu::new("basic.hip", &["-O3"])
}

#[test]
fn saxpy() {
    let Some(g) = gpu() else { return };
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
