//! vector: `wp.vec2/vec3/vec4` arrays, parameters and locals — constructors,
//! components (`v[0]`, `v.x`), `+ - * /` with scalars, `wp.dot`, `wp.cross`,
//! `wp.length(_sq)`, `wp.normalize`, `wp.lerp`, `wp.min/max`, component
//! updates of locals (`v[1] = x`, `v.x += y`), accumulation into vector
//! arrays (`out[i] += v`), sometimes through a `@wp.func` helper.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.14,
    wf: [22, 3, 4, 3, 2, 8, 6, 4, 0, 0, 2, 5],
    wv: [12, 12, 3, 4, 4, 3, 2, 0, 4, 6, 2],
    leaf: [9, 3, 6, 4, 5, 1],
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 6,
    assign: 2,
    update: 3,
    component: 4,
    store: 1,
    accumulate: 1,
};

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let n = *pick(rng, &[3u8, 3, 3, 3, 2, 4, 2, 4]);
    let v = T::V(n);
    // Now and then a second vector size, met through components.
    let other = if chance(rng, 0.15) {
        let others: Vec<u8> = [2u8, 3, 4].into_iter().filter(|&d| d != n).collect();
        Some(T::V(*pick(rng, &others)))
    } else {
        None
    };
    let mut types = vec![v, v, T::F];
    if let Some(o) = other {
        types.push(o);
    }

    let mut helper_src = String::new();
    let helpers = if chance(rng, 0.2) {
        typed::helpers(rng, &[v, T::F], 2, style, &mut helper_src)
    } else {
        Vec::new()
    };

    let mut k = Body::new(style);
    for h in helpers {
        k.reserve(&h.name);
        k.helpers.push(h);
    }
    k.launch(rng, 1);
    for _ in 0..between(rng, 1, 3) {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    if let Some(o) = other {
        k.param(rng, o, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.35) {
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.12) {
        k.param(rng, v, Kind::Array(1, Role::InOut));
    }
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        let t = if chance(rng, 0.75) { v } else { T::F };
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    for _ in 0..weighted(rng, &[3, 4, 2]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    if chance(rng, 0.25) {
        k.param(rng, v, Kind::Scalar);
    }

    for _ in 0..between(rng, 1, 3) {
        let t = if chance(rng, 0.85) {
            v
        } else {
            *pick(rng, &types)
        };
        if k.let_load(rng, t).is_none() {
            let d = between(rng, 1, 2) as u32;
            k.let_(rng, t, d);
        }
    }
    for _ in 0..between(rng, 2, 5) {
        k.stmt(rng, &types, &MIX);
    }
    if chance(rng, 0.15) {
        // Component-wise loop over the vector.
        let target = k.let_acc(rng, v);
        let it = k.open_for_const(rng, 0, n as i32, 1);
        for _ in 0..between(rng, 1, 2) {
            let d = between(rng, 1, 2) as u32;
            k.component_update_at(rng, target, it, d);
        }
        k.flush_block(rng);
        k.close();
    }
    if chance(rng, 0.3) {
        k.if_block(rng, &types, &MIX);
    }
    for _ in 0..between(rng, 0, 2) {
        k.stmt(rng, &types, &MIX);
    }
    k.call_unused_helpers(rng);
    k.store_all(rng, 0.3);
    let name = b1::kernel_name(rng, "vec");
    let src = k.finish_kernel(rng, &name, &helper_src);
    (name, src)
}
