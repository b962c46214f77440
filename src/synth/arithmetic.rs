//! arithmetic: random expression trees (depth 1–5) of `+ - * /` (and
//! `+ - * // %` on ints) over several inputs, a few locals and updates, then
//! one store per output.

use super::builder::{self, Gen, Kernel, Role, Style, Ty, below, between, chance, weighted};

const STYLE: Style = Style {
    p_call: 0.04,
    p_neg: 0.06,
    p_leaf: 0.12,
    ..builder::BASE_STYLE
};

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let mut k = Kernel::new(rng, STYLE);
    let n_in = between(rng, 1, 4);
    let int_in = if chance(rng, 0.25) {
        below(rng, n_in)
    } else {
        usize::MAX
    };
    for n in 0..n_in {
        k.param(
            rng,
            Role::Input,
            if n == int_in { Ty::Int } else { Ty::Float },
        );
    }
    if chance(rng, 0.2) {
        k.param(rng, Role::InOut, Ty::Float);
    }
    let n_out = between(rng, 1, 3);
    let int_out = if int_in != usize::MAX && chance(rng, 0.5) {
        below(rng, n_out)
    } else {
        usize::MAX
    };
    for n in 0..n_out {
        k.param(
            rng,
            Role::Output,
            if n == int_out { Ty::Int } else { Ty::Float },
        );
    }
    if chance(rng, 0.35) {
        let arg = if chance(rng, 0.7) { Ty::Float } else { Ty::Int };
        k.param(rng, Role::Scalar, arg);
    }

    if chance(rng, 0.3) {
        for _ in 0..between(rng, 1, n_in) {
            k.new_local_load(rng, Ty::Float);
        }
    }
    for _ in 0..between(rng, 1, 5) {
        let ty = if k.has_int_input() && chance(rng, 0.25) {
            Ty::Int
        } else {
            Ty::Float
        };
        let depth = 1 + weighted(rng, &[2, 3, 3, 2, 1]) as u32;
        k.new_local(rng, ty, depth);
    }
    for _ in 0..weighted(rng, &[4, 3, 2]) {
        if let Some(l) = k.random_value_local(rng, None) {
            let depth = between(rng, 1, 3) as u32;
            if chance(rng, 0.6) {
                k.aug_assign(rng, l, depth)
            } else {
                k.assign(rng, l, depth)
            }
        }
    }
    k.store_all(rng, 1, 3);
    let name = builder::kernel_name(rng, "arith");
    let src = k.finish(rng, &name);
    (name, src)
}
