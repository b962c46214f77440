//! What grid_2d, grid_3d and stencil share: a 1-D / 2-D / 3-D launch (`i, j = wp.tid()`)
//! over `wp.array2d` / `wp.array3d` (or `wp.array(..., ndim=N)`) fields
//! with int size parameters, boundary handling (early `return` at the
//! border, or clamped / wrapped neighbour indices), and stencil features:
//! neighbour sums, central differences, windows of constant loops, whole
//! row/column loops, neighbour counts.

use super::builder::{Gen, below, between, chance, pick, weighted, word};
use super::typed::{Body, Ix, Kind, Mix, Role, Style, T, Wrap};

/// Names of the size parameters, per launch dimension.
#[rustfmt::skip]
const SIZES2: &[[&str; 2]] = &[
    ["nx", "ny"], ["nx", "ny"], ["width", "height"], ["w", "h"], ["rows", "cols"],
    ["n0", "n1"], ["dim_x", "dim_y"], ["size_x", "size_y"], ["res_x", "res_y"],
];
#[rustfmt::skip]
const SIZES1: &[[&str; 1]] = &[
    ["n"], ["n"], ["nx"], ["count"], ["length"], ["size"], ["n_cells"], ["width"], ["n_pts"],
];
#[rustfmt::skip]
const SIZES3: &[[&str; 3]] = &[
    ["nx", "ny", "nz"], ["nx", "ny", "nz"], ["n0", "n1", "n2"], ["dim_x", "dim_y", "dim_z"],
    ["size_x", "size_y", "size_z"], ["res_x", "res_y", "res_z"], ["width", "height", "depth_n"],
];

pub(super) const MIX: Mix = Mix {
    new_local: 6,
    assign: 2,
    update: 3,
    component: 1,
    store: 1,
    accumulate: 1,
};

#[rustfmt::skip]
const LOOKUP_NAMES: &[&str] = &[
    "sample", "fetch", "lookup", "read_cell", "load_cell", "get_cell", "cell_value", "field_at",
    "safe_read", "clamped_read", "tap", "sample_field", "value_at", "read_clamped", "wrap_read",
];
#[rustfmt::skip]
const LOOKUP_FIELDS: &[&str] = &["f", "field", "grid", "src", "u", "data", "arr", "q"];
#[rustfmt::skip]
const LOOKUP_COORDS: &[[&str; 3]] = &[
    ["x", "y", "z"], ["i", "j", "k"], ["ix", "iy", "iz"], ["a", "b", "c"], ["px", "py", "pz"],
];
#[rustfmt::skip]
const LOOKUP_SIZES: &[[&str; 3]] = &[
    ["nx", "ny", "nz"], ["w", "h", "d"], ["sx", "sy", "sz"], ["n0", "n1", "n2"],
    ["width", "height", "depth"],
];
#[rustfmt::skip]
const LOOKUP_LOCALS: &[[&str; 3]] = &[
    ["xi", "yi", "zi"], ["ci", "cj", "ck"], ["x0", "y0", "z0"], ["ii", "jj", "kk"],
    ["xc", "yc", "zc"],
];

/// A `@wp.func` that reads an `nd`-dimensional field of `ty` at clamped or
/// wrapped coordinates, with the sizes as arguments:
/// `def sample(f: wp.array2d(dtype=float), x: int, y: int, nx: int, ny: int) -> float`.
/// Appends it to `out` and returns its name (reserved in `k`).
pub(super) fn lookup_helper(
    rng: &mut Gen,
    k: &mut Body,
    nd: usize,
    ty: T,
    out: &mut String,
) -> String {
    let base = *pick(rng, LOOKUP_NAMES);
    let name = k.reserve_fresh(rng, base);
    let f = *pick(rng, LOOKUP_FIELDS);
    let c = pick(rng, LOOKUP_COORDS);
    let n = pick(rng, LOOKUP_SIZES);
    let l = pick(rng, LOOKUP_LOCALS);
    let wrap = weighted(rng, &[6, 2, 2]);
    let inline = chance(rng, 0.4);
    out.push_str("@wp.func\ndef ");
    out.push_str(&name);
    out.push('(');
    out.push_str(f);
    out.push_str(": ");
    let elem = match ty {
        T::F => "float",
        _ => ty.ctor(),
    };
    if chance(rng, 0.5) {
        out.push_str(match nd {
            1 => "wp.array(dtype=",
            2 => "wp.array2d(dtype=",
            _ => "wp.array3d(dtype=",
        });
        out.push_str(elem);
        out.push(')');
    } else {
        out.push_str("wp.array(dtype=");
        out.push_str(elem);
        out.push_str(match nd {
            1 => ")",
            2 => ", ndim=2)",
            _ => ", ndim=3)",
        });
    }
    for d in 0..nd {
        out.push_str(", ");
        out.push_str(c[d]);
        out.push_str(": int");
    }
    for d in 0..nd {
        out.push_str(", ");
        out.push_str(n[d]);
        out.push_str(": int");
    }
    out.push_str(") -> ");
    out.push_str(if ty == T::F { "float" } else { ty.ctor() });
    out.push_str(":\n");
    let coord = |out: &mut String, d: usize| match wrap {
        0 => {
            out.push_str("wp.clamp(");
            out.push_str(c[d]);
            out.push_str(", 0, ");
            out.push_str(n[d]);
            out.push_str(" - 1)");
        }
        1 => {
            out.push('(');
            out.push_str(c[d]);
            out.push_str(" + ");
            out.push_str(n[d]);
            out.push_str(") % ");
            out.push_str(n[d]);
        }
        _ => {
            out.push_str("wp.min(wp.max(");
            out.push_str(c[d]);
            out.push_str(", 0), ");
            out.push_str(n[d]);
            out.push_str(" - 1)");
        }
    };
    if !inline {
        for d in 0..nd {
            out.push_str("    ");
            out.push_str(l[d]);
            out.push_str(" = ");
            coord(out, d);
            out.push('\n');
        }
    }
    out.push_str("    return ");
    out.push_str(f);
    out.push('[');
    for d in 0..nd {
        if d > 0 {
            out.push_str(", ");
        }
        if inline {
            coord(out, d);
        } else {
            out.push_str(l[d]);
        }
    }
    out.push_str("]\n\n\n");
    name
}

/// A grid kernel under construction.
pub(super) struct Grid {
    pub k: Body,
    pub nd: usize,
    /// Readable float fields (nd-dimensional).
    pub fields: Vec<usize>,
    /// A vector field (nd components), if any.
    pub vec_field: Option<usize>,
    /// An int field, if any.
    pub int_field: Option<usize>,
    /// How offset indices stay in range.
    pub wrap: Wrap,
    pub types: Vec<T>,
    /// A lookup helper for float fields (see [`lookup_helper`]).
    pub lookup: Option<String>,
    /// The helpers' source, written before the kernel.
    pub helper_src: String,
    used_lookup: bool,
    /// Windows written so far.
    windows: u32,
}

pub(super) fn setup(rng: &mut Gen, nd: usize, style: Style) -> Grid {
    let mut k = Body::new(style);
    k.launch(rng, nd);
    let nd8 = nd as u8;
    // A 1-D launch has no vector field of its own size: vec3 samples.
    let vt = if nd == 1 { T::V(2) } else { T::V(nd8) };
    let mut fields = Vec::with_capacity(3);
    for _ in 0..weighted(rng, &[0, 6, 4, 1]) {
        fields.push(k.param(rng, T::F, Kind::Array(nd8, Role::In)));
    }
    let vec_field = chance(rng, 0.25).then(|| k.param(rng, vt, Kind::Array(nd8, Role::In)));
    let int_field = chance(rng, 0.15).then(|| k.param(rng, T::I, Kind::Array(nd8, Role::In)));
    if chance(rng, 0.1) {
        fields.push(k.param(rng, T::F, Kind::Array(nd8, Role::InOut)));
    }
    for _ in 0..weighted(rng, &[0, 6, 2]) {
        let t = match (vec_field.is_some(), below(rng, 6)) {
            (true, 0 | 1) => vt,
            (_, 2) if int_field.is_some() => T::I,
            _ => T::F,
        };
        k.param(rng, t, Kind::Array(nd8, Role::Out));
    }
    if chance(rng, 0.12) {
        // A per-row (per-slice) coefficient, read at the first index.
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    let names: &[&str] = match nd {
        1 => &pick(rng, SIZES1)[..],
        2 => &pick(rng, SIZES2)[..],
        _ => &pick(rng, SIZES3)[..],
    };
    let scalars_first = chance(rng, 0.3);
    let mut floats = weighted(rng, &[2, 4, 3, 1]);
    if scalars_first {
        for _ in 0..floats {
            k.param(rng, T::F, Kind::Scalar);
        }
        floats = 0;
    }
    for &n in names {
        let s = k.param_named(rng, n, T::I, Kind::Scalar);
        k.sizes.push(s);
    }
    for _ in 0..floats {
        k.param(rng, T::F, Kind::Scalar);
    }
    let wrap = *pick(
        rng,
        &[
            Wrap::Clamp,
            Wrap::Clamp,
            Wrap::Clamp,
            Wrap::MinMax,
            Wrap::Modulo,
        ],
    );
    let mut types = vec![T::F, T::F, T::F];
    if vec_field.is_some() {
        types.push(vt);
    }
    let mut helper_src = String::new();
    let lookup = chance(rng, 0.25).then(|| lookup_helper(rng, &mut k, nd, T::F, &mut helper_src));
    Grid {
        k,
        nd,
        fields,
        vec_field,
        int_field,
        wrap,
        types,
        lookup,
        helper_src,
        used_lookup: false,
        windows: 0,
    }
}

impl Grid {
    fn tids(&self) -> Vec<usize> {
        (0..self.nd).map(|d| self.k.tid_var(d)).collect()
    }

    /// Boundary handling at the top of the kernel: nothing (clamped indices),
    /// a bounds guard, or an early `return` on the border (after copying the
    /// cell), which makes raw `i + 1` neighbours safe.
    pub fn boundary(&mut self, rng: &mut Gen) {
        let t = self.tids();
        let sizes = self.k.sizes.clone();
        match weighted(rng, &[3, 2, 6]) {
            0 => {}
            1 => {
                self.k.begin();
                self.k.push("if ");
                for d in 0..self.nd {
                    if d > 0 {
                        self.k.push(" or ");
                    }
                    self.k.push_use(t[d]);
                    self.k.push(" >= ");
                    self.k.push_use(sizes[d]);
                }
                self.k.push(":");
                self.k.end();
                self.k.open_raw();
                self.k.ret_void();
                self.k.close();
            }
            _ => {
                let form = below(rng, 3);
                self.k.begin();
                self.k.push("if ");
                for d in 0..self.nd {
                    if d > 0 {
                        self.k.push(" or ");
                    }
                    match form {
                        0 => {
                            self.k.push_use(t[d]);
                            self.k.push(" == 0 or ");
                            self.k.push_use(t[d]);
                            self.k.push(" == ");
                            self.k.push_use(sizes[d]);
                            self.k.push(" - 1");
                        }
                        1 => {
                            self.k.push_use(t[d]);
                            self.k.push(" < 1 or ");
                            self.k.push_use(t[d]);
                            self.k.push(" >= ");
                            self.k.push_use(sizes[d]);
                            self.k.push(" - 1");
                        }
                        _ => {
                            self.k.push_use(t[d]);
                            self.k.push(" <= 0 or ");
                            self.k.push_use(t[d]);
                            self.k.push(" > ");
                            self.k.push_use(sizes[d]);
                            self.k.push(" - 2");
                        }
                    }
                }
                self.k.push(":");
                self.k.end();
                self.k.open_raw();
                if chance(rng, 0.6) {
                    // Border cells keep (or zero) their value.
                    let outs = self.k.writable();
                    let o = *pick(rng, &outs);
                    let ty = self.k.vars[o].ty;
                    self.k.begin();
                    let ix = vec![Ix::Tid; self.nd];
                    self.k.grid_ref(o, &ix, Wrap::Raw);
                    self.k.push(" = ");
                    let same = self
                        .fields
                        .iter()
                        .copied()
                        .filter(|&f| self.k.vars[f].ty == ty)
                        .collect::<Vec<_>>();
                    if ty == T::F && !same.is_empty() && chance(rng, 0.7) {
                        let f = *pick(rng, &same);
                        self.k.grid_ref(f, &ix, Wrap::Raw);
                    } else {
                        self.k.push(match ty {
                            T::F => "0.0",
                            T::I => "0",
                            T::V(2) => "wp.vec2()",
                            _ => "wp.vec3()",
                        });
                    }
                    self.k.end();
                }
                self.k.ret_void();
                self.k.close();
                self.k.interior = true;
                self.wrap = Wrap::Raw;
            }
        }
    }

    pub fn field(&self, rng: &mut Gen) -> usize {
        *pick(rng, &self.fields)
    }

    /// A wrap for one read: the kernel's, or (interior threads) a clamp now and then.
    pub fn wrap(&self, rng: &mut Gen) -> Wrap {
        if self.wrap == Wrap::Raw && chance(rng, 0.1) {
            Wrap::Clamp
        } else {
            self.wrap
        }
    }

    /// Reads field `f` at `ix`: through the lookup helper now and then
    /// (`sample(u, i + 1, j, nx, ny)`), else `u[..]` kept in range by `wrap`.
    pub fn read(&mut self, rng: &mut Gen, f: usize, ix: &[Ix], wrap: Wrap) {
        let Some(name) = self.lookup.clone() else {
            self.k.grid_ref(f, ix, wrap);
            return;
        };
        if self.k.vars[f].ty != T::F || !chance(rng, 0.75) {
            self.k.grid_ref(f, ix, wrap);
            return;
        }
        self.used_lookup = true;
        self.k.push(&name);
        self.k.push("(");
        self.k.push_use(f);
        for (d, &x) in ix.iter().enumerate() {
            self.k.push(", ");
            self.k.raw_index(d, x);
        }
        for d in 0..self.nd {
            self.k.push(", ");
            let s = self.k.sizes[d];
            self.k.push_use(s);
        }
        self.k.push(")");
    }

    /// The kernel with its helpers (the lookup only if some read used it).
    pub fn finish(mut self, rng: &mut Gen, name: &str) -> String {
        if !self.used_lookup {
            self.helper_src.clear();
        }
        self.k.finish_kernel(rng, name, &self.helper_src)
    }

    pub fn offsets_ix(&self, off: &[i32]) -> Vec<Ix> {
        off.iter()
            .map(|&o| if o == 0 { Ix::Tid } else { Ix::Off(o) })
            .collect()
    }

    /// `c = u[i, j]`: the centre value, as a local.
    pub fn center(&mut self, rng: &mut Gen) -> usize {
        let f = self.field(rng);
        let name = self.k.fresh(rng, T::F);
        self.k.begin();
        self.k.push(&name);
        self.k.push(" = ");
        let ix = vec![Ix::Tid; self.nd];
        self.k.grid_ref(f, &ix, Wrap::Raw);
        self.k.end();
        self.k.declare(name, T::F)
    }

    /// A neighbour sum: `lap = u[i - 1, j] + u[i + 1, j] + ... - 4.0 * c`,
    /// `avg = (...) * 0.25`, or a weighted (Sobel-like) combination.
    pub fn neighbour_sum(
        &mut self,
        rng: &mut Gen,
        offsets: &[[i32; 3]],
        center: Option<usize>,
    ) -> usize {
        let f = self.field(rng);
        let name = self.k.fresh(rng, T::F);
        let wrap = self.wrap(rng);
        let form = weighted(rng, &[5, 3, 2]);
        self.k.begin();
        self.k.push(&name);
        self.k.push(" = ");
        if form == 1 {
            self.k.push("(");
        }
        for (n, off) in offsets.iter().enumerate() {
            if n > 0 {
                self.k.push(if form == 2 && chance(rng, 0.4) {
                    " - "
                } else {
                    " + "
                });
            }
            if form == 2 && chance(rng, 0.3) {
                self.k.push(word(rng, &["2.0 * ", "0.5 * ", "3.0 * "]));
            }
            let ix = self.offsets_ix(&off[..self.nd]);
            self.read(rng, f, &ix, wrap);
        }
        match form {
            0 => {
                self.k.push(" - ");
                self.k.push(match offsets.len() {
                    4 => "4.0",
                    6 => "6.0",
                    8 => "8.0",
                    2 => "2.0",
                    _ => "float(4)",
                });
                self.k.push(" * ");
                match center {
                    Some(c) => self.k.push_use(c),
                    None => {
                        let ix = vec![Ix::Tid; self.nd];
                        self.k.grid_ref(f, &ix, Wrap::Raw);
                    }
                }
            }
            1 => {
                self.k.push(")");
                self.k.push(match offsets.len() {
                    4 => " * 0.25",
                    6 => " / 6.0",
                    8 => " * 0.125",
                    2 => " * 0.5",
                    _ => " * 0.1",
                });
            }
            _ => {}
        }
        self.k.end();
        self.k.declare(name, T::F)
    }

    /// Central differences along each dimension: `gx = (u[i + 1, j] -
    /// u[i - 1, j]) * 0.5`, sometimes gathered into a vector
    /// (`g = wp.vec2(gx, gy)`). Returns the new locals.
    pub fn gradient(&mut self, rng: &mut Gen) -> Vec<usize> {
        let f = self.field(rng);
        let wrap = self.wrap(rng);
        let scale: Option<usize> = {
            let s: Vec<usize> = (0..self.k.vars.len())
                .filter(|&n| self.k.vars[n].kind == Kind::Scalar && self.k.vars[n].ty == T::F)
                .collect();
            (!s.is_empty() && chance(rng, 0.5)).then(|| *pick(rng, &s))
        };
        let mut out = Vec::with_capacity(4);
        let dims: Vec<usize> = if chance(rng, 0.7) {
            (0..self.nd).collect()
        } else {
            vec![below(rng, self.nd)]
        };
        for &d in &dims {
            let name = self.k.fresh(rng, T::F);
            self.k.begin();
            self.k.push(&name);
            self.k.push(" = (");
            let mut off = [0i32; 3];
            off[d] = 1;
            let ix = self.offsets_ix(&off[..self.nd]);
            self.read(rng, f, &ix, wrap);
            self.k.push(" - ");
            off[d] = -1;
            let ix = self.offsets_ix(&off[..self.nd]);
            self.read(rng, f, &ix, wrap);
            self.k.push(")");
            match scale {
                Some(s) => {
                    self.k.push(" * ");
                    self.k.push_use(s);
                }
                None => self.k.push(" * 0.5"),
            }
            self.k.end();
            out.push(self.k.declare(name, T::F));
        }
        if self.nd > 1 && dims.len() == self.nd && chance(rng, 0.5) {
            let vt = T::V(self.nd as u8);
            let name = self.k.fresh(rng, vt);
            self.k.begin();
            self.k.push(&name);
            self.k.push(" = ");
            self.k.push(vt.ctor());
            self.k.push("(");
            for (n, &g) in out.iter().enumerate() {
                if n > 0 {
                    self.k.push(", ");
                }
                self.k.push_use(g);
            }
            self.k.push(")");
            self.k.end();
            let v = self.k.declare(name, vt);
            out.push(v);
        }
        out
    }

    /// Divergence of the vector field: `div = (vel[i + 1, j][0] - vel[i - 1, j][0]
    /// + vel[i, j + 1][1] - ...) * 0.5`.
    pub fn divergence(&mut self, rng: &mut Gen) -> Option<usize> {
        let vf = self.vec_field?;
        let wrap = self.wrap(rng);
        let name = self.k.fresh(rng, T::F);
        self.k.begin();
        self.k.push(&name);
        self.k.push(" = (");
        for d in 0..self.nd {
            let mut off = [0i32; 3];
            for (s, sign) in [(1, " - "), (-1, "")] {
                off[d] = s;
                let ix = self.offsets_ix(&off[..self.nd]);
                if d > 0 && s == 1 {
                    self.k.push(" + ");
                }
                self.k.grid_ref(vf, &ix, wrap);
                if chance(rng, 0.5) {
                    self.k.push("[");
                    self.k.push(["0", "1", "2"][d]);
                    self.k.push("]");
                } else {
                    self.k.push(".");
                    self.k.push(["x", "y", "z"][d]);
                }
                self.k.push(sign);
            }
        }
        self.k.push(") * 0.5");
        self.k.end();
        Some(self.k.declare(name, T::F))
    }

    /// A window of constant loops over `-r..=r` in every dimension:
    /// `for di in range(-1, 2): for dj in range(-1, 2): acc += u[clamp(i + di), ...]`,
    /// sometimes skipping the centre (`continue`), weighting by distance,
    /// or counting neighbours over a threshold.
    pub fn window(&mut self, rng: &mut Gen, dims: usize) {
        // One window per kernel: warp unrolls it (up to 27 copies of the body).
        if self.windows > 0 {
            self.gradient(rng);
            return;
        }
        self.windows += 1;
        let r = if dims == 3 || chance(rng, 0.8) { 1 } else { 2 };
        let count = self.int_field.is_some() && chance(rng, 0.5) || chance(rng, 0.15);
        let acc = self.k.let_acc(rng, if count { T::I } else { T::F });
        let mut its = Vec::with_capacity(3);
        // The window covers the last `dims` dimensions... or all of them.
        let first = self.nd - dims;
        for _ in 0..dims {
            its.push(self.k.open_for_const(rng, -r, r + 1, 1));
        }
        let skip_center = chance(rng, 0.35);
        if skip_center {
            self.k.begin();
            self.k.push("if ");
            for (n, &it) in its.iter().enumerate() {
                if n > 0 {
                    self.k.push(" and ");
                }
                self.k.push_use(it);
                self.k.push(" == 0");
            }
            self.k.push(":");
            self.k.end();
            self.k.open_raw();
            self.k.raw_line("continue");
            self.k.close();
        }
        let wrap = if self.wrap == Wrap::Raw && r == 1 && chance(rng, 0.6) {
            Wrap::Raw
        } else if self.wrap == Wrap::Modulo {
            Wrap::Modulo
        } else {
            Wrap::Clamp
        };
        let ix: Vec<Ix> = (0..self.nd)
            .map(|d| {
                if d >= first {
                    Ix::AddVar(its[d - first])
                } else {
                    Ix::Tid
                }
            })
            .collect();
        if count {
            let src = match self.int_field {
                Some(f) if chance(rng, 0.7) => (f, T::I),
                _ => (self.field(rng), T::F),
            };
            self.k.begin();
            self.k.push("if ");
            self.k.grid_ref(src.0, &ix, wrap);
            self.k.push(if src.1 == T::I {
                *pick(rng, &[" > 0:", " != 0:", " == 1:"])
            } else {
                *pick(rng, &[" > 0.5:", " > 0.0:", " < 0.0:", " >= 1.0:"])
            });
            self.k.end();
            self.k.open_raw();
            self.k.begin();
            self.k.push_use(acc);
            self.k.push(" += 1");
            self.k.end();
            self.k.close();
        } else {
            let f = self.field(rng);
            self.k.begin();
            self.k.push_use(acc);
            let max = chance(rng, 0.15);
            self.k.push(if max { " = wp.max(" } else { " += " });
            if max {
                self.k.push_use(acc);
                self.k.push(", ");
            }
            if !max && chance(rng, 0.35) {
                // Distance weight.
                self.k.push("wp.exp(-float(");
                for (n, &it) in its.iter().enumerate() {
                    if n > 0 {
                        self.k.push(" + ");
                    }
                    self.k.push_use(it);
                    self.k.push(" * ");
                    self.k.push_use(it);
                }
                self.k.push(")");
                self.k.push(word(rng, &[" * 0.5", " * 0.25", " / 2.0", ""]));
                self.k.push(") * ");
            }
            self.read(rng, f, &ix, wrap);
            if max {
                self.k.push(")");
            }
            self.k.end();
        }
        for _ in 0..dims {
            self.k.close();
        }
    }

    /// A whole row / column (line) through the cell: `for c in range(nx):
    /// acc += u[c, j]`, or `range(n)` of a reduction over the line.
    pub fn line(&mut self, rng: &mut Gen) {
        let d = below(rng, self.nd);
        let f = self.field(rng);
        let acc = self.k.let_acc(rng, T::F);
        let size = self.k.sizes[d];
        let it = self.k.open_for_dyn(rng, size);
        let ix: Vec<Ix> = (0..self.nd)
            .map(|e| if e == d { Ix::Var(it) } else { Ix::Tid })
            .collect();
        match weighted(rng, &[5, 2, 2]) {
            0 => {
                self.k.begin();
                self.k.push_use(acc);
                self.k.push(" += ");
                self.k.grid_ref(f, &ix, Wrap::Raw);
                self.k.end();
            }
            1 => {
                self.k.begin();
                self.k.push_use(acc);
                self.k.push(if chance(rng, 0.5) {
                    " = wp.max("
                } else {
                    " = wp.min("
                });
                self.k.push_use(acc);
                self.k.push(", ");
                self.k.grid_ref(f, &ix, Wrap::Raw);
                self.k.push(")");
                self.k.end();
            }
            _ => {
                // A weighted read, skipping the cell itself.
                self.k.begin();
                self.k.push("if ");
                self.k.push_use(it);
                self.k.push(" == ");
                let t = self.k.tid_var(d);
                self.k.push_use(t);
                self.k.push(":");
                self.k.end();
                self.k.open_raw();
                self.k.raw_line("continue");
                self.k.close();
                self.k.begin();
                self.k.push_use(acc);
                self.k.push(" += ");
                self.k.grid_ref(f, &ix, Wrap::Raw);
                self.k.push(" / float(");
                self.k.push_use(size);
                self.k.push(")");
                self.k.end();
            }
        }
        self.k.close();
    }

    /// A few random statements (locals, updates, an `if`).
    pub fn statements(&mut self, rng: &mut Gen, lo: usize, hi: usize) {
        let types = self.types.clone();
        for _ in 0..between(rng, lo, hi) {
            if chance(rng, 0.15) && self.k.lines() < 24 {
                self.k.if_block(rng, &types, &MIX);
            } else {
                self.k.stmt(rng, &types, &MIX);
            }
        }
    }
}
