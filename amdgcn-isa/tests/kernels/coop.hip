// Cooperative-groups grid sync (ds_gws_barrier): every workgroup must pass the barrier
// before any reads what the others wrote.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void grid_sync(int* p) {
    if (threadIdx.x == 0) p[blockIdx.x] = blockIdx.x + 1;
    cg::this_grid().sync();
    if (threadIdx.x == 0) p[blockIdx.x + gridDim.x] = p[(blockIdx.x + 1) % gridDim.x];
}
