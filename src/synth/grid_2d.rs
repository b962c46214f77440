//! grid_2d: `i, j = wp.tid()` over `wp.array2d` / `wp.array(dtype=float,
//! ndim=2)` fields — neighbour reads with clamped (or wrapped) indices,
//! or raw ones behind an early `return` on the border; 4- and
//! 8-neighbour sums, central differences, divergence of a vector field,
//! windows of constant loops, whole row/column loops.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, weighted};
use super::grid;
use super::typed::{self, Style};

pub(super) const STYLE: Style = Style {
    p_leaf: 0.2,
    wf: [30, 3, 5, 3, 2, 2, 2, 1, 0, 0, 2, 0],
    wv: [10, 10, 2, 2, 0, 2, 2, 0, 2, 0, 1],
    leaf: [12, 4, 6, 3, 2, 1],
    unary_calls: typed::MATH_CALLS,
    idx: [6, 2, 5],
    ..typed::BASE
};

const FOUR: [[i32; 3]; 4] = [[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]];
const FOUR_B: [[i32; 3]; 4] = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]];
#[rustfmt::skip]
const EIGHT: [[i32; 3]; 8] = [
    [-1, -1, 0], [-1, 0, 0], [-1, 1, 0], [0, -1, 0], [0, 1, 0], [1, -1, 0], [1, 0, 0], [1, 1, 0],
];
const ROW: [[i32; 3]; 2] = [[0, -1, 0], [0, 1, 0]];
const COL: [[i32; 3]; 2] = [[-1, 0, 0], [1, 0, 0]];

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let mut g = grid::setup(rng, 2, style);
    g.boundary(rng);
    let center = chance(rng, 0.6).then(|| g.center(rng));
    let has_vec = g.vec_field.is_some();
    let n_features = between(rng, 1, 3);
    for _ in 0..n_features {
        match weighted(rng, &[6, 2, 3, 2, if has_vec { 3 } else { 0 }, 3, 2]) {
            0 => {
                let offs: &[[i32; 3]] = if chance(rng, 0.7) { &FOUR } else { &FOUR_B };
                g.neighbour_sum(rng, offs, center);
            }
            1 => {
                g.neighbour_sum(rng, &EIGHT, center);
            }
            2 => {
                g.gradient(rng);
            }
            3 => {
                let offs: &[[i32; 3]] = if chance(rng, 0.5) { &ROW } else { &COL };
                g.neighbour_sum(rng, offs, center);
            }
            4 => {
                g.divergence(rng);
            }
            5 => g.window(rng, 2),
            _ => g.line(rng),
        }
    }
    g.statements(rng, 1, 3);
    g.k.call_unused_helpers(rng);
    g.k.store_all(rng, 0.1);
    let name = b1::kernel_name(rng, "grid2d");
    let src = g.finish(rng, &name);
    (name, src)
}
