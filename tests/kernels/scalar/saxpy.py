"""SAXPY: the hello-world of GPU kernels."""
import warp as wp


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


if __name__ == "__main__":
    wp.init()
