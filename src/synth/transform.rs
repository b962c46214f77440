//! transform: gather, scatter and remap — index arrays and permutations
//! (`j = idx[i]`, `out[i] = a[j]`, `out[perm[i]] = a[i]`, `inv[perm[i]] = i`,
//! scatter-add `wp.atomic_add(out, idx[i], v)`, double indirection
//! `a[idx[idx[i]]]`, 2-D gathers `a[rows[i], cols[i]]`) and computed
//! remaps kept in range (`wp.clamp(idx[i], 0, n - 1)`, `idx[i] % n`,
//! `n - 1 - i`, `(i * s + o) % n`).

use super::Knobs;
use super::builder::{self as b1, Gen, chance, pick, weighted, word};
use super::grid;
use super::typed::{self, Body, Kind, Role, Style, T};

const STYLE: Style = Style {
    p_leaf: 0.25,
    wf: [30, 3, 4, 3, 2, 2, 2, 1, 0, 0, 1, 0],
    leaf: [10, 4, 6, 3, 2, 1],
    ..typed::BASE
};

#[rustfmt::skip]
const INDEX_ARRAYS: &[&str] = &[
    "idx", "perm", "indices", "order", "map_idx", "src_idx", "dst_idx", "gather_idx", "nbr",
    "sorted_idx", "remap", "ids", "lut", "slot", "target_idx", "sel",
];
#[rustfmt::skip]
const PAIRS: &[[&str; 2]] = &[
    ["rows", "cols"], ["ri", "ci"], ["row_idx", "col_idx"], ["u_idx", "v_idx"], ["src_r", "src_c"],
];

pub(super) fn generate(rng: &mut Gen, knobs: &Knobs) -> (String, String) {
    let mut k = typed::kernel_1d(rng, STYLE.within(knobs));
    let vecs = knobs.vec_sizes();
    let vec = (!vecs.is_empty() && chance(rng, 0.2)).then(|| T::V(*pick(rng, &vecs)));
    if let Some(v) = vec {
        k.param(rng, v, Kind::Array(1, Role::In));
    }
    let two_d = knobs.int_arrays() && chance(rng, 0.15);
    if two_d {
        k.param(rng, T::F, Kind::Array(2, Role::In));
    }
    index_params(&mut k, rng, knobs, two_d);
    for _ in 0..weighted(rng, &[0, 6, 3]) {
        let t = match vec {
            Some(v) if chance(rng, 0.35) => v,
            _ => T::F,
        };
        k.param(rng, t, Kind::Array(1, Role::Out));
    }
    if knobs.int_arrays() && chance(rng, 0.15) {
        let name = *pick(rng, &["inv", "inv_perm", "rank_out", "pos_of", "where_out"]);
        k.param_named(rng, name, T::I, Kind::Array(1, Role::Out));
    }
    for _ in 0..weighted(rng, &[3, 4, 1]) {
        k.param(rng, T::F, Kind::Scalar);
    }
    k.pad_params(rng, knobs.params.0);

    let mut types = vec![T::F, T::F, T::F, T::I];
    if let Some(v) = vec {
        types.push(v);
    }
    let goal = knobs.statement_goal(rng, 4, 20);
    let outs = k.writable().len();
    typed::fill(
        &mut k,
        rng,
        goal,
        outs + 3,
        0.35,
        &types,
        &grid::MIX,
        |k, rng| feature(k, rng, knobs),
    );
    k.store_all(rng, 0.1);
    let name = b1::kernel_name(rng, "remap");
    let src = k.finish_kernel(rng, &name, "");
    (name, src)
}

/// Int index arrays (when the knobs allow int data arrays; a pair for
/// 2-D gathers) and the size `n` that remaps stay below.
pub(super) fn index_params(k: &mut Body, rng: &mut Gen, knobs: &Knobs, two_d: bool) {
    if knobs.int_arrays() {
        for _ in 0..weighted(rng, &[0, 5, 2]) {
            let name = *pick(rng, INDEX_ARRAYS);
            k.param_named(rng, name, T::I, Kind::Array(1, Role::In));
        }
        if two_d {
            let p = pick(rng, PAIRS);
            for name in p {
                k.param_named(rng, name, T::I, Kind::Array(1, Role::In));
            }
        }
    }
    if k.int_scalars().is_empty() {
        let name = *pick(
            rng,
            &["n", "n", "count", "size", "num", "length", "n_items"],
        );
        k.param_named(rng, name, T::I, Kind::Scalar);
    }
}

/// One gather, scatter or remap.
pub(super) fn feature(k: &mut Body, rng: &mut Gen, knobs: &Knobs) {
    let idx: Vec<usize> = k
        .inputs(T::I)
        .into_iter()
        .filter(|&a| matches!(k.vars[a].kind, Kind::Array(1, _)))
        .collect();
    let has_idx = !idx.is_empty();
    let two_d = k
        .inputs(T::F)
        .into_iter()
        .any(|a| matches!(k.vars[a].kind, Kind::Array(2, _)));
    let inv = k.writable().into_iter().find(|&a| k.vars[a].ty == T::I);
    match weighted(
        rng,
        &[
            6,
            if has_idx { 4 } else { 1 },
            if has_idx { 3 } else { 0 },
            if inv.is_some() && has_idx { 2 } else { 0 },
            if two_d && idx.len() >= 2 { 3 } else { 0 },
        ],
    ) {
        0 => {
            let j = remap(k, rng, &idx);
            gather(k, rng, knobs, j);
        }
        1 => scatter(k, rng, knobs, &idx),
        2 => {
            // Double indirection: `a[idx[perm[i]]]`.
            let name = k.fresh(rng, T::I);
            let (a, b) = (*pick(rng, &idx), *pick(rng, &idx));
            k.begin();
            k.push(&name);
            k.push(" = ");
            k.push_use(a);
            k.push("[");
            k.push_use(b);
            k.push("[");
            let t = k.tid_var(0);
            k.push_use(t);
            k.push("]]");
            k.end();
            let j = k.declare(name, T::I);
            gather(k, rng, knobs, j);
        }
        3 => {
            // Inverse permutation: `inv[perm[i]] = i`.
            let p = *pick(rng, &idx);
            let out = inv.unwrap_or(p);
            k.begin();
            k.push_use(out);
            k.push("[");
            k.push_use(p);
            k.push("[");
            let t = k.tid_var(0);
            k.push_use(t);
            k.push("]] = ");
            k.push_use(t);
            k.end();
        }
        _ => {
            // `v = a2[rows[i], cols[i]]`.
            let a = k
                .inputs(T::F)
                .into_iter()
                .find(|&a| matches!(k.vars[a].kind, Kind::Array(2, _)))
                .unwrap_or(0);
            let (r, c) = (idx[idx.len() - 2], idx[idx.len() - 1]);
            let name = k.fresh(rng, T::F);
            let t = k.tid_var(0);
            k.begin();
            k.push(&name);
            k.push(" = ");
            k.push_use(a);
            k.push("[");
            k.push_use(r);
            k.push("[");
            k.push_use(t);
            k.push("], ");
            k.push_use(c);
            k.push("[");
            k.push_use(t);
            k.push("]]");
            if chance(rng, 0.5) {
                k.push(" * ");
                let d = knobs.depth(rng, 0, 1);
                k.operand(rng, T::F, d);
            }
            k.end();
            k.declare(name, T::F);
        }
    }
}

/// `j = ...`: an int local holding a source index, from an index array or
/// computed from the thread index, kept in range (or not) in various ways.
fn remap(k: &mut Body, rng: &mut Gen, idx: &[usize]) -> usize {
    let t = k.tid_var(0);
    let ns = k.int_scalars();
    let n = *pick(rng, &ns);
    let name = k.fresh(rng, T::I);
    k.begin();
    k.push(&name);
    k.push(" = ");
    let read_idx = |k: &mut Body, rng: &mut Gen| {
        let a = *pick(rng, idx);
        k.push_use(a);
        k.push("[");
        k.push_use(t);
        k.push("]");
    };
    let from_array = !idx.is_empty() && chance(rng, 0.7);
    if from_array {
        match weighted(rng, &[4, 3, 2, 2]) {
            0 => read_idx(k, rng),
            1 => {
                k.push("wp.clamp(");
                read_idx(k, rng);
                k.push(", 0, ");
                k.push_use(n);
                k.push(" - 1)");
            }
            2 => {
                read_idx(k, rng);
                k.push(" % ");
                k.push_use(n);
            }
            _ => {
                k.push("(");
                read_idx(k, rng);
                k.push(word(rng, &[" + 1", " + 2", " + 3", " * 2"]));
                k.push(") % ");
                k.push_use(n);
            }
        }
    } else {
        match weighted(rng, &[3, 3, 2, 2]) {
            0 => {
                k.push_use(n);
                k.push(" - 1 - ");
                k.push_use(t);
            }
            1 => {
                k.push("(");
                k.push_use(t);
                k.push(word(
                    rng,
                    &[" * 3 + 1", " * 7 + 2", " * 5", " + 17", " * 2 + 1"],
                ));
                k.push(") % ");
                k.push_use(n);
            }
            2 => {
                k.push("(");
                k.push_use(t);
                k.push(" + ");
                k.push_use(n);
                k.push(word(rng, &[" // 2", " - 1", " // 3"]));
                k.push(") % ");
                k.push_use(n);
            }
            _ => {
                k.push("wp.min(");
                k.push_use(t);
                k.push(word(rng, &[" * 2, ", " + 1, ", " * 4, "]));
                k.push_use(n);
                k.push(" - 1)");
            }
        }
    }
    k.end();
    k.declare(name, T::I)
}

/// Reads a source at `j`: `v = a[j]` (maybe combined with a local
/// expression), or straight into an output: `out[i] = a[j] * s`.
fn gather(k: &mut Body, rng: &mut Gen, knobs: &Knobs, j: usize) {
    let mut srcs: Vec<usize> = k
        .inputs(T::F)
        .into_iter()
        .filter(|&a| matches!(k.vars[a].kind, Kind::Array(1, _)))
        .collect();
    for n in [2u8, 3, 4] {
        srcs.extend(k.inputs(T::V(n)));
    }
    let a = *pick(rng, &srcs);
    let ty = k.vars[a].ty;
    let outs: Vec<usize> = k
        .writable()
        .into_iter()
        .filter(|&o| k.vars[o].ty == ty && matches!(k.vars[o].kind, Kind::Array(1, _)))
        .collect();
    let direct = !outs.is_empty() && chance(rng, 0.4);
    k.begin();
    let name = if direct {
        let o = *pick(rng, &outs);
        k.push_use(o);
        k.push("[");
        let t = k.tid_var(0);
        k.push_use(t);
        k.push("] = ");
        None
    } else {
        let name = k.fresh(rng, ty);
        k.push(&name);
        k.push(" = ");
        Some(name)
    };
    k.push_use(a);
    k.push("[");
    k.push_use(j);
    k.push("]");
    if chance(rng, 0.5) {
        let op = word(rng, &[" * ", " + ", " - "]);
        k.push(op);
        let d = knobs.depth(rng, 0, 2);
        // A vector scales by a float and adds a vector.
        k.operand(rng, if op == " * " { T::F } else { ty }, d);
    }
    k.end();
    if let Some(name) = name {
        k.declare(name, ty);
    }
}

/// `out[idx[i]] = v`, `out[j] = v` for a computed `j`, or scatter-add
/// `wp.atomic_add(out, idx[i], v)`.
fn scatter(k: &mut Body, rng: &mut Gen, knobs: &Knobs, idx: &[usize]) {
    let outs: Vec<usize> = k
        .writable()
        .into_iter()
        .filter(|&o| k.vars[o].ty != T::I && matches!(k.vars[o].kind, Kind::Array(1, _)))
        .collect();
    if outs.is_empty() {
        let j = remap(k, rng, idx);
        return gather(k, rng, knobs, j);
    }
    let o = *pick(rng, &outs);
    let ty = k.vars[o].ty;
    let t = k.tid_var(0);
    let write_index = |k: &mut Body, rng: &mut Gen| {
        if idx.is_empty() {
            let ns = k.int_scalars();
            let n = *pick(rng, &ns);
            k.push("(");
            k.push_use(t);
            k.push(word(rng, &[" * 3 + 1", " + 1", " * 5 + 2"]));
            k.push(") % ");
            k.push_use(n);
        } else {
            let a = *pick(rng, idx);
            k.push_use(a);
            k.push("[");
            k.push_use(t);
            k.push("]");
        }
    };
    let d = knobs.depth(rng, 1, 3);
    k.begin();
    if chance(rng, 0.4) {
        k.push(word(
            rng,
            &["wp.atomic_add(", "wp.atomic_add(", "wp.atomic_sub("],
        ));
        k.push_use(o);
        k.push(", ");
        write_index(k, rng);
        k.push(", ");
        k.expr(rng, ty, d);
        k.push(")");
    } else {
        k.push_use(o);
        k.push("[");
        write_index(k, rng);
        k.push("] = ");
        k.expr(rng, ty, d);
    }
    k.end();
}
