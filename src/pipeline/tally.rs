//! The run's counters, kept by the writer stage in index order so that they
//! are the same for any number of workers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::row::Row;

/// How many rejection examples the manifest keeps per reason.
const EXAMPLES_PER_REASON: usize = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectExample {
    pub index: u64,
    pub category: String,
    pub message: String,
    pub python_source: String,
}

/// The counters are plain data (owned names) so that a checkpoint can store
/// them and a resumed run go on counting from where the last cut left them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// Sample indices consumed: written + duplicates + rejected.
    pub generated: u64,
    pub written: u64,
    pub duplicates: u64,
    pub rejected: BTreeMap<String, u64>,
    pub rejected_examples: BTreeMap<String, Vec<RejectExample>>,
    pub rows_per_split: BTreeMap<String, u64>,
    pub rows_per_category: BTreeMap<String, u64>,
    pub text_bytes: u64,
    pub disk_bytes: u64,
    /// Mined rows (absent from a synthesized run's counters): written rows
    /// by license ("unknown" where none was found) and by repository.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows_per_license: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows_per_repo: BTreeMap<String, u64>,
    /// Sum of the Bloom filter's false-positive odds over the written rows:
    /// how many duplicates were probably new kernels. (Reported with the
    /// Bloom filter's figures, not among the counters; a checkpoint keeps
    /// its bits, see `Progress`.)
    #[serde(skip)]
    pub estimated_false_positives: f64,
    /// Samples since the last written row, to notice a run that can no
    /// longer make progress.
    #[serde(skip)]
    pub since_last_row: u64,
}

/// Adds one to `map[key]` without allocating the key once it is there.
fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_string(), 1);
        }
    }
}

impl Tally {
    pub fn row(&mut self, row: &Row, false_positive_odds: f64) {
        self.generated += 1;
        self.written += 1;
        self.since_last_row = 0;
        self.text_bytes += row.text_bytes();
        bump(&mut self.rows_per_split, row.split);
        bump(&mut self.rows_per_category, row.category);
        if let Some(p) = &row.provenance {
            bump(
                &mut self.rows_per_license,
                p.license.as_deref().unwrap_or("unknown"),
            );
            bump(
                &mut self.rows_per_repo,
                p.repo.as_deref().unwrap_or("unknown"),
            );
        }
        self.estimated_false_positives += false_positive_odds;
    }

    pub fn duplicate(&mut self) {
        self.generated += 1;
        self.since_last_row += 1;
        self.duplicates += 1;
    }

    pub fn rejected(&mut self, reason: &'static str, example: RejectExample) {
        self.generated += 1;
        self.since_last_row += 1;
        bump(&mut self.rejected, reason);
        let examples = self
            .rejected_examples
            .entry(reason.to_string())
            .or_default();
        if examples.len() < EXAMPLES_PER_REASON {
            examples.push(example);
        }
    }

    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }

    /// "lower_error 8, cuda_missing_grid_stride 2", most frequent first.
    pub fn rejected_summary(&self) -> String {
        let mut reasons: Vec<_> = self.rejected.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        reasons
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Why the run cannot go on, if it cannot: every sample so far was
    /// rejected, or no new row came for a long stretch (the synthesizer's
    /// space is exhausted at this dedup level).
    pub fn stalled(&self) -> Option<String> {
        const FIRST: u64 = 1_000;
        const STRETCH: u64 = 100_000;
        let why = if self.written == 0 && self.generated >= FIRST {
            format!("the first {FIRST} samples were all dropped")
        } else if self.since_last_row >= STRETCH {
            format!("no new row in the last {STRETCH} samples")
        } else {
            return None;
        };
        let example = self
            .rejected_examples
            .iter()
            .max_by_key(|(r, _)| self.rejected[r.as_str()])
            .and_then(|(r, ex)| {
                ex.first()
                    .map(|e| format!("; e.g. {r} at index {}: {}", e.index, e.message))
            })
            .unwrap_or_default();
        Some(format!(
            "{why} (duplicates {}, rejected {}: {}){example}",
            self.duplicates,
            self.rejected_total(),
            self.rejected_summary()
        ))
    }
}

/// 12345678 → "12,345,678".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in MiB with two decimals.
pub fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn stall_detection() {
        let mut t = Tally::default();
        let ex = |i| RejectExample {
            index: i,
            category: "math".into(),
            message: "boom".into(),
            python_source: String::new(),
        };
        for i in 0..999 {
            t.rejected("lower_error", ex(i));
        }
        assert_eq!(t.stalled(), None);
        t.rejected("lower_error", ex(999));
        let why = t.stalled().unwrap();
        assert!(
            why.contains("first 1000")
                && why.contains("lower_error 1000")
                && why.contains("index 0: boom"),
            "{why}"
        );
        assert_eq!(t.rejected_examples["lower_error"].len(), 3);
    }
}
