//! An interpreter for the gfx90a (CDNA2, GFX9 family) instruction set, testable without the
//! simulator: it runs the waves of one AQL kernel dispatch, or of a PM4 DISPATCH_DIRECT started
//! from the compute registers ([`ComputeRegisters`]), against any [`Memory`] (a GPUVM in
//! kfd-sim, a plain buffer in tests).
//!
//! Sources (facts only): AMD "AMD Instinct MI200 Instruction Set Architecture" (CDNA2), LLVM
//! `AMDGPUUsage` ("Kernel Descriptor", "Initial Kernel Execution State", "Code Object V4/V5"),
//! LLVM's AMDGPU instruction tables.
//!
//! Modules: `decode` (microcode formats to [`Inst`], opcode numbers through the generated
//! `optab`), `wave` (register files, operands, inline constants, apertures), `salu` (SOP*,
//! program control, `s_getreg`), `valu` (VOP1/VOP2/VOPC/VOP3/VOP3P with SDWA and DPP),
//! `memops` (SMEM, FLAT/GLOBAL/SCRATCH, MUBUF, DS, a per-thread TLB over
//! [`Memory::host_ptr`]), `dispatch` (kernel descriptor, initial wave state, workgroups on a
//! thread pool, barriers, the per-run decode cache).
//!
//! Speed: decoded instructions are cached per 4 KiB code page; VALU ops run whole 64-lane
//! arrays, built for AVX2 as well as x86-64's baseline (`valu`); a wave's access of consecutive
//! dwords in at most two host pages is one or two host pointers (`memops`), others translate
//! per lane through the TLB. `cargo run --release -p amdgcn-isa --example bench` measures it.
//!
//! Model: wave64 only. Memory operations complete at once (`s_waitcnt` is ordering only).
//! The waves of a workgroup run interleaved on one host thread, switching at `s_barrier`,
//! `s_sleep` and every 16k instructions; when every wave of a workgroup is in `s_sleep` (a
//! spin-wait), its host thread yields the CPU. Workgroups run on up to `threads` threads. A
//! workgroup that ran 1M instructions gives its thread to a waiting one (so a workgroup
//! spinning on a later one progresses), and `ds_gws_barrier` (cooperative-groups grid sync)
//! parks the workgroup until the whole grid arrived. `ds_gws_sema_p` on a GWS semaphore
//! ([`Gws`], [`Options::gws`]) that holds no release parks the workgroup too, until a
//! `ds_gws_sema_v`/`_br`/`_release_all` reaches its wave. LDS is per workgroup (zeroed), scratch per
//! work-item (host memory; the private segment buffer V# is marked ADD_TID_ENABLE and the
//! flat-scratch / wave-offset SGPRs are 0, so scratch offsets are per-lane offsets); a wave
//! that sets FLAT_SCRATCH itself (kfdtest's PM4 dispatches) reaches memory there instead, through
//! FLAT (private aperture) and SCRATCH instructions, interleaved by dword as the GPU does. Flat
//! addresses in the LDS aperture (`1 << 48`) and the private aperture (`2 << 48`), KFD's GFX9
//! apertures, go to LDS and scratch. `s_trap` ends the dispatch with `ExecError::Invalid`
//! (there is no trap handler). Env: `AMDGCN_ISA_MAX_WAVE_INSTRUCTIONS` (instruction budget per
//! wave for [`run`]), `AMDGCN_ISA_TRACE` (prints workgroup 0 wave 0's instructions).
//!
//! Not implemented (each is `ExecError::Unsupported`): MIMG/MTBUF/EXP formats, MUBUF
//! `*_format_*` and `lds` forms, GDS (`ds_*` with `gds` other than the GWS instructions), MFMA (`v_mfma_*`),
//! SMEM atomics and `s_scratch_*`, `s_cbranch_*_fork`/`join`, `s_set_gpr_idx_*`/`s_movrel*`
//! indexing modes, `ds_*` forms without a plain memory meaning (`ds_mskor`, `ds_wrap`,
//! `ds_append`/`ds_consume`, `ds_*_addtid`), DPP on 64-bit operands (`row_newbcast`), `v_cube*`,
//! `v_qsad*`/`v_mqsad*`.
//! `examples/coverage.rs` measures support over real code objects.

mod decode;
mod dispatch;
mod gws;
mod memops;
mod optab;
mod salu;
mod valu;
mod wave;

pub use decode::{decode, DecodeError, Inst};
pub use dispatch::{probe, KernelDescriptor};
pub use gws::{Gws, GWS_RESOURCES};
pub use optab::Op;

/// A GPU memory access that failed: the first faulting byte's page (4 KiB aligned), as the VM
/// fault interrupt reports it (linux `kfd_signal_vm_fault_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub va: u64,
    /// The access was a write (a read-only mapping faults only on writes).
    pub write: bool,
}

/// The GPU virtual address space a dispatch runs in (one process's GPUVM of one GPU).
///
/// `Sync`: the workgroups of a dispatch run on several host threads at once. Atomics must be
/// atomic against other waves, other dispatches and the host (real host atomics on the backing).
pub trait Memory: Sync {
    /// Reads `dst.len()` bytes at `va`.
    fn read(&self, va: u64, dst: &mut [u8]) -> Result<(), Fault>;
    /// Writes `src` at `va`.
    fn write(&self, va: u64, src: &[u8]) -> Result<(), Fault>;
    /// Atomic read-modify-write of the naturally aligned 4- or 8-byte (`width`) word at `va`:
    /// stores `op(old)` and returns `old`.
    fn atomic(&self, va: u64, width: u32, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, Fault>;
    /// Fast path: a host pointer to `[va, va+len)` when the whole range is backed by host memory
    /// the caller may access directly for the duration of the dispatch, else `Ok(None)` (use
    /// `read`/`write`). Errors: the range is not mapped (or not writable, for `write`).
    fn host_ptr(&self, va: u64, len: u64, write: bool) -> Result<Option<*mut u8>, Fault> {
        let _ = (va, len, write);
        Ok(None)
    }
}

/// One kernel dispatch, as the AQL kernel-dispatch packet (`hsa_kernel_dispatch_packet_t`)
/// gives it.
#[derive(Debug, Clone, Default)]
pub struct Dispatch {
    /// VA of the 64-byte kernel descriptor (`kernel_object`).
    pub kernel_object: u64,
    /// VA of the kernarg segment (`kernarg_address`).
    pub kernarg_address: u64,
    /// VA of the dispatch packet itself (the dispatch-ptr SGPR pair).
    pub dispatch_ptr: u64,
    /// VA of the queue's `amd_queue_t` (the queue-ptr SGPR pair).
    pub queue_ptr: u64,
    /// Work-items per dimension (`grid_size_x/y/z`).
    pub grid_size: [u32; 3],
    /// Work-items per workgroup per dimension (`workgroup_size_x/y/z`).
    pub workgroup_size: [u16; 3],
    /// LDS bytes per workgroup (`group_segment_size`: static plus dynamic).
    pub group_segment_size: u32,
    /// Scratch bytes per work-item (`private_segment_size`).
    pub private_segment_size: u32,
    /// A dispatch the command processor starts from its compute registers (a PM4
    /// DISPATCH_DIRECT after SET_SH_REG) rather than from a kernel descriptor: the registers are
    /// the state, and `kernel_object` is not read. `None`: an AQL dispatch.
    pub registers: Option<ComputeRegisters>,
    /// The dispatch id (an AQL dispatch: its packet's index in the queue, the read index the
    /// CP took it at). Where a trap handler is set, waves start with it in `ttmp6` (low) and
    /// `ttmp7` (high), the trap temporaries the kernel's MQD has the CP fill ("save the
    /// dispatch ID in trap temporaries 6 & 7"); ROCr's PC samples carry its low 25 bits.
    pub dispatch_id: u64,
}

/// The compute shader registers a gfx9 MEC starts the waves of a DISPATCH_DIRECT from (the
/// `COMPUTE_*` SH registers, gfx_9_0_offset.h / sh_mask.h), where an AQL dispatch has the kernel
/// descriptor's copies of the same fields.
///
/// What each becomes: the code starts at `pgm_addr`; COMPUTE_PGM_RSRC1/2/3 mean what they mean
/// in a kernel descriptor (VGPR count, float mode, USER_SGPR count, TGID_X/Y/Z_EN, TG_SIZE_EN,
/// SCRATCH_EN, LDS_SIZE in 128-dword granules); the first USER_SGPR SGPRs take
/// COMPUTE_USER_DATA_0.. (no kernel-code-properties list: the user data *is* the user SGPRs),
/// then the system SGPRs (workgroup ids, ...) follow as for AQL. Work-item ids go to v0 packed
/// as on every gfx90a dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComputeRegisters {
    /// The code's VA: COMPUTE_PGM_LO/HI hold it shifted right by 8.
    pub pgm_addr: u64,
    pub pgm_rsrc1: u32,
    pub pgm_rsrc2: u32,
    pub pgm_rsrc3: u32,
    /// COMPUTE_USER_DATA_0..15.
    pub user_data: [u32; 16],
}

/// Why a dispatch stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// A memory access faulted (the dispatch is abandoned; kfd-sim reports a VM fault).
    #[error("GPU memory fault at {:#x} ({})", .0.va, if .0.write { "write" } else { "read" })]
    Fault(Fault),
    /// An instruction the interpreter does not implement: never skipped.
    #[error("unsupported instruction {encoding:#018x} ({what}) at pc {pc:#x}")]
    Unsupported { pc: u64, encoding: u64, what: String },
    /// A kernel descriptor or dispatch that cannot run (names the reason).
    #[error("invalid dispatch: {0}")]
    Invalid(String),
    /// [`Options::cancel`] said so: the dispatch was abandoned with waves still running.
    #[error("dispatch cancelled")]
    Cancelled,
}

impl From<Fault> for ExecError {
    fn from(f: Fault) -> Self {
        ExecError::Fault(f)
    }
}

/// Tuning for [`run_with`].
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop a wave (`ExecError::Invalid`) after this many instructions: a guard against
    /// kernels that never end. `None`: no limit ([`run`] reads `AMDGCN_ISA_MAX_WAVE_INSTRUCTIONS`).
    pub max_wave_instructions: Option<u64>,
    /// The GPU's wave slots (CUs × SIMDs per CU × waves per SIMD): workgroups that fit in them
    /// are resident together and take turns on the host threads, as they would run side by side
    /// on the GPU (workgroups that wait for one another, or spin on `s_memtime`, need that).
    /// At most [`MAX_RESIDENT_WAVES`] are used (each wave holds 128 KiB of VGPRs). `None`, or
    /// fewer slots: `2 × threads + 8` workgroups.
    pub wave_slots: Option<u64>,
    /// Called by a host thread each time before it takes a workgroup to run: where the host
    /// slows a dispatch down (kfd-sim: a lower-priority queue's dispatch while a higher-priority
    /// one runs on the same GPU). `None`: nothing.
    pub throttle: Option<Throttle>,
    /// Polled before each workgroup is taken and every 4096 instructions of a running one:
    /// once it returns true the dispatch ends with [`ExecError::Cancelled`], whatever its waves
    /// are doing (kfd-sim: the queue was destroyed, and the CP preempted and dropped its waves,
    /// endless loops included). `None`: a dispatch runs to its end.
    pub cancel: Option<Cancel>,
    /// The GWS resources of the queue that runs the dispatch (kfd-sim: the GPU's, once
    /// ALLOC_QUEUE_GWS gave them to the queue), which `ds_gws_init` and the `ds_gws_sema_*`
    /// instructions use; their state outlives the dispatch. `None`: those instructions end the
    /// dispatch with [`ExecError::Invalid`] (on the GPU a queue without GWS gets a NACK and the
    /// wave halts). `ds_gws_barrier` does not use it (a barrier of the dispatch's own waves).
    pub gws: Option<std::sync::Arc<Gws>>,
    /// The trap handling of the queue that runs the dispatch: where `s_trap` goes and where
    /// `s_sendmsg` messages to the host end up. `None`: `s_trap` ends the dispatch with
    /// [`ExecError::Invalid`] and messages go nowhere.
    pub trap: Option<Trap>,
}

/// What [`Options::trap`] gives the waves of a dispatch, as the CP sets it up for a queue
/// (kfd-sim: from the process's `SET_TRAP_HANDLER` and the queue's doorbell).
///
/// The first-level trap handler (the kernel's `cwsr_trap_handler_gfx9.asm`, which KFD installs
/// as every queue's TBA) is carried out here rather than run as code: `s_trap N` (N ≠ 0) with a
/// second-level handler set enters it at `tba` with the registers that handler finds on
/// hardware: `ttmp[0:1]` the PC of the `s_trap` with `ttmp1[23:16]` = N, `ttmp12` the saved
/// STATUS, `ttmp[14:15]` = `tma`, and the wave privileged until `s_rfe_b64`. Without a
/// second-level handler (`tba` 0) the first-level handler steps over the `s_trap`
/// (`L_NO_NEXT_TRAP` → `L_TRAP_CASE`).
///
/// Host traps ([`Trap::host_trap`]) enter the same handler with `ttmp1[24]` (HT) set and the
/// PC of the next instruction, which `s_rfe_b64` returns to.
#[derive(Clone)]
pub struct Trap {
    /// Second-level trap handler (`tba_addr` of SET_TRAP_HANDLER; 0: none).
    pub tba: u64,
    /// Its TMA (`tma_addr`).
    pub tma: u64,
    /// The queue's doorbell id, which `s_sendmsg sendmsg(MSG_GET_DOORBELL)` returns in
    /// `EXEC_LO[9:0]`.
    pub doorbell_id: u32,
    /// `s_sendmsg sendmsg(MSG_INTERRUPT)`: called with `M0[23:0]` (the SQ interrupt's DATA) and
    /// whether the wave was privileged (in a trap handler: the interrupt's PRIV bit).
    pub interrupt: std::sync::Arc<dyn Fn(u32, bool) + Send + Sync>,
    /// Host traps the driver sends waves (SQ_CMD with CMD=TRAP, as KFD's PC sampling does).
    pub host_trap: Option<HostTrap>,
}

/// [`HostTrap::take`]: `(hw_id, seen) -> trap id`.
pub type HostTrapTake = dyn Fn(u32, &mut u64) -> Option<u32> + Send + Sync;

/// Host traps of [`Trap::host_trap`].
#[derive(Clone)]
pub struct HostTrap {
    /// Asked for each wave at its instruction-slice boundaries (every few thousand
    /// instructions, and whenever the wave resumes) outside its trap handler, with the wave's
    /// HW_ID and a word of its own (`u64::MAX` when the wave starts; the hook keeps what it
    /// needs there). Returns the trap id (SQ_CMD DATA) of a host trap the wave takes now, or
    /// None. It decides what the first-level handler would: a host trap the process has not
    /// enabled is never taken.
    pub take: std::sync::Arc<HostTrapTake>,
    /// Called as a wave that took a host trap leaves the handler (`s_rfe_b64`); a wave that
    /// ends or faults in it never does.
    pub returned: std::sync::Arc<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for HostTrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostTrap(..)")
    }
}

impl std::fmt::Debug for Trap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Trap {{ tba: {:#x}, tma: {:#x}, doorbell_id: {} }}", self.tba, self.tma, self.doorbell_id)
    }
}

/// A hook of [`Options::cancel`].
#[derive(Clone)]
pub struct Cancel(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cancel(..)")
    }
}

/// A hook of [`Options::throttle`].
#[derive(Clone)]
pub struct Throttle(pub std::sync::Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Throttle(..)")
    }
}

/// The most waves [`run_with`] keeps resident at once (64 MiB of VGPR state), whatever
/// [`Options::wave_slots`] says.
pub const MAX_RESIDENT_WAVES: u64 = 512;

/// Runs every workgroup of `d` to completion on up to `threads` host threads.
///
/// Errors: the first failing workgroup's error (lowest workgroup index among those that
/// failed before the others stopped): `Fault` for a GPU memory fault, `Unsupported` for an
/// instruction the interpreter lacks, `Invalid` for a descriptor/dispatch that cannot run.
pub fn run(mem: &dyn Memory, d: &Dispatch, threads: usize) -> Result<(), ExecError> {
    let max_wave_instructions = std::env::var("AMDGCN_ISA_MAX_WAVE_INSTRUCTIONS").ok().and_then(|v| v.parse().ok());
    run_with(mem, d, threads, &Options { max_wave_instructions, ..Default::default() }).map(|_| ())
}

/// What a dispatch executed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instructions issued, counted once per wave.
    pub wave_instructions: u64,
    /// Instructions times the lanes active in EXEC when they issued.
    pub lane_instructions: u64,
}

/// [`run`] with explicit [`Options`]; returns what was executed.
pub fn run_with(mem: &dyn Memory, d: &Dispatch, threads: usize, opts: &Options) -> Result<Stats, ExecError> {
    dispatch::run(mem, d, threads, opts)
}
