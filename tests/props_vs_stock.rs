//! Device identity against AMD's: `hipGetDeviceProperties` (the ROCm 5 layout both libraries
//! export unversioned) of hipkfd and of Debian's stock `libamdhip64.so.5` (HIP 5.2 over ROCr),
//! field by field, on the same kfd-sim topologies (2 GPUs over xGMI, 3 over PCIe with P2P, 4 over
//! xGMI, and 2 over xGMI whose second GPU has no SRAM ECC: `gfx90a:sramecc-`). `hip-conformance/fidelity/props_dump.c` is built here with the system C compiler and run
//! twice per topology under `kfdsim run --topology`, once per library (dlopen()ed by path, so each process holds one runtime). The fields that differ on
//! purpose are listed, with the reason, in `tests/props_vs_stock.txt`; any other difference
//! fails, and so does a listed field that no longer differs (unless its reason starts "until").
//!
//! The stock library must be installed (`libamdhip64-5`, pulled by `libamdhip64-dev` in
//! `.ci/run`): a missing file fails, it does not skip.

mod artifacts;
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const STOCK: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// Builds props_dump into the test's scratch dir.
fn props_dump() -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("props_dump");
    artifacts::build_c("hip-conformance/fidelity/props_dump.c", &out, &["-ldl"]);
    out
}

/// The kfd-sim presets compared, with their GPU count.
const PRESETS: [(&str, usize); 3] = [("xgmi-2", 2), ("pcie-p2p-3", 3), ("xgmi-4", 4)];

/// KFD node `capability` bit `HSA_CAP_SRAM_EDCSUPPORTED` (kfd_topology.h), from which ROCr derives
/// `:sramecc+`.
const SRAM_EDCSUPPORTED: u64 = 0x0400_0000;

/// A 2-GPU hive whose second GPU lacks `SRAM_EDCSUPPORTED` in its KFD `capability` (the MI210
/// default that `kfdsim show` prints, less that bit), written to the test's scratch dir.
fn sramecc_off_topology() -> PathBuf {
    let out = Command::new(common::kfdsim()).args(["show", "--gpus", "1"]).output().expect("kfdsim show");
    let shown = String::from_utf8_lossy(&out.stdout);
    let capability: u64 = shown
        .lines()
        .find_map(|l| l.strip_prefix("capability = "))
        .unwrap_or_else(|| panic!("no capability in `kfdsim show`: {shown}"))
        .parse()
        .unwrap();
    assert_ne!(capability & SRAM_EDCSUPPORTED, 0, "the MI210 default has SRAM ECC");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xgmi-2-sramecc-off.toml");
    let hive = "[[gpu]]\nhive_id = 0x4a1f00c0ffee\n";
    let toml = format!("{hive}{hive}capability = {}\n", capability & !SRAM_EDCSUPPORTED);
    std::fs::write(&path, toml).unwrap();
    path
}

/// `DEVICE.FIELD → value` as props_dump prints them for `lib`, under `kfdsim run --topology`.
fn dump(exe: &Path, lib: &Path, topology: &str) -> BTreeMap<String, String> {
    let out = Command::new(common::kfdsim())
        .args(["run", "--topology", topology, "--"])
        .arg(exe)
        .arg(lib)
        .env_remove("KFDSIM_TRACE")
        .env_remove("HIPKFD_LOG")
        // ROCr turns XNACK on with HSA_XNACK=1 (stock then reports `:xnack+`); hipkfd has no XNACK.
        .env_remove("HSA_XNACK")
        .output()
        .expect("kfdsim runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "props_dump {} on {topology}: {:?}\n{stdout}\n{}",
        lib.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().filter_map(|l| l.split_once(' ')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The committed list: field → whether it may also match ("until ..." reasons).
fn expected_differences() -> BTreeMap<String, bool> {
    let text =
        std::fs::read_to_string(artifacts::root().join("tests/props_vs_stock.txt")).expect("tests/props_vs_stock.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (field, reason) = l.split_once('|').unwrap_or_else(|| panic!("no `|` in {l:?}"));
            assert!(!reason.trim().is_empty(), "{field}: no reason given");
            (field.trim().to_string(), reason.trim().starts_with("until"))
        })
        .collect()
}

#[test]
fn device_properties_match_stock_hip() {
    assert!(Path::new(STOCK).is_file(), "{STOCK} is missing: apt-get install libamdhip64-5");
    let exe = props_dump();
    let ours_lib = common::kfdsim().parent().unwrap().join("libamdhip64.so");
    let allowed = expected_differences();
    let sramecc_off = sramecc_off_topology();
    let mut topologies: Vec<(&str, usize, Vec<&str>)> =
        PRESETS.iter().map(|&(t, n)| (t, n, vec!["gfx90a:sramecc+:xnack-"; n])).collect();
    topologies.push((sramecc_off.to_str().unwrap(), 2, vec!["gfx90a:sramecc+:xnack-", "gfx90a:sramecc-:xnack-"]));
    for (topology, gpus, arch) in topologies {
        let stock = dump(&exe, Path::new(STOCK), topology);
        let ours = dump(&exe, &ours_lib, topology);
        let count = gpus.to_string();
        assert_eq!(stock.get("count"), Some(&count), "stock HIP sees {gpus} GPUs on {topology}: {stock:?}");
        assert_eq!(ours.keys().collect::<Vec<_>>(), stock.keys().collect::<Vec<_>>(), "same fields on {topology}");
        let mut unexpected = vec![];
        let mut differing: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, theirs) in &stock {
            let mine = &ours[k];
            if mine == theirs {
                continue;
            }
            let field = k.split_once('.').map_or(k.as_str(), |(_, f)| f);
            *differing.entry(field).or_default() += 1;
            if !allowed.contains_key(field) {
                unexpected.push(format!("{k}: hipkfd {mine:?}, stock {theirs:?}"));
            }
        }
        assert!(unexpected.is_empty(), "{topology}: unexpected differences from stock HIP:\n{}", unexpected.join("\n"));
        // A listed field must still differ on every device, unless it is marked "until".
        let stale: Vec<&String> = allowed
            .iter()
            .filter(|(f, may_match)| !**may_match && differing.get(f.as_str()) != Some(&gpus))
            .map(|(f, _)| f)
            .collect();
        assert!(stale.is_empty(), "{topology}: listed in tests/props_vs_stock.txt but no longer different: {stale:?}");
        // The identity fields the issue is about, spelled out.
        for (d, arch) in arch.iter().enumerate() {
            assert_eq!(ours[&format!("{d}.gcnArchName")], *arch, "{topology}");
            assert_eq!(ours[&format!("{d}.hdpMemFlushCntl")], "set");
        }
    }
}
