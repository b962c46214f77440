//! multi_cond: many branches and boolean logic — long `if`/`elif`/`else`
//! chains whose conditions join up to four comparisons with `and` / `or`,
//! group and negate them (`not (a or b)`), and test ranges with chained
//! comparisons (`0.0 < x < 1.0`, `a <= b <= c`); branches nest, reassign
//! and update locals, store, and sometimes return early.

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.2,
    wf: [30, 3, 4, 4, 3, 0, 0, 0, 0, 0, 1, 0],
    leaf: [10, 4, 6, 4, 2, 2],
    p_select: 0.06,
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 2,
    assign: 5,
    update: 4,
    component: 1,
    store: 2,
    accumulate: 1,
};

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let mut k = typed::kernel_1d(rng, STYLE.within(knobs));
    if knobs.int_arrays() && chance(rng, 0.3) {
        k.param(rng, T::I, Kind::Array(1, Role::In));
    }
    let vecs = knobs.vec_sizes();
    let vec = (!vecs.is_empty() && chance(rng, 0.12)).then(|| T::V(*pick(rng, &vecs)));
    if let Some(v) = vec {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        let t = if knobs.int_arrays() && chance(rng, 0.2) {
            T::I
        } else {
            T::F
        };
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    for _ in 0..weighted(rng, &[2, 4, 3]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    for _ in 0..weighted(rng, &[5, 3, 1]) {
        k.param(rng, T::I, Kind::Scalar);
    }
    k.pad_params(rng, knobs.params.0);

    let mut types = vec![T::F, T::F, T::F, T::I];
    if let Some(v) = vec {
        types.push(v);
    }
    for n in 0..between(rng, 1, 3) {
        let t = if n == 0 || chance(rng, 0.7) {
            T::F
        } else {
            T::I
        };
        if k.let_load(rng, t).is_none() {
            let d = knobs.depth(rng, 1, 2);
            k.let_(rng, t, d);
        }
    }
    let outs = k.writable().len();
    let goal = knobs.statement_goal(rng, 6, 34);
    typed::fill(&mut k, rng, goal, outs + 5, 0.3, &types, &MIX, |k, rng| {
        chain(k, rng, knobs, &types, goal, 1)
    });
    k.store_all(rng, 0.15);
    let name = b1::kernel_name(rng, "cond");
    let src = k.finish_kernel(rng, &name, "");
    (name, src)
}

/// `if` with up to four `elif`s and maybe an `else`, each condition one to
/// four comparisons; blocks may hold a nested chain (`nest` is 1 at the
/// top) or an early return. Stops adding branches near the `goal` length.
pub(super) fn chain(
    k: &mut Body,
    rng: &mut Gen,
    knobs: &Knobs,
    types: &[T],
    goal: usize,
    nest: u32,
) {
    // At the top: an `elif` at least, and a compound first condition.
    let n_elif = if nest == 1 {
        1 + weighted(rng, &[3, 3, 2, 1])
    } else {
        weighted(rng, &[3, 2])
    };
    open(k, rng, "if ", if nest == 1 { 2 } else { 1 });
    block(k, rng, knobs, types, goal, nest);
    for e in 0..n_elif {
        if e > 0 && k.lines() + 4 > goal {
            break;
        }
        open(k, rng, "elif ", 1);
        block(k, rng, knobs, types, goal, nest);
    }
    if chance(rng, 0.55) {
        k.open_else();
        block(k, rng, knobs, types, goal, nest);
    }
}

fn open(k: &mut Body, rng: &mut Gen, kw: &str, min_terms: usize) {
    k.begin();
    k.push(kw);
    let terms = (1 + weighted(rng, &[4, 4, 3, 2])).max(min_terms);
    k.cond_terms(rng, terms, true);
    k.push(":");
    k.end();
    k.open_raw();
}

fn block(k: &mut Body, rng: &mut Gen, knobs: &Knobs, types: &[T], goal: usize, nest: u32) {
    let n = if k.lines() + 6 > goal {
        1
    } else {
        between(rng, 1, 3)
    };
    for _ in 0..n {
        let deeper = nest < 3 && k.lines() + 8 < goal;
        match weighted(rng, &[10, if deeper { 3 } else { 0 }, 1]) {
            0 => k.stmt(rng, types, &MIX),
            1 => chain(k, rng, knobs, types, goal, nest + 1),
            _ => {
                // Store what the thread has and leave.
                let outs = k.writable();
                let a = *pick(rng, &outs);
                let d = knobs.depth(rng, 1, 2);
                k.store(rng, a, d);
                k.flush_block(rng);
                k.ret_void();
                k.close();
                return;
            }
        }
    }
    k.flush_block(rng);
    k.close();
}
