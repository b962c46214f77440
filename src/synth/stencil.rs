//! stencil: neighbour access over 1-D and 2-D fields with the bounds kept
//! in range — clamped (`wp.clamp(i - 1, 0, n - 1)`, `wp.min/max`), wrapped
//! (`(i + n - 1) % n`) or raw behind an early `return` at the border —
//! weighted taps (`0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]`, five-point
//! derivatives), upwind differences, min/max (erosion/dilation) filters,
//! neighbour sums, central differences and windows of constant loops.
//! Shares its grid machinery with grid_2d / grid_3d (`grid.rs`).

use super::Knobs;
use super::builder::{self as b1, Gen, chance, pick, weighted};
use super::grid::{self, Grid};
use super::grid_2d;
use super::typed::{Ix, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.22,
    ..grid_2d::STYLE
};

/// Tap weights for offsets `-r..=r` (zeros are skipped).
#[rustfmt::skip]
const TAPS: &[&[&str]] = &[
    &["1.0", "-2.0", "1.0"],
    &["0.25", "0.5", "0.25"],
    &["-0.5", "0.0", "0.5"],
    &["1.0", "-1.0", "0.0"],
    &["0.0", "-1.0", "1.0"],
    &["0.0625", "0.25", "0.375", "0.25", "0.0625"],
    &["0.083333", "-0.666667", "0.0", "0.666667", "-0.083333"],
    &["-0.083333", "1.333333", "-2.5", "1.333333", "-0.083333"],
    &["0.2", "0.2", "0.2", "0.2", "0.2"],
    &["0.1", "0.2", "0.4", "0.2", "0.1"],
];

const LINE: [[i32; 3]; 2] = [[-1, 0, 0], [1, 0, 0]];
const FOUR: [[i32; 3]; 4] = [[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]];

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let nd = if chance(rng, 0.6) { 1 } else { 2 };
    let mut g = grid::setup(rng, nd, STYLE.within(knobs));
    g.k.pad_params(rng, knobs.params.0);
    g.boundary(rng);
    let center = chance(rng, 0.4).then(|| g.center(rng));
    let goal = knobs.statement_goal(rng, 3, 22);
    let outs = g.k.writable().len();
    let loops = knobs.loop_depth > 0;
    loop {
        match weighted(
            rng,
            &[
                8,
                3,
                3,
                3,
                3,
                2,
                if loops { 2 } else { 0 },
                if loops { 1 } else { 0 },
            ],
        ) {
            0 => {
                taps(&mut g, rng);
            }
            1 => upwind(&mut g, rng, knobs),
            2 => extremum(&mut g, rng),
            3 => {
                let offs: &[[i32; 3]] = if nd == 1 { &LINE } else { &FOUR };
                g.neighbour_sum(rng, offs, center);
            }
            4 => {
                g.gradient(rng);
            }
            5 => {
                if g.vec_field.is_some() {
                    g.divergence(rng);
                } else {
                    taps(&mut g, rng);
                }
            }
            6 => g.window(rng, nd),
            _ => g.line(rng),
        }
        if g.k.lines() + outs + 3 >= goal {
            break;
        }
    }
    if chance(rng, 0.4) {
        g.statements(rng, 1, 2);
    }
    g.k.call_unused_helpers(rng);
    g.k.store_all(rng, 0.1);
    let name = b1::kernel_name(rng, "stencil");
    let src = g.finish(rng, &name);
    (name, src)
}

/// Offsets `o` along dimension `d` (0 elsewhere).
fn along(g: &Grid, d: usize, o: i32) -> Vec<Ix> {
    let mut off = [0i32; 3];
    off[d] = o;
    g.offsets_ix(&off[..g.nd])
}

/// `s = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]` along one dimension.
pub(super) fn taps(g: &mut Grid, rng: &mut Gen) -> usize {
    let w = *pick(rng, TAPS);
    let r = (w.len() / 2) as i32;
    let d = b1::below(rng, g.nd);
    let f = g.field(rng);
    let wrap = g.wrap(rng);
    let name = g.k.fresh(rng, T::F);
    g.k.begin();
    g.k.push(&name);
    g.k.push(" = ");
    let mut first = true;
    for (n, &c) in w.iter().enumerate() {
        if c == "0.0" {
            continue;
        }
        let neg = c.starts_with('-');
        if !first {
            g.k.push(if neg { " - " } else { " + " });
        } else if neg {
            g.k.push("-");
        }
        first = false;
        let c = c.trim_start_matches('-');
        if c != "1.0" {
            g.k.push(c);
            g.k.push(" * ");
        }
        let ix = along(g, d, n as i32 - r);
        g.read(rng, f, &ix, wrap);
    }
    g.k.end();
    g.k.declare(name, T::F)
}

/// Upwind difference: `if vel > 0.0: d = u[i] - u[i - 1]` `else: d = u[i + 1] - u[i]`.
fn upwind(g: &mut Grid, rng: &mut Gen, knobs: &Knobs) {
    let f = g.field(rng);
    let d = b1::below(rng, g.nd);
    let wrap = g.wrap(rng);
    let du = g.k.let_acc(rng, T::F);
    g.k.begin();
    g.k.push("if ");
    let dd = knobs.depth(rng, 0, 1);
    g.k.operand(rng, T::F, dd);
    g.k.push(" > 0.0:");
    g.k.end();
    for (n, (a, b)) in [(0, -1), (1, 0)].into_iter().enumerate() {
        if n == 1 {
            g.k.open_else();
        } else {
            g.k.open_raw();
        }
        g.k.begin();
        g.k.push_use(du);
        g.k.push(" = ");
        let ix = along(g, d, a);
        g.read(rng, f, &ix, wrap);
        g.k.push(" - ");
        let ix = along(g, d, b);
        g.read(rng, f, &ix, wrap);
        g.k.end();
        g.k.close();
    }
}

/// Erosion / dilation: `m = wp.min(wp.min(u[i - 1], u[i]), u[i + 1])`.
fn extremum(g: &mut Grid, rng: &mut Gen) {
    let f = g.field(rng);
    let wrap = g.wrap(rng);
    let func = if chance(rng, 0.5) {
        "wp.min("
    } else {
        "wp.max("
    };
    let mut offs: Vec<Vec<Ix>> = Vec::with_capacity(5);
    for d in 0..g.nd {
        for o in [-1, 1] {
            offs.push(along(g, d, o));
        }
    }
    if chance(rng, 0.6) {
        offs.insert(offs.len() / 2, along(g, 0, 0));
    }
    let name = g.k.fresh(rng, T::F);
    g.k.begin();
    g.k.push(&name);
    g.k.push(" = ");
    for _ in 1..offs.len() {
        g.k.push(func);
    }
    for (n, ix) in offs.iter().enumerate() {
        if n > 1 {
            g.k.push("), ");
        } else if n == 1 {
            g.k.push(", ");
        }
        g.read(rng, f, ix, wrap);
    }
    g.k.push(")");
    g.k.end();
    g.k.declare(name, T::F);
}
