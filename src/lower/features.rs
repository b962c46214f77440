//! What a module's kernels are made of, as the lowering sees it: the
//! `features` column. Collected while lowering (loops) and from the builtins
//! and functions the lowering resolved, so it costs a few bit operations per
//! kernel and never a second pass over the text.

/// A set of features (a bit each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Features(u8);

impl Features {
    /// A `@wp.struct` the kernels (or their functions) use.
    pub const STRUCTS: Features = Features(1);
    /// A user `@wp.func` (or native snippet) the kernels call.
    pub const FUNCS: Features = Features(1 << 1);
    /// A `for` or `while` loop, unrolled or not, in a kernel or its functions.
    pub const LOOPS: Features = Features(1 << 2);
    /// An atomic builtin (`wp.atomic_*`, also what `a[i] += x` on an array becomes).
    pub const ATOMICS: Features = Features(1 << 3);
    /// A tile builtin (`wp.tile_*`, `wp.tile`).
    pub const TILES: Features = Features(1 << 4);
    /// Random numbers or noise (`wp.rand_init`, `randf`, `sample_*`, `noise`...).
    pub const RANDOM: Features = Features(1 << 5);
    /// A geometry query: mesh, BVH, hash grid or volume builtins, triangle tests.
    pub const GEOMETRY: Features = Features(1 << 6);

    /// Every feature with its column name, in column order.
    pub const ALL: [(&'static str, Features); 7] = [
        ("structs", Features::STRUCTS),
        ("funcs", Features::FUNCS),
        ("loops", Features::LOOPS),
        ("atomics", Features::ATOMICS),
        ("tiles", Features::TILES),
        ("random", Features::RANDOM),
        ("geometry", Features::GEOMETRY),
    ];

    pub const fn empty() -> Features {
        Features(0)
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn insert(&mut self, other: Features) {
        self.0 |= other.0;
    }

    #[must_use]
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the features present, in column order.
    pub fn names(self) -> impl Iterator<Item = &'static str> + Clone {
        Features::ALL
            .into_iter()
            .filter(move |(_, f)| self.contains(*f))
            .map(|(n, _)| n)
    }

    /// How many features are present.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The feature a column name stands for.
    pub fn from_name(name: &str) -> Option<Features> {
        Features::ALL
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f)
    }

    /// The feature a builtin's use shows (empty for most builtins).
    pub fn of_builtin(name: &str) -> Features {
        let starts = |p: &str| name.starts_with(p);
        if starts("atomic_") {
            Features::ATOMICS
        } else if starts("tile") {
            // Tile queries of a mesh or BVH are both.
            if starts("tile_mesh_") || starts("tile_bvh_") {
                Features::TILES.union(Features::GEOMETRY)
            } else {
                Features::TILES
            }
        } else if starts("rand")
            || starts("sample_")
            || matches!(name, "noise" | "pnoise" | "curlnoise" | "poisson")
        {
            Features::RANDOM
        } else if starts("mesh_")
            || starts("bvh_")
            || starts("hash_grid_")
            || starts("volume_")
            || matches!(name, "intersect_tri_tri" | "closest_point_edge_edge")
        {
            Features::GEOMETRY
        } else {
            Features::empty()
        }
    }

    /// The features a set of used builtins shows.
    pub fn of_builtins<'n>(names: impl IntoIterator<Item = &'n str>) -> Features {
        names
            .into_iter()
            .fold(Features::empty(), |f, n| f.union(Features::of_builtin(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_map_to_their_feature() {
        assert_eq!(Features::of_builtin("atomic_add"), Features::ATOMICS);
        assert_eq!(Features::of_builtin("tile_load"), Features::TILES);
        assert_eq!(Features::of_builtin("tile"), Features::TILES);
        assert_eq!(Features::of_builtin("randf"), Features::RANDOM);
        assert_eq!(Features::of_builtin("sample_unit_sphere"), Features::RANDOM);
        assert_eq!(Features::of_builtin("mesh_query_point"), Features::GEOMETRY);
        assert_eq!(Features::of_builtin("hash_grid_query"), Features::GEOMETRY);
        assert_eq!(
            Features::of_builtin("tile_bvh_query_ray"),
            Features::TILES.union(Features::GEOMETRY)
        );
        for plain in ["sin", "tid", "range", "length", "transform_point", "add"] {
            assert!(Features::of_builtin(plain).is_empty(), "{plain}");
        }
    }

    #[test]
    fn names_round_trip_in_column_order() {
        let f = Features::LOOPS
            .union(Features::STRUCTS)
            .union(Features::TILES);
        assert_eq!(f.names().collect::<Vec<_>>(), ["structs", "loops", "tiles"]);
        assert_eq!(f.len(), 3);
        let back = f.names().fold(Features::empty(), |a, n| {
            a.union(Features::from_name(n).unwrap())
        });
        assert_eq!(back, f);
        assert_eq!(Features::from_name("nope"), None);
    }
}
