//! The simulator's accounting: `KFDSIM_STATS` prints, when a process that used a simulated device
//! exits (`exit(3)` or a return from `main`; not `_exit` or a signal), what it still holds in the
//! model, one `key=value` per line, each key prefixed with `process.<pid>.`:
//!
//! | key | what |
//! |---|---|
//! | `bos` | live KFD BOs (ALLOC_MEMORY_OF_GPU / IMPORT_DMABUF handles, all GPUs) |
//! | `gpu<i>.gpu_id` | the `gpu_id` of GPU `i` (topology order) |
//! | `gpu<i>.bos`, `gpu<i>.vram_bytes`, `gpu<i>.gtt_bytes`, `gpu<i>.userptr_bytes` | its KFD BOs and their bytes by domain (imports count in the domain of the import) |
//! | `gpu<i>.vram_usage` | the pdd's `vram_usage` (what AVAILABLE_MEMORY subtracts) |
//! | `gpu<i>.mapped` | KFD BOs mapped to this GPU (MAP_MEMORY_TO_GPU) |
//! | `gem_handles`, `gem_bytes` | GEM handles of all render-node files, and their BOs' bytes |
//! | `va_mappings` | GPUVM mappings of all VMs (KFD maps and GEM_VA) |
//! | `queues`, `events`, `syncobjs` | KFD queues, KFD events, syncobj handles |
//! | `fds.device`, `fds.dmabuf`, `fds.syncobj` | open fds of simulated devices, of dma-bufs (BO memfds), of syncobjs and sync_files |
//! | `faults.<NAME>`, `faults.total` | faults injected (`KFDSIM_FAULTS`) |
//!
//! `KFDSIM_STATS=1` writes the record to stderr, any other value appends it to that path. Under
//! the launcher each record is also appended to `<session>/stats`; when the command ends, the
//! launcher adds the `session.` record: `session.processes` and the sum of every key over the
//! processes (same destination). Test drivers read single counters mid-run with the exported
//! `kfdsim_stat(key)`; `kfdsim_stat` also answers the kernel dispatch counters `aql.dispatches`,
//! `aql.lane_instructions`, `aql.dispatch_ns`, `aql.dispatch_thread_ns` (`model::aql`) and the
//! per-call counts `calls.<NAME>` / `calls.total` (`calls`), which the record leaves out.

use crate::model::{gpus, process};
use kfd_ioctl::kfd::{KFD_IOC_ALLOC_MEM_FLAGS_GTT, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, KFD_IOC_ALLOC_MEM_FLAGS_VRAM};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// Env: where the records go (`1`: stderr; else a path, appended to).
pub const ENV_STATS: &str = "KFDSIM_STATS";

/// The counters of this process, `(key, value)` in a fixed order; `None` if the process never
/// used a simulated device (or its state stayed locked for a second).
pub fn snapshot() -> Option<Vec<(String, u64)>> {
    let p = process::current_if_exists()?;
    let st = p.state.try_lock_for(Duration::from_secs(1))?;
    let mut out: Vec<(String, u64)> = Vec::new();
    let mut put = |k: String, v: u64| out.push((k, v));
    let bos: usize = st.pdds.iter().map(|d| d.alloc_idr.len()).sum();
    put("bos".into(), bos as u64);
    for (i, g) in gpus::all().iter().enumerate() {
        let Some(d) = st.pdd(g.gpu_id) else { continue };
        let bytes = |flag: u32| d.alloc_idr.values().filter(|m| m.flags & flag != 0).map(|m| m.bo.size).sum::<u64>();
        let mapped = st.pdds.iter().flat_map(|d| d.alloc_idr.values()).filter(|m| m.mapped.contains(&g.gpu_id)).count();
        put(format!("gpu{i}.gpu_id"), g.gpu_id as u64);
        put(format!("gpu{i}.bos"), d.alloc_idr.len() as u64);
        put(format!("gpu{i}.vram_bytes"), bytes(KFD_IOC_ALLOC_MEM_FLAGS_VRAM));
        put(format!("gpu{i}.gtt_bytes"), bytes(KFD_IOC_ALLOC_MEM_FLAGS_GTT));
        put(format!("gpu{i}.userptr_bytes"), bytes(KFD_IOC_ALLOC_MEM_FLAGS_USERPTR));
        put(format!("gpu{i}.vram_usage"), d.vram_usage);
        put(format!("gpu{i}.mapped"), mapped as u64);
    }
    let files = st.drm_files.values();
    put("gem_handles".into(), files.clone().map(|f| f.handles.len() as u64).sum());
    put("gem_bytes".into(), files.clone().flat_map(|f| f.handles.values()).map(|b| b.size).sum());
    // Each VM once: an acquired render file shares its VM with the pdd.
    let mut vms: Vec<_> = st.pdds.iter().map(|d| d.vm.clone()).collect();
    for f in files.clone() {
        if !vms.iter().any(|v| Arc::ptr_eq(v, &f.vm)) {
            vms.push(f.vm.clone());
        }
    }
    let va: usize = vms.iter().map(|v| v.try_read_for(Duration::from_secs(1)).map_or(0, |v| v.len())).sum();
    put("va_mappings".into(), va as u64);
    put("queues".into(), st.queues.len() as u64);
    put("events".into(), st.events.events.len() as u64);
    put("syncobjs".into(), files.map(|f| f.syncobjs.handles.len() as u64).sum());
    drop(st);
    let (dev, dmabuf, sync) = count_fds();
    put("fds.device".into(), dev);
    put("fds.dmabuf".into(), dmabuf);
    put("fds.syncobj".into(), sync);
    let faults = crate::faults::injected();
    let total = faults.iter().map(|(_, v)| v).sum();
    for (name, v) in faults {
        put(format!("faults.{name}"), v);
    }
    put("faults.total".into(), total);
    Some(out)
}

/// Open fds of this process by kind: (simulated devices, dma-bufs, syncobjs and sync_files).
fn count_fds() -> (u64, u64, u64) {
    let (mut dev, mut dmabuf, mut sync) = (0, 0, 0);
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return (0, 0, 0) };
    for e in dir.flatten() {
        let Ok(link) = std::fs::read_link(e.path()) else { continue };
        let link = link.to_string_lossy();
        let Some(name) = link.strip_prefix("/memfd:kfdsim-") else { continue };
        if name.starts_with("bo ") {
            dmabuf += 1;
        } else if name.starts_with("syncobj") || name.starts_with("sync_file") {
            sync += 1;
        } else if name.starts_with("kfd") || name.starts_with("renderD") || name.starts_with("udmabuf") {
            dev += 1;
        }
    }
    (dev, dmabuf, sync)
}

/// One counter of [`snapshot`] (0 if absent).
pub fn get(key: &str) -> u64 {
    if let Some(v) = crate::model::aql::dispatch_stat(key) {
        return v;
    }
    if let Some(v) = crate::calls::stat(key) {
        return v;
    }
    snapshot().and_then(|s| s.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)).unwrap_or(0)
}

/// The record of this process: `process.<pid>.<key>=<value>` lines.
pub fn record(pid: u32, counters: &[(String, u64)]) -> String {
    let mut s = String::new();
    for (k, v) in counters {
        let _ = writeln!(s, "process.{pid}.{k}={v}");
    }
    s
}

/// At exit: writes this process's record where `KFDSIM_STATS` says, and to the session's file.
pub fn at_exit() {
    let Some(dest) = std::env::var_os(ENV_STATS).filter(|v| !v.is_empty() && v != "0") else { return };
    let Some(counters) = snapshot() else { return };
    let text = record(std::process::id(), &counters);
    if dest == "1" {
        crate::trace::emit_raw(&text);
    } else {
        let _ = crate::session::append(std::path::Path::new(&dest), &text);
    }
    if let Some(dir) = std::env::var_os(crate::session::ENV_SESSION) {
        let _ = crate::session::append(&std::path::Path::new(&dir).join(crate::session::STATS_FILE), &text);
    }
}
