//! reduction: sums, dot products, norms, minima and maxima — over a loop
//! (`for j in range(n): acc += a[j] * b[j]`, a row of a 2-D array, a
//! strided block `a[i * w + k]`) into a thread's output, and over threads
//! into one cell with `wp.atomic_add/min/max(total, 0, v)` or `total[0] +=`,
//! counts and histograms (`wp.atomic_add(hist, b, 1)`).

use super::Knobs;
use super::builder::{self as b1, Gen, between, chance, pick, weighted, word};
use super::typed::{self, Body, Kind, Mix, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.25,
    wf: [30, 3, 4, 4, 2, 0, 0, 0, 0, 0, 1, 0],
    leaf: [10, 4, 8, 3, 2, 2],
    ..typed::BASE
};

const MIX: Mix = Mix {
    new_local: 4,
    assign: 2,
    update: 4,
    component: 0,
    store: 1,
    accumulate: 2,
};

#[rustfmt::skip]
const TOTALS: &[&str] = &[
    "total", "sum_out", "acc", "result", "norm_sq", "energy", "loss", "partial", "mx", "mn",
    "hi_out", "lo_out", "sums", "dot_out", "red",
];
#[rustfmt::skip]
const COUNTS: &[&str] = &["count", "hits", "hist", "n_found", "tally", "bins", "votes_out"];

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let mut k = typed::kernel_1d(rng, STYLE.within(knobs));
    if chance(rng, 0.2) {
        k.param(rng, T::F, Kind::Array(2, Role::In));
    }
    if knobs.int_arrays() && chance(rng, 0.25) {
        k.param(rng, T::I, Kind::Array(1, Role::In));
    }
    if chance(rng, 0.5) {
        k.param(rng, T::F, Kind::Array(1, Role::Out));
    }
    targets(&mut k, rng, knobs);
    let n = weighted(rng, &[1, 6, 2]);
    for _ in 0..n {
        k.param(rng, T::I, Kind::Scalar);
    }
    if chance(rng, 0.4) {
        k.param(rng, T::F, Kind::Scalar);
    }
    k.pad_params(rng, knobs.params.0);

    let types = [T::F, T::F, T::F, T::I];
    if chance(rng, 0.5) {
        k.let_load(rng, T::F);
    }
    let goal = knobs.statement_goal(rng, 4, 24);
    let outs = k.writable().len();
    typed::fill(&mut k, rng, goal, outs + 3, 0.3, &types, &MIX, |k, rng| {
        feature(k, rng, knobs)
    });
    k.store_all(rng, 0.5);
    let name = b1::kernel_name(rng, "reduce");
    let src = k.finish_kernel(rng, &name, "");
    (name, src)
}

/// One or two reduction targets: float cells, sometimes an int counter.
pub(super) fn targets(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    for _ in 0..between(rng, 1, 2) {
        let name = *pick(rng, TOTALS);
        k.param_named(rng, name, T::F, Kind::Array(1, Role::Out));
    }
    if knobs.int_arrays() && chance(rng, 0.3) {
        let name = *pick(rng, COUNTS);
        k.param_named(rng, name, T::I, Kind::Array(1, Role::Out));
    }
}

/// One reduction: over a loop (when the knobs allow a loop and there is a
/// bound), or over threads into a cell.
pub(super) fn feature(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    let bounds = k.int_scalars();
    let looped = knobs.loop_depth > k.loop_depth() && !bounds.is_empty();
    match weighted(
        rng,
        &[if looped { 6 } else { 0 }, if looped { 2 } else { 0 }, 5, 2],
    ) {
        0 => loop_reduce(k, rng, knobs, &bounds),
        1 => block_reduce(k, rng, knobs),
        2 => thread_reduce(k, rng, knobs),
        _ => count(k, rng, knobs),
    }
}

/// A readable float array: 1-D, or 2-D (`arr2d`).
fn float_input(k: &Body, rng: &mut Gen, nd: u8) -> Option<usize> {
    let ins: Vec<usize> = k
        .inputs(T::F)
        .into_iter()
        .filter(|&a| matches!(k.vars[a].kind, Kind::Array(d, _) if d == nd))
        .collect();
    (!ins.is_empty()).then(|| *pick(rng, &ins))
}

/// `a[j]`, or `a[i, j]` for a 2-D array; `a[0]` / `a[i, 0]` without `it`.
fn elem(k: &mut Body, a: usize, it: Option<usize>) {
    k.push_use(a);
    k.push("[");
    if matches!(k.vars[a].kind, Kind::Array(2, _)) {
        let t = k.tid_var(0);
        k.push_use(t);
        k.push(", ");
    }
    match it {
        Some(it) => k.push_use(it),
        None => k.push("0"),
    }
    k.push("]");
}

/// `acc = float(0.0)`, `for j in range(n):` and a sum, dot product, sum of
/// squares or absolute values, a minimum or maximum, over the loop.
fn loop_reduce(k: &mut Body, rng: &mut Gen, knobs: &Knobs, bounds: &[usize]) {
    let two_d = chance(rng, 0.4);
    let a = match float_input(k, rng, if two_d { 2 } else { 1 }) {
        Some(a) => a,
        None => match float_input(k, rng, 1) {
            Some(a) => a,
            None => return thread_reduce(k, rng, knobs),
        },
    };
    let b = float_input(k, rng, 1).filter(|&b| b != a);
    let form = weighted(rng, &[5, if b.is_some() { 5 } else { 0 }, 2, 2, 3]);
    let acc = if form == 4 {
        // A running min / max starts from the first element.
        let name = k.fresh(rng, T::F);
        k.begin();
        k.push(&name);
        k.push(" = ");
        elem(k, a, None);
        k.end();
        k.declare(name, T::F)
    } else {
        k.let_acc(rng, T::F)
    };
    let bound = *pick(rng, bounds);
    let it = k.open_for_dyn(rng, bound);
    if chance(rng, 0.15) && k.can_continue() {
        k.begin();
        k.push("if ");
        elem(k, a, Some(it));
        k.push(word(rng, &[" < 0.0:", " == 0.0:", " > 1.0e3:"]));
        k.end();
        k.open_raw();
        k.raw_line("continue");
        k.close();
    }
    k.begin();
    k.push_use(acc);
    match form {
        0 => {
            k.push(" += ");
            elem(k, a, Some(it));
            if chance(rng, 0.3) {
                k.push(" * ");
                let d = knobs.depth(rng, 0, 1);
                k.operand(rng, T::F, d);
            }
        }
        1 => {
            k.push(" += ");
            elem(k, a, Some(it));
            k.push(" * ");
            elem(k, b.unwrap_or(a), Some(it));
        }
        2 => {
            k.push(" += ");
            elem(k, a, Some(it));
            k.push(" * ");
            elem(k, a, Some(it));
        }
        3 => {
            k.push(" += wp.abs(");
            elem(k, a, Some(it));
            k.push(")");
        }
        _ => {
            k.push(if chance(rng, 0.5) {
                " = wp.min("
            } else {
                " = wp.max("
            });
            k.push_use(acc);
            k.push(", ");
            elem(k, a, Some(it));
            k.push(")");
        }
    }
    k.end();
    k.close();
    if form == 2 && chance(rng, 0.5) {
        k.begin();
        k.push_use(acc);
        k.push(" = wp.sqrt(");
        k.push_use(acc);
        k.push(")");
        k.end();
    }
}

/// A fixed-size block per thread: `for k in range(4): s += a[i * 4 + k]`.
fn block_reduce(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    let Some(a) = float_input(k, rng, 1) else {
        return thread_reduce(k, rng, knobs);
    };
    if !k.can_open_const() || k.unroll > 4 {
        return thread_reduce(k, rng, knobs);
    }
    let w = *pick(rng, &[2i32, 3, 4, 4, 8]);
    let acc = k.let_acc(rng, T::F);
    let it = k.open_for_const(rng, 0, w, 1);
    k.begin();
    k.push_use(acc);
    k.push(" += ");
    k.push_use(a);
    k.push("[");
    let t = k.tid_var(0);
    k.push_use(t);
    k.push(" * ");
    k.push(&w.to_string());
    k.push(" + ");
    k.push_use(it);
    k.push("]");
    k.end();
    k.close();
}

/// Over threads into cell 0: `wp.atomic_add(total, 0, v)`, `total[0] += v`,
/// `wp.atomic_max(mx, 0, v)`; sometimes under a condition.
fn thread_reduce(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    let cells: Vec<usize> = k
        .writable()
        .into_iter()
        .filter(|&a| k.vars[a].ty == T::F)
        .collect();
    let Some(&target) = cells.get(below_len(rng, cells.len())) else {
        return;
    };
    let guarded = chance(rng, 0.3);
    if guarded {
        k.open_if(rng);
    }
    k.begin();
    let op = weighted(rng, &[8, 2, 3, 3, 2]);
    let d = knobs.depth(rng, 1, 3);
    if op == 1 {
        k.push_use(target);
        k.push(if chance(rng, 0.8) {
            "[0] += "
        } else {
            "[0] -= "
        });
        k.expr(rng, T::F, d);
    } else {
        k.push(
            [
                "wp.atomic_add(",
                "",
                "wp.atomic_min(",
                "wp.atomic_max(",
                "wp.atomic_sub(",
            ][op],
        );
        k.push_use(target);
        k.push(", 0, ");
        k.expr(rng, T::F, d);
        k.push(")");
    }
    k.end();
    if guarded {
        k.flush_block(rng);
        k.close();
    }
}

fn below_len(rng: &mut Gen, n: usize) -> usize {
    if n == 0 { 0 } else { b1::below(rng, n) }
}

/// A count (`if cond: wp.atomic_add(count, 0, 1)`) or a histogram bin
/// (`b = wp.clamp(int(x * 8.0), 0, nb - 1)`, `wp.atomic_add(hist, b, 1)`).
fn count(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    let counters: Vec<usize> = k
        .writable()
        .into_iter()
        .filter(|&a| k.vars[a].ty == T::I)
        .collect();
    let Some(&c) = counters.first() else {
        return thread_reduce(k, rng, knobs);
    };
    let bins = k.int_scalars();
    if !bins.is_empty() && chance(rng, 0.5) {
        let nb = *pick(rng, &bins);
        let name = k.fresh(rng, T::I);
        k.begin();
        k.push(&name);
        k.push(" = wp.clamp(int(");
        let d = knobs.depth(rng, 0, 2);
        k.operand(rng, T::F, d);
        match b1::below(rng, 3) {
            0 => k.push(" * 8.0), 0, "),
            1 => {
                k.push(" * float(");
                k.push_use(nb);
                k.push(")), 0, ");
            }
            _ => k.push(" * 4.0), 0, "),
        }
        k.push_use(nb);
        k.push(" - 1)");
        k.end();
        let b = k.declare(name, T::I);
        k.begin();
        k.push("wp.atomic_add(");
        k.push_use(c);
        k.push(", ");
        k.push_use(b);
        k.push(", 1)");
        k.end();
    } else {
        k.open_if(rng);
        k.begin();
        k.push("wp.atomic_add(");
        k.push_use(c);
        k.push(", 0, 1)");
        k.end();
        k.flush_block(rng);
        k.close();
    }
}
