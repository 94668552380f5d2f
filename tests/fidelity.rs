//! kfd-sim against AMD's own userspace from Debian, unmodified: `rocminfo` (ROCm 5.2.3) over ROCr
//! (`libhsa-runtime64-1`), libhsakmt (`libhsakmt1`) and `libdrm-amdgpu1`. These tests start
//! `kfdsim run` themselves (the launcher is the test exe's target dir sibling:
//! `<target>/release/kfdsim`), so they run the same with or without the cargo runner.
//!
//! `rocminfo` must be installed (`.ci/run` installs it): a missing binary fails, it does not skip.
//! ROCr's copy path is checked by the C program `hip-conformance/fidelity/hsa_copy.c`
//! (`make -C hip-conformance fidelity`); kfd-sim/FIDELITY.md lists what each side exercises.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROCMINFO: &str = "/usr/bin/rocminfo";

mod artifacts;

/// `<target>/release/kfdsim`.
fn kfdsim() -> PathBuf {
    artifacts::artifact("kfdsim")
}

fn require_rocminfo() {
    assert!(
        Path::new(ROCMINFO).is_file(),
        "{ROCMINFO} is missing: install Debian's rocminfo (apt-get install rocminfo libhsa-runtime64-1 libhsakmt1 libdrm-amdgpu1 kmod)"
    );
}

/// Runs `kfdsim run <opts> -- rocminfo` with `envs`, the simulator's own variables cleared so an
/// outer `kfdsim run` (the cargo runner) does not leak into the child session.
fn rocminfo_under(opts: &[&str], envs: &[(&str, &str)]) -> Output {
    require_rocminfo();
    let mut args = vec!["run"];
    args.extend_from_slice(opts);
    args.extend_from_slice(&["--", ROCMINFO]);
    let mut c = Command::new(kfdsim());
    c.args(&args).env_remove("KFDSIM_TRACE");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("kfdsim runs")
}

fn ok_stdout(opts: &[&str]) -> String {
    let out = rocminfo_under(opts, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kfdsim run {opts:?} -- rocminfo: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// One agent of rocminfo's listing: its `Name:`, `Device Type:`, pool segments and ISA names.
#[derive(Debug, Default)]
struct Agent {
    name: String,
    device_type: String,
    /// (segment and flags, size in KB) per pool.
    pools: Vec<(String, u64)>,
    isas: Vec<String>,
}

fn value(line: &str) -> String {
    line.split_once(':').map(|(_, v)| v.trim().to_string()).unwrap_or_default()
}

/// Parses rocminfo's "HSA Agents" section: agents start at `Agent N`.
fn agents(stdout: &str) -> Vec<Agent> {
    let mut v: Vec<Agent> = Vec::new();
    let mut pending_segment: Option<String> = None;
    let mut in_isa = false;
    for raw in stdout.lines() {
        let line = raw.trim();
        if line.starts_with("Agent ") && line[6..].trim().parse::<u32>().is_ok() {
            v.push(Agent::default());
            in_isa = false;
            continue;
        }
        let Some(a) = v.last_mut() else { continue };
        if line.starts_with("ISA Info:") {
            in_isa = true;
        } else if line.starts_with("Name:") && a.name.is_empty() {
            a.name = value(line);
        } else if line.starts_with("Name:") && in_isa {
            a.isas.push(value(line));
        } else if line.starts_with("Device Type:") {
            a.device_type = value(line);
        } else if line.starts_with("Segment:") {
            pending_segment = Some(value(line));
        } else if line.starts_with("Size:") {
            if let Some(seg) = pending_segment.take() {
                let kb = value(line).split('(').next().unwrap().trim().parse().unwrap();
                a.pools.push((seg, kb));
            }
        }
    }
    v
}

fn has_pool(a: &Agent, segment: &str) -> Option<u64> {
    a.pools.iter().find(|(s, _)| s == segment).map(|(_, kb)| *kb)
}

#[test]
fn rocminfo_lists_cpu_and_two_gfx90a_agents_with_pools_and_isa() {
    let out = ok_stdout(&["--gpus", "2"]);
    assert!(out.contains("ROCk module is loaded"), "{out}");
    assert!(out.contains("*** Done ***"), "{out}");
    let ag = agents(&out);
    assert_eq!(ag.len(), 3, "{ag:#?}");
    let cpus: Vec<_> = ag.iter().filter(|a| a.device_type == "CPU").collect();
    let gpus: Vec<_> = ag.iter().filter(|a| a.device_type == "GPU").collect();
    assert_eq!((cpus.len(), gpus.len()), (1, 2), "{ag:#?}");
    // The CPU agent: system memory as fine-grained, kernarg and coarse-grained pools.
    let cpu = cpus[0];
    let sys = has_pool(cpu, "GLOBAL; FLAGS: FINE GRAINED").expect("CPU fine-grained pool");
    assert!(sys > 0);
    assert_eq!(has_pool(cpu, "GLOBAL; FLAGS: KERNARG, FINE GRAINED"), Some(sys), "{cpu:#?}");
    assert!(cpu.isas.is_empty(), "{cpu:#?}");
    // Each GPU: gfx90a, its VRAM (64 GiB, the MI210 preset) as coarse- and fine-grained global
    // pools, the 64 KB LDS as the GROUP pool, and the gfx90a ISA with its target features.
    for g in gpus {
        assert_eq!(g.name, "gfx90a", "{g:#?}");
        assert_eq!(has_pool(g, "GLOBAL; FLAGS: COARSE GRAINED"), Some(64 << 20), "{g:#?}");
        assert_eq!(has_pool(g, "GLOBAL; FLAGS: FINE GRAINED"), Some(64 << 20), "{g:#?}");
        assert_eq!(has_pool(g, "GROUP"), Some(64), "{g:#?}");
        assert_eq!(g.isas, vec!["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".to_string()], "{g:#?}");
    }
    assert!(out.contains("Marketing Name:          AMD Instinct MI210"), "{out}");
}

/// ROCr applies `HSA_XNACK=1` through SET_XNACK_MODE and reads the mode back, as the runtime
/// does: its ISA names then carry `xnack+`, the target our `gcnArchName` reports.
#[test]
fn rocminfo_with_hsa_xnack_lists_xnack_plus_isas() {
    let out = rocminfo_under(&["--gpus", "2"], &[("HSA_XNACK", "1")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("*** Done ***"), "{stdout}");
    let gpus: Vec<Agent> = agents(&stdout).into_iter().filter(|a| a.device_type == "GPU").collect();
    assert_eq!(gpus.len(), 2, "{gpus:#?}");
    for g in gpus {
        assert_eq!(g.isas, vec!["amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+".to_string()], "{g:#?}");
    }
}

#[test]
fn rocminfo_follows_the_topology() {
    for (opts, n) in [(&["--gpus", "1"][..], 1usize), (&["--gpus", "4"][..], 4), (&["--topology", "pcie-2"][..], 2)] {
        let out = ok_stdout(opts);
        let ag = agents(&out);
        let gpus = ag.iter().filter(|a| a.device_type == "GPU").count();
        assert_eq!(gpus, n, "{opts:?}: {ag:#?}");
        assert!(out.contains("*** Done ***"), "{opts:?}: {out}");
    }
}

/// Every ioctl ROCr, libhsakmt and libdrm_amdgpu make while rocminfo runs succeeds, except the
/// ROCm-only DBG_TRAP number (0x82 of ROCm 5.2's out-of-tree uapi, outside upstream's table:
/// ENOTTY, `kfd_ioctl`), and the session walks the documented sequence.
#[test]
fn rocminfo_ioctl_sequence_under_trace() {
    let out = rocminfo_under(&["--gpus", "2"], &[("KFDSIM_TRACE", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("kfdsim[")).collect();
    let failed: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(" = -1 "))
        .filter(|l| !l.contains("KFD ioctl nr 0x82 = -1 ENOTTY"))
        .collect();
    assert!(failed.is_empty(), "unexpected failures:\n{failed:#?}");
    let pos =
        |what: &str| lines.iter().position(|l| l.contains(what)).unwrap_or_else(|| panic!("no {what} in\n{stderr}"));
    let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    // hsaKmtOpenKFD: open, GET_VERSION; topology; then per GPU: ACQUIRE_VM on the render node,
    // SET_MEMORY_POLICY, and later ROCr's trap handler.
    assert!(pos("open /dev/kfd") < pos("AMDKFD_IOC_GET_VERSION"));
    assert!(pos("AMDKFD_IOC_GET_VERSION") < pos("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW"));
    assert!(pos("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW") < pos("AMDKFD_IOC_ACQUIRE_VM"));
    assert_eq!(count("AMDKFD_IOC_ACQUIRE_VM"), 2);
    assert_eq!(count("AMDKFD_IOC_SET_MEMORY_POLICY"), 2);
    assert_eq!(count("AMDKFD_IOC_SET_TRAP_HANDLER"), 2);
    // libdrm_amdgpu's amdgpu_device_initialize: DEV_INFO (0x16) per GPU.
    assert!(count("query: 22,") >= 2, "{stderr}");
    // The event page handed to the first CREATE_EVENT (a KFD_IOC_EVENT_MEMORY event); hsa_shut_down
    // frees every other BO (the event page lives until /dev/kfd closes: the KFD refuses to free
    // it, and libhsakmt does not try).
    assert!(lines.iter().any(|l| l.contains("AMDKFD_IOC_CREATE_EVENT") && l.contains("event_type: 8")));
    assert_eq!(count("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), count("AMDKFD_IOC_FREE_MEMORY_OF_GPU") + 1, "{stderr}");
}
