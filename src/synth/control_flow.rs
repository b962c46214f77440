//! control_flow: `if`/`elif`/`else` chains on comparisons (joined by
//! `and`/`or`/`not`), nested at most two deep. Branches reassign locals
//! defined before the `if` and store to outputs; the final stores read the
//! locals the branches chose.

use super::builder::{self, Gen, Kernel, Role, Style, Ty, below, between, chance, weighted};

const STYLE: Style = Style {
    p_call: 0.08,
    float_calls: builder::ALL_FLOAT_CALLS,
    ..builder::BASE_STYLE
};

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let mut k = Kernel::new(rng, STYLE);
    let n_in = between(rng, 1, 3);
    let int_in = if chance(rng, 0.35) {
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
    for _ in 0..between(rng, 1, 2) {
        let arg = if chance(rng, 0.2) { Ty::Int } else { Ty::Float };
        k.param(rng, Role::Output, arg);
    }
    for _ in 0..weighted(rng, &[3, 4, 2]) {
        let arg = if chance(rng, 0.6) { Ty::Float } else { Ty::Int };
        k.param(rng, Role::Scalar, arg);
    }

    for n in 0..between(rng, 1, 3) {
        let ty = if chance(rng, 0.75) {
            Ty::Float
        } else {
            Ty::Int
        };
        if n > 0 && chance(rng, 0.4) {
            k.new_local_literal(rng, ty);
        } else if k.new_local_load(rng, ty).is_none() {
            let arg = between(rng, 1, 3) as u32;
            k.new_local(rng, ty, arg);
        }
    }
    let chains = if chance(rng, 0.3) { 2 } else { 1 };
    for _ in 0..chains {
        chain(&mut k, rng, 1);
    }
    if chance(rng, 0.3) {
        if let Some(l) = k.random_value_local(rng, None) {
            let arg = between(rng, 1, 2) as u32;
            k.aug_assign(rng, l, arg);
        }
    }
    k.store_all(rng, 0, 2);
    let name = builder::kernel_name(rng, "ctrl");
    let src = k.finish(rng, &name);
    (name, src)
}

/// `if` with 0–2 `elif`s and maybe an `else`; `nest` is 1 at the top level.
fn chain(k: &mut Kernel, rng: &mut Gen, nest: u32) {
    let n_elif = if nest == 1 && k.lines() < 14 {
        weighted(rng, &[5, 3, 2])
    } else {
        0
    };
    let has_else = chance(rng, 0.55);
    k.open_if(rng, false);
    block(k, rng, nest);
    for _ in 0..n_elif {
        k.open_if(rng, true);
        block(k, rng, nest);
    }
    if has_else {
        k.open_else();
        block(k, rng, nest);
    }
}

/// One to three statements, then the block is closed.
fn block(k: &mut Kernel, rng: &mut Gen, nest: u32) {
    let n = if k.lines() > 18 {
        1
    } else {
        between(rng, 1, 3)
    };
    for _ in 0..n {
        let nested = if nest < 2 && k.lines() < 16 { 1 } else { 0 };
        let local = k.random_value_local(rng, None);
        let depth = between(rng, 1, 3) as u32;
        match (weighted(rng, &[4, 2, 3, nested]), local) {
            (0, Some(l)) => k.assign(rng, l, depth),
            (1, Some(l)) => k.aug_assign(rng, l, depth),
            (3, _) => chain(k, rng, nest + 1),
            _ => {
                let outs = k.writable();
                let arg = *builder::pick(rng, &outs);
                k.store(rng, arg, depth);
            }
        }
    }
    k.close_block();
}
