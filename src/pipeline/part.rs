//! `--part i/N`: one of N disjoint parts of a run's index space.
//!
//! Part i takes the sample indices i, i+N, i+2N, … (a residue class mod N)
//! and stops at its share of the run's target: `target / N`, the remainder
//! going one unit each to the first parts, so the shares sum to the target.
//!
//! Why interleaved and not contiguous ranges: with a byte target (or any
//! target, once rejections and duplicates are counted) nobody knows in
//! advance how many indices the run will consume, so contiguous ranges
//! cannot be cut without guessing the end. Interleaving needs no guess: the N
//! parts advance through the index space side by side, so together they cover
//! 0, 1, 2, … up to a ragged edge of less than one stride per part, which is
//! the prefix of the index space one run would have consumed. Every sample is
//! a pure function of (seed, index), so a part's row for index j is byte for
//! byte the row one run makes for j (same id, split, content), and the parts
//! are disjoint by construction. Interleaving also spreads the cost evenly:
//! the parts see statistically the same mix of categories and rejections.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::{Target, TargetSpec, user_error};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Which part, 0 ≤ index < count.
    pub index: u64,
    /// How many parts the run is cut into.
    pub count: u64,
}

impl Part {
    /// Parse `i/N` as given to `--part`; the error is one line naming the flag.
    pub fn parse(text: &str) -> anyhow::Result<Part> {
        let bad = |why: &str| user_error(format!("--part {text}: {why}"));
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| bad("expected i/N, e.g. 0/4 (part i of N, 0 ≤ i < N)"))?;
        let number = |s: &str| s.trim().parse::<u64>().ok();
        let (Some(index), Some(count)) = (number(i), number(n)) else {
            return Err(bad("expected i/N with whole numbers, e.g. 0/4"));
        };
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad(&format!(
                "i must be in 0..{count} (parts are numbered from 0), got {index}"
            )));
        }
        Ok(Part { index, count })
    }

    /// The sample index at position `k` of this part: index + k·count.
    pub fn sample_index(&self, k: u64) -> u64 {
        self.index + k * self.count
    }

    /// Whether sample `index` belongs to this part.
    pub fn owns(&self, index: u64) -> bool {
        index % self.count == self.index
    }

    /// This part's share of `total` units: total / N, plus one for the first
    /// total % N parts, so that the shares of all parts sum to `total`.
    pub fn share(&self, total: u64) -> u64 {
        total / self.count + u64::from(self.index < total % self.count)
    }

    /// This part's share of the run's target, as a target of its own; an
    /// error when the target is too small to give every part something.
    pub fn target(&self, whole: Target) -> anyhow::Result<Target> {
        let (n, unit, make): (u64, &str, fn(u64) -> Target) = match whole {
            Target::Rows(n) => (n, "rows", Target::Rows),
            Target::TextBytes(n) => (n, "bytes of text", Target::TextBytes),
            Target::DiskBytes(n) => (n, "bytes on disk", Target::DiskBytes),
        };
        if n < self.count {
            return Err(user_error(format!(
                "--part {self}: the target of {n} {unit} cannot be cut into {} parts",
                self.count
            )));
        }
        Ok(make(self.share(n)))
    }

    /// The default output folder of a part: `OUT-part-i-of-N` next to the
    /// run's own output, so the parts and their merge into OUT sit side by side.
    pub fn default_output(&self, run_output: &Path) -> PathBuf {
        let mut name = run_output.as_os_str().to_owned();
        name.push(format!("-part-{}-of-{}", self.index, self.count));
        PathBuf::from(name)
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `[target]` as the config writes it, for a target value.
pub fn target_spec(target: Target) -> TargetSpec {
    use crate::config::Size;
    match target {
        Target::Rows(n) => TargetSpec::rows(n),
        Target::TextBytes(n) => TargetSpec {
            text_bytes: Some(Size(n)),
            ..Default::default()
        },
        Target::DiskBytes(n) => TargetSpec {
            disk_bytes: Some(Size(n)),
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_i_of_n_and_rejects_the_rest() {
        assert_eq!(Part::parse("0/4").unwrap(), Part { index: 0, count: 4 });
        assert_eq!(Part::parse("3/4").unwrap(), Part { index: 3, count: 4 });
        assert_eq!(Part::parse("0/1").unwrap(), Part { index: 0, count: 1 });
        for (bad, why) in [
            ("4/4", "i must be in 0..4"),
            ("0/0", "N must be at least 1"),
            ("1", "expected i/N"),
            ("a/4", "whole numbers"),
            ("-1/4", "whole numbers"),
            ("1/4/5", "whole numbers"),
        ] {
            let e = Part::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.starts_with(&format!("--part {bad}:")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn shares_sum_to_the_target_and_indices_partition() {
        for n in 1..=7u64 {
            for total in [n, 10, 11, 1000, 1001] {
                let sum: u64 = (0..n)
                    .map(|i| Part { index: i, count: n }.share(total))
                    .sum();
                assert_eq!(sum, total, "{total} in {n} parts");
            }
            for j in 0..50 {
                let owners = (0..n)
                    .filter(|&i| Part { index: i, count: n }.owns(j))
                    .count();
                assert_eq!(owners, 1);
            }
            let p = Part {
                index: n - 1,
                count: n,
            };
            assert!((0..20).all(|k| p.owns(p.sample_index(k))));
        }
        let p = Part::parse("2/4").unwrap();
        assert_eq!(p.target(Target::Rows(10)).unwrap(), Target::Rows(2));
        assert_eq!(
            p.target(Target::TextBytes(1 << 20)).unwrap(),
            Target::TextBytes(1 << 18)
        );
        assert!(p.target(Target::Rows(3)).is_err());
        assert_eq!(
            p.default_output(Path::new("shards/x")),
            PathBuf::from("shards/x-part-2-of-4")
        );
    }
}
