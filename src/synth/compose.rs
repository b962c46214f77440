//! The composer: a category's kernel is a launch shape and a few motifs of
//! its family, written into one [`Kernel`].

use super::kernel::{Gen, Kernel, between, chance, pick};
use super::knobs::Knobs;
use super::motifs::{self, Motif};

/// A composed kernel before the checks.
pub(super) struct Drawn {
    pub kernel_name: String,
    pub python_source: String,
    pub launch_spec: String,
    pub motifs: Vec<&'static str>,
    pub params: Vec<super::kernel::Param>,
    pub dim: Vec<usize>,
}

/// (thread-index count, tiled) of a category, drawn.
fn launch(category: &str, rng: &mut Gen) -> (usize, bool) {
    match category {
        "grid_2d" => (2, false),
        "grid_3d" => (3, false),
        "tile" => (if chance(rng, 0.3) { 2 } else { 1 }, true),
        "stencil" | "nested" => (if chance(rng, 0.5) { 2 } else { 1 }, false),
        "combined" => (*pick(rng, &[1, 1, 1, 2, 3]), false),
        _ => (1, false),
    }
}

/// Lines of the kernel body a category aims at by default: (lo, cap).
fn size(category: &str) -> (usize, usize) {
    match category {
        "combined" => (20, 60),
        "nested" | "stencil" => (12, 40),
        "grid_2d" | "grid_3d" => (10, 40),
        "tile" => (6, 28),
        "arithmetic" | "math" => (3, 32),
        _ => (8, 36),
    }
}

const VERBS: &[&str] = &["compute", "apply", "eval", "update", "run", "step", "do"];

/// A kernel name from the first motif's name.
fn kernel_name(rng: &mut Gen, first: &str) -> String {
    // Never the bare motif name: `tile_matmul` would also name a builtin.
    match between(rng, 0, 4) {
        0 | 1 => [first, "_kernel"].concat(),
        2 | 3 => [pick(rng, VERBS), "_", first].concat(),
        _ => [first, "_", itoa::Buffer::new().format(between(rng, 0, 9))].concat(),
    }
}

/// Composes one kernel of `category`.
/// The most parameters (plus outputs for its results) one motif adds: a
/// kernel that close to the cap is marked ([`Kernel::mark`]) before the
/// motif and rolled back if it went over (spring_forces alone adds 9).
const MOTIF_MAX_PARAMS: usize = 12;

pub(super) fn compose(category: &'static str, rng: &mut Gen, knobs: &Knobs) -> Drawn {
    let (dims, tiled) = launch(category, rng);
    let mut k = Kernel::new(rng, knobs, category, dims, tiled);
    let family: Vec<&'static Motif> = motifs::family(category)
        .iter()
        .copied()
        .filter(|m| m.fits(&k))
        .collect();
    if category == "combined" {
        k.p_chain = 0.8;
    }
    let (lo, cap) = size(category);
    let goal = knobs.statement_goal(rng, lo, cap);
    // Parameters and lines a kernel may reach (the knobs' upper bounds; at
    // most 14 parameters, as real kernels have).
    let param_cap = knobs.params.1.min(14);
    let line_cap = knobs.statements.1;
    let mut tries = 0;
    while tries < 24 && (k.motifs.is_empty() || k.lines() + k.open_offers() < goal) {
        tries += 1;
        if family.is_empty() {
            break;
        }
        let m = *pick(rng, &family);
        // Each motif at most twice per kernel.
        if k.motifs.iter().filter(|&&n| n == m.name).count() >= 2 {
            continue;
        }
        let near = |k: &Kernel| {
            k.params.len() + k.open_offers() + MOTIF_MAX_PARAMS > param_cap
                || k.lines() + k.open_offers() + 12 > line_cap
        };
        let mark = (!k.motifs.is_empty() && near(&k)).then(|| k.mark());
        if (m.build)(&mut k, rng) {
            k.motifs.push(m.name);
            if let Some(mark) = mark
                && (k.params.len() + k.open_offers() > param_cap
                    || k.lines() + k.open_offers() > line_cap)
            {
                k.rollback(mark);
                break;
            }
        }
        if k.motifs.len() >= 10 {
            break;
        }
    }
    let first = k.motifs.first().copied().unwrap_or(category);
    let kernel_name = kernel_name(rng, first);
    let (python_source, launch_spec) = k.finish(rng, &kernel_name);
    Drawn {
        kernel_name,
        python_source,
        launch_spec,
        motifs: std::mem::take(&mut k.motifs),
        params: std::mem::take(&mut k.params),
        dim: std::mem::take(&mut k.launch.dim),
    }
}
