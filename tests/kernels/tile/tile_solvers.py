import warp as wp

# Tile linear algebra: Cholesky factorization and triangular solves, as warp's
# code generator emits them without MathDx (operands moved to shared memory,
# the solver's null handles first, the result passed last).

N = 8


@wp.kernel
def factor_and_solve(gA: wp.array2d[wp.float64], gy: wp.array1d[wp.float64], gx: wp.array1d[wp.float64], gL: wp.array2d[wp.float64]):
    A = wp.tile_load(gA, shape=(N, N))
    L = wp.tile_cholesky(A)
    y = wp.tile_load(gy, shape=N)
    x = wp.tile_cholesky_solve(L, y)
    wp.tile_store(gx, x)
    wp.tile_store(gL, L)


@wp.kernel
def upper_factor_grad(gA: wp.array2d[float], gU: wp.array2d[float]):
    A = wp.tile_load(gA, shape=(N, N))
    U = wp.tile_cholesky(A, fill_mode="upper")
    wp.tile_store(gU, U)


@wp.kernel
def triangular_solves(gL: wp.array2d[float], gy: wp.array2d[float], gz: wp.array2d[float], gx: wp.array2d[float]):
    L = wp.tile_load(gL, shape=(N, N))
    y = wp.tile_load(gy, shape=(N, 4))
    z = wp.tile_lower_solve(L, y)
    U = wp.tile_transpose(L)
    x = wp.tile_upper_solve(U, z)
    wp.tile_store(gz, z)
    wp.tile_store(gx, x)


@wp.kernel(enable_backward=False)
def in_place(gA: wp.array2d[wp.float64], gd: wp.array1d[wp.float64], gy: wp.array1d[wp.float64]):
    A = wp.tile_load(gA, shape=(N, N))
    d = wp.tile_load(gd, shape=N)
    B = wp.tile_diag_add(A, d)
    wp.tile_cholesky_inplace(B, fill_mode="lower")
    y = wp.tile_load(gy, shape=N)
    wp.tile_cholesky_solve_inplace(B, y)
    wp.tile_lower_solve_inplace(B, y)
    wp.tile_upper_solve_inplace(B, y)
    wp.tile_store(gy, y)
