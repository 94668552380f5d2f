//! kfd-sim against AMD's own userspace from Debian, unmodified: `rocminfo` (ROCm 5.2.3) over ROCr
//! (`libhsa-runtime64-1`), libhsakmt (`libhsakmt1`) and `libdrm-amdgpu1`. These tests start
//! `kfdsim run` themselves (the launcher is the test exe's target dir sibling:
//! `<target>/release/kfdsim`), so they run the same with or without the cargo runner.
//!
//! `rocminfo` and `rocm-smi` (with librocm-smi64) must be installed (`.ci/run` installs them): a
//! missing binary fails, it does not skip.
//! ROCr's copy path is checked by the C program `hip-conformance/fidelity/hsa_copy.c`
//! (`make -C hip-conformance fidelity`); kfd-sim/FIDELITY.md lists what each side exercises.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROCMINFO: &str = "/usr/bin/rocminfo";
const ROCM_SMI: &str = "/usr/bin/rocm-smi";

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

fn require_rocm_smi() {
    assert!(
        Path::new(ROCM_SMI).is_file(),
        "{ROCM_SMI} is missing: install Debian's rocm-smi (apt-get install rocm-smi librocm-smi64-1)"
    );
}

/// Runs `kfdsim run <opts> -- <cmd...>` (in `dir` if given) with `envs`, the simulator's trace
/// and the runtime's log cleared first so an outer `kfdsim run` (the cargo runner) does not leak
/// into the child session.
fn kfdsim_run(opts: &[&str], cmd: &[&str], envs: &[(&str, &str)], dir: Option<&Path>) -> Output {
    let mut c = Command::new(kfdsim());
    c.arg("run").args(opts).arg("--").args(cmd).env_remove("KFDSIM_TRACE").env_remove("HIPKFD_LOG");
    for (k, v) in envs {
        c.env(k, v);
    }
    if let Some(d) = dir {
        c.current_dir(d);
    }
    c.output().expect("kfdsim runs")
}

/// Asserts that `out` (of `kfdsim run <opts> -- <cmd...>`) exited with `code`; returns its stdout.
fn expect_exit(out: Output, opts: &[&str], cmd: &[&str], code: i32) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.code() == Some(code),
        "kfdsim run {opts:?} -- {cmd:?}: {:?}, expected exit {code}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs `kfdsim run <opts> -- rocminfo` with `envs`.
fn rocminfo_under(opts: &[&str], envs: &[(&str, &str)]) -> Output {
    require_rocminfo();
    kfdsim_run(opts, &[ROCMINFO], envs, None)
}

fn ok_stdout(opts: &[&str]) -> String {
    expect_exit(rocminfo_under(opts, &[]), opts, &[ROCMINFO], 0)
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

/// Runs `kfdsim run <opts> -- <cmd...>` in `dir`; asserts that it exited with `code` and returns
/// its stdout.
fn run_expect(opts: &[&str], cmd: &[&str], dir: &Path, code: i32) -> String {
    expect_exit(kfdsim_run(opts, cmd, &[], Some(dir)), opts, cmd, code)
}

/// A scratch directory of the test's own.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// libdrm_amdgpu (Debian `libdrm-amdgpu1` 2.4.114) submits SDMA IBs through the render node as
/// kfdtest's `KFDEvictTest` does (`hip-conformance/fidelity/drm_cs.c`): context, GTT and VRAM
/// BOs GEM_VA'd at `amdgpu_va_range_alloc` addresses, a BO list, `amdgpu_cs_submit` on the DMA
/// ring, `amdgpu_cs_query_fence_status`. The first IB's POLL_REGMEM waits on a word the program
/// holds: its fence stays unsignaled and its WRITE_LINEAR unwritten until the word is written;
/// then 100 IBs of NOPs complete in sequence order (kfd-sim/FIDELITY.md row 16).
#[test]
fn libdrm_amdgpu_command_submission_on_the_dma_ring() {
    let dir = scratch("drm-cs");
    artifacts::build_c(
        "hip-conformance/fidelity/drm_cs.c",
        &dir.join("drm_cs"),
        &["-I/usr/include/libdrm", "-ldrm_amdgpu", "-ldrm"],
    );
    let out = run_expect(&["--gpus", "1"], &["./drm_cs"], &dir, 0);
    assert!(out.contains("drm_cs: PASS"), "{out}");
}

/// rocm-smi (librocm_smi64 5.2.3, Python front end) finds the GPUs through /sys/class/drm
/// (`card<N>/device/vendor` and `vbios_version`, the render minor under `device/drm`), matches
/// them to KFD nodes by PCI address, and reads the hwmon and power-management attributes: its
/// default view lists both GPUs with the model's values, and the link types come from the KFD
/// io_links (xGMI in a hive; PCIe otherwise). The default view exits 2: an MI210 is passively
/// cooled, so amdgpu publishes no fan attributes (`pm.no_fan`), the fan query answers
/// RSMI_STATUS_NOT_SUPPORTED, and rocm-smi 5.2 returns the last failed status, shown or not.
#[test]
fn rocm_smi_lists_the_gpus_and_their_links() {
    require_rocm_smi();
    let dir = scratch("rocm-smi-list");
    let out = run_expect(&["--gpus", "2"], &[ROCM_SMI], &dir, 2);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(['0', '1'])).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for r in rows {
        let cols: Vec<&str> = r.split_whitespace().collect();
        // GPU Temp AvgPwr SCLK MCLK Fan Perf PwrCap VRAM% GPU%
        assert_eq!(cols[1..5], ["35.0c", "42.0W", "500Mhz", "400Mhz"], "{r}");
        assert_eq!(cols[6..8], ["auto", "300.0W"], "{r}");
    }
    let out = run_expect(&["--gpus", "3"], &[ROCM_SMI, "--showtopotype", "--json"], &dir, 0);
    for pair in ["0 and 1", "0 and 2", "1 and 2"] {
        assert!(out.contains(&format!("between DRM devices {pair}\": \"XGMI\"")), "{out}");
    }
    let out = run_expect(&["--topology", "pcie-p2p-2"], &[ROCM_SMI, "--showtopotype", "--json"], &dir, 0);
    assert!(out.contains("between DRM devices 0 and 1\": \"PCIE\""), "{out}");
    let out = run_expect(&["--gpus", "1"], &[ROCM_SMI, "--showproductname", "--showbus", "--json"], &dir, 0);
    assert!(out.contains("\"Card SKU\": \"D67301\""), "{out}");
    assert!(out.contains("\"PCI Bus\": \"0000:03:00.0\""), "{out}");
}

/// `mem_info_vram_used` is live, as amdgpu makes it at each read: a process of the session that
/// holds 1 GiB on GPU 1 shows in rocm-smi and in a plain read of the file, and stops counting
/// once it is killed (the kernel frees a dead process's BOs).
#[test]
fn rocm_smi_vram_use_follows_the_session() {
    require_rocm_smi();
    let dir = scratch("rocm-smi-vram");
    let rel = artifacts::release_dir().display().to_string();
    artifacts::build_c(
        "hip-conformance/fidelity/vram_hold.c",
        &dir.join("vram_hold"),
        &[&format!("-L{rel}"), &format!("-Wl,-rpath,{rel}"), "-lamdhip64"],
    );
    let script = format!(
        "./vram_hold 1 1024 & pid=$!; \
         while [ ! -e ready ]; do kill -0 $pid || exit 9; sleep 0.05; done; \
         echo file $(cat /sys/class/drm/card1/device/mem_info_vram_used); \
         {ROCM_SMI} --showmeminfo vram --json; echo; \
         kill $pid; wait $pid; \
         echo file $(cat /sys/class/drm/card1/device/mem_info_vram_used); \
         {ROCM_SMI} --showmeminfo vram --json"
    );
    let out = run_expect(&["--gpus", "2"], &["sh", "-c", &script], &dir, 0);
    let used: Vec<u64> = out
        .split("\"VRAM Total Used Memory (B)\": \"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse().unwrap())
        .collect();
    let files: Vec<u64> =
        out.lines().filter_map(|l| l.strip_prefix("file ")).map(|v| v.trim().parse().unwrap()).collect();
    // [card0, card1] while held, then after the kill.
    assert_eq!(used.len(), 4, "{out}");
    assert_eq!(files.len(), 2, "{out}");
    let held = used[1];
    assert!((1 << 30..(1 << 30) + (64 << 20)).contains(&held), "GPU 1 holds {held} bytes\n{out}");
    assert_eq!(files[0], held, "{out}");
    assert!(used[0] < 64 << 20, "GPU 0 holds {} bytes\n{out}", used[0]);
    assert_eq!((used[2], used[3], files[1]), (0, 0, 0), "{out}");
    assert!(out.contains("\"VRAM Total Memory (B)\": \"68719476736\""), "{out}");
}

/// `kfdsim run --node NAME`: runs with one name are one machine (a process holding 1 GiB of
/// VRAM on GPU 1 in one run shows in another run's `mem_info_vram_used`), runs with another
/// name are another machine (0 there), each run's host name is its node's while the host's
/// stays, and a node cannot change its topology. This is how two nodes of a cluster run on one
/// host (README "Two nodes").
#[test]
fn node_runs_share_a_machine_and_a_host_name() {
    let dir = scratch("node-runs");
    let rel = artifacts::release_dir().display().to_string();
    artifacts::build_c(
        "hip-conformance/fidelity/vram_hold.c",
        &dir.join("vram_hold"),
        &[&format!("-L{rel}"), &format!("-Wl,-rpath,{rel}"), "-lamdhip64"],
    );
    let pid = std::process::id();
    let (a, b) = (format!("test-a-{pid}"), format!("test-b-{pid}"));
    let node_dir = |n: &str| {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        std::fs::canonicalize(std::env::temp_dir()).unwrap().join(format!("kfdsim-node-{uid}-{n}"))
    };
    let mut holder = Command::new(kfdsim())
        .args(["run", "--gpus", "2", "--node", &a, "--", "./vram_hold", "1", "1024"])
        .current_dir(&dir)
        .spawn()
        .expect("kfdsim runs");
    let t0 = std::time::Instant::now();
    while !dir.join("ready").exists() {
        assert!(holder.try_wait().unwrap().is_none(), "vram_hold exited early");
        assert!(t0.elapsed().as_secs() < 60, "vram_hold never got ready");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let probe = "echo $(hostname) $(cat /sys/class/drm/card1/device/mem_info_vram_used) $KFDSIM_SESSION";
    let same = run_expect(&["--gpus", "2", "--node", &a], &["sh", "-c", probe], &dir, 0);
    let other = run_expect(&["--gpus", "2", "--node", &b], &["sh", "-c", probe], &dir, 0);
    let changed = kfdsim_run(&["--gpus", "4", "--node", &a], &["true"], &[], Some(&dir));
    // SAFETY: kill of our own child; kfdsim passes SIGTERM on to vram_hold.
    unsafe { libc::kill(holder.id() as i32, libc::SIGTERM) };
    let _ = holder.wait();
    let fields = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (same, other) = (fields(&same), fields(&other));
    let held: u64 = same[1].parse().unwrap();
    assert_eq!(same[0], a, "host name of node {a}");
    assert!((1 << 30..(1 << 30) + (64 << 20)).contains(&held), "node {a}'s GPU 1 holds {held} bytes");
    assert_eq!(Path::new(&same[2]), node_dir(&a));
    assert_eq!(other[0], b, "host name of node {b}");
    assert_eq!(other[1], "0", "node {b} is another machine");
    assert_eq!(Path::new(&other[2]), node_dir(&b));
    assert_eq!(changed.status.code(), Some(125), "a node keeps its topology");
    assert!(String::from_utf8_lossy(&changed.stderr).contains("exists with another topology"));
    let host = Command::new("hostname").output().unwrap();
    assert_ne!(String::from_utf8_lossy(&host.stdout).trim(), a, "the host's own name is untouched");
    for n in [&a, &b] {
        std::fs::remove_dir_all(node_dir(n)).unwrap();
    }
}
