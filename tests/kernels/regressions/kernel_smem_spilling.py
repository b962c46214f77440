import warp as wp

# @wp.kernel(enable_cuda_smem_spilling=True): the CUDA kernels (forward and
# backward) open with WP_ENABLE_SMEM_SPILLING(); False changes nothing.


@wp.kernel(enable_cuda_smem_spilling=True, launch_bounds=128, enable_backward=False)
def fill_index(a: wp.array[int]):
    a[wp.tid()] = wp.tid()


@wp.kernel(enable_cuda_smem_spilling=True)
def scale(x: wp.array[float], y: wp.array[float], s: float):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel(enable_cuda_smem_spilling=False)
def plain(x: wp.array[float]):
    x[wp.tid()] = 1.0
