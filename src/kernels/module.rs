//! Code objects and kernels: clang offload bundles (what hipcc embeds in `.hip_fatbin` and writes
//! with `--genco`), the AMDGPU ELF code objects inside them, their kernels (name, `.kd` symbol,
//! kernarg and segment sizes from the msgpack metadata note) and device globals; and the
//! process-wide registry of hipcc fat binaries (`__hipRegisterFatBinary`), modules
//! (`hipModuleLoad*`) and kernel functions.
//!
//! A code object is loaded into device memory (segments, relocations) on first use of one of
//! its globals or its first launch ([`Image::load`]: VRAM, which is mapped executable); launches
//! are validated here ([`validate_launch`]) and dispatched on the device's AQL queue
//! (src/kernels/aql.rs).
//!
//! Sources (facts only): clang `ClangOffloadBundler.cpp` (bundle layout), clr
//! `hip_code_object.cpp` (`extractCodeObjectFromFatBinary`, `isCodeObjectCompatibleWithDevice`,
//! `getTripleTargetIDFromCodeObject`), LLVM `AMDGPUUsage` ("Target ID", "ELF Header",
//! "Code Object V3+ Metadata").
//!
//! Layer `kernels`: may call `share`, `mem`, `core`, `abi` and its own layer.

use crate::abi::types::{hipDeviceProp_tR0600, hipError_t, hipMemcpyKind};
use crate::core::memory::Allocation;
use crate::core::runtime::Runtime;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSymbol, SymbolKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Magic of an uncompressed clang offload bundle.
pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed clang offload bundle (`--offload-compress`, ROCm 6.1+).
pub const COMPRESSED_MAGIC: &[u8] = b"CCOB";
/// Magic of an ELF file.
pub const ELF_MAGIC: &[u8] = b"\x7fELF";
/// Prefix of every AMDGPU HSA target triple in a bundle entry id.
const AMDHSA_TRIPLE: &str = "amdgcn-amd-amdhsa--";
/// `NT_AMDGPU_METADATA`: the msgpack metadata note of code object V3 and later.
const NT_AMDGPU_METADATA: u32 = 32;
/// `ELFOSABI_AMDGPU_HSA`: the OS/ABI of HSA code objects.
const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// Upper bound on what an image header may claim (sanity limit for images known only by pointer).
const MAX_IMAGE: usize = 1 << 32;

/// Why an image could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    #[error("neither a clang offload bundle nor an ELF code object")]
    NotAnImage,
    #[error("compressed offload bundle (CCOB) is not supported; rebuild without --offload-compress")]
    Compressed,
    /// The image is longer than the bytes seen so far: at least this many are needed.
    #[error("image truncated (needs {0} bytes)")]
    NeedMore(usize),
    #[error("malformed code object: {0}")]
    Malformed(String),
}

impl CodeObjectError {
    /// The HIP error a module load reports (hip-tests `hipModuleLoad*`: garbage or truncated
    /// images are `hipErrorInvalidImage`).
    pub fn hip(&self) -> hipError_t {
        match self {
            CodeObjectError::Compressed => hipError_t::hipErrorNotSupported,
            _ => hipError_t::hipErrorInvalidImage,
        }
    }
}

fn malformed(what: impl Into<String>) -> CodeObjectError {
    CodeObjectError::Malformed(what.into())
}

fn u16_at(d: &[u8], at: usize) -> Result<u16, CodeObjectError> {
    d.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]])).ok_or(CodeObjectError::NeedMore(at + 2))
}

fn u32_at(d: &[u8], at: usize) -> Result<u32, CodeObjectError> {
    d.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).ok_or(CodeObjectError::NeedMore(at + 4))
}

fn u64_at(d: &[u8], at: usize) -> Result<usize, CodeObjectError> {
    let v = d
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .ok_or(CodeObjectError::NeedMore(at + 8))?;
    usize::try_from(v).ok().filter(|v| *v <= MAX_IMAGE).ok_or_else(|| malformed(format!("field at {at} is {v:#x}")))
}

fn end(off: usize, len: usize) -> Result<usize, CodeObjectError> {
    off.checked_add(len).filter(|e| *e <= MAX_IMAGE).ok_or_else(|| malformed("extent overflows"))
}

/// One entry of an offload bundle: its id (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`,
/// `host-x86_64-unknown-linux`, ...) and where its bytes lie in the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry {
    pub id: String,
    pub offset: usize,
    pub size: usize,
}

/// Parses an uncompressed offload bundle header: magic, `u64` entry count, then per entry
/// `u64 offset, u64 size, u64 id_len, id` (offsets from the bundle start; all little endian).
/// Returns the entries and the bundle's total length. `NeedMore(n)` when `d` is shorter than
/// the header or an entry's extent, so a caller holding only a pointer can grow its view.
pub fn parse_bundle(d: &[u8]) -> Result<(Vec<BundleEntry>, usize), CodeObjectError> {
    if d.starts_with(COMPRESSED_MAGIC) {
        return Err(CodeObjectError::Compressed);
    }
    if d.len() < BUNDLE_MAGIC.len() {
        return Err(CodeObjectError::NeedMore(BUNDLE_MAGIC.len()));
    }
    if !d.starts_with(BUNDLE_MAGIC) {
        return Err(CodeObjectError::NotAnImage);
    }
    let n = u64_at(d, 24)?;
    if n > 4096 {
        return Err(malformed(format!("{n} bundle entries")));
    }
    let mut at = 32;
    let mut total = at;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (offset, size, id_len) = (u64_at(d, at)?, u64_at(d, at + 8)?, u64_at(d, at + 16)?);
        at += 24;
        let id_end = end(at, id_len)?;
        let id = d.get(at..id_end).ok_or(CodeObjectError::NeedMore(id_end))?;
        let id = std::str::from_utf8(id).map_err(|_| malformed("bundle entry id is not UTF-8"))?;
        at = id_end;
        total = total.max(at).max(end(offset, size)?);
        out.push(BundleEntry { id: id.to_string(), offset, size });
    }
    if d.len() < total {
        return Err(CodeObjectError::NeedMore(total));
    }
    Ok((out, total))
}

/// Length of an ELF64 file from its headers: the end of the program and section header tables
/// and of every section with file contents. `NeedMore(n)` as [`parse_bundle`].
pub fn elf_len(d: &[u8]) -> Result<usize, CodeObjectError> {
    if d.len() < 64 {
        return Err(CodeObjectError::NeedMore(64));
    }
    if !d.starts_with(ELF_MAGIC) || d[4] != 2 || d[5] != 1 {
        return Err(CodeObjectError::NotAnImage);
    }
    let (phoff, shoff) = (u64_at(d, 0x20)?, u64_at(d, 0x28)?);
    let (phentsize, phnum) = (u16_at(d, 0x36)? as usize, u16_at(d, 0x38)? as usize);
    let (shentsize, shnum) = (u16_at(d, 0x3a)? as usize, u16_at(d, 0x3c)? as usize);
    let sh_end = end(shoff, shentsize * shnum)?;
    let mut total = end(phoff, phentsize * phnum)?.max(sh_end).max(64);
    if d.len() < sh_end {
        return Err(CodeObjectError::NeedMore(sh_end));
    }
    for i in 0..shnum {
        let sh = shoff + i * shentsize;
        const SHT_NOBITS: u32 = 8;
        if u32_at(d, sh + 4)? != SHT_NOBITS {
            total = total.max(end(u64_at(d, sh + 0x18)?, u64_at(d, sh + 0x20)?)?);
        }
    }
    if d.len() < total {
        return Err(CodeObjectError::NeedMore(total));
    }
    Ok(total)
}

/// Length of the image (bundle or ELF) that starts `d`. `NeedMore` as [`parse_bundle`].
pub fn image_len(d: &[u8]) -> Result<usize, CodeObjectError> {
    if d.starts_with(ELF_MAGIC) {
        elf_len(d)
    } else {
        parse_bundle(d).map(|(_, n)| n)
    }
}

/// A target id split into processor and the two target features (`None`: "any").
#[derive(Debug, PartialEq, Eq)]
struct TargetId<'a> {
    processor: &'a str,
    sramecc: Option<bool>,
    xnack: Option<bool>,
}

fn parse_target_id(s: &str) -> Option<TargetId<'_>> {
    let mut parts = s.split(':');
    let processor = parts.next().filter(|p| !p.is_empty())?;
    let mut t = TargetId { processor, sramecc: None, xnack: None };
    for f in parts {
        let (name, on) = match f.as_bytes().last()? {
            b'+' => (&f[..f.len() - 1], true),
            b'-' => (&f[..f.len() - 1], false),
            _ => return None,
        };
        let slot = match name {
            "sramecc" => &mut t.sramecc,
            "xnack" => &mut t.xnack,
            _ => return None,
        };
        if slot.replace(on).is_some() {
            return None;
        }
    }
    Some(t)
}

/// Whether a code object built for `co` (a triple target id, `amdgcn-amd-amdhsa--gfx90a:xnack-`)
/// runs on a device whose target id is `device` (`gcnArchName`, `gfx90a:sramecc+:xnack-`).
/// clr `isCodeObjectCompatibleWithDevice` / LLVM "Target ID": same processor, and each feature
/// the code object specifies (`+` or `-`) equal to the device's; an unspecified one is "any".
pub fn target_matches(co: &str, device: &str) -> bool {
    let (Some(co), Some(dev)) = (co.strip_prefix(AMDHSA_TRIPLE).and_then(parse_target_id), parse_target_id(device))
    else {
        return false;
    };
    co.processor == dev.processor
        && !matches!(co.sramecc, Some(v) if dev.sramecc != Some(v))
        && !matches!(co.xnack, Some(v) if dev.xnack != Some(v))
}

/// The triple target id of a bundle entry: `hipv4-<triple target id>` (code object V4+ ids
/// carry it, clr `getTripleTargetID`); for the older `hip-` / `hcc-` kinds, from the ELF's flags.
fn entry_target(id: &str, elf: &[u8]) -> Option<String> {
    let (kind, rest) = id.split_once('-')?;
    match kind {
        "hipv4" => Some(rest.to_string()),
        "hip" | "hcc" => elf_target(elf),
        _ => None,
    }
}

/// `EF_AMDGPU_MACH` values (LLVM `AMDGPUUsage`, "AMDGPU ELF Header") of the ISAs clr knows.
const MACHS: &[(u32, &str)] = &[
    (0x2c, "gfx900"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x36, "gfx1030"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
];

/// The triple target id an AMDGPU ELF (code object V4+) declares in `e_flags`: processor from
/// `EF_AMDGPU_MACH` (0xff), `:sramecc±` from bits 0xc00 and `:xnack±` from 0x300 when set to
/// "on" or "off" (clr `getTripleTargetIDFromCodeObject`).
pub fn elf_target(elf: &[u8]) -> Option<String> {
    let flags = u32_at(elf, 0x30).ok()?;
    let proc = MACHS.iter().find(|(m, _)| *m == flags & 0xff)?.1;
    let mut id = format!("{AMDHSA_TRIPLE}{proc}");
    for (mask, off, on, name) in [(0xc00, 0x800, 0xc00, "sramecc"), (0x300, 0x200, 0x300, "xnack")] {
        match flags & mask {
            v if v == on => id.push_str(&format!(":{name}+")),
            v if v == off => id.push_str(&format!(":{name}-")),
            _ => {}
        }
    }
    Some(id)
}

/// One kernel of a code object, from its metadata note (`amdhsa.kernels[]`) and symbol table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelInfo {
    /// `.name`: the source-level (mangled) name, what `hipModuleGetFunction` looks up.
    pub name: String,
    /// `.symbol`: the kernel descriptor's symbol (`<name>.kd`).
    pub symbol: String,
    /// Address of the kernel descriptor in the code object's virtual address space.
    pub kd_address: u64,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    /// Static LDS bytes (`.group_segment_fixed_size`).
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item (`.private_segment_fixed_size`).
    pub private_segment_fixed_size: u32,
    pub max_flat_workgroup_size: u32,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    pub wavefront_size: u32,
    /// Explicit and hidden arguments: (offset, size, `.value_kind`).
    pub args: Vec<(u32, u32, String)>,
}

impl KernelInfo {
    /// Arguments the caller passes (every `.value_kind` but the `hidden_*` ones).
    pub fn explicit_args(&self) -> usize {
        self.args.iter().filter(|a| !a.2.starts_with("hidden_")).count()
    }
}

/// A device global of a code object (a data symbol): name, address in the code object's virtual
/// address space, size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalSymbol {
    pub name: String,
    pub address: u64,
    pub size: u64,
}

/// One AMDGPU code object (an ELF for one ISA): its bytes (what the launch path will load), its
/// kernels and its globals.
#[derive(Debug)]
pub struct CodeObject {
    pub target: String,
    pub elf: Vec<u8>,
    pub kernels: Vec<KernelInfo>,
    pub globals: Vec<GlobalSymbol>,
}

fn meta<'a>(m: &'a rmpv::Value, key: &str) -> Option<&'a rmpv::Value> {
    m.as_map()?.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

fn meta_u32(m: &rmpv::Value, key: &str) -> u32 {
    meta(m, key).and_then(|v| v.as_u64()).and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

fn meta_str(m: &rmpv::Value, key: &str) -> String {
    meta(m, key).and_then(|v| v.as_str()).unwrap_or_default().to_string()
}

impl CodeObject {
    /// Parses an AMDGPU HSA code object (V3 or later: msgpack metadata). Errors: `NotAnImage`
    /// for anything but an AMDGPU HSA ELF64, `Malformed` for a broken ELF or metadata note.
    pub fn parse(target: String, elf: &[u8]) -> Result<CodeObject, CodeObjectError> {
        let file = ElfFile64::<Endianness>::parse(elf).map_err(|e| malformed(format!("ELF: {e}")))?;
        let (hdr, e) = (file.elf_header(), file.endian());
        if hdr.e_machine(e) != object::elf::EM_AMDGPU || hdr.e_ident().os_abi.0 != ELFOSABI_AMDGPU_HSA {
            return Err(CodeObjectError::NotAnImage);
        }
        let mut note = None;
        for ph in file.elf_program_headers() {
            let Some(mut notes) = ph.notes(e, elf).map_err(|e| malformed(format!("notes: {e}")))? else { continue };
            while let Some(n) = notes.next().map_err(|e| malformed(format!("note: {e}")))? {
                if n.name() == b"AMDGPU" && n.n_type(e).0 == NT_AMDGPU_METADATA {
                    note = Some(n.desc());
                }
            }
        }
        let note = note.ok_or_else(|| malformed("no NT_AMDGPU_METADATA note (code object V2 is not supported)"))?;
        let md = rmpv::decode::read_value(&mut &note[..]).map_err(|e| malformed(format!("metadata: {e}")))?;
        let mut kd = HashMap::new();
        let mut globals = vec![];
        let syms: Vec<_> = file.symbols().chain(file.dynamic_symbols()).collect();
        for s in &syms {
            let Ok(name) = s.name() else { continue };
            if name.ends_with(".kd") {
                kd.insert(name.to_string(), s.address());
            } else if s.kind() == SymbolKind::Data
                && s.is_global()
                && !globals.iter().any(|g: &GlobalSymbol| g.name == name)
            {
                globals.push(GlobalSymbol { name: name.to_string(), address: s.address(), size: s.size() });
            }
        }
        let empty = vec![];
        let list = meta(&md, "amdhsa.kernels").and_then(|v| v.as_array()).unwrap_or(&empty);
        let mut kernels = Vec::with_capacity(list.len());
        for k in list {
            let symbol = meta_str(k, ".symbol");
            let kd_address = *kd.get(&symbol).ok_or_else(|| malformed(format!("no symbol {symbol:?}")))?;
            let args = meta(k, ".args")
                .and_then(|v| v.as_array())
                .unwrap_or(&empty)
                .iter()
                .map(|a| (meta_u32(a, ".offset"), meta_u32(a, ".size"), meta_str(a, ".value_kind")))
                .collect();
            kernels.push(KernelInfo {
                name: meta_str(k, ".name"),
                symbol,
                kd_address,
                kernarg_segment_size: meta_u32(k, ".kernarg_segment_size"),
                kernarg_segment_align: meta_u32(k, ".kernarg_segment_align"),
                group_segment_fixed_size: meta_u32(k, ".group_segment_fixed_size"),
                private_segment_fixed_size: meta_u32(k, ".private_segment_fixed_size"),
                max_flat_workgroup_size: meta_u32(k, ".max_flat_workgroup_size"),
                sgpr_count: meta_u32(k, ".sgpr_count"),
                vgpr_count: meta_u32(k, ".vgpr_count"),
                wavefront_size: meta_u32(k, ".wavefront_size"),
                args,
            });
        }
        Ok(CodeObject { target, elf: elf.to_vec(), kernels, globals })
    }

    /// Bytes of device memory the code object occupies when loaded: the end of its highest
    /// `PT_LOAD` segment, in whole pages.
    pub fn load_size(&self) -> Result<u64, CodeObjectError> {
        let file = ElfFile64::<Endianness>::parse(&self.elf[..]).map_err(|e| malformed(format!("ELF: {e}")))?;
        let e = file.endian();
        let end = file
            .elf_program_headers()
            .iter()
            .filter(|ph| ph.p_type(e) == object::elf::PT_LOAD)
            .map(|ph| ph.p_vaddr(e).saturating_add(ph.p_memsz(e)))
            .max()
            .unwrap_or(0);
        end.checked_next_multiple_of(4096)
            .filter(|n| *n <= MAX_IMAGE as u64)
            .ok_or_else(|| malformed("segments too large"))
    }

    /// The code object's memory image for load address `base` (what the loader copies to the
    /// device): each `PT_LOAD` segment's file bytes at its virtual address, the rest zero, and
    /// the dynamic relocations applied (`R_AMDGPU_RELATIVE64`: base + addend; `R_AMDGPU_ABS64`
    /// / `ABS32` / `ABS32_LO` / `ABS32_HI`: base + symbol + addend; LLVM `AMDGPUUsage`
    /// "Relocation Records"). Errors: `Malformed` for segments outside the file or another
    /// relocation type.
    pub fn memory_image(&self, base: u64) -> Result<Vec<u8>, CodeObjectError> {
        let file = ElfFile64::<Endianness>::parse(&self.elf[..]).map_err(|e| malformed(format!("ELF: {e}")))?;
        let e = file.endian();
        let mut img = vec![0u8; self.load_size()? as usize];
        for ph in file.elf_program_headers().iter().filter(|ph| ph.p_type(e) == object::elf::PT_LOAD) {
            let data = ph.data(e, &self.elf[..]).map_err(|_| malformed("segment outside the file"))?;
            let at = ph.p_vaddr(e) as usize;
            let dst =
                img.get_mut(at..at + data.len()).ok_or_else(|| malformed("segment larger than its memory size"))?;
            dst.copy_from_slice(data);
        }
        for (offset, r) in file.dynamic_relocations().into_iter().flatten() {
            let object::RelocationFlags::Elf { r_type } = r.flags() else { continue };
            let sym = match r.target() {
                object::RelocationTarget::Symbol(i) => {
                    file.symbol_by_index(i).map_err(|_| malformed("relocation symbol"))?.address()
                }
                _ => 0,
            };
            let v = base.wrapping_add(sym).wrapping_add_signed(r.addend());
            let bytes = match r_type.0 {
                13 => base.wrapping_add_signed(r.addend()).to_le_bytes().to_vec(),
                3 => v.to_le_bytes().to_vec(),
                1 | 6 => (v as u32).to_le_bytes().to_vec(),
                2 => ((v >> 32) as u32).to_le_bytes().to_vec(),
                t => return Err(malformed(format!("relocation type {t}"))),
            };
            let at = usize::try_from(offset).ok().filter(|a| a.saturating_add(bytes.len()) <= img.len());
            let at = at.ok_or_else(|| malformed("relocation outside the segments"))?;
            img[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        Ok(img)
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn global(&self, name: &str) -> Option<&GlobalSymbol> {
        self.globals.iter().find(|g| g.name == name)
    }
}

/// The bytes of an image: the fat binary in a loaded ELF's `.hip_fatbin` (valid until its
/// `__hipUnregisterFatBinary`), or a copy owned by a module.
#[derive(Debug)]
pub enum ImageBytes {
    Static(&'static [u8]),
    Owned(Vec<u8>),
}

/// A fat binary or module image: a bundle's device entries (or one bare ELF), and the code
/// object chosen for each device target id, parsed on first use.
#[derive(Debug)]
pub struct Image {
    bytes: ImageBytes,
    /// (triple target id, offset, size) of each device code object, in bundle order.
    entries: Vec<(String, usize, usize)>,
    chosen: Mutex<HashMap<String, Result<Arc<CodeObject>, hipError_t>>>,
    /// Device ordinal → the allocation holding the code object loaded in its memory.
    loaded: Mutex<HashMap<usize, Arc<Allocation>>>,
}

impl Image {
    /// Reads a bundle or bare ELF. Errors as [`parse_bundle`] / [`elf_len`] on the whole image.
    pub fn new(bytes: ImageBytes) -> Result<Image, CodeObjectError> {
        let d = match &bytes {
            ImageBytes::Static(d) => *d,
            ImageBytes::Owned(v) => v.as_slice(),
        };
        let truncated = |e| match e {
            CodeObjectError::NeedMore(_) => malformed("truncated image"),
            e => e,
        };
        let entries = if d.starts_with(ELF_MAGIC) {
            let n = elf_len(d).map_err(truncated)?;
            let t = elf_target(d).ok_or_else(|| malformed("unknown AMDGPU processor in e_flags"))?;
            vec![(t, 0, n)]
        } else {
            let (list, _) = parse_bundle(d).map_err(truncated)?;
            list.iter()
                .filter_map(|b| {
                    let elf = d.get(b.offset..b.offset + b.size)?;
                    entry_target(&b.id, elf).map(|t| (t, b.offset, b.size))
                })
                .collect()
        };
        Ok(Image { bytes, entries, chosen: Mutex::default(), loaded: Mutex::default() })
    }

    /// An image without code objects (what an unusable fat binary registers as: its kernels
    /// report `hipErrorNoBinaryForGpu`).
    pub fn empty() -> Image {
        Image { bytes: ImageBytes::Owned(vec![]), entries: vec![], chosen: Mutex::default(), loaded: Mutex::default() }
    }

    fn data(&self) -> &[u8] {
        match &self.bytes {
            ImageBytes::Static(d) => d,
            ImageBytes::Owned(v) => v,
        }
    }

    /// The device code object targets, in bundle order.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.0.as_str())
    }

    /// The code object for a device with target id `device` (`gcnArchName`): the first
    /// compatible entry in bundle order (clr). Errors: `hipErrorNoBinaryForGpu` when none is
    /// compatible, `hipErrorInvalidKernelFile` when the chosen one does not parse. Cached.
    pub fn code_object(&self, device: &str) -> Result<Arc<CodeObject>, hipError_t> {
        let mut chosen = self.chosen.lock();
        if let Some(r) = chosen.get(device) {
            return r.clone();
        }
        let r = match self.entries.iter().find(|e| target_matches(&e.0, device)) {
            None => {
                crate::core::log::hipkfd_log!(
                    "no code object for {device} (image has {:?})",
                    self.targets().collect::<Vec<_>>()
                );
                Err(hipError_t::hipErrorNoBinaryForGpu)
            }
            Some((t, off, size)) => {
                CodeObject::parse(t.clone(), &self.data()[*off..*off + *size]).map(Arc::new).map_err(|e| {
                    eprintln!("hipkfd: code object {t}: {e}");
                    hipError_t::hipErrorInvalidKernelFile
                })
            }
        };
        chosen.insert(device.to_string(), r.clone());
        r
    }
}

impl Image {
    /// The code object for device `dev`, loaded into its memory on first use: one `hipMalloc`-
    /// style VRAM allocation holding the [`CodeObject::memory_image`] for its address (so
    /// device globals have their initial values). Returns the code object and the load base;
    /// a symbol at code-object address `a` lives at `base + a`. Errors: as
    /// [`Image::code_object`], `hipErrorInvalidKernelFile` (segments or relocations the loader
    /// does not accept), the allocation's and copy's. Nothing stays allocated on an error.
    pub fn load(&self, rt: &Runtime, dev: usize) -> Result<(Arc<CodeObject>, u64), hipError_t> {
        let co = self.code_object(&crate::core::device_props::arch_name(&rt.devices[dev].props))?;
        let mut loaded = self.loaded.lock();
        // Still ours unless something (hipDeviceReset) freed it (the id at that base changed:
        // ids are never reused); then load again.
        if let Some(a) = loaded.get(&dev).filter(|a| rt.allocs.get(a.base).is_some_and(|b| b.id == a.id)) {
            return Ok((co, a.base));
        }
        let bad = |e: CodeObjectError| {
            eprintln!("hipkfd: cannot load code object {}: {e}", co.target);
            hipError_t::hipErrorInvalidKernelFile
        };
        let size = co.load_size().map_err(bad)?;
        let base = rt.mem_alloc_device(dev, size)?;
        let copied = co.memory_image(base).map_err(bad).and_then(|img| {
            // Not in any user stream's order (clr loads through ROCr's synchronous copies): a
            // blocked null stream (a host function still running) must not hold a launch.
            let s = rt.stream_create(dev, crate::core::stream::STREAM_NON_BLOCKING, 0)?;
            rt.stream_detach(&s)?;
            rt.memcpy(base, img.as_ptr() as u64, img.len() as u64, hipMemcpyKind::hipMemcpyHostToDevice, &s, true)?;
            // A synchronous copy from pageable memory returns once the source is staged (CUDA's
            // rule); the launch that follows is on another queue, so the code must have landed.
            rt.stream_sync(&s)
        });
        if let Err(e) = copied {
            let _ = rt.mem_free(base);
            return Err(e);
        }
        crate::core::log::hipkfd_log!("code object {} loaded on device {dev} at {base:#x} ({size} bytes)", co.target);
        let a = rt.allocs.get(base).ok_or(hipError_t::hipErrorInvalidValue)?;
        loaded.insert(dev, a);
        Ok((co, base))
    }

    /// Frees the device memory of every loaded copy (module unload, fat binary unregister).
    pub fn unload(&self) {
        let allocs: Vec<Arc<Allocation>> = self.loaded.lock().drain().map(|(_, a)| a).collect();
        if allocs.is_empty() {
            return;
        }
        // Loaded copies exist only once the runtime is up; each is freed unless something
        // (hipDeviceReset) already did.
        if let Ok(rt) = crate::core::runtime::runtime() {
            for a in allocs {
                if rt.allocs.get(a.base).is_some_and(|b| b.id == a.id) {
                    let _ = rt.mem_free(a.base);
                }
            }
        }
    }
}

/// Who owns a function: a registered fat binary or a loaded module (by handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    FatBinary(usize),
    Module(usize),
}

/// A kernel function: a hipcc `__global__` function registered with `__hipRegisterFunction`, or
/// one `hipModuleGetFunction` found. Its `hipFunction_t` is its address.
#[derive(Debug)]
pub struct Function {
    /// The kernel's (mangled) name in the code object.
    pub name: String,
    /// `name` NUL-terminated, for `hipKernelNameRef` (valid while the function is registered).
    pub c_name: std::ffi::CString,
    pub image: Arc<Image>,
    pub owner: Owner,
}

impl Function {
    pub fn new(name: &str, image: Arc<Image>, owner: Owner) -> Function {
        // Names come from C strings and ELF symbol names: no NUL inside.
        let c_name = std::ffi::CString::new(name).unwrap_or_default();
        Function { name: name.to_string(), c_name, image, owner }
    }

    /// The kernel for the device with target id `device`. Errors: as [`Image::code_object`];
    /// `hipErrorInvalidDeviceFunction` when that code object has no kernel of this name.
    pub fn kernel(&self, device: &str) -> Result<(Arc<CodeObject>, usize), hipError_t> {
        let co = self.image.code_object(device)?;
        let i = co.kernels.iter().position(|k| k.name == self.name).ok_or(hipError_t::hipErrorInvalidDeviceFunction)?;
        Ok((co, i))
    }
}

/// A device variable hipcc registered (`__hipRegisterVar`, `__hipRegisterSurface`,
/// `__hipRegisterTexture`) under the address of its host shadow.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub size: usize,
    pub fatbin: usize,
}

/// A managed variable (`__hipRegisterManagedVar`): its name and the host memory that stands
/// for it until managed memory and code loading exist.
#[derive(Debug)]
pub struct ManagedVar {
    /// Kept for the code loader, which will bind it to the code object's symbol.
    #[allow(dead_code)]
    pub name: String,
    pub fatbin: usize,
    /// Owns the memory the program's pointer points to.
    #[allow(dead_code)]
    host: Box<[u8]>,
}

/// A loaded module: its image and the functions handed out from it (one per name).
#[derive(Debug)]
pub struct Module {
    pub image: Arc<Image>,
    functions: Mutex<HashMap<String, Arc<Function>>>,
}

/// A library (`hipLibraryLoadData`, `hipLibraryLoadFromFile`): its image, made a module of the
/// registry on first use for the device current then, as clr's lazy
/// `LibraryContainer::BuildIt` (a bad image loads, and its first query fails).
#[derive(Debug)]
pub struct Library {
    state: Mutex<LibraryState>,
}

#[derive(Debug)]
enum LibraryState {
    /// The image's bytes, or why there are none (a load error reported on first use).
    Unbuilt(Result<Vec<u8>, hipError_t>),
    /// The module it became and the target id of the device it was built for.
    Built { module: usize, device: String },
}

impl Library {
    /// A library of `image` (`Err`: the load error its first query reports).
    pub fn new(image: Result<Vec<u8>, hipError_t>) -> Library {
        Library { state: Mutex::new(LibraryState::Unbuilt(image)) }
    }

    /// The module the library is, built on first use for the device with target id `device`
    /// (`gcnArchName`), and the target id it was built for. Errors (clr `DynCO::loadCodeObject`):
    /// the load error, `hipErrorInvalidImage` (not a code object, or its code object for the
    /// device does not parse), `hipErrorNotSupported` (compressed bundle),
    /// `hipErrorNoBinaryForGpu` (no code object for the device); a failed build is tried again
    /// on the next query.
    pub fn build(&self, device: &str) -> Result<(usize, String), hipError_t> {
        let mut st = self.state.lock();
        let bytes = match &*st {
            LibraryState::Built { module, device } => return Ok((*module, device.clone())),
            LibraryState::Unbuilt(Err(e)) => return Err(*e),
            LibraryState::Unbuilt(Ok(b)) => b.clone(),
        };
        let image = Image::new(ImageBytes::Owned(bytes)).map_err(|e| e.hip())?;
        image.code_object(device).map_err(|e| match e {
            hipError_t::hipErrorInvalidKernelFile => hipError_t::hipErrorInvalidImage,
            e => e,
        })?;
        let module = registry().lock().add_module(image);
        *st = LibraryState::Built { module, device: device.to_string() };
        Ok((module, device.to_string()))
    }

    /// The module the library was built into, if it was.
    fn module(&self) -> Option<usize> {
        match &*self.state.lock() {
            LibraryState::Built { module, .. } => Some(*module),
            LibraryState::Unbuilt(_) => None,
        }
    }
}

/// Every fat binary, module, library, function handle and variable of the process.
#[derive(Debug, Default)]
pub struct Registry {
    fatbins: HashMap<usize, Arc<Image>>,
    modules: HashMap<usize, Arc<Module>>,
    libraries: HashMap<usize, Arc<Library>>,
    /// Host stub address → function (hipcc kernels).
    host_functions: HashMap<usize, Arc<Function>>,
    /// `hipFunction_t` → function: every handle given out and not yet unloaded.
    handles: HashMap<usize, Arc<Function>>,
    vars: HashMap<usize, Var>,
    managed: Vec<ManagedVar>,
}

/// The process-wide registry.
pub fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(Default::default)
}

impl Registry {
    /// Registers a fat binary; returns its handle (never 0).
    pub fn add_fatbin(&mut self, image: Image) -> usize {
        let image = Arc::new(image);
        let h = Arc::as_ptr(&image) as usize;
        self.fatbins.insert(h, image);
        h
    }

    /// Forgets a fat binary and everything registered from it. False if unknown.
    pub fn remove_fatbin(&mut self, h: usize) -> bool {
        let removed = self.fatbins.remove(&h);
        let known = removed.is_some();
        if let Some(image) = removed {
            image.unload();
        }
        self.host_functions.retain(|_, f| f.owner != Owner::FatBinary(h));
        self.handles.retain(|_, f| f.owner != Owner::FatBinary(h));
        self.vars.retain(|_, v| v.fatbin != h);
        self.managed.retain(|v| v.fatbin != h);
        known
    }

    /// Records a hipcc kernel under its host stub's address (the first registration of an
    /// address wins, as clr). False if the fat binary handle is unknown.
    pub fn add_host_function(&mut self, fatbin: usize, host: usize, name: &str) -> bool {
        let Some(image) = self.fatbins.get(&fatbin).cloned() else { return false };
        if !self.host_functions.contains_key(&host) {
            let f = Arc::new(Function::new(name, image, Owner::FatBinary(fatbin)));
            self.handles.insert(Arc::as_ptr(&f) as usize, f.clone());
            self.host_functions.insert(host, f);
        }
        true
    }

    /// The function registered for a host stub address.
    pub fn host_function(&self, host: usize) -> Option<Arc<Function>> {
        self.host_functions.get(&host).cloned()
    }

    /// The function behind a `hipFunction_t`.
    pub fn function(&self, handle: usize) -> Option<Arc<Function>> {
        self.handles.get(&handle).cloned()
    }

    /// The handle of a function.
    pub fn handle_of(f: &Arc<Function>) -> usize {
        Arc::as_ptr(f) as usize
    }

    /// Records a device variable under its host shadow's address. False if the fat binary
    /// handle is unknown.
    pub fn add_var(&mut self, host: usize, var: Var) -> bool {
        if !self.fatbins.contains_key(&var.fatbin) {
            return false;
        }
        self.vars.insert(host, var);
        true
    }

    pub fn var(&self, host: usize) -> Option<Var> {
        self.vars.get(&host).cloned()
    }

    /// The image of a registered fat binary.
    pub fn fatbin(&self, h: usize) -> Option<Arc<Image>> {
        self.fatbins.get(&h).cloned()
    }

    /// Records a managed variable and returns the address of its host stand-in (initialised
    /// with `init`, aligned to `align`). None if the fat binary handle is unknown.
    pub fn add_managed(&mut self, fatbin: usize, name: &str, init: &[u8], align: usize) -> Option<usize> {
        if !self.fatbins.contains_key(&fatbin) {
            return None;
        }
        let align = align.clamp(1, 4096);
        let mut host = vec![0u8; init.len() + align].into_boxed_slice();
        let skip = host.as_ptr().align_offset(align);
        host[skip..skip + init.len()].copy_from_slice(init);
        let addr = host.as_ptr() as usize + skip;
        self.managed.push(ManagedVar { name: name.to_string(), fatbin, host });
        Some(addr)
    }

    /// Loads a module; returns its handle.
    pub fn add_module(&mut self, image: Image) -> usize {
        let m = Arc::new(Module { image: Arc::new(image), functions: Mutex::new(HashMap::new()) });
        let h = Arc::as_ptr(&m) as usize;
        self.modules.insert(h, m);
        h
    }

    pub fn module(&self, h: usize) -> Option<Arc<Module>> {
        self.modules.get(&h).cloned()
    }

    /// Unloads a module and invalidates its function handles. False if unknown.
    pub fn remove_module(&mut self, h: usize) -> bool {
        self.handles.retain(|_, f| f.owner != Owner::Module(h));
        let removed = self.modules.remove(&h);
        if let Some(m) = &removed {
            m.image.unload();
        }
        removed.is_some()
    }

    /// How many kernels module `h` has for device target `device` (clr `DynCO::getFuncCount`:
    /// `__global__` functions, not `__device__` ones). Errors: `hipErrorNotFound` (unknown module,
    /// or no code object for the device).
    pub fn module_function_count(&self, h: usize, device: &str) -> Result<usize, hipError_t> {
        let m = self.modules.get(&h).ok_or(hipError_t::hipErrorNotFound)?;
        let co = m.image.code_object(device).map_err(|_| hipError_t::hipErrorNotFound)?;
        Ok(co.kernels.len())
    }

    /// Registers a library; returns its handle (never 0).
    pub fn add_library(&mut self, l: Library) -> usize {
        let l = Arc::new(l);
        let h = Arc::as_ptr(&l) as usize;
        self.libraries.insert(h, l);
        h
    }

    pub fn library(&self, h: usize) -> Option<Arc<Library>> {
        self.libraries.get(&h).cloned()
    }

    /// The function `name` of module `h` for device target `device`: the same handle for every
    /// call. Errors: `hipErrorNotFound` (no such kernel, or the module has no code object for
    /// the device).
    pub fn module_function(&mut self, h: usize, device: &str, name: &str) -> Result<Arc<Function>, hipError_t> {
        let m = self.modules.get(&h).cloned().ok_or(hipError_t::hipErrorNotFound)?;
        let co = m.image.code_object(device).map_err(|_| hipError_t::hipErrorNotFound)?;
        co.kernel(name).ok_or(hipError_t::hipErrorNotFound)?;
        let mut fs = m.functions.lock();
        let f = fs
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(Function::new(name, m.image.clone(), Owner::Module(h))))
            .clone();
        self.handles.insert(Arc::as_ptr(&f) as usize, f.clone());
        Ok(f)
    }
}

/// Forgets library `h` and unloads the module it was built into (its kernels' handles become
/// invalid). False if unknown. Takes the registry's lock itself: a library's own lock is never
/// taken under it (`Library::build` takes them the other way round).
pub fn remove_library(h: usize) -> bool {
    let Some(l) = registry().lock().libraries.remove(&h) else { return false };
    if let Some(m) = l.module() {
        registry().lock().remove_module(m);
    }
    true
}

/// A launch's geometry: grid in blocks, block in work-items, dynamic LDS bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: usize,
}

impl LaunchDims {
    /// clr `HIPLaunchParams::IsValidConfig`: every dimension non-zero, each block dimension
    /// within `maxThreadsDim`, the block within `maxThreadsPerBlock`, each grid dimension within
    /// `maxGridSize`, and grid × block within 32 bits per dimension.
    pub fn valid_for(&self, p: &hipDeviceProp_tR0600) -> bool {
        (0..3).all(|i| {
            let (g, b) = (self.grid[i] as u64, self.block[i] as u64);
            g != 0
                && b != 0
                && b <= p.maxThreadsDim[i] as u64
                && g <= p.maxGridSize[i] as u64
                && g * b <= u32::MAX as u64
        }) && self.threads() <= p.maxThreadsPerBlock as u64
    }

    /// Work-items per block.
    pub fn threads(&self) -> u64 {
        self.block.iter().map(|b| *b as u64).product()
    }
}

/// What every launch checks once the function and geometry are known (clr
/// `ihipLaunchKernel_validate`): the device has the kernel (`hipErrorNoBinaryForGpu`,
/// `hipErrorInvalidDeviceFunction`), dynamic LDS within `sharedMemPerBlock`
/// (`hipErrorInvalidValue`), arguments given when the kernel has some (`hipErrorInvalidValue`),
/// the block within the kernel's `.max_flat_workgroup_size` (`hipErrorLaunchFailure`).
pub fn validate_launch(
    f: &Function,
    props: &hipDeviceProp_tR0600,
    dims: &LaunchDims,
    has_args: bool,
) -> Result<(Arc<CodeObject>, usize), hipError_t> {
    let target = crate::core::device_props::arch_name(props);
    let (co, i) = f.kernel(&target)?;
    let k = &co.kernels[i];
    if dims.shared > props.sharedMemPerBlock {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    if k.explicit_args() > 0 && !has_args {
        return Err(hipError_t::hipErrorInvalidValue);
    }
    if k.max_flat_workgroup_size != 0 && dims.threads() > k.max_flat_workgroup_size as u64 {
        return Err(hipError_t::hipErrorLaunchFailure);
    }
    Ok((co, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut h = BUNDLE_MAGIC.to_vec();
        h.extend((entries.len() as u64).to_le_bytes());
        let header_len = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut off = header_len.next_multiple_of(16);
        let mut body = vec![];
        for (id, data) in entries {
            h.extend((off as u64).to_le_bytes());
            h.extend((data.len() as u64).to_le_bytes());
            h.extend((id.len() as u64).to_le_bytes());
            h.extend(id.as_bytes());
            body.push((off, *data));
            off += data.len();
        }
        for (o, d) in body {
            h.resize(o, 0);
            h.extend(d);
        }
        h
    }

    #[test]
    fn bundle_header_round_trip_and_growth() {
        let b = bundle(&[("host-x86_64-unknown-linux", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"0123456789")]);
        let (e, total) = parse_bundle(&b).unwrap();
        assert_eq!(total, b.len());
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].id, "hipv4-amdgcn-amd-amdhsa--gfx90a");
        assert_eq!(&b[e[1].offset..e[1].offset + e[1].size], b"0123456789");
        // A pointer-only caller grows its view until the parser is satisfied.
        let mut n = 8;
        let len = loop {
            match image_len(&b[..n.min(b.len())]) {
                Ok(l) => break l,
                Err(CodeObjectError::NeedMore(m)) => {
                    assert!(m > n);
                    n = m
                }
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(len, b.len());
    }

    #[test]
    fn bad_bundles_are_errors_not_panics() {
        assert_eq!(parse_bundle(b"CCOB\x01\x00\x01\x00").unwrap_err(), CodeObjectError::Compressed);
        assert_eq!(image_len(b"not a module at all, just some text").unwrap_err(), CodeObjectError::NotAnImage);
        let mut b = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"xy")]);
        b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(parse_bundle(&b), Err(CodeObjectError::Malformed(_))));
        let mut b = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"xy")]);
        b[32..40].copy_from_slice(&(u64::MAX - 1).to_le_bytes()); // offset
        assert!(matches!(parse_bundle(&b), Err(CodeObjectError::Malformed(_))));
        assert!(matches!(
            Image::new(ImageBytes::Owned(b"__CLANG_OFFLOAD_BUNDLE__\x01".to_vec())),
            Err(CodeObjectError::Malformed(_))
        ));
        assert!(matches!(elf_len(b"\x7fELF"), Err(CodeObjectError::NeedMore(64))));
    }

    #[test]
    fn target_id_rules() {
        let dev = "gfx90a:sramecc+:xnack-";
        assert!(target_matches("amdgcn-amd-amdhsa--gfx90a", dev));
        assert!(target_matches("amdgcn-amd-amdhsa--gfx90a:xnack-", dev));
        assert!(target_matches("amdgcn-amd-amdhsa--gfx90a:sramecc+", dev));
        assert!(target_matches("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx90a:xnack+", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx90a:sramecc-", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx908", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx90", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx90a:xnack", dev));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx90a:foo+", dev));
        assert!(!target_matches("spirv64-amd-amdhsa--amdgcnspirv", dev));
        // A feature the device does not report (no xnack on gfx1100) is never matched.
        assert!(target_matches("amdgcn-amd-amdhsa--gfx1100", "gfx1100"));
        assert!(!target_matches("amdgcn-amd-amdhsa--gfx1100:xnack-", "gfx1100"));
    }

    #[test]
    fn elf_flags_name_the_target() {
        let mut h = vec![0u8; 64];
        h[0x30..0x34].copy_from_slice(&0x53fu32.to_le_bytes()); // gfx90a, xnack any, sramecc any
        assert_eq!(elf_target(&h).unwrap(), "amdgcn-amd-amdhsa--gfx90a");
        h[0x30..0x34].copy_from_slice(&0xe3fu32.to_le_bytes()); // sramecc on, xnack off
        assert_eq!(elf_target(&h).unwrap(), "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        h[0x30..0x34].copy_from_slice(&0x1u32.to_le_bytes());
        assert_eq!(elf_target(&h), None);
    }

    #[test]
    fn first_compatible_entry_wins_and_no_match_is_no_binary() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"a"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"b"),
        ]);
        let img = Image::new(ImageBytes::Owned(b)).unwrap();
        let t: Vec<_> = img.targets().collect();
        assert_eq!(t, ["amdgcn-amd-amdhsa--gfx1030", "amdgcn-amd-amdhsa--gfx90a:xnack+"]);
        assert_eq!(img.code_object("gfx90a:sramecc+:xnack-").unwrap_err(), hipError_t::hipErrorNoBinaryForGpu);
        // Compatible but not an ELF: the chosen code object does not parse.
        assert_eq!(img.code_object("gfx90a:sramecc+:xnack+").unwrap_err(), hipError_t::hipErrorInvalidKernelFile);
    }

    /// Code objects hipcc builds from our own sources at test time (skipped without hipcc).
    fn hipcc_genco(src: &str, archs: &[&str]) -> Option<Vec<u8>> {
        if std::process::Command::new("hipcc").arg("--version").output().is_err() {
            eprintln!("SKIP: hipcc not installed (Debian package hipcc)");
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "hipkfd-module-{}-{}",
            std::process::id(),
            archs.join("_").replace(':', "")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.hip"), src).unwrap();
        let mut cmd = std::process::Command::new("hipcc");
        cmd.current_dir(&dir).args(["--genco", "k.hip", "-o", "k.co"]);
        for a in archs {
            cmd.arg(format!("--offload-arch={a}"));
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "hipcc: {}", String::from_utf8_lossy(&out.stderr));
        let co = std::fs::read(dir.join("k.co")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        Some(co)
    }

    const KERNELS: &str = r#"#include <hip/hip_runtime.h>
extern "C" __global__ void Kernel42(int* p) { *p = 42; }
extern "C" __global__ void NOPKernel() {}
__global__ void __launch_bounds__(256) fill(int* p, int v, double d) { p[threadIdx.x] = v + (int)d; }
__device__ int table[16];
__device__ int init[2] = {3, 4};
__device__ int* ptr = &init[1];
__device__ int twice(int x) { return 2 * x; }
"#;

    #[test]
    fn hipcc_code_object_kernels_and_globals() {
        let Some(co) = hipcc_genco(KERNELS, &["gfx90a"]) else { return };
        let img = Image::new(ImageBytes::Owned(co)).unwrap();
        assert_eq!(img.targets().collect::<Vec<_>>(), ["amdgcn-amd-amdhsa--gfx90a"]);
        let co = img.code_object("gfx90a:sramecc+:xnack-").unwrap();
        assert!(std::ptr::eq(&*co, &*img.code_object("gfx90a:sramecc+:xnack-").unwrap()), "cached");
        let mut names: Vec<_> = co.kernels.iter().map(|k| k.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["Kernel42", "NOPKernel", "_Z4fillPiid"]);
        let k42 = co.kernel("Kernel42").unwrap();
        assert_eq!(k42.symbol, "Kernel42.kd");
        assert_eq!(k42.explicit_args(), 1);
        assert_eq!((k42.args[0].0, k42.args[0].1), (0, 8));
        assert!(k42.kernarg_segment_size >= 8 && k42.kernarg_segment_align >= 8);
        assert_eq!(k42.wavefront_size, 64);
        let fill = co.kernel("_Z4fillPiid").unwrap();
        assert_eq!(fill.explicit_args(), 3);
        assert_eq!(fill.max_flat_workgroup_size, 256);
        let offs: Vec<_> = fill.args.iter().take(3).map(|a| (a.0, a.1)).collect();
        assert_eq!(offs, [(0, 8), (8, 4), (16, 8)]);
        assert_eq!(co.kernel("NOPKernel").unwrap().explicit_args(), 0);
        assert!(co.kernel("_Z5twicei").is_none(), "a __device__ function is not a kernel");
        // Kernel descriptors are distinct, 64-byte aligned symbols.
        let mut kds: Vec<_> = co.kernels.iter().map(|k| k.kd_address).collect();
        kds.sort();
        kds.dedup();
        assert_eq!(kds.len(), 3);
        assert!(kds.iter().all(|a| a % 64 == 0));
        let t = co.global("table").unwrap();
        assert_eq!(t.size, 64);
        // The memory image: initial values in place, the pointer relocated to the load base.
        let base = 0x7f00_0000_0000u64;
        let img = co.memory_image(base).unwrap();
        assert_eq!(img.len() as u64, co.load_size().unwrap());
        assert_eq!(img.len() % 4096, 0);
        let at = |a: u64, n: usize| &img[a as usize..a as usize + n];
        let init = co.global("init").unwrap();
        assert_eq!(at(init.address, 8), [3, 0, 0, 0, 4, 0, 0, 0]);
        let ptr = co.global("ptr").unwrap();
        assert_eq!(at(ptr.address, 8), (base + init.address + 4).to_le_bytes());
        assert!(at(t.address, 64).iter().all(|b| *b == 0), "bss is zero");
        // The ELF alone loads too (hipModuleLoadData of a bare code object).
        let bare = Image::new(ImageBytes::Owned(co.elf.clone())).unwrap();
        assert_eq!(bare.code_object("gfx90a:sramecc-:xnack+").unwrap().kernels.len(), 3);
        assert_eq!(bare.code_object("gfx908:sramecc+:xnack-").unwrap_err(), hipError_t::hipErrorNoBinaryForGpu);
    }

    #[test]
    fn hipcc_bundle_picks_by_xnack() {
        let Some(b) = hipcc_genco(KERNELS, &["gfx90a:xnack+", "gfx90a:xnack-"]) else { return };
        let img = Image::new(ImageBytes::Owned(b)).unwrap();
        let mut t: Vec<_> = img.targets().collect();
        t.sort();
        assert_eq!(t, ["amdgcn-amd-amdhsa--gfx90a:xnack+", "amdgcn-amd-amdhsa--gfx90a:xnack-"]);
        assert_eq!(img.code_object("gfx90a:sramecc+:xnack-").unwrap().target, "amdgcn-amd-amdhsa--gfx90a:xnack-");
        assert_eq!(img.code_object("gfx90a:sramecc+:xnack+").unwrap().target, "amdgcn-amd-amdhsa--gfx90a:xnack+");
        assert_eq!(img.code_object("gfx942:sramecc+:xnack-").unwrap_err(), hipError_t::hipErrorNoBinaryForGpu);
    }

    #[test]
    fn registry_lifecycle() {
        let Some(b) = hipcc_genco(KERNELS, &["gfx90a"]) else { return };
        let mut r = Registry::default();
        let fb = r.add_fatbin(Image::new(ImageBytes::Owned(b.clone())).unwrap());
        assert!(r.add_host_function(fb, 0x1000, "Kernel42"));
        assert!(r.add_host_function(fb, 0x1000, "other"), "second registration of an address is ignored");
        assert!(!r.add_host_function(fb + 1, 0x2000, "Kernel42"));
        let f = r.host_function(0x1000).unwrap();
        assert_eq!(f.name, "Kernel42");
        assert!(r.function(Registry::handle_of(&f)).is_some());
        let mut p: hipDeviceProp_tR0600 = unsafe_zeroed_props();
        p.maxThreadsPerBlock = 1024;
        p.maxThreadsDim = [1024; 3];
        p.maxGridSize = [i32::MAX, 65536, 65536];
        p.sharedMemPerBlock = 65536;
        crate::core::device_props::put_cstr(&mut p.gcnArchName, "gfx90a:sramecc+:xnack-");
        let dims = LaunchDims { grid: [1; 3], block: [64, 1, 1], shared: 0 };
        assert!(dims.valid_for(&p));
        assert!(!LaunchDims { grid: [0, 1, 1], ..dims }.valid_for(&p));
        assert!(!LaunchDims { block: [1025, 1, 1], ..dims }.valid_for(&p));
        assert!(!LaunchDims { block: [32, 32, 2], ..dims }.valid_for(&p));
        assert!(!LaunchDims { grid: [1, 65537, 1], ..dims }.valid_for(&p));
        assert_eq!(validate_launch(&f, &p, &dims, false).unwrap_err(), hipError_t::hipErrorInvalidValue);
        assert!(validate_launch(&f, &p, &dims, true).is_ok());
        assert_eq!(
            validate_launch(&f, &p, &LaunchDims { shared: 65537, ..dims }, true).unwrap_err(),
            hipError_t::hipErrorInvalidValue
        );
        assert!(r.add_host_function(fb, 0x3000, "_Z4fillPiid"));
        let fill = r.host_function(0x3000).unwrap();
        assert_eq!(
            validate_launch(&fill, &p, &LaunchDims { block: [512, 1, 1], ..dims }, true).unwrap_err(),
            hipError_t::hipErrorLaunchFailure
        );
        assert!(r.add_host_function(fb, 0x4000, "missing"));
        let missing = r.host_function(0x4000).unwrap();
        assert_eq!(validate_launch(&missing, &p, &dims, true).unwrap_err(), hipError_t::hipErrorInvalidDeviceFunction);
        let (co, i) = validate_launch(&f, &p, &dims, true).unwrap();
        assert_eq!(co.kernels[i].name, f.name);
        let a = r.add_managed(fb, "m", &[1, 2, 3, 4], 64).unwrap();
        assert_eq!(a % 64, 0);
        assert!(r.remove_fatbin(fb));
        assert!(!r.remove_fatbin(fb));
        assert!(r.host_function(0x1000).is_none() && r.function(Registry::handle_of(&f)).is_none());
        // Modules: one handle per name, invalid after unload.
        let m = r.add_module(Image::new(ImageBytes::Owned(b)).unwrap());
        let g1 = r.module_function(m, "gfx90a:sramecc+:xnack-", "NOPKernel").unwrap();
        let g2 = r.module_function(m, "gfx90a:sramecc+:xnack-", "NOPKernel").unwrap();
        assert!(Arc::ptr_eq(&g1, &g2));
        assert_eq!(r.module_function(m, "gfx90a:sramecc+:xnack-", "Nope").unwrap_err(), hipError_t::hipErrorNotFound);
        assert!(r.remove_module(m));
        assert!(r.function(Registry::handle_of(&g1)).is_none());
        assert!(!r.remove_module(m));
    }

    fn unsafe_zeroed_props() -> hipDeviceProp_tR0600 {
        // SAFETY: hipDeviceProp_tR0600 is a plain C struct of integers, arrays and null-able
        // pointers, for which all-zero bytes are a valid value.
        unsafe { std::mem::zeroed() }
    }
}
