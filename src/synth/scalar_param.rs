//! scalar_param: several scalar kernel arguments (floats and ints) used in
//! expressions, clamp bounds, casts and shifted indices (`x[(i + 1) % n]`).

use super::builder::{self, Gen, Kernel, Role, Style, Ty, between, chance, weighted};

const STYLE: Style = Style {
    p_call: 0.1,
    w_scalar: 8,
    w_array: 4,
    w_local: 4,
    w_cast: 2,
    p_shift_index: 0.3,
    ..builder::BASE_STYLE
};

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let mut k = Kernel::new(rng, STYLE);
    for _ in 0..between(rng, 1, 2) {
        let arg = if chance(rng, 0.2) { Ty::Int } else { Ty::Float };
        k.param(rng, Role::Input, arg);
    }
    if chance(rng, 0.25) {
        k.param(rng, Role::InOut, Ty::Float);
    }
    for _ in 0..between(rng, 1, 2) {
        let arg = if chance(rng, 0.15) {
            Ty::Int
        } else {
            Ty::Float
        };
        k.param(rng, Role::Output, arg);
    }
    k.param(rng, Role::Scalar, Ty::Float);
    for _ in 0..between(rng, 1, 4) {
        let arg = if chance(rng, 0.65) {
            Ty::Float
        } else {
            Ty::Int
        };
        k.param(rng, Role::Scalar, arg);
    }
    k.scalars_first = chance(rng, 0.2);

    if k.has_int_scalar() && chance(rng, 0.4) {
        k.new_index_local(rng);
    }
    for _ in 0..between(rng, 1, 4) {
        let ty = if chance(rng, 0.2) { Ty::Int } else { Ty::Float };
        let depth = 1 + weighted(rng, &[3, 3, 2, 1]) as u32;
        k.new_local(rng, ty, depth);
    }
    if chance(rng, 0.3) {
        if let Some(l) = k.random_value_local(rng, None) {
            let arg = between(rng, 1, 2) as u32;
            k.aug_assign(rng, l, arg);
        }
    }
    k.store_all(rng, 1, 3);
    let name = builder::kernel_name(rng, "scalar");
    let src = k.finish(rng, &name);
    (name, src)
}
