//! `hipkfd-info` on kfd-sim topologies: the GPU count, each GPU's identity, the link type / hops /
//! weight matrices from the KFD io_links and the `hipDeviceCanAccessPeer` matrix; and a clear
//! failure without /dev/kfd. Each case runs its own `kfdsim run --topology ...` (nested sessions).
mod artifacts;

use std::process::Command;

fn kfdsim() -> std::path::PathBuf {
    artifacts::artifact("kfdsim")
}

fn info(topology: &[&str]) -> String {
    let out = Command::new(kfdsim())
        .arg("run")
        .args(topology)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_hipkfd-info"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "hipkfd-info {topology:?}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `n`×`n` matrix printed under the line starting with `title`.
fn matrix(out: &str, title: &str, n: usize) -> Vec<Vec<String>> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(title));
    assert!(lines.next().is_some(), "no {title:?} in:\n{out}");
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, (0..n).map(|i| format!("GPU{i}")).collect::<Vec<_>>(), "{title}");
    (0..n)
        .map(|i| {
            let row: Vec<String> = lines.next().unwrap().split_whitespace().map(str::to_owned).collect();
            assert_eq!(row.len(), n + 1, "{title} row {i}: {row:?}");
            assert_eq!(row[0], format!("GPU{i}"));
            assert_eq!(row[i + 1], "-", "{title} diagonal");
            row[1..].to_vec()
        })
        .collect()
}

/// Every off-diagonal cell of the matrix is `want`.
fn all_off_diagonal(m: &[Vec<String>], want: &str, title: &str) {
    for (i, row) in m.iter().enumerate() {
        for (j, cell) in row.iter().enumerate() {
            if i != j {
                assert_eq!(cell, want, "{title} [{i}][{j}]");
            }
        }
    }
}

fn check(topology: &[&str], n: usize, link: &str, hops: &str, weight: &str, peer: &str) {
    let out = info(topology);
    assert!(out.contains(&format!("GPUs: {n}\n")), "{out}");
    for i in 0..n {
        assert!(out.contains(&format!("GPU{i}: AMD Instinct")), "GPU{i} name:\n{out}");
    }
    assert!(!out.contains(&format!("GPU{n}:")), "{out}");
    assert_eq!(out.matches("  gfx target:   gfx90a:").count(), n, "{out}");
    assert_eq!(out.matches("  PCI bus id:   0000:").count(), n, "{out}");
    assert_eq!(out.matches(" MiB free").count(), n, "{out}");
    assert!(out.contains("KFD ioctl version: 1.17"), "{out}");
    assert!(out.contains("dma-buf IPC (AMDKFD_IOC_EXPORT_DMABUF):          yes"), "{out}");
    assert!(out.contains("GEM_VA in compute VM (VMM):     yes"), "{out}");
    all_off_diagonal(&matrix(&out, "Link type", n), link, "link type");
    all_off_diagonal(&matrix(&out, "Hops", n), hops, "hops");
    all_off_diagonal(&matrix(&out, "Weight", n), weight, "weight");
    all_off_diagonal(&matrix(&out, "hipDeviceCanAccessPeer", n), peer, "hipDeviceCanAccessPeer");
}

#[test]
fn two_gpus_in_an_xgmi_hive() {
    // kfd-sim's xGMI links: type 11, weight 15 (sysfs.rs).
    check(&["--gpus", "2"], 2, "XGMI", "1", "15", "1");
}

#[test]
fn four_gpus_in_an_xgmi_hive() {
    check(&["--topology", "xgmi-4"], 4, "XGMI", "1", "15", "1");
}

#[test]
fn two_gpus_on_pcie_without_p2p() {
    // Through the CPU: two PCIe hops of weight 20 each; no peer access (no p2p_links).
    check(&["--topology", "pcie-2"], 2, "PCIE", "2", "40", "0");
}

#[test]
fn two_gpus_on_pcie_with_p2p() {
    check(&["--topology", "pcie-p2p-2"], 2, "PCIE", "2", "40", "1");
}

#[test]
fn without_kfd_it_fails_with_a_clear_message() {
    // Outside the simulator (the test itself runs under kfdsim).
    let bare = |cmd: &mut Command| {
        cmd.env_remove("LD_PRELOAD").env_remove("KFDSIM_ROOT").env_remove("KFDSIM_SESSION");
    };
    let mut probe = Command::new("sh");
    probe.args(["-c", "test -e /dev/kfd"]);
    bare(&mut probe);
    if probe.status().unwrap().success() {
        eprintln!("skipped: this machine has a real /dev/kfd");
        return;
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hipkfd-info"));
    bare(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("hipkfd-info: cannot open /dev/kfd"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}
