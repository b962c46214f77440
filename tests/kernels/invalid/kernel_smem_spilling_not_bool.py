import warp as wp

# enable_cuda_smem_spilling must be a bool (warp: TypeError).


@wp.kernel(enable_cuda_smem_spilling=1)
def bad(a: wp.array[int]):
    a[wp.tid()] = 0
