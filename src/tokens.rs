//! Token counts: how many tokens of a BPE tokenizer each text column takes,
//! the unit a training loader counts.
//!
//! Built in, with nothing downloaded at run time: `o200k_base` and
//! `cl100k_base`, OpenAI's ranks as the `tiktoken-rs` crate compiles them in,
//! merged by that crate's port of tiktoken's own byte-pair merge. Or any
//! Hugging Face `tokenizer.json` on disk (the `tokenizers` crate).
//!
//! A count is what tiktoken's `encode_ordinary` (no special tokens) returns,
//! or `tokenizers`' `encode(text, add_special_tokens=False)`: the tests check
//! both against the Python packages.
//!
//! Speed. Generated IR is very repetitive line by line, so a tiktoken count
//! is the sum of the counts of *chunks* of the text, cut where the
//! pre-tokenizer is known to cut whatever comes next, each chunk's count kept
//! in a per-worker map (see [`chunks`] for why the sum is exact). Only chunks
//! never seen before are pre-tokenized (their pieces' counts cached too) and
//! merged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use anyhow::{Context, Result, anyhow};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// The ranks of a built-in encoding, and its pattern.
struct Ranks {
    builtin: Builtin,
    /// Token bytes → rank, as tiktoken's merge wants them.
    ranks: FxHashMap<Vec<u8>, tiktoken_rs::Rank>,
    /// Rank → token bytes, for `pairpipe tokens-ranks`.
    by_rank: Vec<(tiktoken_rs::Rank, Vec<u8>)>,
    pattern: fancy_regex::Regex,
}

impl Ranks {
    fn load(builtin: Builtin) -> Result<Ranks> {
        let (bpe, pattern) = match builtin {
            Builtin::O200k => (tiktoken_rs::o200k_base(), tiktoken_rs::O200K_BASE_PAT_STR),
            Builtin::Cl100k => (tiktoken_rs::cl100k_base(), CL100K_PAT),
        };
        let bpe = bpe.map_err(|e| anyhow!("loading the built-in ranks: {e}"))?;
        let specials = bpe.special_tokens();
        // The ranks as the crate holds them: every rank decodes to its bytes;
        // the special tokens (which encode_ordinary never produces) aside.
        let mut ranks = FxHashMap::default();
        let mut by_rank = Vec::new();
        let mut misses = 0;
        for rank in 0.. {
            match bpe.decode_bytes(&[rank]) {
                Ok(bytes) => {
                    if std::str::from_utf8(&bytes).is_ok_and(|s| specials.contains(s)) {
                        continue;
                    }
                    ranks.insert(bytes.clone(), rank);
                    by_rank.push((rank, bytes));
                    misses = 0;
                }
                // Gaps (o200k's special tokens sit past the ordinary ranks,
                // cl100k has unused ranks among them): stop after a long run.
                Err(_) => {
                    misses += 1;
                    if misses > 4096 {
                        break;
                    }
                }
            }
        }
        let pattern = fancy_regex::Regex::new(pattern).context("compiling the pattern")?;
        Ok(Ranks {
            builtin,
            ranks,
            by_rank,
            pattern,
        })
    }

    fn get(builtin: Builtin) -> Result<&'static Ranks> {
        static O200K: LazyLock<Result<Ranks, String>> =
            LazyLock::new(|| Ranks::load(Builtin::O200k).map_err(|e| format!("{e:#}")));
        static CL100K: LazyLock<Result<Ranks, String>> =
            LazyLock::new(|| Ranks::load(Builtin::Cl100k).map_err(|e| format!("{e:#}")));
        let cell = match builtin {
            Builtin::O200k => &O200K,
            Builtin::Cl100k => &CL100K,
        };
        cell.as_ref().map_err(|e| anyhow!("{e}"))
    }

    /// Tokens of one pre-tokenized piece: tiktoken's merge.
    fn piece(&self, piece: &[u8]) -> u32 {
        if piece.len() == 1 || self.ranks.contains_key(piece) {
            return 1;
        }
        tiktoken_rs::byte_pair_split(piece, &self.ranks).len() as u32
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
            TokenizerSpec::O200k => Kind::Builtin(Ranks::get(Builtin::O200k)?),
            TokenizerSpec::Cl100k => Kind::Builtin(Ranks::get(Builtin::Cl100k)?),
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

    /// A counter for one thread, with its own caches.
    pub fn counter(&self) -> Counter {
        Counter {
            tokenizer: self.clone(),
            chunks: FxHashMap::default(),
            pieces: FxHashMap::default(),
            cached_bytes: 0,
        }
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

/// Bytes of chunk and piece keys a counter keeps before it starts over, so
/// that its memory stays bounded however long the run (~2 × this a worker,
/// with the maps' own overhead).
const CACHE_BYTES: usize = 8 << 20;

/// Counts tokens on one thread, remembering the counts of the chunks and
/// pieces it has seen.
pub struct Counter {
    tokenizer: Tokenizer,
    chunks: FxHashMap<Box<[u8]>, u32>,
    pieces: FxHashMap<Box<[u8]>, u32>,
    cached_bytes: usize,
}

impl Counter {
    /// Tokens of `text`; `None` without a tokenizer.
    pub fn count(&mut self, text: &str) -> Option<u32> {
        match self.tokenizer.kind.clone() {
            Kind::None => None,
            Kind::Builtin(ranks) => Some(self.count_builtin(ranks, text)),
            Kind::HuggingFace(tok) => Some(
                tok.encode_fast(text, false)
                    .map(|e| e.len() as u32)
                    .unwrap_or(0),
            ),
        }
    }

    fn count_builtin(&mut self, ranks: &Ranks, text: &str) -> u32 {
        if self.cached_bytes > CACHE_BYTES {
            self.chunks.clear();
            self.pieces.clear();
            self.cached_bytes = 0;
        }
        let mut total = 0;
        for chunk in chunks(text, ranks.builtin) {
            if let Some(&n) = self.chunks.get(chunk.as_bytes()) {
                total += n;
                continue;
            }
            let n = self.count_chunk(ranks, chunk);
            self.cached_bytes += chunk.len();
            self.chunks.insert(chunk.as_bytes().into(), n);
            total += n;
        }
        total
    }

    /// Pre-tokenizes a chunk and merges its pieces (pieces seen before from
    /// the cache).
    fn count_chunk(&mut self, ranks: &Ranks, chunk: &str) -> u32 {
        if chunk.is_ascii() {
            let b = chunk.as_bytes();
            let mut n = 0;
            let mut i = 0;
            while i < b.len() {
                let end = ascii_piece(b, i, ranks.builtin);
                n += self.piece_count(ranks, &b[i..end]);
                i = end;
            }
            return n;
        }
        let mut n = 0;
        for piece in ranks.pattern.find_iter(chunk) {
            // The pattern matches every text (its last branch takes any
            // whitespace, the others the rest); a regex error (backtrack
            // limit) cannot happen on these patterns, which only look one
            // character ahead.
            let Ok(piece) = piece else {
                n += ranks.piece(chunk.as_bytes());
                break;
            };
            n += self.piece_count(ranks, piece.as_str().as_bytes());
        }
        n
    }

    fn piece_count(&mut self, ranks: &Ranks, bytes: &[u8]) -> u32 {
        match self.pieces.get(bytes) {
            Some(&c) => c,
            None => {
                let c = ranks.piece(bytes);
                self.cached_bytes += bytes.len();
                self.pieces.insert(bytes.into(), c);
                c
            }
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

/// Splits `text` into chunks whose token counts sum to the text's.
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
fn chunks(text: &str, builtin: Builtin) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut start = 0;
    let mut pos = 0;
    std::iter::from_fn(move || {
        if start >= b.len() {
            return None;
        }
        while let Some(nl) = memchr::memchr(b'\n', &b[pos..]) {
            let p = pos + nl + 1;
            pos = p;
            if cut_after_newline(b, p, builtin) {
                let chunk = &text[start..p];
                start = p;
                return Some(chunk);
            }
        }
        pos = b.len();
        let chunk = &text[start..];
        start = b.len();
        Some(chunk)
    })
}

/// Whether a chunk may end at `p`, right after a `\n` (see [`chunks`]).
fn cut_after_newline(b: &[u8], p: usize, builtin: Builtin) -> bool {
    let mut i = p;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let Some(&c) = b.get(i) else {
        return false;
    };
    let whitespace = matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
    let slash = c == b'/' && i == p && builtin == Builtin::O200k;
    c.is_ascii() && !whitespace && !slash
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
    let ranks = Ranks::get(builtin)?;
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?,
    );
    for (rank, bytes) in &ranks.by_rank {
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

    /// Tokens of the whole text, the way tiktoken counts: pattern over the
    /// whole text, merge of each piece, no caches.
    fn reference(ranks: &Ranks, text: &str) -> u32 {
        ranks
            .pattern
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
            let ranks = Ranks::get(builtin).unwrap();
            for _ in 0..20000 {
                let len = 1 + next() % 24;
                let text: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                let want: Vec<&str> = ranks
                    .pattern
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

    #[test]
    fn chunked_counts_equal_whole_text_counts() {
        // Random texts over the characters the cut rule is about: newlines,
        // spaces, tabs, `\r`, `/`, punctuation, letters, digits, a non-ASCII
        // letter and space, quotes of contractions.
        let alphabet = [
            "\n", "\n", "\n", " ", " ", "  ", "\t", "\r", "/", "//", ";", "{", "}", "(", "a",
            "var", "Var", "_", "1", "123", "é", "\u{a0}", "\u{2028}", "'s", "'ll", "wp::", "\x0b",
            "\x0c", "\x1c",
        ];
        let mut state = 0x2545f4914f6cdd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin).unwrap();
            let tok = Tokenizer {
                spec: TokenizerSpec::O200k,
                kind: Kind::Builtin(ranks),
            };
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
                    "{builtin:?} {text:?} chunks {:?}",
                    chunks(&text, builtin).collect::<Vec<_>>()
                );
                // And the chunks cover the text exactly.
                assert_eq!(chunks(&text, builtin).collect::<String>(), text);
            }
        }
    }

    #[test]
    fn generated_code_counts_equal_whole_text_counts() {
        let text = "static CUDA_CALLABLE void k_cuda_kernel_forward(\n    wp::launch_bounds_t dim,\n    wp::array_t<wp::float32> var_a)\n{\n    //---------\n    // forward\n    // def k(a: wp.array(dtype=float)):  <L 4>\n    var_0 = builtin_tid1d();\n\n\n        /// x\n/ y\n}\n";
        for builtin in [Builtin::O200k, Builtin::Cl100k] {
            let ranks = Ranks::get(builtin).unwrap();
            let tok = Tokenizer {
                spec: TokenizerSpec::O200k,
                kind: Kind::Builtin(ranks),
            };
            let mut counter = tok.counter();
            let want = reference(ranks, text);
            assert!(chunks(text, builtin).count() > 5);
            assert_eq!(counter.count(text), Some(want));
            assert_eq!(counter.count(text), Some(want), "from the cache");
        }
    }
}
