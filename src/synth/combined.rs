//! combined: several categories' features in one kernel — an `elif` chain
//! with boolean logic (multi_cond), loop and thread reductions (reduction),
//! gathers and scatters through index arrays (transform), deep expressions
//! (expression_tree), loops with guarded `break` / `continue`, atomics, and
//! vector values — the longest kernels of the synthesizer.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};
use super::{expression_tree, multi_cond, reduction, transform};

const STYLE: Style = Style {
    p_leaf: 0.18,
    wf: [30, 3, 5, 4, 2, 2, 2, 1, 0, 0, 1, 0],
    wv: [12, 10, 3, 3, 3, 2, 2, 0, 3, 0, 2],
    leaf: [10, 4, 7, 3, 3, 1],
    unary_calls: typed::MATH_CALLS,
    p_select: 0.04,
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 5,
    assign: 2,
    update: 4,
    component: 2,
    store: 1,
    accumulate: 1,
};

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let mut k = typed::kernel_1d(rng, STYLE.within(knobs));
    let vecs = knobs.vec_sizes();
    let vec = (!vecs.is_empty() && chance(rng, 0.3)).then(|| T::V(*pick(rng, &vecs)));
    if let Some(v) = vec {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    transform::index_params(&mut k, rng, knobs, false);
    for _ in 0..between(rng, 1, 2) {
        let t = match vec {
            Some(v) if chance(rng, 0.3) => v,
            _ => T::F,
        };
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    if chance(rng, 0.6) {
        reduction::targets(&mut k, rng, knobs);
    }
    for _ in 0..weighted(rng, &[2, 4, 2]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    k.pad_params(rng, knobs.params.0);

    let mut types = vec![T::F, T::F, T::F, T::I];
    if let Some(v) = vec {
        types.extend([v, v]);
    }
    for _ in 0..between(rng, 1, 2) {
        let t = *pick(rng, &types);
        if k.let_load(rng, t).is_none() {
            let d = knobs.depth(rng, 1, 2);
            k.let_(rng, t, d);
        }
    }
    let goal = knobs.statement_goal(rng, 12, 48);
    let outs = k.writable().len();
    let mut last = usize::MAX;
    for n in 0.. {
        // Features of different kinds, one after the other.
        let mut f = weighted(rng, &[4, 4, 4, 3, 3, 2, 3]);
        if f == last {
            f = (f + 1) % 7;
        }
        last = f;
        feature(&mut k, rng, knobs, &types, goal, f);
        // Two features at least (three when the budget allows).
        if n >= 1 && k.lines() + outs + 4 >= goal {
            break;
        }
    }
    k.store_all(rng, 0.25);
    let name = b1::kernel_name(rng, "combo");
    let src = k.finish_kernel(rng, &name, "");
    (name, src)
}

fn feature(k: &mut Body, rng: &mut Gen, knobs: &Knobs, types: &[T], goal: usize, f: usize) {
    let loops = knobs.loop_depth > k.loop_depth();
    match f {
        0 => multi_cond::chain(k, rng, knobs, types, goal, 2),
        1 => reduction::feature(k, rng, knobs),
        2 => transform::feature(k, rng, knobs),
        3 => {
            expression_tree::deep_let(k, rng, knobs, types);
        }
        4 if loops => looped(k, rng, knobs, types, goal),
        5 => {
            let outs = k.writable();
            let a = *pick(rng, &outs);
            let d = knobs.depth(rng, 1, 3);
            let cell = chance(rng, 0.3);
            k.accumulate(rng, a, d, cell);
        }
        _ => {
            for _ in 0..between(rng, 1, 3) {
                k.stmt(rng, types, &MIX);
            }
        }
    }
}

/// A loop (dynamic `range(n)` or a small constant one) whose body updates
/// locals, maybe leaves early, and maybe holds one more feature.
fn looped(k: &mut Body, rng: &mut Gen, knobs: &Knobs, types: &[T], goal: usize) {
    let acc = k.let_acc(rng, T::F);
    let bounds = k.int_scalars();
    let constant = bounds.is_empty() || (k.can_open_const() && chance(rng, 0.3));
    if constant {
        let n = *pick(rng, &[2, 3, 4]);
        k.open_for_const(rng, 0, n, 1);
    } else {
        let b = *pick(rng, &bounds);
        k.open_for_dyn(rng, b);
    }
    k.aug(rng, acc, 2);
    for _ in 0..between(rng, 0, 2) {
        k.stmt(rng, types, &MIX);
    }
    if chance(rng, 0.3) {
        let cont = k.can_continue() && chance(rng, 0.5);
        k.guarded_exit(rng, cont, |_, _| {});
    }
    if !constant && chance(rng, 0.3) && k.lines() + 8 < goal {
        match weighted(rng, &[2, 2, 1]) {
            0 => multi_cond::chain(k, rng, knobs, types, goal, 3),
            1 => reduction::feature(k, rng, knobs),
            _ => transform::feature(k, rng, knobs),
        }
    }
    k.flush_block(rng);
    k.close();
}
