//! kfd-sim's files as a process sees them: the KFD topology in sysfs, the DRM and PCI sysfs, the
//! device nodes, /proc/modules, and the launcher's presets and topology files.
//!
//! Runs under the launcher (`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="<target>/release/kfdsim
//! run --"`), i.e. with libkfdsim.so preloaded and the default topology (xgmi-2). Tests that need
//! another topology start `kfdsim run` themselves (the launcher is the test exe's target dir
//! sibling: `<target>/release/kfdsim`).

use std::collections::HashMap;
use std::ffi::CString;
use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOPO: &str = "/sys/devices/virtual/kfd/kfd/topology";

fn require_kfdsim() {
    assert!(
        std::env::var_os("KFDSIM_ROOT").is_some(),
        "these tests run under kfd-sim: set CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=\"<target>/release/kfdsim run --\""
    );
}

mod artifacts;

/// `<target>/release/kfdsim`.
fn kfdsim() -> PathBuf {
    artifacts::artifact("kfdsim")
}

fn run_kfdsim(args: &[&str]) -> Output {
    Command::new(kfdsim()).args(args).output().expect("kfdsim runs")
}

/// Runs `sh -c script` under `kfdsim run <opts> --` and returns its stdout (asserting success).
fn sh_under(opts: &[&str], script: &str) -> String {
    let mut args = vec!["run"];
    args.extend_from_slice(opts);
    args.extend_from_slice(&["--", "sh", "-c", script]);
    let out = run_kfdsim(&args);
    assert!(
        out.status.success(),
        "kfdsim {args:?} failed: {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn parse_props(text: &str) -> HashMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn props(path: &str) -> HashMap<String, u64> {
    parse_props(&fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}")))
}

fn read(path: impl AsRef<Path>) -> String {
    let p = path.as_ref();
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn gpu_node_properties_describe_a_gfx90a() {
    require_kfdsim();
    let p = props(&format!("{TOPO}/nodes/1/properties"));
    assert_eq!(p["gfx_target_version"], 90010);
    assert_eq!(p["vendor_id"], 0x1002);
    assert_eq!(p["device_id"], 0x740f);
    assert_eq!(p["drm_render_minor"], 128);
    assert_eq!(p["cpu_cores_count"], 0);
    assert_eq!(p["simd_count"], 416);
    assert_eq!(p["io_links_count"], 2, "one PCIe link to the CPU, one xGMI link to the peer");
    assert_eq!(p["p2p_links_count"], 0);
    assert_ne!(p["hive_id"], 0);
    assert_eq!(props(&format!("{TOPO}/nodes/2/properties"))["hive_id"], p["hive_id"]);
    let mem = props(&format!("{TOPO}/nodes/1/mem_banks/0/properties"));
    assert_eq!(mem["heap_type"], 1, "large BAR: FB_PUBLIC");
    assert_eq!(mem["size_in_bytes"], 64 << 30);
    let xgmi = props(&format!("{TOPO}/nodes/1/io_links/1/properties"));
    assert_eq!((xgmi["type"], xgmi["node_from"], xgmi["node_to"], xgmi["weight"]), (11, 1, 2, 15));
    let cpu_link = props(&format!("{TOPO}/nodes/1/io_links/0/properties"));
    assert_eq!((cpu_link["type"], cpu_link["node_to"], cpu_link["weight"]), (2, 0, 20));
    let cpu = props(&format!("{TOPO}/nodes/0/properties"));
    assert!(cpu["cpu_cores_count"] > 0);
    assert_eq!(cpu["simd_count"], 0);
    assert_eq!(read(format!("{TOPO}/generation_id")).trim(), "3");
    assert!(read(format!("{TOPO}/system_properties")).starts_with("platform_oem "));
    assert_eq!(read(format!("{TOPO}/nodes/1/name")), "aldebaran\n");
}

#[test]
fn nodes_list_cpu_and_two_gpus_with_distinct_gpu_ids() {
    require_kfdsim();
    let mut nodes: Vec<String> =
        fs::read_dir(format!("{TOPO}/nodes")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    nodes.sort();
    assert_eq!(nodes, ["0", "1", "2"]);
    let id = |n: u32| read(format!("{TOPO}/nodes/{n}/gpu_id")).trim().parse::<u32>().unwrap();
    assert_eq!(id(0), 0);
    assert!(id(1) != 0 && id(2) != 0 && id(1) != id(2));
    assert!(id(1) <= 0xffff && id(2) <= 0xffff);
    // /sys/class/kfd/kfd is the same device directory.
    assert_eq!(read("/sys/class/kfd/kfd/topology/nodes/2/gpu_id").trim().parse::<u32>().unwrap(), id(2));
    let entries: Vec<String> = fs::read_dir(format!("{TOPO}/nodes/1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for want in ["gpu_id", "name", "properties", "mem_banks", "caches", "io_links", "p2p_links"] {
        assert!(entries.iter().any(|e| e == want), "node 1 lacks {want}: {entries:?}");
    }
}

#[test]
fn device_nodes_are_character_devices() {
    require_kfdsim();
    let kfd = fs::metadata("/dev/kfd").unwrap();
    assert!(kfd.file_type().is_char_device());
    assert_eq!(kfd.rdev(), libc::makedev(234, 0));
    assert_eq!(kfd.mode() & 0o777, 0o666);
    let r = fs::metadata("/dev/dri/renderD128").unwrap();
    assert!(r.file_type().is_char_device());
    assert_eq!(r.rdev(), libc::makedev(226, 128));
    assert_eq!(fs::metadata("/dev/dri/card1").unwrap().rdev(), libc::makedev(226, 1));
    assert_eq!(fs::metadata("/dev/dri/renderD130").unwrap_err().kind(), std::io::ErrorKind::NotFound);

    // The C stat/fstat entry points (not statx, which std uses) say the same.
    let path = CString::new("/dev/dri/renderD129").unwrap();
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::stat(path.as_ptr(), &mut st) }, 0);
    assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFCHR);
    assert_eq!(st.st_rdev, libc::makedev(226, 129));
    let both = libc::R_OK | libc::W_OK;
    assert_eq!(unsafe { libc::access(c"/dev/kfd".as_ptr(), both) }, 0);

    // An open render node is a character device 226:128 through fstat, and stays one when dup'ed.
    let f = fs::OpenOptions::new().read(true).write(true).open("/dev/dri/renderD128").unwrap();
    let m = f.metadata().unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.rdev(), libc::makedev(226, 128));
    let dup = unsafe { libc::dup(f.as_raw_fd()) };
    assert!(dup >= 0);
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::fstat(dup, &mut st) }, 0);
    assert_eq!(st.st_rdev, libc::makedev(226, 128));
    unsafe { libc::close(dup) };
    assert!(fs::File::open("/dev/dri/renderD130").is_err());

    // /dev/dri/by-path links: stat follows them to the device, lstat sees the link.
    let by_path = "/dev/dri/by-path/pci-0000:23:00.0-render";
    assert_eq!(fs::metadata(by_path).unwrap().rdev(), libc::makedev(226, 129));
    assert!(fs::symlink_metadata(by_path).unwrap().file_type().is_symlink());
    let f = fs::File::open(by_path).unwrap();
    assert_eq!(f.metadata().unwrap().rdev(), libc::makedev(226, 129));
}

#[test]
fn libdrm_enumerates_the_simulated_gpus() {
    require_kfdsim();
    // libdrm 2.4.114 (Debian libdrm2) walks /dev/dri, stats each node and reads sysfs.
    let lib = unsafe { libc::dlopen(c"libdrm.so.2".as_ptr(), libc::RTLD_NOW) };
    assert!(!lib.is_null(), "libdrm.so.2 (Debian libdrm2) is needed");
    let sym = unsafe { libc::dlsym(lib, c"drmGetDevices2".as_ptr()) };
    assert!(!sym.is_null());
    type GetDevices2 = unsafe extern "C" fn(u32, *mut *mut libc::c_void, libc::c_int) -> libc::c_int;
    let get_devices2: GetDevices2 = unsafe { std::mem::transmute(sym) };
    assert_eq!(unsafe { get_devices2(0, std::ptr::null_mut(), 0) }, 2);
    let sym = unsafe { libc::dlsym(lib, c"drmGetPrimaryDeviceNameFromFd".as_ptr()) };
    assert!(!sym.is_null());
    type NameFromFd = unsafe extern "C" fn(libc::c_int) -> *mut libc::c_char;
    let name_from_fd: NameFromFd = unsafe { std::mem::transmute(sym) };
    let f = fs::File::open("/dev/dri/renderD129").unwrap();
    let name = unsafe { name_from_fd(f.as_raw_fd()) };
    assert!(!name.is_null());
    let s = unsafe { std::ffi::CStr::from_ptr(name) }.to_str().unwrap().to_string();
    unsafe { libc::free(name.cast()) };
    assert_eq!(s, "/dev/dri/card1");
}

#[test]
fn each_open_of_dev_kfd_is_a_new_file() {
    require_kfdsim();
    let a = fs::OpenOptions::new().read(true).write(true).open("/dev/kfd").unwrap();
    let b = fs::OpenOptions::new().read(true).write(true).open("/dev/kfd").unwrap();
    let (ma, mb) = (a.metadata().unwrap(), b.metadata().unwrap());
    assert!(ma.file_type().is_char_device() && mb.file_type().is_char_device());
    assert_eq!(ma.rdev(), libc::makedev(234, 0));
    assert_ne!(ma.ino(), mb.ino());
    // O_CLOEXEC is honoured (std opens with O_CLOEXEC).
    let flags = unsafe { libc::fcntl(a.as_raw_fd(), libc::F_GETFD) };
    assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
}

#[test]
fn other_fds_pass_through_untouched() {
    require_kfdsim();
    // After a device open (so the fd check is active).
    let _kfd = fs::File::open("/dev/kfd").unwrap();
    let mut p = [0; 2];
    assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
    assert_eq!(unsafe { libc::write(p[1], b"hello".as_ptr().cast(), 5) }, 5);
    let mut n: libc::c_int = 0;
    assert_eq!(unsafe { libc::ioctl(p[0], libc::FIONREAD, &mut n) }, 0);
    assert_eq!(n, 5);
    // A memfd that is not a device node (e.g. a BO) stays a regular file, mmap works on it.
    let fd = unsafe { libc::memfd_create(c"kfdsim-bo test".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0);
    assert_eq!(unsafe { libc::ftruncate(fd, 4096) }, 0);
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
    assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFREG);
    assert_eq!(st.st_size, 4096);
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let m = unsafe { libc::mmap(std::ptr::null_mut(), 4096, prot, libc::MAP_SHARED, fd, 0) };
    assert_ne!(m, libc::MAP_FAILED);
    unsafe { *(m as *mut u8) = 7 };
    let mut b = [0u8; 1];
    assert_eq!(unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 1, 0) }, 1);
    assert_eq!(b[0], 7);
    unsafe {
        libc::munmap(m, 4096);
        libc::close(fd);
        libc::close(p[0]);
        libc::close(p[1]);
    }
    // Real files outside the tree are not redirected.
    assert!(read("/proc/self/status").contains("Pid:"));
}

#[test]
fn drm_and_pci_sysfs_as_libdrm_reads_them() {
    require_kfdsim();
    let dev = "/sys/dev/char/226:128/device";
    assert_eq!(read(format!("{dev}/vendor")), "0x1002\n");
    assert_eq!(read(format!("{dev}/device")), "0x740f\n");
    assert_eq!(read(format!("{dev}/subsystem_vendor")), "0x1002\n");
    assert_eq!(read(format!("{dev}/subsystem_device")), "0x0c34\n");
    assert_eq!(read(format!("{dev}/revision")), "0x02\n");
    let uevent = read(format!("{dev}/uevent"));
    assert!(uevent.contains("PCI_SLOT_NAME=0000:03:00.0\n"), "{uevent}");
    assert!(uevent.contains("DRIVER=amdgpu\n") && uevent.contains("PCI_ID=1002:740F\n"), "{uevent}");
    let sub = fs::read_link(format!("{dev}/subsystem")).unwrap();
    assert_eq!(sub.file_name().unwrap(), "pci");
    let drm: Vec<String> =
        fs::read_dir(format!("{dev}/drm")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(drm.contains(&"card0".into()) && drm.contains(&"renderD128".into()), "{drm:?}");
    // realpath gives the kernel's device path, which can be read in turn.
    let real = fs::canonicalize(dev).unwrap();
    assert_eq!(real, Path::new("/sys/devices/pci0000:00/0000:03:00.0"));
    assert_eq!(read(real.join("device")), "0x740f\n");
    let cpath = CString::new("/sys/class/drm/renderD129/device").unwrap();
    let r = unsafe { libc::realpath(cpath.as_ptr(), std::ptr::null_mut()) };
    assert!(!r.is_null());
    let s = unsafe { std::ffi::CStr::from_ptr(r) }.to_str().unwrap().to_string();
    unsafe { libc::free(r.cast()) };
    assert_eq!(s, "/sys/devices/pci0000:00/0000:23:00.0");
    assert_eq!(read("/sys/class/drm/renderD129/dev"), "226:129\n");
    assert_eq!(read("/sys/module/amdgpu/initstate"), "live\n");
    let config = fs::read("/sys/bus/pci/devices/0000:23:00.0/config").unwrap();
    assert_eq!(&config[0..4], &[0x02, 0x10, 0x0f, 0x74]);
}

#[test]
fn pci_device_list_has_the_simulated_gpus_beside_the_hosts_devices() {
    require_kfdsim();
    let names = |dir: &str| -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    // The directory as programs open it (no trailing slash: libpci, lspci).
    let listed = names("/sys/bus/pci/devices");
    assert!(listed.contains(&"0000:03:00.0".into()) && listed.contains(&"0000:23:00.0".into()), "{listed:?}");
    // The host's own devices (read past the redirection) stay listed, and read as themselves.
    for host in names("/sys/bus/pci/../pci/devices") {
        assert!(listed.contains(&host), "host device {host} missing from {listed:?}");
        let via_list = fs::read(format!("/sys/bus/pci/devices/{host}/vendor")).unwrap();
        assert_eq!(via_list, fs::read(format!("/sys/bus/pci/../pci/devices/{host}/vendor")).unwrap(), "{host}");
    }
    // lspci (Debian package pciutils) names them as AMD GPUs.
    match Command::new("lspci").arg("-D").output() {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            for bdf in ["0000:03:00.0", "0000:23:00.0"] {
                let line = text.lines().find(|l| l.starts_with(bdf)).unwrap_or_else(|| panic!("{bdf}: {text}"));
                assert!(line.contains("Display controller") && line.contains("AMD/ATI"), "{line}");
            }
        }
        Err(_) => eprintln!("lspci not installed (Debian package pciutils): not checked"),
    }
}

#[test]
fn stdio_fopen_reads_the_tree() {
    require_kfdsim();
    let f = unsafe { libc::fopen(c"/sys/devices/virtual/kfd/kfd/topology/generation_id".as_ptr(), c"r".as_ptr()) };
    assert!(!f.is_null());
    let mut buf = [0 as libc::c_char; 64];
    assert!(!unsafe { libc::fgets(buf.as_mut_ptr(), 64, f) }.is_null());
    unsafe { libc::fclose(f) };
    let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(s, "3\n");
}

#[test]
fn child_processes_inherit_the_simulation() {
    require_kfdsim();
    let want = read(format!("{TOPO}/nodes/2/gpu_id"));
    let out = Command::new("cat").arg(format!("{TOPO}/nodes/2/gpu_id")).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let out = Command::new("sh")
        .args(["-c", "test -c /dev/kfd && test -c /dev/dri/renderD129 && ls /dev/dri && grep ^amdgpu /proc/modules"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in ["renderD128", "renderD129", "card0", "amdgpu "] {
        assert!(text.contains(want), "{want} missing in {text}");
    }
}

/// Python sees the simulated topology through every way `rocm_agent_enumerator` (hip-tests'
/// TestContext runs it through popen at start) and its kin reach it: os.listdir by path and by
/// fd, os.scandir, glob, pathlib, isdir/isfile/access, open, openat by dir_fd. Each prints
/// the node names, so a view that misses the tree (ENOENT, or the host's empty /sys) differs.
#[test]
fn python_lists_and_reads_the_topology() {
    require_kfdsim();
    let script = r#"
import glob, os, pathlib
d = "/sys/class/kfd/kfd/topology/nodes"
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
views = [
    sorted(os.listdir(d)),
    sorted(os.listdir(fd)),
    sorted(e.name for e in os.scandir(d) if e.is_dir()),
    sorted(p.split("/")[-2] for p in glob.glob(d + "/*/properties")),
    sorted(p.name for p in pathlib.Path(d).iterdir()),
    sorted(n for n in os.listdir(d) if os.path.isdir(d + "/" + n) and os.path.isfile(d + "/" + n + "/properties")
           and os.access(d + "/" + n + "/properties", os.R_OK)),
]
for v in views:
    print(" ".join(v))
for n in views[0]:
    with open(d + "/" + n + "/properties") as f:
        text = f.read()
    node = os.open(d + "/" + n, os.O_RDONLY | os.O_DIRECTORY)
    at = os.read(os.open("properties", os.O_RDONLY, dir_fd=node), 1 << 16).decode()
    print(n, [l.split()[1] for l in text.splitlines() if l.startswith("gfx_target_version ")][0], at == text)
"#;
    let out = Command::new("python3").args(["-c", script]).output().expect("python3 runs");
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let mut nodes: Vec<String> =
        fs::read_dir(format!("{TOPO}/nodes")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    nodes.sort();
    assert_eq!(nodes, ["0", "1", "2"], "xgmi-2: a CPU node and two GPUs");
    for _ in 0..6 {
        assert_eq!(lines.next(), Some(nodes.join(" ").as_str()), "python's views of the nodes: {text}");
    }
    for n in &nodes {
        let want = props(&format!("{TOPO}/nodes/{n}/properties"))["gfx_target_version"];
        assert_eq!(lines.next(), Some(format!("{n} {want} True").as_str()), "{text}");
    }
}

/// Debian's `rocm_agent_enumerator` (package rocminfo; a Python script reading the KFD topology
/// when no target.lst is given) lists the simulated GPUs, run directly and, as hip-tests'
/// TestContext does, through popen's `sh -c` pipeline from a process. Without the script
/// installed only that is said.
#[test]
fn rocm_agent_enumerator_lists_the_simulated_gpus() {
    require_kfdsim();
    let Some(enumerator) = ["/usr/bin/rocm_agent_enumerator", "/opt/rocm/bin/rocm_agent_enumerator"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("rocm_agent_enumerator not installed (Debian package rocminfo): not checked");
        return;
    };
    let direct = Command::new(enumerator).env_remove("ROCM_TARGET_LST").output().unwrap();
    assert!(direct.status.success(), "{}", String::from_utf8_lossy(&direct.stderr));
    assert_eq!(String::from_utf8(direct.stdout).unwrap(), "gfx000\ngfx90a\ngfx90a\n");
    let piped = Command::new("sh")
        .args(["-c", &format!("{enumerator} | sort -u | xargs | sed -e 's/ /;/g'")])
        .env_remove("ROCM_TARGET_LST")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(piped.stdout).unwrap(),
        "gfx000;gfx90a\n",
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    assert!(piped.stderr.is_empty(), "{}", String::from_utf8_lossy(&piped.stderr));
}

#[test]
fn launcher_presets_give_their_node_and_link_counts() {
    require_kfdsim();
    let count = |s: &str| s.split_whitespace().count();
    let nodes = format!("ls {TOPO}/nodes");
    assert_eq!(count(&sh_under(&["--gpus", "4"], &nodes)), 5);
    assert_eq!(count(&sh_under(&[], &nodes)), 3, "default is 2 GPUs");

    let x8 = sh_under(
        &["--topology", "xgmi-8"],
        &format!("cat {TOPO}/nodes/3/properties {TOPO}/nodes/3/io_links/7/properties; ls /dev/dri"),
    );
    assert_eq!(parse_props(&x8)["io_links_count"], 8);
    assert!(x8.contains("type 11\n") && x8.contains("renderD135") && !x8.contains("renderD136"));

    let pcie = sh_under(
        &["--topology", "pcie-3"],
        &format!("cat {TOPO}/nodes/1/properties; cat {TOPO}/nodes/1/mem_banks/0/properties"),
    );
    let p = parse_props(&pcie);
    assert_eq!((p["io_links_count"], p["p2p_links_count"], p["hive_id"]), (1, 0, 0));
    assert_eq!(p["heap_type"], 2, "small BAR: FB_PRIVATE");
    let cpu = parse_props(&sh_under(&["--topology", "pcie-3"], &format!("cat {TOPO}/nodes/0/properties")));
    assert_eq!(cpu["io_links_count"], 0, "no CPU->GPU link for small BAR");

    let p2p = sh_under(
        &["--topology", "pcie-p2p-4"],
        &format!("cat {TOPO}/nodes/1/properties {TOPO}/nodes/1/p2p_links/2/properties"),
    );
    let q = parse_props(&p2p);
    assert_eq!((q["io_links_count"], q["p2p_links_count"]), (1, 3));
    assert_eq!((q["type"], q["weight"], q["node_to"]), (2, 40, 4));
}

#[test]
fn launcher_takes_a_topology_file() {
    require_kfdsim();
    let dir = std::env::temp_dir().join(format!("sim-files-topo-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mix.toml");
    fs::write(
        &file,
        "[[gpu]]\nhive_id = 0x77\n[[gpu]]\nhive_id = 0x77\n\
         [[gpu]]\npcie_p2p = true\nvram_size = 17179869184\n[[gpu]]\npcie_p2p = true\n",
    )
    .unwrap();
    let out = sh_under(
        &["--topology", file.to_str().unwrap()],
        &format!(
            "cat {TOPO}/nodes/1/properties; echo ==; cat {TOPO}/nodes/3/properties \
             {TOPO}/nodes/3/mem_banks/0/properties"
        ),
    );
    let (n1, n3) = out.split_once("==").unwrap();
    let (n1, n3) = (parse_props(n1), parse_props(n3));
    assert_eq!((n1["io_links_count"], n1["p2p_links_count"], n1["hive_id"]), (2, 0, 0x77));
    assert_eq!((n3["io_links_count"], n3["p2p_links_count"], n3["hive_id"]), (1, 1, 0));
    assert_eq!(n3["size_in_bytes"], 16 << 30);
    fs::write(&file, "[[gpu]]\nbogus = 1\n").unwrap();
    let bad = run_kfdsim(&["run", "--topology", file.to_str().unwrap(), "--", "true"]);
    assert_eq!(bad.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown key 'bogus'"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn launcher_returns_the_exit_status_and_cleans_up() {
    require_kfdsim();
    let out = run_kfdsim(&["run", "--", "sh", "-c", "echo $KFDSIM_SESSION; test -d $KFDSIM_ROOT/sys; exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    let session = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(session.contains("kfdsim-"), "{session}");
    assert_ne!(Some(session.as_str()), std::env::var("KFDSIM_SESSION").ok().as_deref());
    assert!(!Path::new(&session).exists(), "session {session} not removed");
    let killed = run_kfdsim(&["run", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(killed.status.code(), Some(128 + libc::SIGTERM));
    assert_eq!(run_kfdsim(&["run", "--gpus", "9", "--", "true"]).status.code(), Some(125));
    assert_eq!(run_kfdsim(&["run", "--", "/nonexistent/cmd"]).status.code(), Some(125));
    let traced = Command::new(kfdsim())
        .args(["run", "--", "sh", "-c", "exec 3<>/dev/dri/renderD128"])
        .env("KFDSIM_TRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&traced.stderr);
    assert!(err.contains("] open /dev/dri/renderD128 ") && err.starts_with("kfdsim["), "{err}");
    let quiet = run_kfdsim(&["run", "--", "sh", "-c", "exec 3<>/dev/dri/renderD128"]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("kfdsim["));
    let show = run_kfdsim(&["show", "--topology", "pcie-p2p-2"]);
    assert!(show.status.success());
    assert!(String::from_utf8_lossy(&show.stdout).contains("type = \"pcie\""));
}
