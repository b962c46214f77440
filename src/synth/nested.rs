//! nested: loop nests two or three deep — `for` over `range(n)` (dynamic),
//! over small constant ranges (warp unrolls up to 16 iterations),
//! `range(a, b, step)` (also descending and triangular `range(k + 1, n)`),
//! and counted `while` loops — with `break` and `continue` under `if`s and
//! sometimes an early `return`. Loop-carried accumulators are declared
//! dynamic before the loops (`float(0.0)`, `int(0)`, `wp.vec3()`).

use super::Knobs;
use super::builder::{self as b1, Gen, below, between, chance, pick, weighted};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.2,
    wf: [30, 3, 5, 3, 2, 3, 2, 1, 0, 0, 1, 4],
    wv: [10, 10, 2, 2, 2, 2, 2, 0, 2, 4, 1],
    leaf: [10, 3, 8, 3, 2, 2],
    unary_calls: typed::MATH_CALLS,
    idx: [5, 9, 1],
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 5,
    assign: 2,
    update: 8,
    component: 1,
    store: 1,
    accumulate: 1,
};

/// Largest product of the trip counts of nested constant loops.
const UNROLL_BUDGET: u32 = 12;

struct Ctx {
    types: Vec<T>,
    bounds: Vec<usize>,
    /// Loops still allowed in this kernel.
    loops_left: u32,
}

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let style = STYLE.within(knobs);
    let nd = if chance(rng, 0.2) { 2 } else { 1 };
    let with_vec = chance(rng, 0.15);

    let mut helper_src = String::new();
    let helpers = if chance(rng, 0.15) {
        let types: &[T] = if with_vec { &[T::F, T::V(3)] } else { &[T::F] };
        typed::helpers(rng, types, 2, style, &mut helper_src)
    } else {
        Vec::new()
    };

    let mut k = Body::new(style);
    for h in helpers {
        k.reserve(&h.name);
        k.helpers.push(h);
    }
    k.launch(rng, nd);
    for _ in 0..between(rng, 1, 3) {
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.3) {
        k.param(rng, T::F, Kind::Array(2, Role::In));
    }
    if chance(rng, 0.2) {
        k.param(rng, T::I, Kind::Array(1, Role::In));
    }
    if with_vec {
        k.param(rng, T::V(3), Kind::Array(1, Role::In));
    }
    for _ in 0..between(rng, 1, 2) {
        let t = if chance(rng, 0.2) { T::I } else { T::F };
        k.param(rng, t, Kind::Array(nd as u8, Role::Out));
    }
    let mut bounds = Vec::with_capacity(2);
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        bounds.push(k.param(rng, T::I, Kind::Scalar));
    }
    for _ in 0..weighted(rng, &[4, 4, 1]) {
        k.param(rng, T::F, Kind::Scalar);
    }

    let mut types = vec![T::F, T::F, T::F, T::I];
    if with_vec {
        types.push(T::V(3));
    }
    if chance(rng, 0.15) {
        // Guard against threads past the end.
        let b = *pick(rng, &bounds);
        k.begin();
        k.push("if ");
        let t = k.tid_var(0);
        k.push_use(t);
        k.push(" >= ");
        k.push_use(b);
        k.push(":");
        k.end();
        k.open_raw();
        k.ret_void();
        k.close();
    }
    for _ in 0..between(rng, 1, 3) {
        let t = *pick(rng, &types);
        k.let_acc(rng, t);
    }
    if chance(rng, 0.4) {
        let d = between(rng, 1, 2) as u32;
        k.let_(rng, T::F, d);
    }
    let mut cx = Ctx {
        types,
        bounds,
        loops_left: 5,
    };
    let want = if chance(rng, 0.4) { 3 } else { 2 };
    nest(&mut k, rng, &mut cx, want);
    if chance(rng, 0.3) && cx.loops_left > 0 {
        for _ in 0..between(rng, 0, 1) {
            k.stmt(rng, &cx.types, &MIX);
        }
        let want = between(rng, 1, 2) as u32;
        nest(&mut k, rng, &mut cx, want);
    }
    k.call_unused_helpers(rng);
    k.store_all(rng, 0.15);
    let name = b1::kernel_name(rng, "nested");
    let src = k.finish_kernel(rng, &name, &helper_src);
    (name, src)
}

/// Opens a loop, writes its body (with `want - 1` more levels inside), closes it.
fn nest(k: &mut Body, rng: &mut Gen, cx: &mut Ctx, want: u32) {
    cx.loops_left = cx.loops_left.saturating_sub(1);
    open_loop(k, rng, cx);
    let n = between(rng, 1, 3);
    let inner_at = if want > 1 {
        below(rng, n + 1)
    } else {
        usize::MAX
    };
    for s in 0..=n {
        if s == inner_at {
            nest(k, rng, cx, want - 1);
        }
        if s == n {
            break;
        }
        body_stmt(k, rng, cx);
    }
    if chance(rng, 0.25) {
        body_stmt(k, rng, cx);
    }
    k.flush_block(rng);
    k.close();
}

fn open_loop(k: &mut Body, rng: &mut Gen, cx: &Ctx) {
    // Warp repeats the body of a constant loop once per iteration (and a
    // dynamic loop inside it too): the product of the trip counts stays small.
    let room = UNROLL_BUDGET / k.unroll;
    let constant = room >= 2 && k.can_open_const();
    match weighted(rng, &[6, if constant { 5 } else { 0 }, 2]) {
        0 => {
            let b = *pick(rng, &cx.bounds);
            k.open_for_dyn(rng, b);
        }
        1 => {
            let (lo, hi, step) = const_range(rng, room);
            k.open_for_const(rng, lo, hi, step);
        }
        _ => {
            let b = *pick(rng, &cx.bounds);
            k.open_while(rng, Some(b));
        }
    }
}

/// A constant range of at most `room` iterations (or, now and then, one too
/// long to unroll).
fn const_range(rng: &mut Gen, room: u32) -> (i32, i32, i32) {
    let room = room.clamp(2, 16) as i32;
    match weighted(rng, &[8, 2, 2, 2, 1]) {
        0 => (0, between(rng, 2, room.min(8) as usize) as i32, 1),
        1 => {
            let lo = between(rng, 1, 3) as i32;
            (lo, lo + between(rng, 2, room.min(6) as usize) as i32, 1)
        }
        2 => {
            let step = *pick(rng, &[2, 2, 3]);
            let trips = between(rng, 2, room.min(5) as usize) as i32;
            (0, trips * step, step)
        }
        3 => {
            let trips = between(rng, 2, room.min(6) as usize) as i32;
            (trips - 1, -1, -1)
        }
        _ => (0, *pick(rng, &[20, 24, 32, 64]), 1),
    }
}

/// One statement of a loop body: locals reading the iterators, updates of
/// the accumulators, an `if`, a guarded `break` / `continue` / `return`,
/// or (budget allowing) another loop.
fn body_stmt(k: &mut Body, rng: &mut Gen, cx: &mut Ctx) {
    let in_loop = k.loop_depth() > 0;
    let deeper = cx.loops_left > 0 && k.loop_depth() < 3 && k.lines() < 28;
    let w = [
        10,
        3,
        if in_loop { 3 } else { 0 },
        if in_loop && k.can_continue() { 3 } else { 0 },
        if in_loop && k.lines() > 6 { 1 } else { 0 },
        if deeper { 1 } else { 0 },
    ];
    match weighted(rng, &w) {
        0 => k.stmt(rng, &cx.types, &MIX),
        1 => {
            // `if` chains stay out of bodies warp repeats many times.
            if k.lines() < 30 && k.unroll <= 4 {
                k.if_block(rng, &cx.types, &MIX);
            } else {
                k.stmt(rng, &cx.types, &MIX);
            }
        }
        2 | 3 => {
            let cont = w[3] > 0 && chance(rng, 0.5);
            let pre = chance(rng, 0.35);
            let types = cx.types.clone();
            k.guarded_exit(rng, cont, |k, rng| {
                if pre {
                    k.stmt(rng, &types, &MIX);
                }
            });
        }
        4 => {
            // Early exit of the whole thread, after storing what it has.
            k.open_if(rng);
            let outs = k.writable();
            let a = *pick(rng, &outs);
            let d = between(rng, 1, 2) as u32;
            k.store(rng, a, d);
            k.ret_void();
            k.close();
        }
        _ => nest(k, rng, cx, 1),
    }
}
