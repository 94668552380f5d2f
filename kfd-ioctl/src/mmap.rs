//! mmap offsets on `/dev/kfd` (linux `drivers/gpu/drm/amd/amdkfd/kfd_priv.h`, byte-based
//! encoding of current kernels): bits [63:62] type, [61:46] `gpu_id`, [45:0] offset.
//!
//! VRAM and GTT BOs are CPU-mapped through the render node at the offset that
//! `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU` returns, never through `/dev/kfd`.

pub const KFD_MMAP_TYPE_SHIFT: u32 = 62;
pub const KFD_MMAP_TYPE_MASK: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
pub const KFD_MMAP_TYPE_DOORBELL: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
pub const KFD_MMAP_TYPE_EVENTS: u64 = 0x2 << KFD_MMAP_TYPE_SHIFT;
pub const KFD_MMAP_TYPE_RESERVED_MEM: u64 = 0x1 << KFD_MMAP_TYPE_SHIFT;
pub const KFD_MMAP_TYPE_MMIO: u64 = 0x0 << KFD_MMAP_TYPE_SHIFT;

pub const KFD_GPU_ID_HASH_WIDTH: u32 = 16;
pub const KFD_MMAP_GPU_ID_SHIFT: u32 = 46;
pub const KFD_MMAP_GPU_ID_MASK: u64 = ((1u64 << KFD_GPU_ID_HASH_WIDTH) - 1) << KFD_MMAP_GPU_ID_SHIFT;
pub const KFD_MMAP_OFFSET_VALUE_MASK: u64 = (1u64 << KFD_MMAP_GPU_ID_SHIFT) - 1;

/// `KFD_MMAP_GPU_ID(gpu_id)`.
pub const fn kfd_mmap_gpu_id_bits(gpu_id: u32) -> u64 {
    ((gpu_id as u64) << KFD_MMAP_GPU_ID_SHIFT) & KFD_MMAP_GPU_ID_MASK
}

/// `KFD_MMAP_GET_GPU_ID(offset)`.
pub const fn kfd_mmap_gpu_id(offset: u64) -> u32 {
    ((offset & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT) as u32
}

/// The `KFD_MMAP_TYPE_*` bits of `offset`.
pub const fn kfd_mmap_type(offset: u64) -> u64 {
    offset & KFD_MMAP_TYPE_MASK
}

/// Bytes per doorbell on gfx9 and later (64-bit doorbells).
pub const DOORBELL_SIZE: u64 = 8;
/// Bytes of one process's doorbell slice on SOC15 (1024 doorbells × 8 bytes); the doorbell mmap
/// length, and the mask libhsakmt applies (`off & ~0x1fff`).
pub const KFD_DOORBELL_PROCESS_SLICE: u64 = 0x2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbell_offset_round_trips() {
        let off = KFD_MMAP_TYPE_DOORBELL | kfd_mmap_gpu_id_bits(0xb2a3) | 0x18;
        assert_eq!(kfd_mmap_type(off), KFD_MMAP_TYPE_DOORBELL);
        assert_eq!(kfd_mmap_gpu_id(off), 0xb2a3);
        assert_eq!(off & KFD_MMAP_OFFSET_VALUE_MASK, 0x18);
    }
}
