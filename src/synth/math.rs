//! math: chains of transcendental builtins — each local feeds the next
//! (`y = wp.sin(x * 2.0)`, `z = wp.exp(-y * y)`), with min/max/pow/clamp.

use super::builder::{self, Gen, Kernel, Role, Style, Ty, between, chance, weighted};

const STYLE: Style = Style {
    p_call: 0.55,
    p_neg: 0.05,
    p_leaf: 0.1,
    float_calls: builder::ALL_FLOAT_CALLS,
    w_local: 8,
    w_lit: 2,
    ..builder::BASE_STYLE
};

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let mut k = Kernel::new(rng, STYLE);
    let n_in = between(rng, 1, 3);
    for _ in 0..n_in {
        let arg = if chance(rng, 0.08) {
            Ty::Int
        } else {
            Ty::Float
        };
        k.param(rng, Role::Input, arg);
    }
    for _ in 0..between(rng, 1, 2) {
        let arg = if chance(rng, 0.08) {
            Ty::Int
        } else {
            Ty::Float
        };
        k.param(rng, Role::Output, arg);
    }
    if chance(rng, 0.4) {
        k.param(rng, Role::Scalar, Ty::Float);
    }

    for _ in 0..n_in {
        if chance(rng, 0.6) {
            k.new_local_load(rng, Ty::Float);
        }
    }
    for _ in 0..between(rng, 2, 6) {
        let depth = 1 + weighted(rng, &[3, 4, 2]) as u32;
        k.new_local(rng, Ty::Float, depth);
    }
    if chance(rng, 0.3) {
        if let Some(l) = k.random_value_local(rng, Some(Ty::Float)) {
            let arg = between(rng, 1, 2) as u32;
            k.aug_assign(rng, l, arg);
        }
    }
    k.store_all(rng, 1, 3);
    let name = builder::kernel_name(rng, "math");
    let src = k.finish(rng, &name);
    (name, src)
}
