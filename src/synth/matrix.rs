//! matrix: `wp.mat22/mat33/mat44` arrays and locals — constructors from
//! scalars, `m * v`, `m * m`, `wp.transpose`, `wp.determinant`,
//! `wp.inverse`, `wp.trace`, `wp.outer(v, w)`, `wp.diag(v)`,
//! `wp.identity(n=3, dtype=float)`, elements `m[i, j]`, rows `m[i]`, and
//! element updates of locals (`m[i, j] = x`).

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.16,
    wf: [20, 2, 3, 2, 1, 4, 3, 2, 6, 6, 1, 5],
    wv: [8, 8, 2, 3, 2, 2, 1, 12, 3, 6, 1],
    wm: [6, 7, 1, 8, 5, 4, 4, 3, 2, 6, 2],
    leaf: [9, 3, 6, 3, 6, 1],
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 7,
    assign: 2,
    update: 3,
    component: 5,
    store: 1,
    accumulate: 1,
};

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let n = *pick(rng, &[3u8, 3, 3, 2, 2, 4]);
    let m = T::M(n);
    let v = T::V(n);
    let types = [m, m, v, T::F];

    let mut helper_src = String::new();
    let helpers = if chance(rng, 0.2) {
        typed::helpers(rng, &[m, v, T::F], 2, style, &mut helper_src)
    } else {
        Vec::new()
    };

    let mut k = Body::new(style);
    for h in helpers {
        k.reserve(&h.name);
        k.helpers.push(h);
    }
    k.launch(rng, 1);
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        k.param(rng, m, Kind::Array(1, Role::In));
    }
    for _ in 0..weighted(rng, &[4, 4, 2]) {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.2) {
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.1) {
        k.param(rng, m, Kind::Array(1, Role::InOut));
    }
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        let t = *pick(rng, &[m, m, m, v, v, T::F]);
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    for _ in 0..weighted(rng, &[4, 4, 1]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    if chance(rng, 0.15) {
        k.param(rng, m, Kind::Scalar);
    }

    for _ in 0..between(rng, 1, 3) {
        let t = if chance(rng, 0.75) { m } else { v };
        if k.let_load(rng, t).is_none() {
            let d = between(rng, 1, 2) as u32;
            k.let_(rng, t, d);
        }
    }
    if chance(rng, 0.25) {
        // A matrix built element by element.
        let acc = k.let_acc(rng, m);
        for _ in 0..between(rng, 1, 3) {
            let d = between(rng, 0, 2) as u32;
            k.component_update(rng, acc, d);
        }
    }
    for _ in 0..between(rng, 2, 5) {
        k.stmt(rng, &types, &MIX);
    }
    if chance(rng, 0.15) {
        // Row- or element-wise loop.
        let t = *pick(rng, &[m, v]);
        let target = k.let_acc(rng, t);
        let it = k.open_for_const(rng, 0, n as i32, 1);
        for _ in 0..between(rng, 1, 2) {
            let d = between(rng, 1, 2) as u32;
            k.component_update_at(rng, target, it, d);
        }
        k.flush_block(rng);
        k.close();
    }
    if chance(rng, 0.25) {
        k.if_block(rng, &types, &MIX);
    }
    for _ in 0..between(rng, 0, 2) {
        k.stmt(rng, &types, &MIX);
    }
    k.call_unused_helpers(rng);
    k.store_all(rng, 0.2);
    let name = b1::kernel_name(rng, "mat");
    let src = k.finish_kernel(rng, &name, &helper_src);
    (name, src)
}
