//! Token counts: how many tokens of a BPE tokenizer each text column takes,
//! the unit a training loader counts.
//!
//! Built in, with nothing downloaded at run time: `o200k_base` and
//! `cl100k_base`, OpenAI's ranks as the `tiktoken-rs` crate ships them,
//! turned into compact tables by build.rs (so a run does not parse them),
//! merged as tiktoken's byte-pair merge does. Or any Hugging Face
//! `tokenizer.json` on disk (the `tokenizers` crate).
//!
//! A count is what tiktoken's `encode_ordinary` (no special tokens) returns,
//! or `tokenizers`' `encode(text, add_special_tokens=False)`: the tests check
//! both against the Python packages.
//!
//! Speed. Generated IR is very repetitive line by line, so a tiktoken count
//! is the sum of the counts of *chunks* of the text, cut where the
//! pre-tokenizer is known to cut whatever comes next: lines
//! ([`line_chunks`]), and within a line words ([`Words`]), each
//! chunk's count kept in a per-worker table keyed by a 128-bit hash of the
//! chunk ([`HashedCounts`]), the text's ASCII digits all made
//! `0` first so that lines differing only in numbers share an entry (see
//! [`Counter::count_builtin`] for why the counts do not change). Only words
//! never seen before are pre-tokenized (their pieces' counts cached too) and
//! merged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, OnceLock};

use anyhow::{Context, Result};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::memory::HugePageTable;
use crate::simd::{AVX2, AVX512, SSE2, Simd};

/// `[tokens] tokenizer = ...`, as written in the config.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TokenizerSpec {
    /// No token counts: the `*_tokens` columns are null.
    None,
    /// OpenAI's o200k_base (GPT-4o and later), compiled in.
    #[default]
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5), compiled in.
    Cl100k,
    /// A Hugging Face `tokenizer.json`, relative to the current directory.
    HuggingFace(PathBuf),
}

impl TokenizerSpec {
    pub fn parse(text: &str) -> Result<TokenizerSpec, String> {
        Ok(match text {
            "none" => TokenizerSpec::None,
            "o200k_base" => TokenizerSpec::O200k,
            "cl100k_base" => TokenizerSpec::Cl100k,
            "" => {
                return Err(
                    "want \"o200k_base\", \"cl100k_base\", \"none\" or a path to a tokenizer.json"
                        .into(),
                );
            }
            path if path.ends_with(".json") => TokenizerSpec::HuggingFace(PathBuf::from(path)),
            other => {
                return Err(format!(
                    "unknown tokenizer \"{other}\" (want \"o200k_base\", \"cl100k_base\", \"none\" \
                     or a path to a Hugging Face tokenizer.json)"
                ));
            }
        })
    }

    /// The name as the config writes it, and as the manifest, the card and
    /// the shards' metadata record it.
    pub fn name(&self) -> String {
        match self {
            TokenizerSpec::None => "none".into(),
            TokenizerSpec::O200k => "o200k_base".into(),
            TokenizerSpec::Cl100k => "cl100k_base".into(),
            TokenizerSpec::HuggingFace(p) => p.display().to_string(),
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, TokenizerSpec::None)
    }
}

impl Serialize for TokenizerSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for TokenizerSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TokenizerSpec, D::Error> {
        let text = String::deserialize(d)?;
        TokenizerSpec::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Which of the two built-in pre-tokenizer patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    O200k,
    Cl100k,
}

/// tiktoken's cl100k_base pattern, as tiktoken (and tiktoken-rs) write it.
const CL100K_PAT: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// The ranks of a built-in encoding as build.rs writes them from
/// tiktoken-rs's embedded files: (rank u32 LE, length u8, bytes) records.
static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));
static CL100K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));
/// Their hash indexes, also written by build.rs (format there).
static O200K_INDEX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.index"));
static CL100K_INDEX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.index"));

/// The (rank, token bytes) records of a table, in rank order.
fn records(table: &'static [u8]) -> impl Iterator<Item = (tiktoken_rs::Rank, &'static [u8])> {
    let mut i = 0;
    std::iter::from_fn(move || {
        let head = table.get(i..i + 5)?;
        let rank = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let bytes = &table[i + 5..i + 5 + head[4] as usize];
        i += 5 + bytes.len();
        Some((rank, bytes))
    })
}

/// The ranks of a built-in encoding, and its pattern.
struct Ranks {
    builtin: Builtin,
    /// The compiled-in table of (rank, bytes) records.
    table: &'static [u8],
    /// Its compiled-in hash index: token bytes → record.
    index: &'static [u8],
    /// Every string of one to three ASCII digits is a single token, so a
    /// text's count does not change when its ASCII digits are all made `0`
    /// (see [`Counter::count_builtin`]).
    digits_are_tokens: bool,
    /// The pattern, compiled at its first use: only for chunks that are not
    /// ASCII (ASCII is pre-tokenized by [`ascii_piece`]).
    pattern: OnceLock<fancy_regex::Regex>,
}

impl Ranks {
    fn load(builtin: Builtin) -> Ranks {
        let (table, index) = match builtin {
            Builtin::O200k => (O200K_TABLE, O200K_INDEX),
            Builtin::Cl100k => (CL100K_TABLE, CL100K_INDEX),
        };
        let mut ranks = Ranks {
            builtin,
            table,
            index,
            digits_are_tokens: false,
            pattern: OnceLock::new(),
        };
        let mut digits = Vec::with_capacity(3);
        let digits_are_tokens = (0..1110u32).all(|k| {
            // k = 0..10 one digit, 10..110 two, 110..1110 three.
            let (n, width) = match k {
                0..10 => (k, 1),
                10..110 => (k - 10, 2),
                _ => (k - 110, 3),
            };
            digits.clear();
            digits.extend(format!("{n:0width$}").bytes());
            ranks.rank(digits.as_slice()).is_some()
        });
        ranks.digits_are_tokens = digits_are_tokens;
        ranks
    }

    fn get(builtin: Builtin) -> &'static Ranks {
        static O200K: LazyLock<Ranks> = LazyLock::new(|| Ranks::load(Builtin::O200k));
        static CL100K: LazyLock<Ranks> = LazyLock::new(|| Ranks::load(Builtin::Cl100k));
        match builtin {
            Builtin::O200k => &O200K,
            Builtin::Cl100k => &CL100K,
        }
    }

    fn pattern(&self) -> &fancy_regex::Regex {
        self.pattern.get_or_init(|| {
            let pattern = match self.builtin {
                Builtin::O200k => tiktoken_rs::O200K_BASE_PAT_STR,
                Builtin::Cl100k => CL100K_PAT,
            };
            // A constant pattern (the tests compile both).
            fancy_regex::Regex::new(pattern).expect("the built-in pattern compiles")
        })
    }

    fn rank(&self, bytes: &[u8]) -> Option<tiktoken_rs::Rank> {
        let slots = self.index.len() / 4;
        let slot = |k: usize| {
            u32::from_le_bytes(self.index[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize
        };
        let mut k = xxhash_rust::xxh3::xxh3_64(bytes) as usize & (slots - 1);
        loop {
            let at = slot(k).checked_sub(1)?;
            let len = self.table[at + 4] as usize;
            if len == bytes.len() && &self.table[at + 5..at + 5 + len] == bytes {
                let rank = self.table[at..at + 4].try_into().expect("4 bytes");
                return Some(u32::from_le_bytes(rank));
            }
            k = (k + 1) & (slots - 1);
        }
    }

    /// Tokens of one pre-tokenized piece: tiktoken's byte-pair merge.
    fn piece(&self, piece: &[u8]) -> u32 {
        if piece.len() <= 1 || self.rank(piece).is_some() {
            return 1;
        }
        if piece.len() < 128 {
            self.merge_short(piece)
        } else {
            self.merge_long(piece)
        }
    }

    /// tiktoken's merge, counting the parts: start from single bytes; while
    /// some two neighbouring parts join into a token, join the pair whose
    /// token has the lowest rank (the leftmost of equal ranks). Quadratic,
    /// for short pieces.
    fn merge_short(&self, piece: &[u8]) -> u32 {
        let rank_of = |a: usize, b: usize| self.rank(&piece[a..b]).unwrap_or(u32::MAX);
        // starts[k]: where part k begins (the last entry: the piece's end).
        let mut starts: Vec<usize> = (0..=piece.len()).collect();
        // pairs[k]: the rank of parts k and k + 1 joined.
        let mut pairs: Vec<u32> = (0..piece.len() - 1).map(|k| rank_of(k, k + 2)).collect();
        loop {
            let mut best = (u32::MAX, 0);
            for (k, &rank) in pairs.iter().enumerate() {
                if rank < best.0 {
                    best = (rank, k);
                }
            }
            let (rank, k) = best;
            if rank == u32::MAX {
                break;
            }
            starts.remove(k + 1);
            pairs.remove(k);
            if k < pairs.len() {
                pairs[k] = rank_of(starts[k], starts[k + 2]);
            }
            if k > 0 {
                pairs[k - 1] = rank_of(starts[k - 1], starts[k + 1]);
            }
        }
        (starts.len() - 1) as u32
    }

    /// The same merge with a heap of candidate pairs, for long pieces.
    fn merge_long(&self, piece: &[u8]) -> u32 {
        use std::cmp::Reverse;
        let n = piece.len();
        let rank_of = |a: usize, b: usize| self.rank(&piece[a..b]).unwrap_or(u32::MAX);
        // Parts by their start: where each ends, which part comes before
        // (usize::MAX: none), whether it is still a part.
        let mut end: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        // Candidates (rank, left part's start, right part's end): a candidate
        // is current while its left part lives and its right part ends there.
        let mut heap = std::collections::BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            let rank = rank_of(i, i + 2);
            if rank != u32::MAX {
                heap.push(Reverse((rank, i, i + 2)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((_, left, right_end))) = heap.pop() {
            let mid = end[left];
            if !alive[left] || mid >= n || end[mid] != right_end {
                continue;
            }
            alive[mid] = false;
            end[left] = right_end;
            parts -= 1;
            if right_end < n {
                prev[right_end] = left;
                let rank = rank_of(left, end[right_end]);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, left, end[right_end])));
                }
            }
            let before = prev[left];
            if before != usize::MAX {
                let rank = rank_of(before, right_end);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, before, right_end)));
                }
            }
        }
        parts as u32
    }
}

/// A tokenizer, loaded and shared by every worker.
#[derive(Clone)]
pub struct Tokenizer {
    spec: TokenizerSpec,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    None,
    Builtin(&'static Ranks),
    HuggingFace(Arc<tokenizers::Tokenizer>),
}

impl Tokenizer {
    /// Loads what `spec` names (the built-in ranks once per process; a
    /// tokenizer.json from disk, its errors the user's).
    pub fn load(spec: &TokenizerSpec) -> Result<Tokenizer> {
        let kind = match spec {
            TokenizerSpec::None => Kind::None,
            TokenizerSpec::O200k => Kind::Builtin(Ranks::get(Builtin::O200k)),
            TokenizerSpec::Cl100k => Kind::Builtin(Ranks::get(Builtin::Cl100k)),
            TokenizerSpec::HuggingFace(path) => Kind::HuggingFace(Arc::new(load_json(path)?)),
        };
        Ok(Tokenizer {
            spec: spec.clone(),
            kind,
        })
    }

    pub fn spec(&self) -> &TokenizerSpec {
        &self.spec
    }

    pub fn is_none(&self) -> bool {
        matches!(self.kind, Kind::None)
    }

    fn is_builtin(&self) -> bool {
        matches!(self.kind, Kind::Builtin(_))
    }

    /// A counter for one thread, with its own caches and tables (other
    /// threads' counters share the tables: [`Counter::share`]).
    pub fn counter(&self) -> Counter {
        // Tables only where they are read: a built-in encoding's counts.
        let bits = |b| if self.is_builtin() { b } else { 0 };
        Counter::with_tables(
            self.clone(),
            HashedCounts::new(bits(17)),
            HashedCounts::new(bits(15)),
        )
    }
}

fn load_json(path: &Path) -> Result<tokenizers::Tokenizer> {
    tokenizers::Tokenizer::from_file(path).map_err(|e| {
        crate::config::user_error(format!(
            "tokens.tokenizer: cannot load {}: {e}",
            path.display()
        ))
    })
}

/// Bytes of keys a counter's piece cache keeps before it starts over, so
/// that its memory stays bounded however long the run (~2 × this, with the
/// maps' own overhead).
const PIECE_CACHE_BYTES: usize = 1 << 20;

/// Text → token count, for chunks of texts seen before; cleared when its
/// keys pass `cap` bytes. Keys of at most 16 bytes (most words and pieces)
/// are kept inline, as [`ShortKey`]s: no allocation, no comparison of bytes.
struct Cache {
    short: FxHashMap<ShortKey, u32>,
    map: FxHashMap<Box<[u8]>, u32>,
    bytes: usize,
    cap: usize,
}

/// A text of at most 16 bytes as three integers that determine it: its
/// length and two (possibly overlapping) loads of its first and last bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ShortKey(u64, u64, u32);

impl ShortKey {
    #[inline(always)]
    fn of(key: &[u8]) -> Option<ShortKey> {
        let n = key.len();
        let word = |i: usize| u64::from_le_bytes(key[i..i + 8].try_into().expect("8 bytes"));
        let half = |i: usize| u32::from_le_bytes(key[i..i + 4].try_into().expect("4 bytes")) as u64;
        Some(match n {
            // Bytes 0..8 and n-8..n cover the text; with n they give it back.
            8..=16 => ShortKey(word(0), word(n - 8), n as u32),
            4..=7 => ShortKey(half(0), half(n - 4), n as u32),
            1..=3 => ShortKey(
                key[0] as u64 | (key[n / 2] as u64) << 8 | (key[n - 1] as u64) << 16,
                0,
                n as u32,
            ),
            0 => ShortKey(0, 0, 0),
            _ => return None,
        })
    }
}

impl Cache {
    fn new(cap: usize) -> Cache {
        Cache {
            short: FxHashMap::default(),
            map: FxHashMap::default(),
            bytes: 0,
            cap,
        }
    }

    #[inline(always)]
    fn get(&self, key: &[u8]) -> Option<u32> {
        match ShortKey::of(key) {
            Some(k) => self.short.get(&k).copied(),
            None => self.map.get(key).copied(),
        }
    }

    fn insert(&mut self, key: &[u8], count: u32) {
        if self.bytes > self.cap {
            self.short.clear();
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += key.len();
        match ShortKey::of(key) {
            Some(k) => {
                self.short.insert(k, count);
            }
            None => {
                self.map.insert(key.into(), count);
            }
        }
    }
}

/// Chunk → token count, by a 128-bit xxh3 hash of the chunk (lines and
/// words): a set-associative table of four slots a set, one 64-byte cache
/// line, so a lookup touches one cache line and never the chunk's bytes
/// (the byte-keyed map it replaces touched its control bytes, its bucket
/// and the key on the heap, three cold loads a chunk; most of the counter's
/// time went to them). A set that is full drops its oldest slot; the table
/// never grows.
///
/// A slot keeps 96 bits of the hash (64 + 32) and the set index at least 14
/// more, so two different chunks share an entry only if 110 hash bits
/// agree: with the ~200,000 distinct lines of the 200 MiB job, a chance of
/// about 2^-75.
///
/// The workers of a run share one table (a clone is the same table): a line
/// one worker has counted is known to all, and the table's huge pages are
/// zeroed once, not once a worker. Zeroing them was not cheap: a huge page
/// comes from memory the VM had handed back to its host (free page
/// reporting), and faulting one in took 3-8 ms, against ~0.15 ms for one the
/// process had just freed (BENCHMARKS.md, session 26). Lookups take no lock
/// (see [`CountSlot`]); inserts, one per line new to the table, take their
/// set's.
#[derive(Clone)]
struct HashedCounts {
    table: Arc<CountTable>,
}

struct CountTable {
    sets: HugePageTable<CountSet>,
    mask: usize,
    /// Insert locks, one per [`LOCK_STRIPES`] sets: two inserts into one set
    /// at once could otherwise leave a slot with one's check and the
    /// other's count.
    locks: Box<[std::sync::atomic::AtomicBool]>,
}

/// Insert locks of a [`CountTable`] (at most; one per set in a smaller one).
const LOCK_STRIPES: usize = 1024;

/// A chunk's set in [`HashedCounts`] and the 96 bits of its hash a slot keeps.
#[derive(Clone, Copy)]
struct ChunkKey {
    set: usize,
    check: u64,
    check2: u32,
}

#[derive(Default)]
#[repr(C, align(64))]
struct CountSet([CountSlot; 4]);

// SAFETY: a `CountSet` is eight `AtomicU64`s, for which all-zero bytes are 0.
unsafe impl bytemuck::Zeroable for CountSet {}

/// One entry: `check` (64 bits of the hash), and `rest`, the other 32 bits
/// (`check2`) over the count. `count == 0` marks an empty slot: a chunk is
/// never empty, so never 0 tokens.
///
/// Written under its set's lock as a sequence lock whose sequence is
/// `check`: 0 first, then `rest`, then the new `check`. A reader takes the
/// slot only if it reads the same `check` before and after `rest`, so it
/// never takes one write's check with another's rest: it sees the slot as
/// it was, as it is, or as empty (a miss, counted again). The one way to be
/// fooled, a slot rewritten twice (away from a check and back to it) while
/// a reader's three loads run, needs the `rest` of a third chunk to carry the
/// same 32 bits of `check2` as well.
#[derive(Default)]
struct CountSlot {
    check: std::sync::atomic::AtomicU64,
    rest: std::sync::atomic::AtomicU64,
}

impl CountSlot {
    #[inline(always)]
    fn read(&self, key: ChunkKey) -> Option<u32> {
        use std::sync::atomic::{Ordering, fence};
        let check = self.check.load(Ordering::Acquire);
        if check != key.check {
            return None;
        }
        let rest = self.rest.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let again = self.check.load(Ordering::Relaxed);
        let count = rest as u32;
        (again == check && (rest >> 32) as u32 == key.check2 && count != 0).then_some(count)
    }

    /// Only under the slot's set lock.
    fn write(&self, check: u64, rest: u64) {
        use std::sync::atomic::{Ordering, fence};
        self.check.store(0, Ordering::Relaxed);
        fence(Ordering::Release);
        self.rest.store(rest, Ordering::Relaxed);
        self.check.store(check, Ordering::Release);
    }
}

impl HashedCounts {
    /// A table of `2^bits` sets (64 bytes each).
    fn new(bits: u32) -> HashedCounts {
        let sets = 1usize << bits;
        HashedCounts {
            table: Arc::new(CountTable {
                sets: HugePageTable::zeroed(sets),
                mask: sets - 1,
                locks: (0..sets.min(LOCK_STRIPES))
                    .map(|_| Default::default())
                    .collect(),
            }),
        }
    }

    /// Faults the table in on `threads` threads at once (see
    /// [`HugePageTable::fault_in_on`]); nothing once it is shared.
    fn fault_in(&mut self, threads: usize) {
        if let Some(table) = Arc::get_mut(&mut self.table) {
            table.sets.fault_in_on(threads);
        }
    }

    /// The sum of the counts of `chunks`: from the table, or from `miss` for
    /// a chunk not in it (then kept). Each chunk's set is asked for while the
    /// chunk before it is looked up, so that the two loads overlap (one pass:
    /// no list of the chunks' keys to write and read back).
    fn sum<'t>(
        &self,
        mut chunks: impl Iterator<Item = &'t [u8]>,
        mut miss: impl FnMut(&'t [u8]) -> u32,
    ) -> u32 {
        let mut total = 0;
        let mut next = chunks.next().map(|chunk| self.ask(chunk));
        while let Some((chunk, key)) = next {
            next = chunks.next().map(|chunk| self.ask(chunk));
            total += match self.get(key) {
                Some(n) => n,
                None => {
                    let n = miss(chunk);
                    self.insert(key, n);
                    n
                }
            };
        }
        total
    }

    /// `chunk` with its key, its set already being loaded.
    #[inline(always)]
    fn ask<'t>(&self, chunk: &'t [u8]) -> (&'t [u8], ChunkKey) {
        let key = self.key(chunk);
        self.prefetch(key);
        (chunk, key)
    }

    #[inline(always)]
    fn key(&self, chunk: &[u8]) -> ChunkKey {
        let h = xxhash_rust::xxh3::xxh3_128(chunk);
        let (lo, hi) = (h as u64, (h >> 64) as u64);
        ChunkKey {
            set: (lo as usize) & self.table.mask,
            check: hi,
            check2: (lo >> 32) as u32,
        }
    }

    /// Starts loading the set that [`HashedCounts::get`] will read for `key`.
    #[inline(always)]
    fn prefetch(&self, key: ChunkKey) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch only hints the cache; `key.set` is in bounds.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(self.table.sets.as_ptr().add(key.set) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline(always)]
    fn get(&self, key: ChunkKey) -> Option<u32> {
        self.table.sets[key.set].0.iter().find_map(|s| s.read(key))
    }

    fn insert(&self, key: ChunkKey, count: u32) {
        use std::sync::atomic::Ordering;
        let table = &*self.table;
        let lock = &table.locks[key.set % table.locks.len()];
        let mut spins = 0u32;
        while lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // The holder may have been preempted (more threads than cores).
            spins += 1;
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let slots = &table.sets[key.set].0;
        // Another counter may have kept it since this one looked.
        if slots.iter().all(|s| s.read(key).is_none()) {
            for i in (1..slots.len()).rev() {
                let from = &slots[i - 1];
                slots[i].write(
                    from.check.load(Ordering::Relaxed),
                    from.rest.load(Ordering::Relaxed),
                );
            }
            slots[0].write(key.check, (key.check2 as u64) << 32 | count as u64);
        }
        lock.store(false, Ordering::Release);
    }
}

/// Line chunks' counts: a [`HashedCounts`] table, and the previous text's
/// lines, so that a text repeating them is counted by comparing bytes rather
/// than by hashing each line (a row's backward function begins with its
/// forward function's arguments and body; about a third of all lines are
/// such repeats).
///
/// A line whose hash key and length are those of a line `j` of the previous
/// text (found through [`TextUnits::resync`]) takes that line's count: the same
/// 110 hash bits as a table hit, and the length too. From there the
/// previous text's chunks after `j` are compared byte for byte with the text
/// that follows, and all the agreeing ones but the last are counted at once
/// by their running totals, without hashing nor even cutting them: a chunk
/// cut, right after a `\n`, depends only on the bytes up to the next
/// non-blank one, inside the next chunk, which agrees too; so the text has
/// the same cuts there.
struct LineCounts {
    table: HashedCounts,
    /// The text being counted: its chunks, and runs of chunks counted at once.
    current: TextUnits,
    previous: TextUnits,
}

/// A text's [`Unit`]s, and where to find its hashed lines by their key.
struct TextUnits {
    /// The text (canonical), [`TextUnits::len`] bytes of it: the previous text only.
    bytes: Vec<u8>,
    len: usize,
    units: Vec<Unit>,
    /// Slot `key.check % RESYNC_SLOTS`: 1 + the index of a hashed line's
    /// unit with that key (the last one), or 0; or a slot left by an older
    /// text, never cleared: [`TextUnits::line`] checks the unit's key.
    resync: Vec<u32>,
    /// Whether `resync` holds the lines (else the next text does not look
    /// for them: see [`Counter::count_unrepeated`]).
    indexed: bool,
}

/// One chunk of a text, or a run of chunks (then `key` is [`RUN_KEY`]).
#[derive(Clone, Copy)]
struct Unit {
    start: usize,
    len: usize,
    key: ChunkKey,
    /// Its tokens; 0 until known (a chunk is never 0 tokens).
    count: u32,
    /// The text's tokens up to its end.
    total: u32,
}

/// [`TextUnits::resync`]'s slots: more than the lines of most texts (two
/// lines in one slot only lose the first one's repeats).
const RESYNC_SLOTS: usize = 1024;

/// The key of a run's [`Unit`], which no line's key equals (a line's set is
/// below the table's size), so that no slot of `resync` finds a run.
const RUN_KEY: ChunkKey = ChunkKey {
    set: usize::MAX,
    check: 0,
    check2: 0,
};

impl TextUnits {
    /// The index of the unit that is a hashed line with `key` and `len` bytes.
    #[inline(always)]
    fn line(&self, key: ChunkKey, len: usize) -> Option<usize> {
        if !self.indexed {
            return None;
        }
        let j = (*self.resync.get(key.check as usize % RESYNC_SLOTS)? as usize).checked_sub(1)?;
        let u = self.units.get(j)?;
        (u.len == len
            && u.key.check == key.check
            && u.key.check2 == key.check2
            && u.key.set == key.set)
            .then_some(j)
    }

    /// The units after unit `j` that `rest` (the text right after a chunk
    /// equal to unit `j`) repeats, all but the last that agrees: how many
    /// bytes they cover and their tokens.
    fn repeated_after(&self, j: usize, rest: &[u8]) -> (usize, u32) {
        let (bytes, units) = (&self.bytes[..self.len], &self.units);
        let from = units[j].start + units[j].len;
        // Whether units `a..b` agree, compared as one span.
        let agree = |a: usize, b: usize| {
            let (start, end) = (units[a].start, units[b - 1].start + units[b - 1].len);
            rest.get(start - from..end - from) == Some(&bytes[start..end])
        };
        // `agreeing`: the first unit after `j` that does not agree. Runs are
        // usually tens of lines, so eight at a time, then one by one.
        let mut agreeing = j + 1;
        while agreeing + 8 <= units.len() && agree(agreeing, agreeing + 8) {
            agreeing += 8;
        }
        while agreeing < units.len() && agree(agreeing, agreeing + 1) {
            agreeing += 1;
        }
        if agreeing < j + 3 {
            return (0, 0);
        }
        let last = &units[agreeing - 2];
        (last.start + last.len - from, last.total - units[j].total)
    }
}

impl LineCounts {
    fn with_table(table: HashedCounts) -> LineCounts {
        let units = || TextUnits {
            bytes: Vec::new(),
            len: 0,
            units: Vec::new(),
            resync: vec![0; RESYNC_SLOTS],
            indexed: false,
        };
        LineCounts {
            table,
            current: units(),
            previous: units(),
        }
    }

    /// The sum of the counts of `text`'s `lines`: from the previous text's
    /// lines, from the table, or from `miss` for a line in neither (then kept
    /// in the table). Two passes: every line's set is asked for while the
    /// lines are hashed, and read after, so that the loads of the whole text
    /// overlap instead of stalling one by one. The text's units become the
    /// previous text's, its lines indexed for the next text if `index`.
    fn sum<'t>(
        &mut self,
        text: &'t [u8],
        mut lines: LineChunks<'t, '_>,
        index: bool,
        mut miss: impl FnMut(&'t [u8]) -> u32,
    ) -> u32 {
        let (current, previous) = (&mut self.current, &self.previous);
        let units = &mut current.units;
        current.indexed = index;
        units.clear();
        let base = text.as_ptr() as usize;
        while let Some(line) = lines.next() {
            let (start, len) = (line.as_ptr() as usize - base, line.len());
            let key = self.table.key(line);
            if index {
                current.resync[key.check as usize % RESYNC_SLOTS] = units.len() as u32 + 1;
            }
            let repeat = previous.line(key, len);
            if repeat.is_none() {
                self.table.prefetch(key);
            }
            units.push(Unit {
                start,
                len,
                key,
                count: repeat.map_or(0, |j| previous.units[j].count),
                total: 0,
            });
            let Some(j) = repeat else { continue };
            let (covered, tokens) = previous.repeated_after(j, &text[start + len..]);
            if covered > 0 {
                // A run, not a line: never in `resync`.
                units.push(Unit {
                    start: start + len,
                    len: covered,
                    key: RUN_KEY,
                    count: tokens,
                    total: 0,
                });
                lines.skip_to(start + len + covered);
            }
        }
        let mut total = 0;
        for u in units.iter_mut() {
            if u.count == 0 {
                u.count = match self.table.get(u.key) {
                    Some(n) => n,
                    None => {
                        let n = miss(&text[u.start..u.start + u.len]);
                        self.table.insert(u.key, n);
                        n
                    }
                };
            }
            total += u.count;
            u.total = total;
        }
        // The text's bytes are the caller's to keep (`Counter::count_builtin`).
        std::mem::swap(&mut self.current, &mut self.previous);
        total
    }
}

/// Counts tokens on one thread, remembering the counts of the chunks it has
/// seen.
pub struct Counter {
    tokenizer: Tokenizer,
    /// Where the text's `\n`s and its non-blank bytes are ([`TextBits`]).
    bits: TextBits,
    /// Line chunks' counts (2^17 sets, 8 MiB: the main job has ~194,000
    /// distinct lines, and at 2^16 sets the counter's share of the job's
    /// samples was 0.4-1.5 points higher, for 10 MB less RSS), and the
    /// previous text's lines.
    lines: LineCounts,
    /// Word chunks' counts, for lines not in `lines` (2^15 sets, 2 MiB: one
    /// huge page; at 1 MiB on small pages the job took ~1.2% more CPU).
    words: HashedCounts,
    pieces: Cache,
    /// The counts of the statements of the last Python source, for the IR
    /// comments that quote them.
    statements: Statements,
}

impl Counter {
    /// Faults the line and word tables in at once, on huge pages where the
    /// kernel gives them (`memory::HugePageTable`), on `threads` threads;
    /// until then they fault in as they are used.
    pub fn fault_in_tables(&mut self, threads: usize) {
        // The word table (one huge page) beside the line table's share of
        // the threads, rather than after it.
        let (lines, words) = (&mut self.lines.table, &mut self.words);
        std::thread::scope(|s| {
            s.spawn(|| words.fault_in(1));
            lines.fault_in(threads);
        });
    }

    /// A counter for another thread that shares this one's line and word
    /// tables (see [`HashedCounts`]), with caches of its own. Fault the
    /// tables in first: a shared table is no longer faulted in.
    pub fn share(&self) -> Counter {
        Counter::with_tables(
            self.tokenizer.clone(),
            self.lines.table.clone(),
            self.words.clone(),
        )
    }

    /// A counter with fresh caches over these line and word tables.
    fn with_tables(tokenizer: Tokenizer, lines: HashedCounts, words: HashedCounts) -> Counter {
        Counter {
            tokenizer,
            bits: TextBits::default(),
            lines: LineCounts::with_table(lines),
            words,
            pieces: Cache::new(PIECE_CACHE_BYTES),
            statements: Statements::default(),
        }
    }

    /// Tokens of `text`; `None` without a tokenizer.
    pub fn count(&mut self, text: &str) -> Option<u32> {
        self.count_indexing(text, Role::Ir { index: true })
    }

    /// [`Counter::count`] of a text whose lines the next text counted does
    /// not repeat (a row's Python source, its last IR text): they are not
    /// indexed for it. The same count either way; only faster where the
    /// caller knows.
    pub fn count_unrepeated(&mut self, text: &str) -> Option<u32> {
        self.count_indexing(text, Role::Ir { index: false })
    }

    /// [`Counter::count_unrepeated`] of a kernel's Python source, whose
    /// statements the IR texts counted after it quote in comments
    /// ([`Statements`]): their counts are kept for them.
    pub fn count_source(&mut self, text: &str) -> Option<u32> {
        self.statements.counts.clear();
        self.count_indexing(text, Role::Source)
    }

    fn count_indexing(&mut self, text: &str, role: Role) -> Option<u32> {
        match &self.tokenizer.kind {
            Kind::None => None,
            &Kind::Builtin(ranks) => Some(self.count_builtin(ranks, text, role)),
            Kind::HuggingFace(tok) => Some(
                tok.encode_fast(text, false)
                    .map(|e| e.len() as u32)
                    .unwrap_or(0),
            ),
        }
    }

    /// A built-in encoding's count: the sum of the counts of the text's
    /// lines ([`line_chunks`]), each from the cache or the sum of its words'
    /// ([`Words`]), each from the cache or the sum of its pieces'.
    ///
    /// Digits. The text is counted with every ASCII digit made `0` when
    /// every string of one to three ASCII digits is a single token (so for
    /// o200k_base and cl100k_base): generated code differs line to line
    /// mostly in its numbers (`var_12`, `<L 7>`), and such lines then share
    /// one cache entry. The count is the same: both patterns only ever
    /// look at a digit as `\p{N}` (no other branch matches a digit, and no
    /// branch names a particular one), so the pieces keep their boundaries;
    /// a piece holding a digit is a run of one to three digits (`\p{N}{1,3}`),
    /// one token either way; the other pieces do not change.
    fn count_builtin(&mut self, ranks: &Ranks, text: &str, role: Role) -> u32 {
        self.bits.scan(text.as_bytes(), ranks.digits_are_tokens);
        let bytes = if ranks.digits_are_tokens {
            &self.bits.canonical[..text.len()]
        } else {
            text.as_bytes()
        };
        // A line not seen before is the sum of its words (some of them a
        // statement's, see `Statements`), a word not seen before that of its
        // pieces.
        let mut words = WordCounts {
            table: &self.words,
            pieces: &mut self.pieces,
            ranks,
        };
        let statements = &mut self.statements;
        let total = self.lines.sum(
            bytes,
            LineChunks::new(bytes, &self.bits, ranks.builtin),
            role == Role::Ir { index: true },
            |line| match role {
                Role::Source => statements.count_source_line(&mut words, line),
                Role::Ir { .. } => statements.count_ir_line(&mut words, line),
            },
        );
        // Kept for the next text (the canonical buffer is swapped, not copied).
        let previous = &mut self.lines.previous;
        if ranks.digits_are_tokens {
            std::mem::swap(&mut self.bits.canonical, &mut previous.bytes);
        } else {
            previous.bytes.clear();
            previous.bytes.extend_from_slice(text.as_bytes());
        }
        previous.len = text.len();
        total
    }
}

/// What a counted text is to [`Statements`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A kernel's Python source: its statements' counts are kept.
    Source,
    /// An IR text, its comments looked up among the statements; its lines
    /// indexed for the next text if `index` (see [`LineCounts`]).
    Ir { index: bool },
}

/// The words' side of a counter, for the lines not in its line table.
struct WordCounts<'c> {
    table: &'c HashedCounts,
    pieces: &'c mut Cache,
    ranks: &'c Ranks,
}

impl WordCounts<'_> {
    /// The sum of the counts of `words`: from the table, or pre-tokenized
    /// and merged.
    fn sum<'t>(&mut self, words: impl Iterator<Item = &'t [u8]>) -> u32 {
        let (pieces, ranks) = (&mut *self.pieces, self.ranks);
        self.table
            .sum(words, |word| count_word(pieces, ranks, word))
    }

    /// The count of one word.
    fn one(&mut self, word: &[u8]) -> u32 {
        self.sum(std::iter::once(word))
    }

    /// The count of a run of spaces alone: one piece (`\s+(?!\S)` at the
    /// end, cl100k's `\s++$`).
    fn spaces(&mut self, spaces: &[u8]) -> u32 {
        if spaces.is_empty() {
            return 0;
        }
        piece_count(self.pieces, self.ranks, spaces)
    }
}

/// The counts of a kernel's Python statements, for the IR comments that
/// quote them. warp echoes each source line it lowers, stripped (`S`), as
/// `// S<pad>       <L n>` in the forward pass and `// adj: S<pad>  <L n>`
/// in the reverse one; such a line is new to the line table whenever the
/// statement is, and those comments were ~60% of the words of all the lines
/// the table missed. Here a missed comment line costs one hash of `S` and
/// two map lookups (the statement's count, and that of the text around it,
/// its [`Frame`], the same on many lines), not one hash and lookup per word.
///
/// Kept: the count of ` S` (one space, then `S`), by the 128-bit xxh3 hash
/// of `S`. Why the counts add up, by the word cuts of [`Words`] (a text's
/// count is the sum of its words', cut before each space that follows an
/// ASCII character that is not whitespace; a cut depends only on the two
/// bytes around it):
/// - a comment line `I// S<pad>...` or `I// adj: S<pad>...` whose `S` ends
///   with such a character has a cut at the space before `S` (after `/` or
///   `:`) and one at the first space of `<pad>`: its words are those of the
///   text before ` S`, those of ` S` alone, and those of the rest;
/// - a source line `I S\n` (`I` spaces, `S` not starting with one) has the
///   cuts of `S`, none at its first byte (not a space) nor at the `\n`: its
///   words are `I X`, the middle words `M` and ` Y\n` where ` S`'s are
///   ` X`, `M` and ` Y` (or the one word `I S\n` where ` S` is one word).
///
/// The counts of ` X` and ` Y` then follow from those of `I X` and ` Y\n`,
/// by the pre-tokenizer, or else are looked up:
/// - `I X` is `I'` (`I` but its last space) and then ` X`, where `I` is
///   not empty and `X` starts with an ASCII character that is not
///   whitespace: the whitespace branch `\s+(?!\S)` ends the run of spaces
///   before its last one (no branch before it matches at a space followed
///   by a space, nor takes a space after a space), so no piece spans that
///   point; `I'` alone is that one piece (`\s+(?!\S)` at the end,
///   cl100k's `\s++$`); and the patterns never look behind, so the pieces
///   after it are those of ` X` alone;
/// - ` Y\n` is ` Y` and then `\n`, one token, where `Y` ends with an ASCII
///   letter or digit: the piece that holds it (letters with an optional
///   contraction, one to three digits, or a cl100k contraction) takes no
///   `\n` and does not look past its end, and the `\n` alone is a piece
///   (`\s*[\r\n]+`, cl100k's `\s*[\r\n]`).
///
/// Two different statements share a count only if their 128-bit hashes
/// agree: with at most ~50 statements of a source against ~100 comments
/// looked up, over 2^17 rows (a 2 GiB job), a chance below 2^-98.
#[derive(Default)]
struct Statements {
    counts: FxHashMap<u128, u32>,
    /// The counts of the text around the quotes, by its [`Frame`]: ~600
    /// different ones in the 20 MiB job (indentations, paddings, line
    /// numbers' digits), kept across sources.
    frames: FxHashMap<Frame, u32>,
    /// ` X` of a statement at column 0, where the line has no space before it.
    spaced: Vec<u8>,
}

/// [`Statements`] kept without a source in between (a caller that never
/// calls [`Counter::count_source`]) before they start over.
const STATEMENTS_CAP: usize = 4096;

impl Statements {
    /// A missed line of a Python source: its count, and that of its
    /// statement kept if the line is `I S\n`.
    fn count_source_line(&mut self, words: &mut WordCounts, line: &[u8]) -> u32 {
        let indent = leading_spaces(line);
        let end = line.len() - 1;
        if line[end] != b'\n' || indent == end {
            return words.sum(Words::new(line));
        }
        // The counts of what the first word has before ` X` (the spaces of
        // `I` but one) and the last after ` Y` (the `\n`), where known.
        let head = (indent > 0 && is_ascii_non_space(line[indent]))
            .then(|| words.spaces(&line[..indent - 1]));
        let tail = line[end - 1].is_ascii_alphanumeric().then_some(1);
        let first_cut = Words::new(line).next().map_or(line.len(), <[u8]>::len);
        let (count, statement_count) = if first_cut == line.len() {
            let count = words.one(line);
            let statement = match (head, tail) {
                (Some(head), Some(tail)) => count - head - tail,
                _ => words.one(spaced(line, indent, end, &mut self.spaced)),
            };
            (count, statement)
        } else {
            // `first_cut` is a cut, so the search ends there at the latest.
            let last_cut = (first_cut..end)
                .rev()
                .find(|&p| Words::is_cut(line, p))
                .unwrap_or(first_cut);
            let middle = words.sum(Words::new(&line[first_cut..last_cut]));
            let (first, last) = (words.one(&line[..first_cut]), words.one(&line[last_cut..]));
            let statement_first = match head {
                Some(head) => first - head,
                None => words.one(spaced(line, indent, first_cut, &mut self.spaced)),
            };
            let statement_last = match tail {
                Some(tail) => last - tail,
                None => words.one(&line[last_cut..end]),
            };
            (
                first + middle + last,
                statement_first + middle + statement_last,
            )
        };
        self.keep(
            xxhash_rust::xxh3::xxh3_128(&line[indent..end]),
            statement_count,
        );
        count
    }

    /// A missed line of an IR text: a comment quoting a statement is the
    /// words around the quote and the statement's count (kept if new).
    fn count_ir_line(&mut self, words: &mut WordCounts, line: &[u8]) -> u32 {
        let Some(quote) = Quote::of(line) else {
            return words.sum(Words::new(line));
        };
        let quoted = quote.statement.clone();
        let key = xxhash_rust::xxh3::xxh3_128(&line[quoted.start + 1..quoted.end]);
        let statement_count = match self.counts.get(&key) {
            Some(&n) => n,
            None => {
                let n = words.sum(Words::new(&line[quoted]));
                self.keep(key, n);
                n
            }
        };
        let frame_count = match self.frames.get(&quote.frame) {
            Some(&n) => n,
            None => {
                let n = words.sum(quote.around(line));
                if self.frames.len() >= STATEMENTS_CAP {
                    self.frames.clear();
                }
                self.frames.insert(quote.frame, n);
                n
            }
        };
        frame_count + statement_count
    }

    fn keep(&mut self, key: u128, count: u32) {
        if self.counts.len() >= STATEMENTS_CAP {
            self.counts.clear();
        }
        self.counts.insert(key, count);
    }
}

/// ` ` and then `line[indent..to]`: the line from its last space of
/// indentation, or that in `buffer` for a line at column 0.
fn spaced<'a>(line: &'a [u8], indent: usize, to: usize, buffer: &'a mut Vec<u8>) -> &'a [u8] {
    if indent > 0 {
        return &line[indent - 1..to];
    }
    buffer.clear();
    buffer.push(b' ');
    buffer.extend_from_slice(&line[..to]);
    buffer
}

/// A line `I// S<pad><tail>` or `I// adj: S<pad><tail>` (`<tail>`: warp's
/// `<L n>` and the line's end) that quotes a statement `S` (see
/// [`Statements`]).
struct Quote {
    /// ` S`, a word cut at each end: `S` ends with an ASCII character that
    /// is not whitespace, and spaces follow it.
    statement: std::ops::Range<usize>,
    frame: Frame,
}

/// The text around ` S` of a [`Quote`], exactly: its indentation, `// ` or
/// `// adj: `, the padding's length and the tail.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Frame {
    indent: u32,
    adj: bool,
    pad: u32,
    tail: ShortKey,
}

impl Quote {
    fn of(line: &[u8]) -> Option<Quote> {
        let indent = leading_spaces(line);
        let rest = &line[indent..];
        let (start, adj) = if rest.starts_with(b"// adj: ") {
            (indent + 7, true)
        } else if rest.starts_with(b"// ") {
            (indent + 2, false)
        } else {
            return None;
        };
        // The tail: from the last `<`, short enough to be a `ShortKey`.
        let last16 = line.len().saturating_sub(16);
        let tail = last16 + memchr::memrchr(b'<', &line[last16..])?;
        let end = tail - trailing_spaces(&line[..tail]);
        if start + 1 >= end || end == tail || !is_ascii_non_space(line[end - 1]) {
            return None;
        }
        Some(Quote {
            statement: start..end,
            frame: Frame {
                indent: indent as u32,
                adj,
                pad: (tail - end) as u32,
                tail: ShortKey::of(&line[tail..]).expect("at most 16 bytes"),
            },
        })
    }

    /// The words of `line` around ` S`.
    fn around<'l>(&self, line: &'l [u8]) -> impl Iterator<Item = &'l [u8]> {
        Words::new(&line[..self.statement.start]).chain(Words::new(&line[self.statement.end..]))
    }
}

/// How many spaces `b` begins with, eight bytes at a time.
fn leading_spaces(b: &[u8]) -> usize {
    spaces_at::<false>(b)
}

/// How many spaces `b` ends with (a comment's padding is up to 80).
fn trailing_spaces(b: &[u8]) -> usize {
    spaces_at::<true>(b)
}

/// How many spaces `b` begins with (ends with, `FROM_END`), eight bytes at
/// a time: a chunk's first bytes are its little-endian word's least
/// significant, so the first byte that is not a space is the lowest (from
/// the end: the highest) nonzero byte of the chunk XOR eight spaces.
fn spaces_at<const FROM_END: bool>(b: &[u8]) -> usize {
    let len = b.len();
    let mut n = 0;
    while n + 8 <= len {
        let at = if FROM_END { len - n - 8 } else { n };
        let chunk: [u8; 8] = b[at..at + 8].try_into().expect("8 bytes");
        let others = u64::from_le_bytes(chunk) ^ u64::from_le_bytes([b' '; 8]);
        if others != 0 {
            let zeros = if FROM_END {
                others.leading_zeros()
            } else {
                others.trailing_zeros()
            };
            return n + zeros as usize / 8;
        }
        n += 8;
    }
    let space = |c: &&u8| **c == b' ';
    n + if FROM_END {
        b[..len - n].iter().rev().take_while(space).count()
    } else {
        b[n..].iter().take_while(space).count()
    }
}

/// Pre-tokenizes a word and merges its pieces (pieces seen before from
/// the cache).
fn count_word(pieces: &mut Cache, ranks: &Ranks, word: &[u8]) -> u32 {
    if word.is_ascii() {
        let mut n = 0;
        let mut i = 0;
        while i < word.len() {
            let end = ascii_piece(word, i, ranks.builtin);
            n += piece_count(pieces, ranks, &word[i..end]);
            i = end;
        }
        return n;
    }
    // Chunks are cut next to ASCII characters only: whole UTF-8.
    let Ok(word) = std::str::from_utf8(word) else {
        unreachable!("a chunk of a str cut at ASCII characters is UTF-8")
    };
    let mut n = 0;
    for piece in ranks.pattern().find_iter(word) {
        // The pattern matches every text (its last branch takes any
        // whitespace, the others the rest); a regex error (backtrack
        // limit) cannot happen on these patterns, which only look one
        // character ahead.
        let Ok(piece) = piece else {
            n += ranks.piece(word.as_bytes());
            break;
        };
        n += piece_count(pieces, ranks, piece.as_str().as_bytes());
    }
    n
}

#[inline]
fn piece_count(pieces: &mut Cache, ranks: &Ranks, bytes: &[u8]) -> u32 {
    if bytes.len() == 1 {
        return 1;
    }
    match pieces.get(bytes) {
        Some(c) => c,
        None => {
            let c = ranks.piece(bytes);
            pieces.insert(bytes, c);
            c
        }
    }
}

/// The end of the piece that starts at `i` of ASCII text `b`: what the
/// encoding's pattern matches there (leftmost-first, as tiktoken's regex),
/// for ASCII, where `\p{L}` is `[A-Za-z]`, `\p{Lu}` `[A-Z]`, `\p{Ll}`
/// `[a-z]`, `\p{N}` `[0-9]` and `\s` `[\t\n\x0b\x0c\r ]`. The tests check
/// it against the pattern itself on random ASCII texts.
fn ascii_piece(b: &[u8], i: usize, builtin: Builtin) -> usize {
    let at = |k: usize| b.get(k).copied();
    let is_space = |c: u8| matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
    let is_newline = |c: u8| c == b'\r' || c == b'\n';
    // `[^\r\n\p{L}\p{N}]`: the optional char before a word.
    let is_prefix = |c: u8| !c.is_ascii_alphanumeric() && !is_newline(c);
    // `[^\s\p{L}\p{N}]`: punctuation (and controls).
    let is_punct = |c: u8| !c.is_ascii_alphanumeric() && !is_space(c);
    let run = |from: usize, f: &dyn Fn(u8) -> bool| {
        let mut k = from;
        while k < b.len() && f(b[k]) {
            k += 1;
        }
        k
    };
    let c = b[i];
    // A contraction at `k`: its end.
    let contraction = |k: usize| -> Option<usize> {
        if at(k) != Some(b'\'') {
            return None;
        }
        let c1 = at(k + 1)?.to_ascii_lowercase();
        if matches!(c1, b's' | b't' | b'm' | b'd') {
            return Some(k + 2);
        }
        let c2 = at(k + 2)?.to_ascii_lowercase();
        matches!((c1, c2), (b'r', b'e') | (b'v', b'e') | (b'l', b'l')).then_some(k + 3)
    };
    match builtin {
        Builtin::O200k => {
            let j = i + usize::from(is_prefix(c));
            // [A-Z]*[a-z]+ and then [A-Z]+[a-z]*, each with a contraction.
            let upper = run(j, &|c| c.is_ascii_uppercase());
            let lower = run(upper, &|c| c.is_ascii_lowercase());
            if lower > upper || upper > j {
                return contraction(lower).unwrap_or(lower);
            }
        }
        Builtin::Cl100k => {
            if let Some(end) = contraction(i) {
                return end;
            }
            let j = i + usize::from(is_prefix(c));
            let letters = run(j, &|c| c.is_ascii_alphabetic());
            if letters > j {
                return letters;
            }
        }
    }
    if c.is_ascii_digit() {
        return run(i, &|c| c.is_ascii_digit()).min(i + 3);
    }
    // ` ?[^\s\p{L}\p{N}]+` and then `[\r\n]*` (o200k `[\r\n/]*`).
    let p = i + usize::from(c == b' ' && at(i + 1).is_some_and(is_punct));
    if at(p).is_some_and(is_punct) {
        let end = run(p, &is_punct);
        return match builtin {
            Builtin::O200k => run(end, &|c| is_newline(c) || c == b'/'),
            Builtin::Cl100k => run(end, &is_newline),
        };
    }
    // Whitespace: `c` is a space of some kind here.
    let ws = run(i, &is_space);
    let at_end = ws == b.len();
    if builtin == Builtin::Cl100k && at_end {
        return ws; // \s++$
    }
    // \s*[\r\n]+ (cl100k \s*[\r\n]): up to the run's last newline.
    if let Some(last) = b[i..ws].iter().rposition(|&c| is_newline(c)) {
        return i + last + 1;
    }
    // \s+(?!\S), then \s+ (cl100k \s).
    if at_end {
        ws
    } else if ws - i >= 2 {
        ws - 1
    } else {
        i + 1
    }
}

/// Splits a text into lines whose token counts sum to the text's.
///
/// tiktoken counts the pieces its pattern matches, left to right; a text
/// can be cut at a position `p` without changing them when (1) no piece
/// spans `p` and (2) which piece matches before `p` does not depend on what
/// follows `p` (the patterns never look behind, so pieces after `p` are then
/// those of `text[p..]` alone). Both hold when `text[p-1]` is `\n` and
/// `text[p..]` is some spaces or tabs and then an ASCII character that is
/// not whitespace (and not `/` right at `p`, which o200k's punctuation
/// branch `[\r\n/]*` would join to the newline before it):
/// - letters, digits and contractions never include `\n`, the punctuation
///   branch ends at the last `\r`/`\n` (or `/`) after it, so none spans `p`;
/// - a whitespace piece that holds a newline is matched by the newline
///   branch (`\s*[\r\n]+`, or cl100k's `\s++$` / `\s*[\r\n]`, which come
///   before the look-ahead branch `\s+(?!\S)`), and it ends at the last
///   newline of its whitespace run, which is `p-1` here (spaces and tabs
///   only up to the non-whitespace character); at the end of a chunk, the
///   `$` of cl100k's `\s++$` matches that same run.
///
/// The tests check the sum against whole-text counts on random texts built
/// from the characters these rules are about.
#[cfg(test)]
fn line_chunks(b: &[u8], builtin: Builtin) -> Vec<&[u8]> {
    let mut bits = TextBits::default();
    bits.scan(b, false);
    LineChunks::new(b, &bits, builtin).collect()
}

/// Where a text's `\n`s and its non-blank bytes (not a space or tab) are:
/// bit `k % 64` of word `k / 64` for byte `k`, none past the end; and the
/// text with its ASCII digits made `0` when that is asked for. All found in
/// one pass over the text, so that cutting it into lines reads bits, not
/// bytes.
#[derive(Default)]
struct TextBits {
    canonical: Vec<u8>,
    newlines: Vec<u64>,
    nonblank: Vec<u64>,
}

impl TextBits {
    fn scan(&mut self, b: &[u8], zero_digits: bool) {
        let words = b.len().div_ceil(64);
        self.newlines.resize(words, 0);
        self.nonblank.resize(words, 0);
        if zero_digits && self.canonical.len() < b.len() {
            // Grown (zeroed) only when a text is longer than any before.
            self.canonical.resize(b.len(), 0);
        }
        let full = b.len() / 64;
        let (newlines, nonblank) = (&mut self.newlines[..full], &mut self.nonblank[..full]);
        if zero_digits {
            let canonical = &mut self.canonical[..full * 64];
            blocks_zeroing_digits_by(crate::simd::level(), b, canonical, newlines, nonblank);
        } else {
            for (w, block) in b.chunks_exact(64).enumerate() {
                let (newline, blank) = block_masks(block.try_into().expect("64 bytes"));
                newlines[w] = newline;
                nonblank[w] = !blank;
            }
        }
        if full < words {
            // The last bytes as a whole block, padded with zeros (neither a
            // newline nor blank, nor a digit), by the same steps.
            let tail = &b[full * 64..];
            let mut block = [0u8; 64];
            block[..tail.len()].copy_from_slice(tail);
            let (newline, blank) = if zero_digits {
                let mut out = [0u8; 64];
                let masks = block_masks_zeroing_digits::<SSE2>(&block, &mut out);
                self.canonical[full * 64..b.len()].copy_from_slice(&out[..tail.len()]);
                masks
            } else {
                block_masks(&block)
            };
            self.newlines[full] = newline;
            // None past the end.
            self.nonblank[full] = !blank & ((1 << tail.len()) - 1);
        }
    }

    /// The first non-blank byte at or after `p`, if any.
    #[inline]
    fn nonblank_from(&self, p: usize) -> Option<usize> {
        let mut w = p / 64;
        let mut m = self.nonblank.get(w)? & (!0u64 << (p % 64));
        while m == 0 {
            w += 1;
            m = *self.nonblank.get(w)?;
        }
        Some(w * 64 + m.trailing_zeros() as usize)
    }
}

/// The `\n` mask and the blank (space or tab) mask of a 64-byte block.
#[inline]
fn block_masks(block: &[u8; 64]) -> (u64, u64) {
    let (mut newline, mut blank) = (0u64, 0u64);
    for (k, &c) in block.iter().enumerate() {
        newline |= u64::from(c == b'\n') << k;
        blank |= u64::from(c == b' ' || c == b'\t') << k;
    }
    (newline, blank)
}

/// [`TextBits::scan`] of the whole 64-byte blocks of `b`, with the digits
/// made `0`: each block's [`block_masks`] (the blank mask inverted) and the
/// block in `canonical`, by the [`Simd`] numbered `LEVEL` (AVX2 in half the
/// steps of SSE2, AVX-512BW in one), only through the instance compiled for
/// it ([`blocks_zeroing_digits_avx2`], [`blocks_zeroing_digits_avx512`]).
#[inline(always)]
fn blocks_zeroing_digits<const LEVEL: u8>(
    b: &[u8],
    canonical: &mut [u8],
    newlines: &mut [u64],
    nonblank: &mut [u64],
) {
    let blocks = b.chunks_exact(64).zip(canonical.chunks_exact_mut(64));
    for (w, (block, out)) in blocks.enumerate() {
        let (newline, blank) = block_masks_zeroing_digits::<LEVEL>(
            block.try_into().expect("64 bytes"),
            out.try_into().expect("64 bytes"),
        );
        newlines[w] = newline;
        nonblank[w] = !blank;
    }
}

/// [`blocks_zeroing_digits`] by the instance for `level`, which must not be
/// above what this CPU has ([`crate::simd::level`]).
fn blocks_zeroing_digits_by(
    level: Simd,
    b: &[u8],
    canonical: &mut [u8],
    newlines: &mut [u64],
    nonblank: &mut [u64],
) {
    assert!(
        level <= crate::simd::level(),
        "{level:?} is not on this CPU"
    );
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: the CPU has what each instance needs (checked above).
        Simd::Avx512 => unsafe { blocks_zeroing_digits_avx512(b, canonical, newlines, nonblank) },
        Simd::Avx2 => unsafe { blocks_zeroing_digits_avx2(b, canonical, newlines, nonblank) },
        Simd::Sse2 => blocks_zeroing_digits::<SSE2>(b, canonical, newlines, nonblank),
    }
    #[cfg(not(target_arch = "x86_64"))]
    blocks_zeroing_digits::<SSE2>(b, canonical, newlines, nonblank);
}

/// [`blocks_zeroing_digits`] by AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn blocks_zeroing_digits_avx2(
    b: &[u8],
    canonical: &mut [u8],
    newlines: &mut [u64],
    nonblank: &mut [u64],
) {
    blocks_zeroing_digits::<AVX2>(b, canonical, newlines, nonblank)
}

/// [`blocks_zeroing_digits`] by AVX-512BW: compares straight to bit masks
/// and a masked blend for the digits; the scan took ~16% of the counter's
/// time by AVX2.
///
/// # Safety
/// The CPU must have AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
unsafe fn blocks_zeroing_digits_avx512(
    b: &[u8],
    canonical: &mut [u8],
    newlines: &mut [u64],
    nonblank: &mut [u64],
) {
    blocks_zeroing_digits::<AVX512>(b, canonical, newlines, nonblank)
}

/// [`block_masks`], and the block with its ASCII digits made `0` in `out`,
/// by the [`Simd`] numbered `LEVEL`: only in the instance of a function
/// compiled for it (see [`blocks_zeroing_digits`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_masks_zeroing_digits<const LEVEL: u8>(block: &[u8; 64], out: &mut [u8; 64]) -> (u64, u64) {
    if LEVEL == AVX512 {
        use std::arch::x86_64::{
            __m512i, _mm512_cmpeq_epi8_mask, _mm512_cmple_epu8_mask, _mm512_loadu_si512,
            _mm512_mask_blend_epi8, _mm512_set1_epi8, _mm512_storeu_si512, _mm512_sub_epi8,
        };
        // SAFETY: one unaligned load and store of the two 64-byte blocks;
        // AVX-512BW only in `blocks_zeroing_digits_avx512`'s instance.
        unsafe {
            let v = _mm512_loadu_si512(block.as_ptr() as *const __m512i);
            let zero = _mm512_set1_epi8(b'0' as i8);
            // A digit: `v - '0'` is at most 9 (unsigned).
            let digit = _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, zero), _mm512_set1_epi8(9));
            let canonical = _mm512_mask_blend_epi8(digit, v, zero);
            _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, canonical);
            let newline = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\n' as i8));
            let blank = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b' ' as i8))
                | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\t' as i8));
            return (newline, blank);
        }
    }
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128,
        _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
        _mm_sub_epi8, _mm256_and_si256, _mm256_andnot_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
        _mm256_min_epu8, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
        _mm256_storeu_si256, _mm256_sub_epi8,
    };
    let (mut newline, mut blank) = (0u64, 0u64);
    // SAFETY: the unaligned loads and stores touch 16 or 32 bytes each
    // inside the two 64-byte blocks. SSE2 is part of every x86_64 target;
    // AVX2 is used only in `blocks_zeroing_digits_avx2`'s instance, which
    // runs only where the CPU has it.
    unsafe {
        if LEVEL == AVX2 {
            let (nl, space, tab, zero, nine) = (
                _mm256_set1_epi8(b'\n' as i8),
                _mm256_set1_epi8(b' ' as i8),
                _mm256_set1_epi8(b'\t' as i8),
                _mm256_set1_epi8(b'0' as i8),
                _mm256_set1_epi8(9),
            );
            for k in 0..2 {
                let v = _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i);
                // A digit: `v - '0'` is at most 9 (unsigned).
                let d = _mm256_sub_epi8(v, zero);
                let digit = _mm256_cmpeq_epi8(_mm256_min_epu8(d, nine), d);
                let canonical =
                    _mm256_or_si256(_mm256_andnot_si256(digit, v), _mm256_and_si256(digit, zero));
                _mm256_storeu_si256(out.as_mut_ptr().add(32 * k) as *mut __m256i, canonical);
                let n = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)) as u32 as u64;
                let s = _mm256_or_si256(_mm256_cmpeq_epi8(v, space), _mm256_cmpeq_epi8(v, tab));
                newline |= n << (32 * k);
                blank |= (_mm256_movemask_epi8(s) as u32 as u64) << (32 * k);
            }
        } else {
            let (nl, space, tab, zero, nine) = (
                _mm_set1_epi8(b'\n' as i8),
                _mm_set1_epi8(b' ' as i8),
                _mm_set1_epi8(b'\t' as i8),
                _mm_set1_epi8(b'0' as i8),
                _mm_set1_epi8(9),
            );
            for k in 0..4 {
                let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
                let d = _mm_sub_epi8(v, zero);
                let digit = _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d);
                let canonical =
                    _mm_or_si128(_mm_andnot_si128(digit, v), _mm_and_si128(digit, zero));
                _mm_storeu_si128(out.as_mut_ptr().add(16 * k) as *mut __m128i, canonical);
                let n = _mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) as u32 as u64;
                let s = _mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab));
                newline |= n << (16 * k);
                blank |= (_mm_movemask_epi8(s) as u32 as u64) << (16 * k);
            }
        }
    }
    (newline, blank)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn block_masks_zeroing_digits<const LEVEL: u8>(block: &[u8; 64], out: &mut [u8; 64]) -> (u64, u64) {
    for (to, &from) in out.iter_mut().zip(block) {
        *to = if from.is_ascii_digit() { b'0' } else { from };
    }
    block_masks(block)
}

/// The positions of the set bits of `bits` (bit `k % 64` of word `k / 64`
/// is position `k`), in order.
struct SetBits<'m> {
    bits: &'m [u64],
    /// The word being read, with the bits already passed cleared.
    word: usize,
    rest: u64,
}

impl<'m> SetBits<'m> {
    fn new(bits: &'m [u64]) -> SetBits<'m> {
        SetBits::from(bits, 0)
    }

    /// The set bits at `p` and after.
    fn from(bits: &'m [u64], p: usize) -> SetBits<'m> {
        SetBits {
            bits,
            word: p / 64,
            rest: bits.get(p / 64).map_or(0, |w| w & (!0u64 << (p % 64))),
        }
    }
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.rest == 0 {
            self.word += 1;
            self.rest = *self.bits.get(self.word)?;
        }
        let at = self.word * 64 + self.rest.trailing_zeros() as usize;
        self.rest &= self.rest - 1;
        Some(at)
    }
}

/// [`line_chunks`] of a text whose [`TextBits`] are known.
struct LineChunks<'t, 'm> {
    b: &'t [u8],
    bits: &'m TextBits,
    builtin: Builtin,
    start: usize,
    newlines: SetBits<'m>,
}

impl<'t, 'm> LineChunks<'t, 'm> {
    fn new(b: &'t [u8], bits: &'m TextBits, builtin: Builtin) -> LineChunks<'t, 'm> {
        LineChunks {
            b,
            bits,
            builtin,
            start: 0,
            newlines: SetBits::new(&bits.newlines),
        }
    }

    /// Goes on from `p`, where a chunk starts.
    fn skip_to(&mut self, p: usize) {
        self.start = p;
        self.newlines = SetBits::from(&self.bits.newlines, p);
    }

    /// [`cut_after_newline`], from the bits.
    #[inline]
    fn cut_at(&self, p: usize) -> bool {
        let Some(i) = self.bits.nonblank_from(p) else {
            return false;
        };
        let c = self.b[i];
        let slash = c == b'/' && i == p && self.builtin == Builtin::O200k;
        is_ascii_non_space(c) && !slash
    }
}

impl<'t> Iterator for LineChunks<'t, '_> {
    type Item = &'t [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'t [u8]> {
        let b = self.b;
        if self.start >= b.len() {
            return None;
        }
        while let Some(nl) = self.newlines.next() {
            let p = nl + 1;
            if self.cut_at(p) {
                let chunk = &b[self.start..p];
                self.start = p;
                return Some(chunk);
            }
        }
        let chunk = &b[self.start..];
        self.start = b.len();
        Some(chunk)
    }
}

/// Whether a chunk may end at `p`, right after a `\n` (see [`line_chunks`]);
/// the byte by byte rule that [`LineChunks::cut_at`] reads from bits.
#[cfg(test)]
fn cut_after_newline(b: &[u8], p: usize, builtin: Builtin) -> bool {
    let i = p + b[p.min(b.len())..]
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    let Some(&c) = b.get(i) else {
        return false;
    };
    let slash = c == b'/' && i == p && builtin == Builtin::O200k;
    is_ascii_non_space(c) && !slash
}

/// An ASCII character that is not whitespace (`\s` of the patterns, which
/// for ASCII is `[\t\n\x0b\x0c\r ]`).
#[inline]
fn is_ascii_non_space(c: u8) -> bool {
    c.is_ascii() && !matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// The words of a text (a line), whose token counts sum to the text's: it
/// is cut before each space `text[p]` that follows an ASCII character that
/// is not whitespace. Why the pieces do not change (see [`line_chunks`] for
/// the two conditions):
/// (1) no piece spans `p`: a piece holds a space only as the optional first
/// character of a word or punctuation piece, or within a whitespace piece,
/// which cannot start before `p` because `text[p-1]` is not whitespace;
/// (2) the pieces before `p` are those of `text[..p]`: the only look-ahead,
/// `\s+(?!\S)`, ends at a whitespace run, before `p-1`; cl100k's `\s++$`
/// needs whitespace at `p-1`; a contraction (`'s`) cannot end at `p` (a
/// space) nor at the end of `text[..p]`; every other branch stops at the
/// space as it stops at the end.
///
/// The cuts are found 16 bytes at a time as the words are asked for, and
/// kept in a register: no mask of the whole text is written and read back.
struct Words<'t> {
    b: &'t [u8],
    /// Where the next word starts.
    start: usize,
    /// The cuts at `at + k` for the set bits `k`, not yet passed.
    cuts: u32,
    at: usize,
    /// Where the cuts have not been looked for yet.
    unscanned: usize,
}

impl<'t> Words<'t> {
    fn new(b: &'t [u8]) -> Words<'t> {
        // No cut at 0: a cut needs a byte before it.
        Words {
            b,
            start: 0,
            cuts: 0,
            at: 0,
            unscanned: 1,
        }
    }

    /// The cuts in `b[p..p + 16]` (bit `k`: a cut at `p + k`), for
    /// `1 <= p` and `p + 16 <= b.len()`.
    #[inline(always)]
    fn cuts_at(b: &[u8], p: usize) -> u32 {
        assert!(p >= 1 && p + 16 <= b.len());
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8,
                _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
            };
            // SAFETY: SSE2 is part of every x86_64 target; the loads read
            // `b[p-1..p+15]` and `b[p..p+16]`, inside `b` (just asserted).
            unsafe {
                let v = _mm_loadu_si128(b.as_ptr().add(p) as *const __m128i);
                let prev = _mm_loadu_si128(b.as_ptr().add(p - 1) as *const __m128i);
                let space = _mm_set1_epi8(b' ' as i8);
                // `prev` whitespace: a space or `\t`..`\r` (9..13).
                let ws = _mm_or_si128(
                    _mm_cmpeq_epi8(prev, space),
                    _mm_and_si128(
                        _mm_cmpgt_epi8(prev, _mm_set1_epi8(8)),
                        _mm_cmpgt_epi8(_mm_set1_epi8(14), prev),
                    ),
                );
                // ASCII: below 0x80, i.e. not negative as a signed byte.
                let ascii = _mm_cmpgt_epi8(prev, _mm_set1_epi8(-1));
                let cut = _mm_and_si128(_mm_cmpeq_epi8(v, space), _mm_andnot_si128(ws, ascii));
                _mm_movemask_epi8(cut) as u32
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        (0..16).fold(0, |m, k| m | (Words::is_cut(b, p + k) as u32) << k)
    }

    /// Whether the text is cut before `b[p]`, `p >= 1`: byte by byte.
    #[inline]
    fn is_cut(b: &[u8], p: usize) -> bool {
        b[p] == b' ' && is_ascii_non_space(b[p - 1])
    }
}

impl<'t> Iterator for Words<'t> {
    type Item = &'t [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'t [u8]> {
        let b = self.b;
        if self.start >= b.len() {
            return None;
        }
        while self.cuts == 0 {
            let p = self.unscanned;
            if p >= b.len() {
                let word = &b[self.start..];
                self.start = b.len();
                return Some(word);
            }
            self.cuts = if p + 16 <= b.len() {
                Words::cuts_at(b, p)
            } else if b.len() >= 17 {
                // The last 16 bytes, without the cuts already passed.
                let from = b.len() - 16;
                Words::cuts_at(b, from) >> (p - from)
            } else {
                (p..b.len()).fold(0, |m, k| m | (Words::is_cut(b, k) as u32) << (k - p))
            };
            self.at = p;
            self.unscanned = (p + 16).min(b.len());
        }
        let end = self.at + self.cuts.trailing_zeros() as usize;
        self.cuts &= self.cuts - 1;
        let word = &b[self.start..end];
        self.start = end;
        Some(word)
    }
}

/// The token counts of one row: per text column (None when the column is
/// null or there is no tokenizer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    pub python: Option<u32>,
    /// cpu_forward, cpu_backward, cuda_forward, cuda_backward, cpu_module, cuda_module.
    pub ir: [Option<u32>; 6],
}

impl TokenCounts {
    /// python_source plus every IR column the row fills: None without counts.
    pub fn pair(&self) -> Option<u64> {
        let python = self.python?;
        Some(python as u64 + self.ir.iter().flatten().map(|&n| n as u64).sum::<u64>())
    }
}

/// Writes a built-in encoding's ranks in tiktoken's file format (one
/// `base64(bytes) rank` line per token), for the exactness tests: tiktoken
/// (Python) builds its reference encoder from them.
pub fn write_ranks(name: &str, out: &Path) -> Result<()> {
    use std::io::Write;
    let builtin = match name {
        "o200k_base" => Builtin::O200k,
        "cl100k_base" => Builtin::Cl100k,
        _ => {
            return Err(crate::config::user_error(format!(
                "unknown built-in encoding \"{name}\" (o200k_base, cl100k_base)"
            )));
        }
    };
    let ranks = Ranks::get(builtin);
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?,
    );
    for (rank, bytes) in records(ranks.table) {
        writeln!(f, "{} {rank}", base64_encode(bytes))?;
    }
    f.flush()?;
    Ok(())
}

fn base64_encode(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (c.get(1).copied().unwrap_or(0) as u32) << 8
            | c.get(2).copied().unwrap_or(0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(ABC[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tokenizer of `ranks` (its spec's name is not what counts).
    fn builtin_tokenizer(ranks: &'static Ranks) -> Tokenizer {
        Tokenizer {
            spec: TokenizerSpec::O200k,
            kind: Kind::Builtin(ranks),
        }
    }

    /// The eight-at-a-time space counts agree with a byte-by-byte count, at
    /// every length and position of the first other byte, from either end.
    #[test]
    fn space_runs_are_counted_from_either_end() {
        for len in 0..40 {
            for other in 0..=len {
                let mut b = vec![b' '; len];
                if other < len {
                    b[other] = b'x';
                }
                let leading = b.iter().take_while(|&&c| c == b' ').count();
                let trailing = b.iter().rev().take_while(|&&c| c == b' ').count();
                assert_eq!(leading_spaces(&b), leading, "{len} {other}");
                assert_eq!(trailing_spaces(&b), trailing, "{len} {other}");
            }
        }
    }

    /// Tokens of the whole text, the way tiktoken counts: pattern over the
    /// whole text, merge of each piece, no caches.
    fn reference(ranks: &Ranks, text: &str) -> u32 {
        ranks
            .pattern()
            .find_iter(text)
            .map(|m| ranks.piece(m.unwrap().as_str().as_bytes()))
            .sum()
    }

    #[test]
    fn ascii_pieces_are_the_patterns_pieces() {
        let alphabet = [
            "\n", "\n", "\r", " ", " ", "\t", "\x0b", "\x0c", "\x1c", "\x00", "\x7f", "/", ";",
            "(", ".", "'", "'s", "'S", "'ll", "'Re", "'x", "a", "ab", "A", "AB", "Ab", "aB", "_",
            "1", "12", "1234", "::", "-",
        ];
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            for _ in 0..20000 {
                let len = 1 + next() % 24;
                let text: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let want: Vec<&str> = ranks
                    .pattern()
                    .find_iter(&text)
                    .map(|m| m.unwrap().as_str())
                    .collect();
                let b = text.as_bytes();
                let mut got = Vec::new();
                let mut i = 0;
                while i < b.len() {
                    let end = ascii_piece(b, i, builtin);
                    got.push(&text[i..end]);
                    i = end;
                }
                assert_eq!(got, want, "{builtin:?} {text:?}");
            }
        }
    }

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"foob"), "Zm9vYg==");
        assert_eq!(base64_encode(&[0xff, 0xfe]), "//4=");
    }

    #[test]
    fn specs_parse_and_print_back() {
        for name in ["none", "o200k_base", "cl100k_base", "tok/tokenizer.json"] {
            assert_eq!(TokenizerSpec::parse(name).unwrap().name(), name);
        }
        assert!(
            TokenizerSpec::parse("gpt2")
                .unwrap_err()
                .contains("unknown tokenizer")
        );
        assert!(TokenizerSpec::parse("").is_err());
    }

    /// A small xorshift generator for the random texts.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    fn reference_bpe(builtin: Builtin) -> tiktoken_rs::CoreBPE {
        match builtin {
            Builtin::O200k => tiktoken_rs::o200k_base().unwrap(),
            Builtin::Cl100k => tiktoken_rs::cl100k_base().unwrap(),
        }
    }

    #[test]
    fn compiled_in_tables_are_tiktoken_rs_ranks() {
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let bpe = reference_bpe(builtin);
            let mut n = 0;
            for (rank, bytes) in records(ranks.table) {
                assert_eq!(
                    bpe.decode_bytes(&[rank]).unwrap(),
                    bytes,
                    "{builtin:?} {rank}"
                );
                assert_eq!(ranks.rank(bytes), Some(rank));
                n += 1;
            }
            let filled = ranks.index.chunks(4).filter(|s| s != &[0, 0, 0, 0]).count();
            assert_eq!(filled, n);
            assert!(n > 100_000, "{builtin:?}: {n} ranks");
            // Every byte is a token (piece_count counts one byte as one).
            assert!((0..=255u8).all(|b| ranks.rank(&[b]).is_some()));
            assert!(ranks.digits_are_tokens, "{builtin:?}");
            // Both patterns compile.
            assert!(ranks.pattern().is_match("x").unwrap());
        }
    }

    #[test]
    fn merges_equal_tiktoken_rs_merges() {
        // Pieces tiktoken would merge: runs of letters, digits, spaces,
        // punctuation and bytes of UTF-8, short and long.
        let alphabet: [&[u8]; 14] = [
            b"a",
            b"e",
            b"in",
            b"er",
            b"th",
            b"_",
            b"var",
            b" ",
            b"0",
            b"=",
            b"\xc3\xa9",
            b"\xe2\x80",
            b"x",
            b"Q",
        ];
        let mut next = xorshift(0x853c49e6748fea9b);
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let map: FxHashMap<Vec<u8>, tiktoken_rs::Rank> =
                records(ranks.table).map(|(v, k)| (k.to_vec(), v)).collect();
            for round in 0..3000 {
                let parts = 1 + next() % if round % 10 == 0 { 200 } else { 20 };
                let piece: Vec<u8> = (0..parts)
                    .flat_map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .copied()
                    .collect();
                if piece.len() < 2 {
                    continue;
                }
                let want = tiktoken_rs::byte_pair_split(&piece, &map).len() as u32;
                assert_eq!(ranks.merge_short(&piece), want, "{builtin:?} {piece:?}");
                assert_eq!(ranks.merge_long(&piece), want, "{builtin:?} {piece:?}");
            }
        }
    }

    #[test]
    fn counts_equal_tiktoken_rs_counts() {
        // tiktoken-rs's own encode_ordinary (its pattern, its merge) on
        // random code-like texts: digits, spaces, lines, comments, UTF-8.
        let alphabet = [
            "\n",
            "\n    ",
            "\n        ",
            " ",
            " ",
            "  ",
            "    ",
            "\t",
            "var_",
            "adj_",
            "12",
            "7",
            "2048",
            "0.5f",
            "wp::",
            "add(",
            ", ",
            ");",
            "// ",
            "<L 12>",
            "é",
            "日本",
            "\u{a0}",
            "'s",
            "x",
            "Y",
            "/",
            "*",
            "=",
            "{",
            "}",
            "\r\n",
        ];
        let mut next = xorshift(0x2545f4914f6cdd1d);
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let bpe = reference_bpe(builtin);
            let tok = builtin_tokenizer(ranks);
            let mut counter = tok.counter();
            for _ in 0..3000 {
                let len = 1 + next() % 80;
                let text: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let want = bpe.encode_ordinary(&text).len() as u32;
                assert_eq!(counter.count(&text), Some(want), "{builtin:?} {text:?}");
            }
        }
    }

    #[test]
    fn short_keys_tell_texts_apart() {
        // Every text of up to 16 bytes over a small alphabet (to length 6),
        // and random ones, map to distinct keys.
        let mut seen = std::collections::HashMap::new();
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=6 {
            let prev: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == len - 1)
                .cloned()
                .collect();
            for t in prev {
                for c in [0u8, b'a', b' '] {
                    let mut t = t.clone();
                    t.push(c);
                    texts.push(t);
                }
            }
        }
        let mut next = xorshift(0x1234_5678_9abc_def1);
        for _ in 0..50_000 {
            let len = (next() % 17) as usize;
            texts.push(
                (0..len)
                    .map(|_| [0u8, b'a', b' ', 0xff][(next() % 4) as usize])
                    .collect(),
            );
        }
        for t in texts {
            let k = ShortKey::of(&t).expect("at most 16 bytes");
            if let Some(other) = seen.insert(k, t.clone()) {
                assert_eq!(other, t, "two texts, one key");
            }
        }
        assert_eq!(ShortKey::of(&[b'a'; 17]), None);
    }

    #[test]
    fn bit_scans_equal_byte_scans() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut bits = TextBits::default();
        for _ in 0..20_000 {
            let len = (next() % 150) as usize;
            // Mostly spaces and newlines, and bytes next to them in value.
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    [
                        b' ', b' ', b'\n', b'\t', 0x0b, 0x8a, 0xa0, b'/', b'a', 0, 0x0d, 0x0e,
                        0x08, 0x7f, b'0', b'9', b'5', b':', 0xb0, 0xb9,
                    ][(next() % 20) as usize]
                })
                .collect();
            // The masks without and with the digits made `0` (the same).
            bits.scan(&b, false);
            let plain = (bits.newlines.clone(), bits.nonblank.clone());
            bits.scan(&b, true);
            assert_eq!((bits.newlines.clone(), bits.nonblank.clone()), plain);
            let zeroed: Vec<u8> = b
                .iter()
                .map(|&c| if c.is_ascii_digit() { b'0' } else { c })
                .collect();
            assert_eq!(bits.canonical[..len], zeroed[..]);
            // Every level's steps as the ones `scan` took (the best this CPU has).
            let full = len / 64;
            for level in [Simd::Sse2, Simd::Avx2, Simd::Avx512] {
                if level > crate::simd::level() {
                    continue;
                }
                let mut got = (vec![0; full * 64], vec![0; full], vec![0; full]);
                blocks_zeroing_digits_by(level, &b, &mut got.0, &mut got.1, &mut got.2);
                assert_eq!(got.0, bits.canonical[..full * 64], "{level:?}");
                assert_eq!(
                    (&got.1[..], &got.2[..]),
                    (&bits.newlines[..full], &bits.nonblank[..full]),
                    "{level:?}"
                );
            }
            assert_eq!(bits.newlines.len(), len.div_ceil(64));
            for (k, &c) in b.iter().enumerate() {
                assert_eq!(
                    bits.newlines[k / 64] >> (k % 64) & 1 == 1,
                    c == b'\n',
                    "{b:?} at {k}"
                );
            }
            for p in 0..=len {
                let want = b[p..]
                    .iter()
                    .position(|&c| c != b' ' && c != b'\t')
                    .map(|i| p + i);
                assert_eq!(bits.nonblank_from(p), want, "{b:?} at {p}");
            }
            // Words: cut before a space after an ASCII non-space, nowhere else.
            let words: Vec<&[u8]> = Words::new(&b).collect();
            assert_eq!(words.concat(), b);
            let cuts: Vec<usize> = words
                .iter()
                .skip(1)
                .map(|w| w.as_ptr() as usize - b.as_ptr() as usize)
                .collect();
            let want: Vec<usize> = (1..len)
                .filter(|&p| b[p] == b' ' && is_ascii_non_space(b[p - 1]))
                .collect();
            assert_eq!(cuts, want, "{b:?}");
            // Chunks end after a newline only, and cover the text.
            for builtin in [Builtin::O200k, Builtin::Cl100k] {
                let lines = line_chunks(&b, builtin);
                assert_eq!(lines.concat(), b);
                let mut at = 0;
                for (n, line) in lines.iter().enumerate() {
                    // No cut skipped inside a chunk, and each chunk but the
                    // last ends at a cut.
                    for (k, &c) in line[..line.len() - 1].iter().enumerate() {
                        assert!(c != b'\n' || !cut_after_newline(&b, at + k + 1, builtin));
                    }
                    at += line.len();
                    if n + 1 < lines.len() {
                        assert_eq!(line.last(), Some(&b'\n'));
                        assert!(cut_after_newline(&b, at, builtin));
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_counts_equal_whole_text_counts() {
        // Random texts over the characters the cut rule is about: newlines,
        // spaces, tabs, `\r`, `/`, punctuation, letters, digits, a non-ASCII
        // letter and space, quotes of contractions.
        let alphabet = [
            "\n", "\n", "\n", " ", " ", "  ", "\t", "\r", "/", "//", ";", "{", "}", "(", "a",
            "var", "Var", "_", "1", "123", "é", "\u{a0}", "\u{2028}", "'s", "'ll", "wp::", "\x0b",
            "\x0c", "\x1c", "7", "1234", "'", "x'", ")", ".", "\u{301}",
        ];
        let mut state = 0x2545f4914f6cdd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let tok = builtin_tokenizer(ranks);
            let mut counter = tok.counter();
            for _ in 0..4000 {
                let len = 1 + next() % 40;
                let text: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let want = reference(ranks, &text);
                assert_eq!(
                    counter.count(&text),
                    Some(want),
                    "{builtin:?} {text:?} lines {:?}",
                    line_chunks(text.as_bytes(), builtin)
                );
                // And the chunks cover the text exactly.
                let lines: Vec<&[u8]> = line_chunks(text.as_bytes(), builtin);
                assert_eq!(lines.concat(), text.as_bytes());
                for line in lines {
                    assert_eq!(Words::new(line).collect::<Vec<_>>().concat(), line);
                }
            }
        }
    }

    #[test]
    fn texts_repeating_the_previous_ones_lines_count_alike() {
        // Each text is the previous one's lines, some dropped, some changed,
        // some new ones between them: the runs a text shares with the one
        // before are counted from it, and must agree with the reference (and
        // so must a text after one counted by `count_unrepeated`).
        let pieces = [
            " ", "  ", "\t", "\r", "/", "//", ";", "{", "}", "(", "a", "var", "_", "1", "123",
            "\u{e9}", "\u{a0}", "'s", "wp::", "\x0b", "x'", ")", ".",
        ];
        let mut next = xorshift(0x5851_f42d_4c95_7f2d);
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let tok = builtin_tokenizer(ranks);
            let mut counter = tok.counter();
            let random_line = |next: &mut dyn FnMut() -> u64| -> String {
                let indent = ["", "  ", "    ", "\t", " /"][(next() % 5) as usize];
                let len = next() % 6;
                let body: String = (0..len)
                    .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                    .collect();
                format!("{indent}{body}\n")
            };
            let mut lines: Vec<String> = (0..30).map(|_| random_line(&mut next)).collect();
            for _ in 0..3000 {
                let text = lines.concat();
                // Some texts not indexed for the next: the same counts.
                let count = if next().is_multiple_of(4) {
                    counter.count_unrepeated(&text)
                } else {
                    counter.count(&text)
                };
                assert_eq!(count, Some(reference(ranks, &text)), "{builtin:?} {text:?}");
                let mut changed = Vec::new();
                for line in &lines {
                    match next() % 16 {
                        0 => {}
                        1 => changed.push(random_line(&mut next)),
                        2 => {
                            changed.push(random_line(&mut next));
                            changed.push(line.clone());
                        }
                        _ => changed.push(line.clone()),
                    }
                }
                if changed.is_empty() || next().is_multiple_of(50) {
                    changed = (0..30).map(|_| random_line(&mut next)).collect();
                }
                lines = changed;
            }
        }
    }

    #[test]
    fn a_shared_table_never_gives_another_chunks_count() {
        // Four threads insert into and read from one table of four sets,
        // the same keys at once, so that slots are rewritten under readers
        // all the time: a count read back must be the one of its key.
        let table = HashedCounts::new(2);
        let count_of = |k: u64| (k % 1000) as u32 + 1;
        let key_of = |k: u64| ChunkKey {
            set: (k % 4) as usize,
            check: k.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            check2: (k >> 3) as u32 ^ 0x5bd1_e995,
        };
        let found = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (table, found) = (table.clone(), &found);
                s.spawn(move || {
                    let mut next = xorshift(0x9E37_79B9 + t);
                    for _ in 0..200_000 {
                        let k = next() % 40;
                        match table.get(key_of(k)) {
                            Some(n) => {
                                assert_eq!(n, count_of(k), "key {k}");
                                found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            None => table.insert(key_of(k), count_of(k)),
                        }
                    }
                });
            }
        });
        assert!(
            found.into_inner() > 100_000,
            "the table keeps what it is given"
        );
    }

    #[test]
    fn counters_sharing_tables_count_exactly_on_threads() {
        // Counters sharing small tables (so that lines and words are evicted
        // and inserted again all the time) count texts of shared lines on
        // four threads at once; every count must be the reference's.
        let pieces = [
            " ", "  ", "\t", "/", "//", ";", "{", "}", "(", "a", "var", "_", "1", "123", "\u{e9}",
            "'s", "wp::", "x'", ")", ".",
        ];
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let lines: Vec<String> = (0..200)
            .map(|_| {
                let body: String = (0..next() % 8)
                    .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                    .collect();
                format!("{}{body}\n", ["", "    ", "\t"][(next() % 3) as usize])
            })
            .collect();
        let texts: Vec<String> = (0..300)
            .map(|_| {
                (0..1 + next() % 12)
                    .map(|_| lines[(next() % 200) as usize].as_str())
                    .collect()
            })
            .collect();
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let tok = builtin_tokenizer(ranks);
            let want: Vec<u32> = texts.iter().map(|t| reference(ranks, t)).collect();
            let mut first = tok.counter();
            first.lines = LineCounts::with_table(HashedCounts::new(3));
            first.words = HashedCounts::new(2);
            std::thread::scope(|s| {
                for t in 0..4u64 {
                    let (mut counter, texts, want) = (first.share(), &texts, &want);
                    s.spawn(move || {
                        let mut next = xorshift(0x5851_f42d + t);
                        for _ in 0..3000 {
                            let i = (next() % texts.len() as u64) as usize;
                            assert_eq!(counter.count(&texts[i]), Some(want[i]), "{:?}", texts[i]);
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn generated_code_counts_equal_whole_text_counts() {
        let text = "static CUDA_CALLABLE void k_cuda_kernel_forward(\n    wp::launch_bounds_t dim,\n    wp::array_t<wp::float32> var_a)\n{\n    //---------\n    // forward\n    // def k(a: wp.array(dtype=float)):  <L 4>\n    var_0 = builtin_tid1d();\n\n\n        /// x\n/ y\n}\n";
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let tok = builtin_tokenizer(ranks);
            let mut counter = tok.counter();
            let want = reference(ranks, text);
            assert!(line_chunks(text.as_bytes(), builtin).len() > 5);
            assert_eq!(counter.count(text), Some(want));
            assert_eq!(counter.count(text), Some(want), "from the cache");
        }
    }

    fn pick<'a>(next: &mut impl FnMut() -> u64, options: &[&'a str]) -> &'a str {
        options[(next() % options.len() as u64) as usize]
    }

    #[test]
    fn quoted_statements_count_as_their_lines() {
        // Python sources of random statements (every kind of first and last
        // character), then IR texts quoting them as warp does, and lines
        // that nearly do: counted with the statements' counts where they
        // quote one, they must agree with the reference.
        let atoms = [
            "x", "var_0", "Ab", "(", ")", "[", "]", "-", "_a", "'s'", "\"q\"", "7", "1.5e-06", ".",
            ":", "wp.tid()", "\u{e9}", "#", "<", "<L", ",", "*", "/", "'", "ll", "'s", "\t",
            "\u{a0}", "\u{2028}", "\r", "x'll", "Q",
        ];
        let indents = ["", " ", "    ", "        ", "\t"];
        let prefixes = [
            "// ", "// ", "// adj: ", "// adj: ", "//", "// adj:", "/ ", "# ",
        ];
        let tails = [
            "<L 5>",
            "<L 12>",
            "<L 1234>",
            "<L 123456789012>",
            "<",
            "<L 3> x",
            "",
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin);
            let tok = builtin_tokenizer(ranks);
            let mut counter = tok.counter();
            for _ in 0..400 {
                let statements: Vec<String> = (0..1 + next() % 6)
                    .map(|_| {
                        let mut s = String::new();
                        for _ in 0..1 + next() % 6 {
                            s.push_str(pick(&mut next, &atoms));
                            s.push_str(pick(&mut next, &[" ", " ", "", "  "]));
                        }
                        // Mostly stripped, as warp writes them.
                        if next() % 4 != 0 {
                            s = s.trim().to_string();
                        }
                        s
                    })
                    .filter(|s| !s.is_empty())
                    .collect();
                let source: String = statements
                    .iter()
                    .map(|s| format!("{}{s}\n", pick(&mut next, &indents)))
                    .collect();
                assert_eq!(
                    counter.count_source(&source),
                    Some(reference(ranks, &source)),
                    "{builtin:?} {source:?}"
                );
                let mut ir = String::new();
                for s in &statements {
                    let indent = pick(&mut next, &indents[1..]);
                    let pad = " ".repeat((next() % 90) as usize);
                    for prefix in [pick(&mut next, &prefixes), pick(&mut next, &prefixes)] {
                        let tail = pick(&mut next, &tails);
                        ir.push_str(&format!("{indent}{prefix}{s}{pad}  {tail}\n"));
                    }
                    ir.push_str("        var_0 = wp::load(var_1);\n");
                }
                if next() % 3 == 0 {
                    ir.pop();
                }
                assert_eq!(
                    counter.count(&ir),
                    Some(reference(ranks, &ir)),
                    "{builtin:?} {ir:?}"
                );
            }
        }
    }
}
