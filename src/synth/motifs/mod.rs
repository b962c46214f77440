//! The motif library: small pieces of real Warp code (a spring force, a
//! histogram, a 3x3 solve, a ray-sphere test...) that add parameters,
//! helpers and statements to a [`Kernel`]. Each domain file lists its motifs
//! in a `pub const MOTIFS: &[Motif]`; [`all`] concatenates them and
//! [`family`] gives the motifs serving a category. How to write one:
//! /work/notes/synth_api.md.

use super::kernel::{Gen, Kernel};
use std::sync::LazyLock;

pub mod fields;
pub mod geometry;
pub mod linalg;
pub mod parallel;
pub mod physics;
pub mod random;

/// The domain a motif comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    Physics,
    Fields,
    Parallel,
    Linalg,
    Geometry,
    Random,
}

impl Domain {
    pub fn name(self) -> &'static str {
        match self {
            Domain::Physics => "physics",
            Domain::Fields => "fields",
            Domain::Parallel => "parallel",
            Domain::Linalg => "linalg",
            Domain::Geometry => "geometry",
            Domain::Random => "random",
        }
    }
}

/// Launch shapes a motif works in (bit masks for [`Motif::dims`]).
pub const D1: u8 = 1 << 1;
pub const D2: u8 = 1 << 2;
pub const D3: u8 = 1 << 3;
/// Any non-tiled launch (1-3 thread indices).
pub const ANY: u8 = D1 | D2 | D3;
/// A tiled launch (`wp.launch_tiled`, 1-D tile grid).
pub const TILED: u8 = 1 << 4;
/// A tiled launch with a 2-D tile grid.
pub const TILED2: u8 = 1 << 5;

/// A motif: a named builder step.
pub struct Motif {
    /// snake_case, unique over the library (goes into the `motifs` column).
    pub name: &'static str,
    pub domain: Domain,
    /// Categories whose family it belongs to (see `CATEGORIES`).
    pub categories: &'static [&'static str],
    /// Launch shapes it works in: a mask of [`D1`], [`D2`], [`D3`],
    /// [`TILED`], [`TILED2`].
    pub dims: u8,
    /// Adds the motif to the kernel. Returns false, *before writing
    /// anything*, when it cannot apply (a knob forbids its types, no loop
    /// allowed...); the composer then picks another.
    pub build: fn(&mut Kernel, &mut Gen) -> bool,
}

impl Motif {
    /// Whether it can run in `k`'s launch shape.
    pub fn fits(&self, k: &Kernel) -> bool {
        self.dims & launch_bit(k) != 0
    }
}

/// The [`Motif::dims`] bit of a kernel's launch.
pub fn launch_bit(k: &Kernel) -> u8 {
    match (k.launch.tiled, k.dims()) {
        (true, 1) => TILED,
        (true, _) => TILED2,
        (false, d) => 1 << d,
    }
}

/// Every motif, domain by domain.
pub fn all() -> &'static [&'static Motif] {
    static ALL: LazyLock<Vec<&'static Motif>> = LazyLock::new(|| {
        [
            physics::MOTIFS,
            fields::MOTIFS,
            parallel::MOTIFS,
            linalg::MOTIFS,
            geometry::MOTIFS,
            random::MOTIFS,
        ]
        .iter()
        .flat_map(|m| m.iter())
        .collect()
    });
    &ALL
}

/// The motifs serving `category` (in library order).
pub fn family(category: &str) -> &'static [&'static Motif] {
    static FAMILIES: LazyLock<Vec<(&'static str, Vec<&'static Motif>)>> = LazyLock::new(|| {
        super::CATEGORIES
            .iter()
            .map(|&c| {
                let ms = all()
                    .iter()
                    .copied()
                    .filter(|m| m.categories.contains(&c))
                    .collect();
                (c, ms)
            })
            .collect()
    });
    FAMILIES
        .iter()
        .find(|f| f.0 == category)
        .map_or(&[][..], |f| &f.1[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motif_names_are_unique_and_categories_known() {
        let mut names: Vec<&str> = all().iter().map(|m| m.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "duplicate motif names");
        for m in all() {
            for c in m.categories {
                assert!(super::super::CATEGORIES.contains(c), "{}: {c}", m.name);
            }
            assert!(m.dims != 0, "{}", m.name);
        }
    }
}
