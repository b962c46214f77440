//! Deduplication: canonical forms of a kernel's source, xxh3 keys, and a Bloom
//! filter that remembers the keys seen in a run.
//!
//! The synthesizer gives every kernel a fresh name, so hashing the raw source
//! would call every sample unique. The canonical form renames user
//! identifiers in order of first appearance, so structural twins collide.

use crate::text::Put;
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::config::{DedupLevel, Splits};
use crate::lang::{NameSet, Token, TokenKind, tokenize, word};
use crate::lower::LowerError;

/// Python keywords, the builtins kernels use, and the names warp gives
/// meaning to without a `wp.` prefix: kept as they are by the renaming.
const RESERVED_NAMES: &[&str] = &[
    // keywords
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    // Python builtins
    "range",
    "float",
    "int",
    "bool",
    "min",
    "max",
    "abs",
    "len",
    "print",
    "round",
    "pow",
    "tuple",
    "list",
    "isinstance",
    "enumerate",
    "zip",
    "sum",
    "object",
    "type",
    "str",
    "self",
    // warp
    "wp",
    "warp",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "vec2",
    "vec3",
    "vec4",
    "mat22",
    "mat33",
    "mat44",
    "quat",
    "transform",
    "array",
];

/// Whether the renaming keeps the name token `t` (see [`RESERVED_NAMES`]).
fn is_reserved(t: &Token<'_>) -> bool {
    const SET: NameSet<{ RESERVED_NAMES.len() }> = NameSet::new(RESERVED_NAMES);
    SET.contains_word(t.word, t.text)
}

/// Write the canonical form of `source` at `level` into `out` (cleared
/// first): one token per item, user identifiers as `v0, v1, ...`, and at
/// [`DedupLevel::Shape`] number literals as `<int>` / `<float>`.
/// [`DedupLevel::Exact`] is the source itself.
pub fn canonical_form(source: &str, level: DedupLevel, out: &mut String) -> Result<(), LowerError> {
    out.clear();
    match level {
        DedupLevel::Exact => {
            out.push_str(source);
            Ok(())
        }
        DedupLevel::Renamed => {
            write_token_forms(&tokenize(source)?, out, &mut Renaming::default());
            Ok(())
        }
        DedupLevel::Shape => {
            let (mut renamed, mut r) = (String::new(), Renaming::default());
            write_token_forms(&tokenize(source)?, &mut renamed, &mut r);
            shape_form(&renamed, &r.numbers, out);
            Ok(())
        }
    }
}

/// Where a number literal sits in a renamed form, and its kind: the shape
/// form is the renamed form with each such span replaced by its kind, so it
/// is derived from it rather than written token by token a second time.
struct NumberSpan {
    start: usize,
    end: usize,
    kind: &'static str,
}

/// The shape form into `out`, from the renamed form and its number spans.
fn shape_form(renamed: &str, numbers: &[NumberSpan], out: &mut String) {
    out.clear();
    out.reserve(renamed.len());
    let mut at = 0;
    for n in numbers {
        out.push_str(&renamed[at..n.start]);
        out.put(n.kind);
        at = n.end;
    }
    out.push_str(&renamed[at..]);
}

/// What the renaming of a kernel fills, kept between kernels (in a
/// worker's [`KeyScratch`]) so that its table and lists are not allocated
/// and grown again per sample.
#[derive(Default)]
struct Renaming {
    /// What each short name seen stands as, by packed word; cleared per
    /// kernel, its capacity kept.
    short: rustc_hash::FxHashMap<u64, usize>,
    /// `v{id}` packed by id, ids in order of first sight, short and long
    /// names alike (`u64::MAX` past 8 bytes, from id 10^7 on).
    id_words: Vec<u64>,
    /// The number spans of the renamed form.
    numbers: Vec<NumberSpan>,
}

/// Appends the renamed form of `tokens` to `out`; its number spans are left
/// in `r.numbers`.
fn write_token_forms(tokens: &[Token<'_>], out: &mut String, r: &mut Renaming) {
    let Renaming {
        short,
        id_words,
        numbers,
    } = r;
    short.clear();
    id_words.clear();
    numbers.clear();
    // What each name seen stands as, by packed word (see `word`; a multiply
    // and a probe, where a scan of a few dozen names was the renaming's
    // largest cost): its id, or `RESERVED` (asked of the reserved names once
    // per name, not per token). The few longer names are found by text.
    const RESERVED: usize = usize::MAX;
    let mut long: Vec<&str> = Vec::new();
    let mut long_ids: Vec<usize> = Vec::new();
    fn new_id(id_words: &mut Vec<u64>) -> usize {
        id_words.push(id_word(id_words.len()));
        id_words.len() - 1
    }
    const DOT: u64 = word(".");
    const EQUALS: u64 = word("=");
    const DEF: u64 = word("def");
    let mut depth = 0usize;
    let mut in_def_header = false;
    // Whether the token before is a `.` (carried along, not looked up).
    let mut after_dot = false;
    for (i, t) in tokens.iter().enumerate() {
        let attribute = std::mem::replace(&mut after_dot, t.kind == TokenKind::Op && t.word == DOT);
        match t.kind {
            TokenKind::Name => {
                // `f(dtype=float)`: a keyword argument names the callee's
                // parameter. In `def f(a=1)` the parameter list itself is
                // depth 1, and `a` is the user's.
                let kwarg = depth > usize::from(in_def_header)
                    && tokens
                        .get(i + 1)
                        .is_some_and(|n| n.kind == TokenKind::Op && n.word == EQUALS);
                if t.word == DEF {
                    in_def_header = true;
                }
                let id = if attribute || kwarg {
                    RESERVED
                } else if t.word != u64::MAX {
                    *short.entry(t.word).or_insert_with(|| {
                        if is_reserved(t) {
                            RESERVED
                        } else {
                            new_id(id_words)
                        }
                    })
                } else if is_reserved(t) {
                    RESERVED
                } else if let Some(k) = long.iter().position(|n| *n == t.text) {
                    long_ids[k]
                } else {
                    let id = new_id(id_words);
                    long.push(t.text);
                    long_ids.push(id);
                    id
                };
                if id == RESERVED {
                    put_token(out, t.word, t.text);
                } else if id_words[id] != u64::MAX {
                    // `v{id}` holds no NUL: it runs up to the highest nonzero byte.
                    let w = id_words[id];
                    put_word(out, w, 8 - w.leading_zeros() as usize / 8);
                } else {
                    let mut digits = [0u8; 21];
                    out.put(id_text(id, &mut digits));
                    out.push(' ');
                }
            }
            TokenKind::Number => {
                let start = out.len();
                put_token(out, t.word, t.text);
                numbers.push(NumberSpan {
                    start,
                    end: start + t.text.len(),
                    kind: number_kind(t),
                });
            }
            TokenKind::Op => {
                // By packed word: two integer compares, not a text compare each.
                const OPEN: [u64; 3] = [word("("), word("["), word("{")];
                const CLOSE: [u64; 3] = [word(")"), word("]"), word("}")];
                if OPEN.contains(&t.word) {
                    depth += 1;
                } else if CLOSE.contains(&t.word) {
                    depth = depth.saturating_sub(1);
                }
                put_token(out, t.word, t.text);
            }
            TokenKind::Newline => {
                in_def_header = false;
                out.push('\n');
            }
            TokenKind::Indent => out.put("<indent> "),
            TokenKind::Dedent => out.put("<dedent> "),
            TokenKind::EndMarker => break,
            TokenKind::String => put_token(out, t.word, t.text),
        }
    }
}

/// Appends `text` and a space; `w` is its packed [`word`].
#[inline(always)]
fn put_token(out: &mut String, w: u64, text: &str) {
    if w == u64::MAX {
        out.put(text);
        out.push(' ');
    } else {
        put_word(out, w, text.len());
    }
}

/// Appends the text of `n` bytes packed in `w` (its [`word`], so `n <= 8`)
/// and a space by two stores and one length update, where a copy and a push
/// cost the renaming a third of its time.
#[inline(always)]
fn put_word(out: &mut String, w: u64, n: usize) {
    debug_assert!(n <= 8);
    out.reserve(9);
    // SAFETY: `reserve` made room for 9 bytes past `len`. The first `n`
    // bytes stored are the packed text, whole UTF-8 (a token's text or
    // `v{id}`), the next a space: the string stays valid UTF-8 at its new
    // length; the store's zero bytes past them land in spare capacity.
    unsafe {
        let v = out.as_mut_vec();
        let len = v.len();
        let end = v.as_mut_ptr().add(len);
        end.cast::<u64>().write_unaligned(w.to_le());
        end.add(n).write(b' ');
        v.set_len(len + n + 1);
    }
}

/// A kernel's keys at the three dedup levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DedupKeys {
    pub exact: u64,
    pub renamed: u64,
    pub shape: u64,
}

impl DedupKeys {
    pub fn at(&self, level: DedupLevel) -> u64 {
        match level {
            DedupLevel::Exact => self.exact,
            DedupLevel::Renamed => self.renamed,
            DedupLevel::Shape => self.shape,
        }
    }
}

/// What [`dedup_keys`] reuses between calls so a worker does not allocate
/// per sample: the forms' buffers and the renaming's table and lists.
#[derive(Default)]
pub struct KeyScratch {
    renamed: String,
    shape: String,
    renaming: Renaming,
}

/// The keys of `source` at every level, from one tokenization, with buffers
/// from `scratch`.
pub fn dedup_keys(source: &str, scratch: &mut KeyScratch) -> Result<DedupKeys, LowerError> {
    Ok(dedup_keys_of_tokens(source, &tokenize(source)?, scratch))
}

/// Like [`dedup_keys`], from the tokens of `source` (`lang::tokenize`).
pub fn dedup_keys_of_tokens(
    source: &str,
    tokens: &[Token<'_>],
    scratch: &mut KeyScratch,
) -> DedupKeys {
    let KeyScratch {
        renamed,
        shape,
        renaming,
    } = scratch;
    renamed.clear();
    write_token_forms(tokens, renamed, renaming);
    shape_form(renamed, &renaming.numbers, shape);
    DedupKeys {
        exact: xxh3_64(source.as_bytes()),
        renamed: xxh3_64(renamed.as_bytes()),
        shape: xxh3_64(shape.as_bytes()),
    }
}

/// [`word`] of `v{id}` (`u64::MAX` from id 10^7 on, past 8 bytes), packed
/// digit by digit in a register instead of written out and read back.
fn id_word(id: usize) -> u64 {
    if id >= 10_000_000 {
        return u64::MAX;
    }
    // The last digit is found first and ends up in the highest byte.
    let (mut digits, mut n) = (0u64, id);
    loop {
        digits = digits << 8 | u64::from(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    u64::from(b'v') | digits << 8
}

/// `v{id}` without going through `fmt` (this runs per token).
fn id_text(id: usize, digits: &mut [u8; 21]) -> &str {
    let mut n = id;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    i -= 1;
    digits[i] = b'v';
    // SAFETY: `digits[i..]` is `v` and ASCII digits (checking it was a
    // tenth of the renaming's cost).
    unsafe { std::str::from_utf8_unchecked(&digits[i..]) }
}

/// `<int>` or `<float>` for a number literal.
fn number_kind(t: &Token<'_>) -> &'static str {
    let b = t.text.as_bytes();
    let hex = b.len() > 1 && b[0] == b'0' && b[1] | 0x20 == b'x';
    let exponent = !hex && b.iter().any(|&c| c | 0x20 == b'e');
    if exponent || b.contains(&b'.') || matches!(b.last(), Some(b'j' | b'J')) {
        "<float>"
    } else {
        "<int>"
    }
}

/// The dedup key of `source`: xxh3 of its canonical form. `scratch` is a
/// buffer reused between calls so a worker does not allocate per sample.
pub fn dedup_key(source: &str, level: DedupLevel, scratch: &mut String) -> Result<u64, LowerError> {
    if level == DedupLevel::Exact {
        return Ok(xxh3_64(source.as_bytes()));
    }
    canonical_form(source, level, scratch)?;
    Ok(xxh3_64(scratch.as_bytes()))
}

/// Salt for the split draw, so the split is independent of the Bloom
/// filter's bit positions (both derive from the key).
const SPLIT_SALT: u64 = 0x7370_6c69_745f_7070;

/// The split of a row, from its dedup key alone: structural twins (which
/// share a key) always land in the same split.
pub fn split_for(key: u64, splits: &Splits) -> &'static str {
    let u = (xxh3_64_with_seed(&key.to_le_bytes(), SPLIT_SALT) >> 11) as f64 / (1u64 << 53) as f64;
    if u < splits.validation {
        "validation"
    } else if u < splits.validation + splits.test {
        "test"
    } else {
        "train"
    }
}

/// A Bloom filter over 64-bit keys that are already hashes (xxh3), so the
/// probes come from double hashing of the key itself.
pub struct Bloom {
    words: Vec<u64>,
    bits: u64,
    hashes: u32,
    ones: u64,
}

/// Outcome of [`Bloom::insert`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Seen {
    /// Possibly seen before (all probed bits were set): counted as a duplicate.
    Duplicate,
    /// New. `false_positive_odds` is f/(1-f), f the filter's false-positive
    /// rate at the moment of the query: summed over the new keys it is an
    /// unbiased estimate of how many new keys were wrongly called duplicates.
    New { false_positive_odds: f64 },
}

impl Bloom {
    /// Bits for `n` items at false-positive rate `p`: m = -n ln p / (ln 2)^2,
    /// rounded up to whole 64-bit words.
    pub fn bits_for(n: u64, p: f64) -> u64 {
        let m = (-(n.max(1) as f64) * p.ln() / std::f64::consts::LN_2.powi(2)).ceil();
        let m = if m.is_finite() {
            m.min(u64::MAX as f64 / 2.0) as u64
        } else {
            u64::MAX / 2
        };
        m.max(64).div_ceil(64) * 64
    }

    /// A filter sized for `expected_items` at `false_positive_rate`.
    pub fn new(expected_items: u64, false_positive_rate: f64) -> Bloom {
        let bits = Bloom::bits_for(expected_items, false_positive_rate);
        let k = (bits as f64 / expected_items.max(1) as f64 * std::f64::consts::LN_2).round();
        Bloom {
            words: vec![0; (bits / 64) as usize],
            bits,
            hashes: (k as u32).clamp(1, 64),
            ones: 0,
        }
    }

    pub fn bits(&self) -> u64 {
        self.bits
    }

    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The current false-positive rate: (fraction of bits set)^k.
    pub fn false_positive_rate(&self) -> f64 {
        (self.ones as f64 / self.bits as f64).powi(self.hashes as i32)
    }

    /// Bit positions of `key`: h1 + i*h2 (Kirsch–Mitzenmacher), mapped to
    /// [0, bits) by multiply-shift instead of a division.
    #[inline]
    fn probes(&self, key: u64) -> impl Iterator<Item = u64> + use<> {
        let h1 = key;
        let h2 = splitmix64(key) | 1;
        let bits = self.bits;
        (0..self.hashes as u64).map(move |i| {
            ((h1.wrapping_add(i.wrapping_mul(h2)) as u128 * bits as u128) >> 64) as u64
        })
    }

    /// Whether `key` may have been inserted (no false negatives).
    pub fn contains(&self, key: u64) -> bool {
        self.probes(key)
            .all(|b| self.words[(b / 64) as usize] & (1 << (b % 64)) != 0)
    }

    /// Insert `key`, reporting whether it was (possibly) there already.
    pub fn insert(&mut self, key: u64) -> Seen {
        let f = self.false_positive_rate();
        let mut new_bits = 0;
        for b in self.probes(key) {
            let word = &mut self.words[(b / 64) as usize];
            let mask = 1u64 << (b % 64);
            if *word & mask == 0 {
                *word |= mask;
                new_bits += 1;
            }
        }
        self.ones += new_bits;
        if new_bits == 0 {
            Seen::Duplicate
        } else {
            Seen::New {
                false_positive_odds: f / (1.0 - f),
            }
        }
    }
}

/// A strong 64-bit mixer, for the second probe hash.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "import warp as wp\n\n@wp.kernel\ndef saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):\n    i = wp.tid()\n    y[i] = a * x[i] + y[i]\n";

    #[test]
    fn id_words_pack_the_id_texts() {
        let mut digits = [0u8; 21];
        for id in (0..2000).chain([9_999_999, 10_000_000, 123_456_789]) {
            assert_eq!(id_word(id), word(id_text(id, &mut digits)), "id {id}");
        }
    }

    fn key(src: &str, level: DedupLevel) -> u64 {
        dedup_key(src, level, &mut String::new()).unwrap()
    }

    #[test]
    fn renamed_form_ignores_user_names() {
        let b = A
            .replace("saxpy", "k_19af")
            .replace("a:", "alpha:")
            .replace("a *", "alpha *");
        assert_ne!(key(A, DedupLevel::Exact), key(&b, DedupLevel::Exact));
        assert_eq!(key(A, DedupLevel::Renamed), key(&b, DedupLevel::Renamed));
        let mut form = String::new();
        canonical_form(A, DedupLevel::Renamed, &mut form).unwrap();
        assert!(
            form.contains("def v0 ( v1 : wp . array ( dtype = float )"),
            "{form}"
        );
        assert!(form.contains("v4 = wp . tid ( )"), "{form}");
    }

    #[test]
    fn renaming_follows_first_appearance() {
        // Swapping which parameter is used where changes the structure.
        let b = A.replace("a * x[i]", "a * y[i]");
        assert_ne!(key(A, DedupLevel::Renamed), key(&b, DedupLevel::Renamed));
        // A different builtin is a different kernel.
        let c = A.replace("wp.tid()", "wp.tid() + 0");
        assert_ne!(key(A, DedupLevel::Renamed), key(&c, DedupLevel::Renamed));
    }

    #[test]
    fn shape_form_ignores_number_values_not_kinds() {
        let a = A.replace("a * x[i]", "2.5 * x[i]");
        let b = A.replace("a * x[i]", "0.75 * x[i]");
        let c = A.replace("a * x[i]", "3 * x[i]");
        assert_ne!(key(&a, DedupLevel::Renamed), key(&b, DedupLevel::Renamed));
        assert_eq!(key(&a, DedupLevel::Shape), key(&b, DedupLevel::Shape));
        assert_ne!(key(&a, DedupLevel::Shape), key(&c, DedupLevel::Shape));
    }

    #[test]
    fn forms_spelled_out() {
        let src = "def k(x: wp.array(dtype=float), n: int):\n    i = wp.tid()\n    x[i] = 2.5 * x[i] + n - 0x1f + 3e-2\n";
        let form = |level| {
            let mut out = String::new();
            canonical_form(src, level, &mut out).unwrap();
            out
        };
        let head = "def v0 ( v1 : wp . array ( dtype = float ) , v2 : int ) : \n<indent> v3 = wp . tid ( ) \n";
        assert_eq!(
            form(DedupLevel::Renamed),
            format!("{head}v1 [ v3 ] = 2.5 * v1 [ v3 ] + v2 - 0x1f + 3e-2 \n<dedent> ")
        );
        assert_eq!(
            form(DedupLevel::Shape),
            format!("{head}v1 [ v3 ] = <float> * v1 [ v3 ] + v2 - <int> + <float> \n<dedent> ")
        );
        // The one-pass keys are the hashes of these very forms.
        let keys = dedup_keys(src, &mut Default::default()).unwrap();
        assert_eq!(keys.renamed, xxh3_64(form(DedupLevel::Renamed).as_bytes()));
        assert_eq!(keys.shape, xxh3_64(form(DedupLevel::Shape).as_bytes()));
    }

    #[test]
    fn one_pass_keys_match_each_level() {
        let mut scratch = KeyScratch::default();
        for src in [
            A,
            &A.replace("a * x[i]", "2.5 * x[i]"),
            "def f(a=1):\n    return a + 0x1f\n",
        ] {
            let keys = dedup_keys(src, &mut scratch).unwrap();
            for level in [DedupLevel::Exact, DedupLevel::Renamed, DedupLevel::Shape] {
                assert_eq!(keys.at(level), key(src, level), "{level:?} of {src}");
            }
            assert_ne!(keys.exact, keys.renamed);
        }
    }

    #[test]
    fn number_kinds() {
        let kind = |text| number_kind(&Token::new(TokenKind::Number, text, 1, 1));
        for int in ["3", "0x1e", "0XFF", "1_000", "0o17", "0b101"] {
            assert_eq!(kind(int), "<int>", "{int}");
        }
        for float in ["2.0", ".5", "1e5", "1E-3", "3j", "2.5e+10"] {
            assert_eq!(kind(float), "<float>", "{float}");
        }
    }

    #[test]
    fn bloom_has_no_false_negatives_and_configured_fpr() {
        let (n, p) = (100_000u64, 0.01);
        let mut bloom = Bloom::new(n, p);
        assert_eq!(bloom.hashes(), 7);
        let keys = |seed: u64| (0..n).map(move |i| splitmix64(i ^ seed.rotate_left(40)));
        let mut estimate = 0.0;
        let mut dups = 0;
        for k in keys(1) {
            match bloom.insert(k) {
                Seen::New {
                    false_positive_odds,
                } => estimate += false_positive_odds,
                Seen::Duplicate => dups += 1,
            }
        }
        assert!(keys(1).all(|k| bloom.contains(k)));
        let fp = keys(2).filter(|&k| bloom.contains(k)).count() as f64 / n as f64;
        assert!(
            (0.007..0.013).contains(&fp),
            "measured false-positive rate {fp}"
        );
        assert!(
            (bloom.false_positive_rate() - p).abs() < 0.002,
            "{}",
            bloom.false_positive_rate()
        );
        // The running estimate matches the losses actually seen on insert.
        assert!(
            (estimate - dups as f64).abs() < 3.0 * (dups as f64).sqrt() + 5.0,
            "{estimate} vs {dups}"
        );
    }

    #[test]
    fn splits_follow_fractions() {
        let s = Splits {
            validation: 0.1,
            test: 0.2,
        };
        let mut counts = std::collections::HashMap::new();
        for k in 0..100_000u64 {
            *counts.entry(split_for(k, &s)).or_insert(0) += 1;
        }
        let frac = |name| counts[name] as f64 / 100_000.0;
        assert!((frac("validation") - 0.1).abs() < 0.01);
        assert!((frac("test") - 0.2).abs() < 0.01);
        assert!((frac("train") - 0.7).abs() < 0.01);
        assert_eq!(split_for(42, &s), split_for(42, &s));
    }
}
