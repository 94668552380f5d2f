//! Runtime tests through the C entry points, on kfd-sim (2 GPUs by default).

use amdhip64::abi::types::*;
use amdhip64::api::device::*;
use amdhip64::api::event::*;
use amdhip64::api::memory::*;
use amdhip64::api::stream::*;
use std::ffi::c_void;
use std::ptr::null_mut;

fn ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess);
}

fn device_count() -> i32 {
    let mut n = 0;
    ok(hipGetDeviceCount(&mut n));
    n
}

fn malloc(size: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(hipMalloc(&mut p, size));
    assert!(!p.is_null());
    p
}

#[test]
fn two_simulated_gpus() {
    assert_eq!(device_count(), 2);
}

#[test]
fn round_trip_on_every_device() {
    for d in 0..device_count() {
        ok(hipSetDevice(d));
        let n = (3 << 20) + 7; // not a multiple of a page
        let src: Vec<u8> = (0..n).map(|i| (i * 31 + d as usize) as u8).collect();
        let a = malloc(n);
        let b = malloc(n);
        ok(hipMemcpy(a, src.as_ptr().cast(), n, hipMemcpyKind::hipMemcpyHostToDevice));
        ok(hipMemcpy(b, a, n, hipMemcpyKind::hipMemcpyDeviceToDevice));
        let mut back = vec![0u8; n];
        ok(hipMemcpy(back.as_mut_ptr().cast(), b, n, hipMemcpyKind::hipMemcpyDeviceToHost));
        assert!(back == src, "device {d}: data differs after H2D, D2D, D2H");
        let mut attr = hipPointerAttribute_t::default();
        ok(hipPointerGetAttributes(&mut attr, (b as usize + 5) as *const c_void));
        assert_eq!(attr.r#type, hipMemoryType::hipMemoryTypeDevice);
        assert_eq!(attr.device, d);
        ok(hipFree(a));
        ok(hipFree(b));
    }
}

#[test]
fn large_pageable_copy_spans_staging_chunks() {
    let n = 9 << 20;
    let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let d = malloc(n);
    ok(hipMemcpy(d, src.as_ptr().cast(), n, hipMemcpyKind::hipMemcpyDefault));
    let mut back = vec![0u8; n];
    ok(hipMemcpy(back.as_mut_ptr().cast(), d, n, hipMemcpyKind::hipMemcpyDefault));
    assert!(back == src);
    ok(hipFree(d));
}

#[test]
fn memset_unaligned_edges() {
    let n = 64;
    let d = malloc(n);
    ok(hipMemset(d, 0, n));
    let p = d as usize;
    ok(hipMemset((p + 3) as *mut c_void, 0xab, 10));
    ok(hipMemsetD16((p + 18) as *mut c_void, 0x1234, 3));
    ok(hipMemsetD32((p + 32) as *mut c_void, 0x0a0b0c0d, 5));
    let mut h = vec![0u8; n];
    ok(hipMemcpy(h.as_mut_ptr().cast(), d, n, hipMemcpyKind::hipMemcpyDeviceToHost));
    let mut want = vec![0u8; n];
    want[3..13].fill(0xab);
    for i in 0..3 {
        want[18 + 2 * i..20 + 2 * i].copy_from_slice(&0x1234u16.to_le_bytes());
    }
    for i in 0..5 {
        want[32 + 4 * i..36 + 4 * i].copy_from_slice(&0x0a0b0c0du32.to_le_bytes());
    }
    assert_eq!(h, want);
    ok(hipFree(d));
}

#[test]
fn streams_ordered_by_events() {
    let n = 1 << 20;
    let mut host: *mut c_void = null_mut();
    ok(hipHostMalloc(&mut host, n, 0));
    let (a, b) = (malloc(n), malloc(n));
    let (mut s1, mut s2): (hipStream_t, hipStream_t) = (null_mut(), null_mut());
    ok(hipStreamCreate(&mut s1));
    ok(hipStreamCreateWithFlags(&mut s2, hipStreamNonBlocking));
    let mut ev = null_mut();
    ok(hipEventCreate(&mut ev));
    for round in 0..20u8 {
        ok(hipMemsetAsync(a, round as i32, n, s1));
        ok(hipEventRecord(ev, s1));
        ok(hipStreamWaitEvent(s2, ev, 0));
        ok(hipMemcpyAsync(b, a, n, hipMemcpyKind::hipMemcpyDeviceToDevice, s2));
        ok(hipMemcpyAsync(host, b, n, hipMemcpyKind::hipMemcpyDeviceToHost, s2));
        ok(hipStreamSynchronize(s2));
        // SAFETY: `host` is n bytes of pinned memory we own.
        let h = unsafe { std::slice::from_raw_parts(host as *const u8, n) };
        assert!(h.iter().all(|&x| x == round), "round {round}: stream 2 ran ahead of the event");
    }
    ok(hipEventDestroy(ev));
    ok(hipStreamDestroy(s1));
    ok(hipStreamDestroy(s2));
    ok(hipFree(a));
    ok(hipFree(b));
    ok(hipHostFree(host));
}

#[test]
fn elapsed_time_is_measured() {
    let (mut e0, mut e1) = (null_mut(), null_mut());
    ok(hipEventCreate(&mut e0));
    ok(hipEventCreate(&mut e1));
    let d = malloc(32 << 20);
    ok(hipEventRecord(e0, null_mut()));
    ok(hipMemset(d, 1, 32 << 20));
    ok(hipEventRecord(e1, null_mut()));
    ok(hipEventSynchronize(e1));
    let mut ms = -1.0f32;
    ok(hipEventElapsedTime(&mut ms, e0, e1));
    assert!(ms >= 0.0);
    ok(hipFree(d));
    ok(hipEventDestroy(e0));
    ok(hipEventDestroy(e1));
}

#[test]
fn address_range_of_interior_pointer() {
    let d = malloc(10000);
    let (mut base, mut size) = (null_mut(), 0usize);
    ok(hipMemGetAddressRange(&mut base, &mut size, (d as usize + 9999) as *mut c_void));
    assert_eq!((base, size), (d, 10000));
    assert_eq!(
        hipMemGetAddressRange(&mut base, &mut size, (d as usize + 10000) as *mut c_void),
        hipError_t::hipErrorNotFound
    );
    ok(hipFree(d));
    assert_eq!(hipMemGetAddressRange(&mut base, &mut size, d), hipError_t::hipErrorNotFound);
}

#[test]
fn freed_device_pointer_is_rejected_not_dereferenced() {
    let d = malloc(4096);
    ok(hipFree(d));
    let mut h = [0u8; 16];
    assert_eq!(
        hipMemcpy(h.as_mut_ptr().cast(), d, 16, hipMemcpyKind::hipMemcpyDeviceToHost),
        hipError_t::hipErrorInvalidValue
    );
    assert_eq!(hipFree(d), hipError_t::hipErrorInvalidValue);
}

#[test]
fn concurrent_threads_copy_correctly() {
    let threads: Vec<_> = (0..6u8)
        .map(|t| {
            std::thread::spawn(move || {
                ok(hipSetDevice((t % 2) as i32));
                let n = 256 << 10;
                let src = vec![t; n];
                for _ in 0..10 {
                    let d = malloc(n);
                    ok(hipMemcpy(d, src.as_ptr().cast(), n, hipMemcpyKind::hipMemcpyHostToDevice));
                    let mut back = vec![0u8; n];
                    ok(hipMemcpy(back.as_mut_ptr().cast(), d, n, hipMemcpyKind::hipMemcpyDeviceToHost));
                    assert!(back == src);
                    ok(hipFree(d));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
