//! `hipkfd-info`: what `rocminfo` and `rocm-smi --showtopo` tell a user, for the devices hipkfd
//! sees: each GPU's name, gfx target id (`gcnArchName`), VRAM total and free, PCI bus id and KFD
//! node; the GPU-to-GPU link type, hops and weight (the KFD topology's io_links, as rocm-smi reads
//! them) and `hipDeviceCanAccessPeer`; the kernel features, probed live through the runtime (KFD
//! ioctl version, dma-buf export for IPC, dma-buf import + `GEM_VA` in the compute VM for VMM).
//! Exit status 1, with the reason, when there is no usable `/dev/kfd` or no GPU.
use amdhip64::abi::types::*;
use amdhip64::api::device::*;
use amdhip64::api::ipc::hipIpcGetMemHandle;
use amdhip64::api::memory::{hipFree, hipMalloc};
use amdhip64::api::peer::hipDeviceCanAccessPeer;
use amdhip64::api::vmm::*;
use amdhip64::topology::{visible_gpus, TopologyGpu, IOLINK_TYPE_PCIE, IOLINK_TYPE_XGMI};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::process::ExitCode;

fn ok(e: hipError_t) -> Result<(), hipError_t> {
    if e.is_success() {
        Ok(())
    } else {
        Err(e)
    }
}

fn text(s: &[c_char]) -> String {
    let bytes: Vec<u8> = s.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn error_name(e: hipError_t) -> String {
    // SAFETY: hipGetErrorName returns a static NUL-terminated string for every value.
    unsafe { CStr::from_ptr(amdhip64::api::error::hipGetErrorName(e)) }.to_string_lossy().into_owned()
}

/// Link between two GPUs as rocm-smi reports it: (type, hops, weight). A direct io_link (xGMI)
/// is one hop with its own weight; otherwise the path runs through the CPU: two hops (three when
/// the GPUs hang off different CPU nodes), typed and weighted by the GPUs' links to the CPU.
fn link(a: &TopologyGpu, b: &TopologyGpu) -> (String, u32, u64) {
    let links = |g: &TopologyGpu| -> Vec<(u64, u64, u64)> {
        g.node
            .io_links
            .iter()
            .filter_map(|p| Some((*p.get("node_to")?, *p.get("type")?, p.get("weight").copied().unwrap_or(0))))
            .collect()
    };
    let name = |ty: u64| match ty as u32 {
        IOLINK_TYPE_XGMI => "XGMI".to_string(),
        IOLINK_TYPE_PCIE => "PCIE".to_string(),
        t => format!("TYPE{t}"),
    };
    let (la, lb) = (links(a), links(b));
    if let Some(&(_, ty, w)) = la.iter().find(|(to, _, _)| *to == u64::from(b.node.node_id)) {
        return (name(ty), 1, w);
    }
    // Each GPU's link to a non-GPU (CPU) node.
    let gpu_nodes: Vec<u64> = visible_gpus().iter().map(|g| u64::from(g.node.node_id)).collect();
    let to_cpu = |l: &[(u64, u64, u64)]| l.iter().find(|(to, _, _)| !gpu_nodes.contains(to)).copied();
    match (to_cpu(&la), to_cpu(&lb)) {
        (Some((ca, ty, wa)), Some((cb, _, wb))) => (name(ty), if ca == cb { 2 } else { 3 }, wa + wb),
        _ => ("NONE".to_string(), 0, 0),
    }
}

/// Whether `hipIpcGetMemHandle` works on device 0 (our IPC exports a dma-buf:
/// `AMDKFD_IOC_EXPORT_DMABUF`, KFD ≥ 1.12).
fn probe_dmabuf_ipc() -> Result<(), hipError_t> {
    let mut p: *mut c_void = std::ptr::null_mut();
    ok(hipMalloc(&mut p, 1 << 20))?;
    let mut h = hipIpcMemHandle_t::default();
    let r = ok(hipIpcGetMemHandle(&mut h, p));
    ok(hipFree(p))?;
    r
}

/// Whether a VMM chunk on device 0 can be mapped with access (dma-buf export, import on the render
/// node the compute VM was acquired on, `DRM_IOCTL_AMDGPU_GEM_VA` in that VM).
fn probe_gem_va() -> Result<(), hipError_t> {
    let prop = hipMemAllocationProp {
        r#type: hipMemAllocationType::hipMemAllocationTypePinned,
        handleTypes: hipMemAllocationProp_handleTypes {
            requestedHandleType: hipMemAllocationHandleType::hipMemHandleTypeNone,
        },
        location: hipMemLocation { r#type: hipMemLocationType::hipMemLocationTypeDevice, id: 0 },
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: Default::default(),
    };
    let mut gran = 0usize;
    ok(hipMemGetAllocationGranularity(
        &mut gran,
        &prop,
        hipMemAllocationGranularity_flags::hipMemAllocationGranularityMinimum,
    ))?;
    let mut handle: hipMemGenericAllocationHandle_t = std::ptr::null_mut();
    ok(hipMemCreate(&mut handle, gran, &prop, 0))?;
    let mut va: *mut c_void = std::ptr::null_mut();
    let r = ok(hipMemAddressReserve(&mut va, gran, 0, std::ptr::null_mut(), 0)).and_then(|()| {
        let r = ok(hipMemMap(va, gran, 0, handle, 0)).and_then(|()| {
            let desc =
                hipMemAccessDesc { location: prop.location, flags: hipMemAccessFlags::hipMemAccessFlagsProtReadWrite };
            let r = ok(hipMemSetAccess(va, gran, &desc, 1));
            ok(hipMemUnmap(va, gran)).and(r)
        });
        ok(hipMemAddressFree(va, gran)).and(r)
    });
    ok(hipMemRelease(handle)).and(r)
}

fn yes_no(r: Result<(), hipError_t>) -> String {
    match r {
        Ok(()) => "yes".to_string(),
        Err(e) => format!("no ({})", error_name(e)),
    }
}

fn matrix(title: &str, n: usize, cell: impl Fn(usize, usize) -> String) {
    println!("\n{title}");
    print!("      ");
    for j in 0..n {
        print!("{:>8}", format!("GPU{j}"));
    }
    println!();
    for i in 0..n {
        print!("{:<6}", format!("GPU{i}"));
        for j in 0..n {
            print!("{:>8}", if i == j { "-".to_string() } else { cell(i, j) });
        }
        println!();
    }
}

fn main() -> ExitCode {
    let kfd = match kfd_ioctl::Kfd::open() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("hipkfd-info: cannot open /dev/kfd ({e}): no AMD GPU driver (amdgpu with KFD) here, or no access to it (group render/video)");
            return ExitCode::FAILURE;
        }
    };
    let version = kfd.get_version();
    drop(kfd);
    let mut n: c_int = 0;
    if let Err(e) = ok(hipGetDeviceCount(&mut n)) {
        eprintln!("hipkfd-info: no usable GPU: hipGetDeviceCount returned {} (HIPKFD_LOG=1 says why)", error_name(e));
        return ExitCode::FAILURE;
    }
    let gpus = visible_gpus();
    let n = n as usize;
    let mut rt_version = 0;
    let _ = hipRuntimeGetVersion(&mut rt_version);

    println!("hipkfd {} (libamdhip64.so.7, HIP runtime version {rt_version})", env!("CARGO_PKG_VERSION"));
    match version {
        Ok((major, minor)) => println!("KFD ioctl version: {major}.{minor}"),
        Err(e) => println!("KFD ioctl version: unknown (AMDKFD_IOC_GET_VERSION: {e})"),
    }
    println!("Kernel features (probed on GPU0):");
    println!("  dma-buf IPC (AMDKFD_IOC_EXPORT_DMABUF):          {}", yes_no(probe_dmabuf_ipc()));
    println!("  dma-buf import + GEM_VA in compute VM (VMM):     {}", yes_no(probe_gem_va()));
    println!("GPUs: {n}");
    for (i, g) in gpus.iter().enumerate().take(n) {
        let mut p = hipDeviceProp_tR0600::default();
        if let Err(e) = ok(hipGetDevicePropertiesR0600(&mut p, i as c_int)) {
            println!("GPU{i}: hipGetDeviceProperties failed: {}", error_name(e));
            continue;
        }
        let (mut free, mut total) = (0usize, 0usize);
        let mem = ok(hipSetDevice(i as c_int)).and_then(|()| ok(hipMemGetInfo(&mut free, &mut total)));
        println!("GPU{i}: {}", text(&p.name));
        println!("  gfx target:   {}", text(&p.gcnArchName));
        println!("  PCI bus id:   {}", g.node.pci_bus_id);
        println!("  KFD node:     {} (gpu_id {})", g.node.node_id, g.node.gpu_id);
        match mem {
            Ok(()) => println!("  VRAM:         {} MiB total, {} MiB free", total >> 20, free >> 20),
            Err(e) => {
                println!("  VRAM:         {} MiB total, free unknown ({})", p.totalGlobalMem >> 20, error_name(e))
            }
        }
    }
    let links: Vec<Vec<(String, u32, u64)>> = (0..n)
        .map(|i| (0..n).map(|j| if i == j { Default::default() } else { link(&gpus[i], &gpus[j]) }).collect())
        .collect();
    matrix("Link type between two GPUs (KFD io_links)", n, |i, j| links[i][j].0.clone());
    matrix("Hops between two GPUs", n, |i, j| links[i][j].1.to_string());
    matrix("Weight between two GPUs", n, |i, j| links[i][j].2.to_string());
    matrix("hipDeviceCanAccessPeer (row: device, column: peer)", n, |i, j| {
        let mut can = 0;
        match ok(hipDeviceCanAccessPeer(&mut can, i as c_int, j as c_int)) {
            Ok(()) => can.to_string(),
            Err(_) => "err".to_string(),
        }
    });
    ExitCode::SUCCESS
}
