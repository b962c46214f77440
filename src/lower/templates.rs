//! The fixed text around generated kernel bodies: module headers, kernel
//! signatures and the CPU entry points. These strings are warp-lang 1.19.0's
//! output format (with block_dim 256, grid-stride CUDA kernels, no line
//! directives), with `@NAME@` for the mangled kernel name and `@NDIM@` for the
//! launch dimension.

pub const NO_BFLOAT16: &str = "#define WP_NO_BFLOAT16\n";

pub const CPU_HEADER: &str = r#"
#define WP_TILE_BLOCK_DIM 256
#define WP_NO_CRT
#include "builtin.h"
#include "deterministic.h"

#define builtin_tid1d() wp::linear_tid<wp_linear_tid>(task_index, dim)
#define builtin_tid2d(x, y) wp::tid(x, y, task_index, dim)
#define builtin_tid3d(x, y, z) wp::tid(x, y, z, task_index, dim)
#define builtin_tid4d(x, y, z, w) wp::tid(x, y, z, w, task_index, dim)

#define builtin_block_dim() wp::block_dim()

"#;

pub const CUDA_HEADER: &str = r#"
#define WP_TILE_BLOCK_DIM 256
#define WP_NO_CRT
#include "builtin.h"
#include "deterministic.h"

// Map wp.breakpoint() to a device brkpt at the call site so cuda-gdb attributes the stop to the generated .cu line
#if defined(__CUDACC__) && !defined(_MSC_VER)
#define __debugbreak() __brkpt()
#endif

#define builtin_tid1d() wp::tid(_idx, dim)
#define builtin_tid2d(x, y) wp::tid(x, y, _idx, dim)
#define builtin_tid3d(x, y, z) wp::tid(x, y, z, _idx, dim)
#define builtin_tid4d(x, y, z, w) wp::tid(x, y, z, w, _idx, dim)

#define builtin_block_dim() wp::block_dim()

// CUDA Thread Block Cluster shape declaration. Expands to __cluster_dims__
// only on devices that support clusters (compute capability 9.0+); otherwise
// expands to nothing so the same source compiles cleanly for any target arch.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define WP_CLUSTER_DIMS(x, y, z) __cluster_dims__(x, y, z)
#else
#define WP_CLUSTER_DIMS(x, y, z)
#endif

// Maximum registers per thread. __maxnreg__ was added in CUDA Toolkit 12.4;
// older toolkits ignore the opt-in so the same source remains compilable.
#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#define WP_MAXNREG(n) __maxnreg__(n)
#else
#define WP_MAXNREG(n)
#endif

// Allow PTXAS to spill registers into shared memory. CUDA Toolkit 13.0
// introduced the pragma, which is unavailable in device-debug compilation.
#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ >= 13) && !defined(_DEBUG)
#define WP_ENABLE_SMEM_SPILLING() asm volatile(".pragma \"enable_smem_spilling\";");
#else
#define WP_ENABLE_SMEM_SPILLING()
#endif

"#;

pub const CAST_MACROS: &str = r#"
// avoid namespacing of float type for casting to float type, this is to avoid wp::float(x), which is not valid in C++
#define float(x) cast_float(x)
#define adj_float(x, adj_x, adj_ret) adj_cast_float(x, adj_x, adj_ret)

#define int(x) cast_int(x)
#define adj_int(x, adj_x, adj_ret) adj_cast_int(x, adj_x, adj_ret)

"#;

/// Opening of a grid-stride CUDA kernel, up to its body; `@ARGS@` is the parameter list,
/// `@ATTRS@` the launch bounds / cluster attributes, `@REGS@` the register cap and
/// `@SPILL@` the shared-memory spilling pragma's line (or nothing).
pub const CUDA_KERNEL_OPEN: &str = r#"extern "C" @ATTRS@__global__ void @REGS@@NAME@(
    @ARGS@)
{
@SPILL@    wp::tile_shared_storage_t tile_mem;

    for (size_t _idx = static_cast<size_t>(blockDim.x) * static_cast<size_t>(blockIdx.x) + static_cast<size_t>(threadIdx.x);
         _idx < dim.size;
         _idx += static_cast<size_t>(blockDim.x) * static_cast<size_t>(gridDim.x))
    {
            // reset shared memory allocator
        wp::tile_shared_storage_t::init();

"#;

pub const CUDA_KERNEL_CLOSE: &str = "    }\n}";

/// Opening of a CUDA kernel without the grid-stride loop (`grid_stride=False`):
/// a thread past the launch returns.
pub const CUDA_LEAN_KERNEL_OPEN: &str = r#"extern "C" @ATTRS@__global__ void @REGS@@NAME@(
    @ARGS@)
{
@SPILL@    wp::tile_shared_storage_t tile_mem;

    const size_t _idx = static_cast<size_t>(blockIdx.z * gridDim.y + blockIdx.y) * static_cast<size_t>(gridDim.x * blockDim.x) + static_cast<size_t>(blockIdx.x * blockDim.x + threadIdx.x);
    if (_idx >= dim.size) return;
            // reset shared memory allocator
    wp::tile_shared_storage_t::init();

"#;

pub const CUDA_LEAN_KERNEL_CLOSE: &str = "}";

/// Opening of a CPU kernel function; `@KIND@` is forward/backward and `@ARGS@`
/// the parameters before the argument structs.
pub const CPU_KERNEL_OPEN: &str = r#"template <bool wp_linear_contiguous>
static void @NAME@_cpu_kernel_@KIND@(
    @ARGS@)
{
    static constexpr bool wp_linear_tid = wp_linear_contiguous;

"#;

pub const CPU_MODULE_FORWARD: &str = r#"

struct @NAME@_cpu_block_payload_forward
{
    wp_args_@NAME@* args;
    wp::tile_shared_storage_t* tile_mem;
    size_t block_first;
};

static void @NAME@_cpu_block_thunk_forward(
    void* dim_ptr, size_t, int lane, void* payload_ptr)
{
    wp::launch_bounds_t<@NDIM@>* dim = (wp::launch_bounds_t<@NDIM@>*)dim_ptr;
    @NAME@_cpu_block_payload_forward* payload = (@NAME@_cpu_block_payload_forward*)payload_ptr;
    wp::tile_shared_storage_t::bind(payload->tile_mem);
    const size_t task_index = payload->block_first + (size_t)lane;
    @NAME@_cpu_kernel_forward<false>(*dim, task_index, payload->args);
}

extern "C" {

// Python CPU entry points
WP_API void @NAME@_cpu_forward(
    wp::launch_bounds_t<@NDIM@> *dim,
    wp_args_@NAME@ *_wp_args)
{
    constexpr size_t block_dim = (size_t)WP_TILE_BLOCK_DIM;
    const size_t total = dim->size;
    size_t block_first = 0;
    size_t block_id = 0;

    while (block_first < total)
    {
        const size_t remaining = total - block_first;
        const int active_count = (int)(remaining < block_dim ? remaining : block_dim);
        wp::tile_shared_storage_t tile_mem;
        @NAME@_cpu_block_payload_forward payload = { _wp_args, &tile_mem, block_first };
        if (!wp_cpu_run_block(
                WP_TILE_BLOCK_DIM, active_count, &@NAME@_cpu_block_thunk_forward, dim, block_id, &payload))
            return;
        block_first += (size_t)active_count;
        ++block_id;
    }
}

} // extern C

"#;

pub const CPU_MODULE_BACKWARD: &str = r#"

struct @NAME@_cpu_block_payload_backward
{
    wp_args_@NAME@* args;
    wp_args_@NAME@* adj_args;
    wp::tile_shared_storage_t* tile_mem;
    size_t block_first;
};

static void @NAME@_cpu_block_thunk_backward(
    void* dim_ptr, size_t, int lane, void* payload_ptr)
{
    wp::launch_bounds_t<@NDIM@>* dim = (wp::launch_bounds_t<@NDIM@>*)dim_ptr;
    @NAME@_cpu_block_payload_backward* payload = (@NAME@_cpu_block_payload_backward*)payload_ptr;
    wp::tile_shared_storage_t::bind(payload->tile_mem);
    const size_t task_index = payload->block_first + (size_t)lane;
    @NAME@_cpu_kernel_backward<false>(*dim, task_index, payload->args, payload->adj_args);
}

extern "C" {

WP_API void @NAME@_cpu_backward(
    wp::launch_bounds_t<@NDIM@> *dim,
    wp_args_@NAME@ *_wp_args,
    wp_args_@NAME@ *_wp_adj_args)
{
    constexpr size_t block_dim = (size_t)WP_TILE_BLOCK_DIM;
    const size_t total = dim->size;
    size_t block_first = 0;
    size_t block_id = 0;

    while (block_first < total)
    {
        const size_t remaining = total - block_first;
        const int active_count = (int)(remaining < block_dim ? remaining : block_dim);
        wp::tile_shared_storage_t tile_mem;
        @NAME@_cpu_block_payload_backward payload = { _wp_args, _wp_adj_args, &tile_mem, block_first };
        if (!wp_cpu_run_block(
                WP_TILE_BLOCK_DIM, active_count, &@NAME@_cpu_block_thunk_backward, dim, block_id, &payload))
            return;
        block_first += (size_t)active_count;
        ++block_id;
    }
}

} // extern C

"#;
