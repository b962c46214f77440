//! grid_3d: `i, j, k = wp.tid()` over `wp.array3d` fields — 6-neighbour
//! stencils, 26-neighbour windows (three constant loops), central
//! differences, divergence of a vector field, lines through the cell, and
//! boundary checks with early `return`.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, weighted};
use super::grid;
use super::typed::{self, Style};

const STYLE: Style = Style {
    p_leaf: 0.2,
    wf: [30, 3, 5, 3, 2, 2, 2, 1, 0, 0, 2, 0],
    wv: [10, 10, 2, 2, 2, 2, 2, 0, 2, 0, 1],
    leaf: [12, 4, 6, 3, 2, 1],
    unary_calls: typed::MATH_CALLS,
    idx: [6, 2, 5],
    ..typed::BASE
};

#[rustfmt::skip]
const SIX: [[i32; 3]; 6] = [
    [-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1],
];
#[rustfmt::skip]
const SIX_B: [[i32; 3]; 6] = [
    [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1],
];
const AXIS: [[[i32; 3]; 2]; 3] = [
    [[-1, 0, 0], [1, 0, 0]],
    [[0, -1, 0], [0, 1, 0]],
    [[0, 0, -1], [0, 0, 1]],
];

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let mut g = grid::setup(rng, 3, style);
    g.boundary(rng);
    let center = chance(rng, 0.6).then(|| g.center(rng));
    let has_vec = g.vec_field.is_some();
    let n_features = between(rng, 1, 3);
    for _ in 0..n_features {
        match weighted(rng, &[6, 3, 3, if has_vec { 3 } else { 0 }, 2, 2, 2]) {
            0 => {
                let offs: &[[i32; 3]] = if chance(rng, 0.7) { &SIX } else { &SIX_B };
                g.neighbour_sum(rng, offs, center);
            }
            1 => {
                let a = b1::below(rng, 3);
                g.neighbour_sum(rng, &AXIS[a], center);
            }
            2 => {
                g.gradient(rng);
            }
            3 => {
                g.divergence(rng);
            }
            4 => g.window(rng, 3),
            5 => g.window(rng, 2),
            _ => g.line(rng),
        }
    }
    g.statements(rng, 1, 3);
    g.k.call_unused_helpers(rng);
    g.k.store_all(rng, 0.1);
    let name = b1::kernel_name(rng, "grid3d");
    let src = g.finish(rng, &name);
    (name, src)
}
