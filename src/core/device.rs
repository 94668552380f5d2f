//! Devices: the GPUs of the KFD topology, in KFD node order, filtered by `ROCR_VISIBLE_DEVICES`
//! then `HIP_VISIBLE_DEVICES` (or `CUDA_VISIBLE_DEVICES`), each with its render node and the
//! GPUVM acquired on it.
//!
//! Layer `core`: may call `abi` and its own layer.

use crate::abi::types::hipDeviceProp_t;
use crate::core::device_props::{parse_properties, KfdNode};
use kfd_ioctl::kfd::kfd_process_device_apertures;
use kfd_ioctl::RenderNode;
use std::collections::BTreeMap;
use std::fs;

/// Where the KFD publishes its topology (`kfd_topology.c`).
pub const TOPOLOGY: &str = "/sys/devices/virtual/kfd/kfd/topology/nodes";

/// One GPU node as the topology describes it.
#[derive(Clone, Debug)]
pub struct TopologyGpu {
    pub node: KfdNode,
    pub drm_render_minor: u32,
    /// Whether the host can map all of VRAM (a `FB_PUBLIC` heap, i.e. large BAR).
    pub large_bar: bool,
    /// KFD nodes this one has an io_link or p2p_link to, with the link type (`io_links/*/properties` `type`).
    pub links: Vec<(u32, u32)>,
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn marketing_name(device_id: u64) -> &'static str {
    match device_id {
        0x740f => "AMD Instinct MI210",
        0x7408 => "AMD Instinct MI250X",
        0x740c => "AMD Instinct MI250X / MI250",
        0x74a1 => "AMD Instinct MI300X",
        0x738c => "AMD Instinct MI100",
        _ => "AMD Radeon Graphics",
    }
}

/// Reads every GPU node (`gpu_id` ≠ 0) of the KFD topology, in node order. Empty when there is
/// no KFD.
pub fn read_topology() -> Vec<TopologyGpu> {
    let mut ids: Vec<u32> = match fs::read_dir(TOPOLOGY) {
        Ok(d) => d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect(),
        Err(_) => return vec![],
    };
    ids.sort_unstable();
    let mut out = vec![];
    for n in ids {
        let dir = format!("{TOPOLOGY}/{n}");
        let gpu_id: u32 = match read(&format!("{dir}/gpu_id")).and_then(|s| s.trim().parse().ok()) {
            Some(g) if g != 0 => g,
            _ => continue,
        };
        let props = parse_properties(&read(&format!("{dir}/properties")).unwrap_or_default());
        let name = read(&format!("{dir}/name")).unwrap_or_default().trim().to_string();
        let bank = |b: u64| parse_properties(&read(&format!("{dir}/mem_banks/{b}/properties")).unwrap_or_default());
        let banks: Vec<BTreeMap<String, u64>> =
            (0..props.get("mem_banks_count").copied().unwrap_or(0)).map(bank).collect();
        // heap_type 1 = FB_PUBLIC, 2 = FB_PRIVATE (kfd_crat.h HSA_MEM_HEAP_TYPE_*).
        let vram: Vec<&BTreeMap<String, u64>> =
            banks.iter().filter(|p| matches!(p.get("heap_type"), Some(1) | Some(2))).collect();
        let vram_size = vram.iter().map(|p| p.get("size_in_bytes").copied().unwrap_or(0)).sum();
        let large_bar = vram.iter().any(|p| p.get("heap_type") == Some(&1));
        let subdir_props = |kind: &str| -> Vec<BTreeMap<String, u64>> {
            let mut v: Vec<(u32, BTreeMap<String, u64>)> = fs::read_dir(format!("{dir}/{kind}"))
                .map(|d| {
                    d.flatten()
                        .filter_map(|e| {
                            let i = e.file_name().to_str()?.parse().ok()?;
                            Some((
                                i,
                                parse_properties(
                                    &read(&format!("{}/properties", e.path().display())).unwrap_or_default(),
                                ),
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default();
            v.sort_by_key(|(i, _)| *i);
            v.into_iter().map(|(_, p)| p).collect()
        };
        let io_links = subdir_props("io_links");
        let links = io_links
            .iter()
            .chain(subdir_props("p2p_links").iter())
            .filter_map(|p| Some((*p.get("node_to")? as u32, *p.get("type")? as u32)))
            .collect();
        let loc = props.get("location_id").copied().unwrap_or(0);
        let domain = props.get("domain").copied().unwrap_or(0);
        let pci_bus_id = format!("{:04x}:{:02x}:{:02x}.{:x}", domain, (loc >> 8) & 0xff, (loc >> 3) & 0x1f, loc & 0x7);
        let device_id = props.get("device_id").copied().unwrap_or(0);
        let drm_render_minor = props.get("drm_render_minor").copied().unwrap_or(0) as u32;
        out.push(TopologyGpu {
            node: KfdNode {
                node_id: n,
                gpu_id,
                props,
                name,
                vram_size,
                pci_bus_id,
                marketing_name: marketing_name(device_id).to_string(),
                mem_bank_props: vram.first().map(|p| (*p).clone()).unwrap_or_default(),
                caches: subdir_props("caches"),
                io_links,
                xnack_enabled: false,
            },
            drm_render_minor,
            large_bar,
            links,
        });
    }
    out
}

/// Applies a `*_VISIBLE_DEVICES` list to `n` devices: the indices it lists, in its order, up to
/// the first entry that is not a valid, unused index (CUDA's rule). `None` = variable unset.
pub fn visible(list: Option<&str>, n: usize) -> Vec<usize> {
    let Some(list) = list else { return (0..n).collect() };
    let mut out = vec![];
    for tok in list.split(',') {
        match tok.trim().parse::<usize>() {
            Ok(i) if i < n && !out.contains(&i) => out.push(i),
            _ => break,
        }
    }
    out
}

/// The GPUs this process may use, in HIP ordinal order.
pub fn visible_gpus() -> Vec<TopologyGpu> {
    let all = read_topology();
    let env = |k: &str| std::env::var(k).ok();
    let rocr: Vec<TopologyGpu> =
        visible(env("ROCR_VISIBLE_DEVICES").as_deref(), all.len()).into_iter().map(|i| all[i].clone()).collect();
    let hip = env("HIP_VISIBLE_DEVICES").or_else(|| env("CUDA_VISIBLE_DEVICES"));
    visible(hip.as_deref(), rocr.len()).into_iter().map(|i| rocr[i].clone()).collect()
}

/// What a program sets on a device and reads back (clr `hip::Device` flags and
/// `amd::Device` limits); nothing here changes how hipkfd runs work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    /// `hipSetDeviceFlags` (schedule bits) / `hipCtxCreate` (all bits); default 0 (`Auto`).
    pub flags: u32,
    /// `hipDeviceSetCacheConfig` (a `hipFuncCache_t`), default `PreferNone`.
    pub cache_config: i32,
    /// `hipLimitStackSize`, bytes (clr default 1024).
    pub stack_size: u64,
    /// `hipLimitMallocHeapSize`, bytes (clr `HIP_INITIAL_DM_SIZE`, 8 MiB).
    pub heap_size: u64,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig { flags: 0, cache_config: 0, stack_size: 1024, heap_size: 8 << 20 }
    }
}

/// One HIP device: a GPU with its render node, its GPUVM acquired on it, and its properties.
#[derive(Debug)]
pub struct Device {
    /// HIP ordinal.
    pub ordinal: usize,
    pub topo: TopologyGpu,
    pub gpu_id: u32,
    pub render: RenderNode,
    pub apertures: kfd_process_device_apertures,
    pub props: hipDeviceProp_t,
    /// Whether the host can map all of VRAM (the topology's FB_PUBLIC heap).
    pub large_bar: bool,
    /// Flags, cache config and limits the program set.
    pub config: parking_lot::Mutex<DeviceConfig>,
    /// The MMIO remap page (`KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP`), whose first two words are the
    /// HDP flush registers; `None` where the kernel gives none.
    pub mmio: Option<crate::core::memory::Bo>,
}

// SAFETY: the only raw pointers in a Device are `hipDeviceProp_t::hdpMemFlushCntl` and
// `hdpRegFlushCntl`, addresses of the MMIO remap page handed to the program, never dereferenced
// by the runtime; everything else is Send + Sync.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_devices_follow_cuda_rules() {
        assert_eq!(visible(None, 3), vec![0, 1, 2]);
        assert_eq!(visible(Some("1"), 3), vec![1]);
        assert_eq!(visible(Some("2,0"), 3), vec![2, 0]);
        assert_eq!(visible(Some("0,7,1"), 3), vec![0]);
        assert_eq!(visible(Some("-1"), 3), Vec::<usize>::new());
        assert_eq!(visible(Some(""), 3), Vec::<usize>::new());
    }
}
