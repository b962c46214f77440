//! atomic: accumulation into output arrays with `wp.atomic_add/sub/min/max`
//! and `arr[idx] += expr`, at the thread index, a single cell (`0`) or a
//! computed bin (`b = labels[i] % nbins`), sometimes under a condition.

use super::builder::{self, Gen, Kernel, Role, Style, Ty, between, chance, weighted};

const STYLE: Style = Style {
    p_call: 0.08,
    ..builder::BASE_STYLE
};

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let mut k = Kernel::new(rng, STYLE);
    for _ in 0..between(rng, 1, 2) {
        let arg = if chance(rng, 0.3) { Ty::Int } else { Ty::Float };
        k.param(rng, Role::Input, arg);
    }
    let n_acc = weighted(rng, &[4, 3, 2]) + 1;
    for _ in 0..n_acc {
        let arg = if chance(rng, 0.35) {
            Ty::Int
        } else {
            Ty::Float
        };
        k.param(rng, Role::Output, arg);
    }
    if chance(rng, 0.4) {
        k.param(rng, Role::Scalar, Ty::Int);
    }
    if chance(rng, 0.3) {
        k.param(rng, Role::Scalar, Ty::Float);
    }

    let index_local = chance(rng, 0.5);
    if index_local {
        k.new_index_local(rng);
    }
    // At least one statement before the accumulation.
    let min_locals = if index_local { 0 } else { 1 };
    for _ in 0..min_locals.max(weighted(rng, &[2, 3, 2, 1])) {
        let ty = if chance(rng, 0.7) { Ty::Float } else { Ty::Int };
        let arg = between(rng, 1, 3) as u32;
        k.new_local(rng, ty, arg);
    }
    k.drain = true;
    let accs = k.writable();
    let extra = weighted(rng, &[4, 3, 2]);
    for n in 0..accs.len() + extra {
        let acc = if n < accs.len() {
            accs[n]
        } else {
            *builder::pick(rng, &accs)
        };
        let depth = between(rng, 0, 3) as u32;
        if chance(rng, 0.3) {
            k.open_if(rng, false);
            k.atomic(rng, acc, depth);
            k.close_block();
            if chance(rng, 0.3) {
                k.open_else();
                let arg = *builder::pick(rng, &accs);
                k.atomic(rng, arg, depth);
                k.close_block();
            }
        } else {
            k.atomic(rng, acc, depth);
        }
    }
    let name = builder::kernel_name(rng, "atomic");
    let src = k.finish(rng, &name);
    (name, src)
}
