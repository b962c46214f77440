//! expression_tree: deep random expressions — locals whose values are
//! operator trees several levels deep (arithmetic, calls, `wp.min/max`,
//! `wp.clamp`, `wp.pow`, casts, conditional expressions), over float, int
//! and sometimes vector values, stored through deep expressions as well.
//! Depths go up to the `expr_depth` knob.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.07,
    wf: [34, 5, 9, 6, 3, 2, 2, 1, 0, 0, 2, 0],
    wv: [12, 10, 3, 3, 2, 2, 2, 0, 3, 0, 2],
    wi: [10, 3, 1],
    leaf: [8, 4, 6, 5, 2, 2],
    unary_calls: typed::MATH_CALLS,
    p_select: 0.04,
    ..typed::BASE
};

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let vecs = knobs.vec_sizes();
    let vec = (!vecs.is_empty() && chance(rng, 0.2)).then(|| T::V(*pick(rng, &vecs)));
    let mut k = Body::new(style);
    k.launch(rng, 1);
    for _ in 0..between(rng, 1, 3) {
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    let ints = knobs.int_arrays() && chance(rng, 0.3);
    if ints {
        k.param(rng, T::I, Kind::Array(1, Role::In));
    }
    if let Some(v) = vec {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    for _ in 0..weighted(rng, &[0, 6, 2]) {
        let t = match vec {
            Some(v) if chance(rng, 0.3) => v,
            _ if ints && chance(rng, 0.2) => T::I,
            _ => T::F,
        };
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    for _ in 0..weighted(rng, &[3, 4, 2, 1]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    if chance(rng, 0.3) {
        k.param(rng, T::I, Kind::Scalar);
    }
    k.pad_params(rng, knobs.params.0);

    let mut types = vec![T::F, T::F, T::F, T::F, T::I];
    if let Some(v) = vec {
        types.push(v);
    }
    let outs = k.writable().len();
    let goal = knobs.statement_goal(rng, 3, 12);
    if chance(rng, 0.5) {
        k.let_load(rng, T::F);
    }
    // A float tree four levels deep at least, then more while the budget lasts.
    // (a shallow draw is followed by another, up to three).
    for _ in 0..3 {
        let d = knobs.depth(rng, 4, 6);
        k.let_(rng, T::F, d);
        if k.last_line_len() > 20 + 20 * d as usize {
            break;
        }
    }
    while k.lines() + outs + 2 < goal {
        deep_let(&mut k, rng, knobs, &types);
        if chance(rng, 0.25) {
            let locals = k.locals(None);
            let l = *pick(rng, &locals);
            let d = knobs.depth(rng, 2, 5);
            k.aug(rng, l, d);
        }
    }
    let lo = knobs.depth(rng, 1, 3) as usize;
    let hi = knobs.depth(rng, lo as u32, 6) as usize;
    k.store_all_depth(rng, 0.2, lo, hi);
    let name = b1::kernel_name(rng, "expr");
    let src = k.finish_kernel(rng, &name, "");
    (name, src)
}

/// A new local of one of `types` set to an expression 3 to 6 levels deep
/// (within the knob); what combined uses as its expression feature.
pub(super) fn deep_let(k: &mut Body, rng: &mut Gen, knobs: &Knobs, types: &[T]) -> usize {
    let t = *pick(rng, types);
    let hi = if matches!(t, T::V(_)) { 4 } else { 6 };
    let d = knobs.depth(rng, 3, hi);
    k.let_(rng, t, d)
}
