//! tile: Warp's tile API — block-cooperative kernels launched with
//! `wp.launch_tiled`. Each module defines its tile sizes as `wp.constant`s
//! (or writes them as literals), then one kernel that loads 1-D or 2-D tiles
//! (`wp.tile_load(a, shape=..., offset=...)`), combines them (`+ - *`,
//! scalar `*` and `/`, unary `-`, `wp.tile_map` with a warp builtin, tiles of
//! `wp.tile_zeros`/`wp.tile_ones`, in-place `+=`/`-=`), accumulates tiles over
//! constant (unrolled) or dynamic `for` loops, reduces them (`wp.tile_sum`,
//! `tile_max`, `tile_min`, `tile_reduce`), multiplies 2-D float tiles
//! (`wp.tile_matmul(a, b, acc)` over k tiles, or `d = wp.tile_matmul(a, b)`)
//! and writes results with
//! `wp.tile_store`, `wp.tile_atomic_add` or an element read `r[0]` / `t[i, j]`.
//! Square 2-D tiles may be transposed (`wp.tile_transpose`), tiles may live in
//! shared memory (`storage="shared"`), and per-thread values become tiles of
//! `block_dim` elements (`wp.tile(v)`, back with `wp.untile`).
//! Element types: float32 (spelled `float` or `wp.float32`), float64 and int32.
//!
//! All tiles of a kernel share one shape (reductions give shape-1 tiles); a
//! tile local is only ever set from a call or an operator, never from a bare
//! name (warp would copy it).

use super::builder::{Gen, between, chance, kernel_name, pick, weighted, word};
use std::fmt::Write;

#[derive(Clone, Copy, PartialEq)]
enum Dt {
    F32,
    F64,
    I32,
}

const SIZES_1D: &[u32] = &[8, 16, 32, 64, 128, 256];
const SIZES_2D_ROWS: &[u32] = &[2, 4, 8, 16];
const SIZES_2D_COLS: &[u32] = &[2, 4, 8, 16, 32];
const CONST_NAMES_1D: &[&str] = &[
    "TILE",
    "BLOCK",
    "TILE_SIZE",
    "N",
    "CHUNK",
    "WIDTH",
    "TILE_DIM",
];
const CONST_NAMES_2D: &[(&str, &str)] = &[
    ("TILE_M", "TILE_N"),
    ("TM", "TN"),
    ("ROWS", "COLS"),
    ("BLOCK_M", "BLOCK_N"),
    ("TILE_H", "TILE_W"),
    ("BM", "BN"),
];
const INPUT_NAMES: &[&str] = &[
    "a", "b", "x", "y", "src", "lhs", "rhs", "u", "v", "w", "field", "data",
];
const OUTPUT_NAMES: &[&str] = &["out", "dst", "result", "c", "dest", "target"];
const RESULT_NAMES: &[&str] = &[
    "sums", "totals", "partial", "acc_out", "reduced", "stats", "norms",
];
const LOCAL_NAMES: &[&str] = &[
    "t", "s", "p", "q", "r", "tmp", "acc", "part", "blk", "vals", "prod", "mix", "h", "g", "e",
    "d", "m", "z", "k2", "lhs_t", "rhs_t", "body", "row", "col", "lo", "hi",
];
const FLOAT_UNARY: &[&str] = &[
    "sin", "cos", "exp", "tanh", "abs", "sqrt", "sinh", "cosh", "atan", "floor", "ceil", "tan",
];
const FLOAT_BINARY: &[&str] = &["add", "sub", "mul", "min", "max", "div"];
const INT_BINARY: &[&str] = &["add", "sub", "mul", "min", "max"];
const F32_LITERALS: &[&str] = &["2.0", "0.5", "1.5", "0.25", "3.0", "0.125", "4.0", "0.75"];

struct TileGen {
    dt: Dt,
    /// Spelling of the element type in annotations and `dtype=`.
    dt_name: &'static str,
    two_d: bool,
    /// How the shape is written (`TILE`, `(TILE_M, TILE_N)`, `32`, `(4, 8)`).
    shape: String,
    /// The two size expressions (the second unused for 1-D).
    size: [String; 2],
    /// Their values.
    shape_values: [u32; 2],
    tid: [&'static str; 2],
    inputs: Vec<String>,
    scalar_param: Option<String>,
    /// Tile locals holding full-shape tiles.
    tiles: Vec<String>,
    used_names: Vec<String>,
    body: String,
    indent: usize,
}

impl TileGen {
    fn fresh(&mut self, rng: &mut Gen) -> String {
        for _ in 0..8 {
            let n = word(rng, LOCAL_NAMES);
            if !self.used_names.iter().any(|u| u == n) {
                self.used_names.push(n.to_string());
                return n.to_string();
            }
        }
        let n = format!("t{}", self.used_names.len());
        self.used_names.push(n.clone());
        n
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    /// A scalar operand of the tile's element type.
    fn scalar(&self, rng: &mut Gen) -> String {
        if let Some(p) = &self.scalar_param {
            if chance(rng, 0.5) {
                return p.clone();
            }
        }
        match self.dt {
            Dt::F32 => word(rng, F32_LITERALS).to_string(),
            Dt::F64 => format!("wp.float64({})", word(rng, F32_LITERALS)),
            Dt::I32 => between(rng, 2, 5).to_string(),
        }
    }

    /// The offset of the tile at block (`i`[, `j`]), shifted by loop variable `k` on the last axis.
    fn offset(&self, rng: &mut Gen, k: Option<&str>) -> String {
        let [i, j] = self.tid;
        let [m, n] = &self.size;
        if self.two_d {
            match k {
                Some(k) => {
                    if chance(rng, 0.5) {
                        format!("({i} * {m}, {k} * {n})")
                    } else {
                        format!("({k} * {m}, {j} * {n})")
                    }
                }
                None => format!("({i} * {m}, {j} * {n})"),
            }
        } else {
            match k {
                Some(k) => {
                    if chance(rng, 0.5) {
                        format!("{k} * {m}")
                    } else {
                        format!("({i} + {k}) * {m}")
                    }
                }
                None => match weighted(rng, &[6, 1, 1]) {
                    0 => format!("{i} * {m}"),
                    1 => i.to_string(),
                    _ => format!("({i} % 4) * {m}"),
                },
            }
        }
    }

    /// `wp.tile_load(...)` of an input, in one of warp's accepted spellings.
    fn load(&self, rng: &mut Gen, k: Option<&str>) -> String {
        let a = pick(rng, &self.inputs).clone();
        if k.is_none() && chance(rng, 0.08) {
            return format!("wp.tile_load({a}, shape={})", self.shape);
        }
        let off = self.offset(rng, k);
        if chance(rng, 0.15) {
            format!("wp.tile_load({a}, {}, {off})", self.shape)
        } else {
            format!(
                "wp.tile_load({a}, shape={}, offset={off}{})",
                self.shape,
                storage(rng)
            )
        }
    }

    fn constant_tile(&self, rng: &mut Gen) -> String {
        let f = if chance(rng, 0.5) {
            "tile_zeros"
        } else {
            "tile_ones"
        };
        format!(
            "wp.{f}(shape={}, dtype={}{})",
            self.shape,
            self.dt_name,
            storage(rng)
        )
    }

    /// An expression for a new full-shape tile, from existing tile locals.
    fn tile_expr(&self, rng: &mut Gen) -> String {
        let a = pick(rng, &self.tiles).clone();
        let b = pick(rng, &self.tiles).clone();
        let floats = self.dt != Dt::I32;
        let square = self.two_d && self.shape_values[0] == self.shape_values[1];
        match weighted(
            rng,
            &[4, 3, 3, 3, 2, 1, 3, 3, 2, if square { 3 } else { 0 }],
        ) {
            0 => format!("{a} + {b}"),
            1 => format!("{a} - {b}"),
            2 => format!("{a} * {b}"),
            3 => {
                if chance(rng, 0.5) {
                    format!("{a} * {}", self.scalar(rng))
                } else {
                    format!("{} * {a}", self.scalar(rng))
                }
            }
            4 if floats => format!("{a} / {}", self.scalar(rng)),
            5 => format!("-{a}"),
            6 => {
                if floats {
                    format!("wp.tile_map(wp.{}, {a})", word(rng, FLOAT_UNARY))
                } else {
                    format!("wp.tile_map(wp.abs, {a})")
                }
            }
            7 => {
                let op = if floats {
                    word(rng, FLOAT_BINARY)
                } else {
                    word(rng, INT_BINARY)
                };
                format!("wp.tile_map(wp.{op}, {a}, {b})")
            }
            8 => format!("{a} + {}", self.constant_tile(rng)),
            9 => format!("wp.tile_transpose({a})"),
            _ => format!("{a} * {}", self.scalar(rng)),
        }
    }

    fn new_tile(&mut self, rng: &mut Gen, expr: String) -> String {
        let name = self.fresh(rng);
        self.line(&format!("{name} = {expr}"));
        self.tiles.push(name.clone());
        name
    }

    fn store(&mut self, rng: &mut Gen, out: &str, t: &str) {
        let off = self.offset(rng, None);
        if chance(rng, 0.1) {
            self.line(&format!("wp.tile_store({out}, {t}, {off})"));
        } else {
            self.line(&format!("wp.tile_store({out}, {t}, offset={off})"));
        }
    }
}

pub(super) fn generate(rng: &mut Gen) -> (String, String) {
    let dt = match weighted(rng, &[7, 2, 1]) {
        0 => Dt::F32,
        1 => Dt::F64,
        _ => Dt::I32,
    };
    let dt_name = match dt {
        Dt::F32 => {
            if chance(rng, 0.6) {
                "float"
            } else {
                "wp.float32"
            }
        }
        Dt::F64 => "wp.float64",
        Dt::I32 => {
            if chance(rng, 0.6) {
                "int"
            } else {
                "wp.int32"
            }
        }
    };
    let two_d = chance(rng, 0.4);
    let named = chance(rng, 0.75);
    let mut header = String::from("import warp as wp\n\n");
    let shape_values: [u32; 2];
    let (shape, size) = if two_d {
        let m = *pick(rng, SIZES_2D_ROWS);
        let n = *pick(rng, SIZES_2D_COLS);
        shape_values = [m, n];
        if named {
            let (cm, cn) = *pick(rng, CONST_NAMES_2D);
            let _ = writeln!(header, "{cm} = wp.constant({m})\n{cn} = wp.constant({n})");
            (format!("({cm}, {cn})"), [cm.to_string(), cn.to_string()])
        } else {
            (format!("({m}, {n})"), [m.to_string(), n.to_string()])
        }
    } else {
        let n = *pick(rng, SIZES_1D);
        shape_values = [n, 0];
        if named {
            let c = word(rng, CONST_NAMES_1D);
            let _ = writeln!(header, "{c} = wp.constant({n})");
            (c.to_string(), [c.to_string(), String::new()])
        } else {
            (n.to_string(), [n.to_string(), String::new()])
        }
    };
    // A constant trip count for unrolled accumulation loops.
    let unroll = between(rng, 2, 4);
    let unroll_named = chance(rng, 0.5);
    if unroll_named {
        let _ = writeln!(header, "K_TILES = {unroll}");
    }
    // The inner dimension of a matrix product (2-D float kernels).
    let gemm = two_d && dt != Dt::I32 && chance(rng, 0.4);
    let inner = if gemm {
        let kk = *pick(rng, &[2u32, 4, 8, 16]);
        if named {
            let c = word(rng, &["TK", "TILE_K", "BK", "KB"]);
            let _ = writeln!(header, "{c} = wp.constant({kk})");
            c.to_string()
        } else {
            kk.to_string()
        }
    } else {
        String::new()
    };
    header.push_str("\n\n");

    let tid = if two_d {
        *pick(
            rng,
            &[["i", "j"], ["bi", "bj"], ["row", "col"], ["tx", "ty"]],
        )
    } else {
        *pick(
            rng,
            &[
                ["i", ""],
                ["tid", ""],
                ["block", ""],
                ["b", ""],
                ["idx", ""],
            ],
        )
    };
    let mut g = TileGen {
        dt,
        dt_name,
        two_d,
        shape,
        size,
        shape_values,
        tid,
        inputs: Vec::new(),
        scalar_param: None,
        tiles: Vec::new(),
        used_names: tid
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.to_string())
            .collect(),
        body: String::new(),
        indent: 1,
    };
    g.used_names.extend(["k", "n", "wp"].map(String::from));
    let n_inputs = between(rng, 1, 3);
    let mut names: Vec<&str> = INPUT_NAMES
        .iter()
        .copied()
        .filter(|n| !g.used_names.iter().any(|u| u == n))
        .collect();
    for _ in 0..n_inputs {
        let k = crate::synth::builder::below(rng, names.len());
        g.inputs.push(names.remove(k).to_string());
    }
    let out = word(rng, OUTPUT_NAMES).to_string();
    let res = word(rng, RESULT_NAMES).to_string();
    g.used_names.extend(g.inputs.iter().cloned());
    g.used_names.push(out.clone());
    g.used_names.push(res.clone());

    let arr = |g: &TileGen| {
        if g.two_d {
            format!("wp.array2d(dtype={})", g.dt_name)
        } else {
            format!("wp.array(dtype={})", g.dt_name)
        }
    };
    let mut params: Vec<String> = g
        .inputs
        .iter()
        .map(|a| format!("{a}: {}", arr(&g)))
        .collect();
    params.push(format!("{out}: {}", arr(&g)));
    let use_res = chance(rng, 0.7);
    if use_res {
        params.push(format!("{res}: wp.array(dtype={})", g.dt_name));
    }
    if chance(rng, 0.45) {
        let p = word(rng, &["alpha", "scale", "gain", "beta", "coef"]).to_string();
        let ann = match dt {
            Dt::F32 => {
                if dt_name == "float" {
                    "float"
                } else {
                    "wp.float32"
                }
            }
            Dt::F64 => "wp.float64",
            Dt::I32 => "int",
        };
        params.push(format!("{p}: {ann}"));
        g.used_names.push(p.clone());
        g.scalar_param = Some(p);
    }
    let dyn_loop = chance(rng, 0.25);
    if dyn_loop {
        params.push("n: int".to_string());
    }

    // tid
    if two_d {
        g.line(&format!("{}, {} = wp.tid()", tid[0], tid[1]));
    } else {
        g.line(&format!("{} = wp.tid()", tid[0]));
    }
    // initial loads
    let n_loads = between(rng, 1, 2);
    for _ in 0..n_loads {
        let e = g.load(rng, None);
        g.new_tile(rng, e);
    }
    // a matrix product: accumulated over k tiles, or one product
    if gemm {
        let [m, n] = g.size.clone();
        let [i, j] = g.tid;
        let a = pick(rng, &g.inputs).clone();
        let b = pick(rng, &g.inputs).clone();
        let ta = g.fresh(rng);
        let tb = g.fresh(rng);
        let alpha = match (&g.scalar_param, dt) {
            (Some(p), _) if chance(rng, 0.3) => format!(", alpha={p}"),
            (_, Dt::F32) if chance(rng, 0.2) => format!(", alpha={}", word(rng, F32_LITERALS)),
            _ => String::new(),
        };
        if chance(rng, 0.65) {
            let acc = g.fresh(rng);
            if chance(rng, 0.7) {
                let z = format!("wp.tile_zeros(shape=({m}, {n}), dtype={})", g.dt_name);
                g.line(&format!("{acc} = {z}"));
            } else {
                let e = g.load(rng, None);
                g.line(&format!("{acc} = {e}"));
            }
            let range = if dyn_loop {
                "n".to_string()
            } else if unroll_named {
                "K_TILES".to_string()
            } else {
                unroll.to_string()
            };
            g.line(&format!("for k in range({range}):"));
            g.indent += 1;
            g.line(&format!(
                "{ta} = wp.tile_load({a}, shape=({m}, {inner}), offset=({i} * {m}, k * {inner}))"
            ));
            g.line(&format!(
                "{tb} = wp.tile_load({b}, shape=({inner}, {n}), offset=(k * {inner}, {j} * {n}))"
            ));
            g.line(&format!("wp.tile_matmul({ta}, {tb}, {acc}{alpha})"));
            g.indent -= 1;
            g.tiles.push(acc);
        } else {
            g.line(&format!(
                "{ta} = wp.tile_load({a}, shape=({m}, {inner}), offset=({i} * {m}, 0))"
            ));
            g.line(&format!(
                "{tb} = wp.tile_load({b}, shape=({inner}, {n}), offset=(0, {j} * {n}))"
            ));
            let d = g.fresh(rng);
            g.line(&format!("{d} = wp.tile_matmul({ta}, {tb}{alpha})"));
            g.tiles.push(d.clone());
            if chance(rng, 0.4) {
                let t = pick(rng, &g.tiles).clone();
                g.line(&format!("wp.tile_matmul({ta}, {tb}, {t})"));
            }
        }
    }
    // an accumulation loop
    match weighted(
        rng,
        &[
            3,
            if dyn_loop && !gemm { 3 } else { 0 },
            if gemm { 12 } else { 4 },
        ],
    ) {
        0 | 1 => {
            let acc = g.fresh(rng);
            if chance(rng, 0.5) {
                let z = g.constant_tile(rng);
                g.line(&format!("{acc} = {z}"));
            } else {
                let e = g.load(rng, None);
                g.line(&format!("{acc} = {e}"));
            }
            let range = if dyn_loop {
                "n".to_string()
            } else if unroll_named {
                "K_TILES".to_string()
            } else {
                unroll.to_string()
            };
            g.line(&format!("for k in range({range}):"));
            g.indent += 1;
            let e = g.load(rng, Some("k"));
            let t = g.fresh(rng);
            g.line(&format!("{t} = {e}"));
            let rhs = match weighted(rng, &[3, 2, 1]) {
                0 => t.clone(),
                1 => format!("{t} * {}", g.scalar(rng)),
                _ if dt != Dt::I32 => format!(
                    "wp.tile_map(wp.{}, {t})",
                    word(rng, &["sin", "cos", "abs", "exp"])
                ),
                _ => format!("{t} * {t}"),
            };
            match weighted(rng, &[3, 1, 3]) {
                0 => g.line(&format!("{acc} += {rhs}")),
                1 => g.line(&format!("{acc} -= {rhs}")),
                _ => g.line(&format!("{acc} = {acc} + {rhs}")),
            }
            g.indent -= 1;
            g.tiles.push(acc);
        }
        _ => {}
    }
    // element-wise statements
    let n_ops = between(rng, 1, 4);
    for _ in 0..n_ops {
        if chance(rng, 0.15) && g.tiles.len() >= 2 {
            let a = g.tiles[crate::synth::builder::below(rng, g.tiles.len())].clone();
            let b = pick(rng, &g.tiles).clone();
            let op = if chance(rng, 0.7) { "+=" } else { "-=" };
            g.line(&format!("{a} {op} {b}"));
        } else {
            let e = g.tile_expr(rng);
            g.new_tile(rng, e);
        }
    }
    // outputs: a store of the last tile, then reductions and element reads
    let last = g.tiles.last().unwrap().clone();
    if chance(rng, 0.85) || !use_res {
        g.store(rng, &out, &last);
    } else {
        g.line(&format!(
            "wp.tile_atomic_add({out}, {last}, offset={})",
            g.offset(rng, None)
        ));
    }
    if use_res {
        let n_red = between(rng, 1, 2);
        for _ in 0..n_red {
            let src = pick(rng, &g.tiles).clone();
            let red = match weighted(rng, &[5, 2, 2, 2]) {
                0 => format!("wp.tile_sum({src})"),
                1 => format!("wp.tile_max({src})"),
                2 => format!("wp.tile_min({src})"),
                _ => format!(
                    "wp.tile_reduce(wp.{}, {src})",
                    word(rng, &["add", "max", "min"])
                ),
            };
            let r = g.fresh(rng);
            g.line(&format!("{r} = {red}"));
            let i = tid[0];
            match weighted(rng, &[3, 3, 3, 2]) {
                0 => g.line(&format!("wp.tile_store({res}, {r}, offset={i})")),
                1 => g.line(&format!("wp.tile_atomic_add({res}, {r})")),
                2 => g.line(&format!("{res}[{i}] = {r}[0]")),
                _ => {
                    let y = g.fresh(rng);
                    let t = pick(rng, &g.tiles).clone();
                    g.line(&format!("{y} = {t} * {r}[0]"));
                    g.store(rng, &out, &y);
                }
            }
        }
        if chance(rng, 0.25) {
            // per-thread values gathered into a tile of block_dim elements
            let src = pick(rng, &g.inputs).clone();
            let at = if two_d {
                format!("{}[{}, {}]", src, tid[0], tid[1])
            } else {
                format!("{src}[{}]", tid[0])
            };
            let v = g.fresh(rng);
            g.line(&format!("{v} = {at}"));
            let s = g.fresh(rng);
            if chance(rng, 0.5) {
                g.line(&format!("{s} = wp.tile({v})"));
            } else {
                g.line(&format!("{s} = wp.tile({v} * {})", g.scalar(rng)));
            }
            let w = if chance(rng, 0.5) {
                let w = g.fresh(rng);
                let op = if dt == Dt::I32 {
                    "abs"
                } else {
                    word(rng, &["sin", "cos", "exp", "tanh", "abs"])
                };
                g.line(&format!("{w} = wp.tile_map(wp.{op}, {s})"));
                w
            } else {
                s.clone()
            };
            if chance(rng, 0.5) {
                g.line(&format!("{res}[{}] = wp.untile({w})", tid[0]));
            } else {
                let r = g.fresh(rng);
                g.line(&format!("{r} = wp.tile_sum({w})"));
                g.line(&format!("wp.tile_atomic_add({res}, {r})"));
            }
        }
        if chance(rng, 0.3) {
            let t = pick(rng, &g.tiles).clone();
            let idx = if two_d {
                let m: u32 = g_size(&g, 0);
                let n: u32 = g_size(&g, 1);
                format!(
                    "{}, {}",
                    between(rng, 0, m as usize - 1),
                    between(rng, 0, n as usize - 1)
                )
            } else {
                between(rng, 0, g_size(&g, 0) as usize - 1).to_string()
            };
            let e = g.fresh(rng);
            g.line(&format!("{e} = {t}[{idx}]"));
            g.line(&format!("{res}[{}] = {e}", tid[0]));
        }
    }

    let name = kernel_name(rng, "tile");
    let mut src = header;
    let _ = write!(src, "@wp.kernel\ndef {name}({}):\n", params.join(", "));
    src.push_str(&g.body);
    (name, src)
}

/// An explicit `storage=` argument, now and then.
fn storage(rng: &mut Gen) -> &'static str {
    match weighted(rng, &[14, 3, 1]) {
        0 => "",
        1 => ", storage=\"shared\"",
        _ => ", storage=\"register\"",
    }
}

/// The numeric size of axis `k` of the kernel's tiles.
fn g_size(g: &TileGen, k: usize) -> u32 {
    g.shape_values[k]
}

#[cfg(test)]
mod tests {
    use crate::synth::{sample_rng, synthesize};

    #[test]
    fn samples_lower_on_both_targets_and_cover_the_tile_api() {
        let mut seen = std::collections::BTreeMap::<&str, usize>::new();
        let features = [
            "wp.tile_load(",
            "wp.tile_store(",
            "wp.tile_atomic_add(",
            "wp.tile_sum(",
            "wp.tile_max(",
            "wp.tile_min(",
            "wp.tile_reduce(",
            "wp.tile_map(",
            "wp.tile_zeros(",
            "wp.tile_ones(",
            "wp.constant(",
            "wp.array2d(",
            "wp.float64",
            "dtype=int",
            "for k in range(n)",
            " += ",
            "[0]",
            "i, j = wp.tid()",
            "wp.tile_matmul(",
            "wp.tile_transpose(",
            "wp.tile(",
            "wp.untile(",
            "storage=\"shared\"",
        ];
        for index in 0..400 {
            let s = synthesize("tile", index, &mut sample_rng(3, index));
            let src = &s.python_source;
            assert!(src.starts_with("import warp as wp\n"), "{src}");
            assert_eq!(src.matches("@wp.kernel").count(), 1);
            assert!(s.kernel_name.starts_with("tile_"));
            let lowered =
                crate::lower::lower(src, true, true).unwrap_or_else(|e| panic!("{e}\n{src}"));
            assert_eq!(lowered.cpu.unwrap().kernels[0].name, s.kernel_name);
            assert!(lowered.cuda.unwrap().module.unwrap().contains("tile_load<"));
            for f in features {
                if src.contains(f) {
                    *seen.entry(f).or_default() += 1;
                }
            }
        }
        for f in features {
            assert!(
                seen.get(f).copied().unwrap_or(0) >= 8,
                "{f} in only {:?} of 400 samples",
                seen.get(f)
            );
        }
    }
}
