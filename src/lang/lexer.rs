//! Python tokenizer: the whole lexical grammar (so any real file tokenizes), with
//! INDENT/DEDENT synthesized from leading whitespace as CPython's tokenizer does.
//! Comments and blank lines are dropped; NEWLINE is only emitted at the end of a
//! logical line (never inside brackets or after a backslash continuation).

use crate::lower::LowerError;

/// CPython's tokenizer limits (`MAXLEVEL`, `MAXINDENT`): brackets open at
/// once, and indentation levels (the base level not counted), at most.
pub const MAX_BRACKET_DEPTH: usize = 200;
pub const MAX_INDENT_LEVELS: usize = 99;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Name,
    Number,
    String,
    Op,
    Newline,
    Indent,
    Dedent,
    EndMarker,
}

/// A token borrowing its text from the source. `line` and `col` are 1-based;
/// `col` counts characters (not bytes) like Python's `ast` col_offset + 1.
/// They are 32-bit (a source is under 4 GiB, see [`tokenize`]): the token
/// takes 40 bytes instead of 48, and the lexer writes and the parser copies
/// each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: TokenKind,
    pub text: &'a str,
    /// `text` packed by [`word`]: the parser asks "is this `(`, `and`, ...?"
    /// of every token many times, and an integer compare answers it.
    pub word: u64,
    line: u32,
    col: u32,
}

impl<'a> Token<'a> {
    pub fn new(kind: TokenKind, text: &'a str, line: usize, col: usize) -> Token<'a> {
        Token {
            kind,
            text,
            word: word(text),
            line: narrow(line),
            col: narrow(col),
        }
    }

    pub fn line(&self) -> usize {
        self.line as usize
    }

    pub fn col(&self) -> usize {
        self.col as usize
    }
}

/// A line or column as a token holds it: it fits, as the source is shorter
/// than `u32::MAX` bytes (checked by [`tokenize`]).
#[inline(always)]
fn narrow(n: usize) -> u32 {
    debug_assert!(n <= u32::MAX as usize);
    n as u32
}

/// A text of 1 to 8 bytes (every operator and keyword is one) packed into an
/// integer, byte `i` at bits `8i..`; `u64::MAX`, which no such text packs to,
/// for anything else. Tokens hold no NUL bytes, so distinct texts differ.
pub const fn word(text: &str) -> u64 {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 8 {
        return u64::MAX;
    }
    let mut w = 0u64;
    let mut i = 0;
    while i < b.len() {
        w |= (b[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// A fixed list of names asked about again and again (builtins per call,
/// reserved names per token). Names of up to 8 bytes (nearly all) are found
/// by their packed [`word`] in a small hash table built at compile time (a
/// multiply, a load and a compare, nearly always the first slot); longer
/// ones by text.
pub struct NameSet<const N: usize> {
    /// Open addressing by [`slot_of`], linear probing; 0 (no word) is empty.
    slots: [u64; NAME_SLOTS],
    /// The names longer than 8 bytes, then empty strings.
    long: [&'static str; N],
    n_long: usize,
}

/// Table size of a [`NameSet`]: at most a third full for the largest set.
const NAME_SLOTS: usize = 256;

const fn slot_of(w: u64) -> usize {
    (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

impl<const N: usize> NameSet<N> {
    pub const fn new(list: &[&'static str]) -> NameSet<N> {
        assert!(list.len() == N && 3 * N <= NAME_SLOTS);
        let mut slots = [0; NAME_SLOTS];
        let mut long = [""; N];
        let mut n_long = 0;
        let mut i = 0;
        while i < N {
            let w = word(list[i]);
            if w == u64::MAX {
                long[n_long] = list[i];
                n_long += 1;
            } else {
                let mut s = slot_of(w);
                while slots[s] != 0 && slots[s] != w {
                    s = (s + 1) % NAME_SLOTS;
                }
                slots[s] = w;
            }
            i += 1;
        }
        NameSet {
            slots,
            long,
            n_long,
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.contains_word(word(name), name)
    }

    /// [`NameSet::contains`] for a name whose [`word`] is known (a token's).
    #[inline]
    pub fn contains_word(&self, w: u64, name: &str) -> bool {
        if w == u64::MAX {
            return self.long[..self.n_long].contains(&name);
        }
        let mut s = slot_of(w);
        loop {
            match self.slots[s] {
                x if x == w => return true,
                0 => return false,
                _ => s = (s + 1) % NAME_SLOTS,
            }
        }
    }
}

/// Length of the operator at the start of `b` by maximal munch, or `None` if
/// `b` does not start with one. Decided on the first byte, then the next two,
/// instead of trying every operator in turn. In line: it runs for every
/// operator token, and a call cost more than deciding.
#[inline(always)]
fn operator_len(b: &[u8]) -> Option<usize> {
    let next = |i: usize| b.get(i).copied().unwrap_or(0);
    let (c, d) = (b[0], next(1));
    Some(match c {
        b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b';' | b'~' => 1,
        // `**`, `//`, `<<`, `>>`, each also with `=`
        b'*' | b'/' | b'<' | b'>' if d == c => 2 + usize::from(next(2) == b'='),
        b'-' if d == b'>' => 2,
        b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'<' | b'>' | b'='
        | b':' => 1 + usize::from(d == b'='),
        b'!' if d == b'=' => 2,
        b'.' if d == b'.' && next(2) == b'.' => 3,
        b'.' => 1,
        _ => return None,
    })
}

/// The ASCII bytes that continue an identifier (`_`, letters, digits): one
/// load per byte of a name instead of three range tests.
const IDENT_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = b == b'_' as usize || (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

/// The length of the run of [`IDENT_BYTE`]s that `b` starts with. Sixteen
/// bytes are classified at once (SSE2, part of every x86_64 target), where
/// the byte-by-byte loop took seven instructions a byte of every name.
#[inline(always)]
fn ident_run(b: &[u8]) -> usize {
    let mut n = 0;
    #[cfg(target_arch = "x86_64")]
    while n + 16 <= b.len() {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128,
            _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: the load reads `b[n..n + 16]`, inside `b`; SSE2 is part
        // of every x86_64 target.
        let ident = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(n) as *const __m128i);
            // Signed compares: a byte of 0x80 or more is negative, in
            // neither range, as `IDENT_BYTE` has it.
            let within = |x: __m128i, lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmpgt_epi8(_mm_set1_epi8(hi as i8 + 1), x),
                )
            };
            // `| 0x20` lowers a capital and puts no other byte in `a..=z`.
            let letter = within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', b'z');
            let digit = within(v, b'0', b'9');
            let underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), underscore)) as u32
        };
        if ident != 0xFFFF {
            return n + (!ident).trailing_zeros() as usize;
        }
        n += 16;
    }
    n + b[n..]
        .iter()
        .position(|&c| !IDENT_BYTE[c as usize])
        .unwrap_or(b.len() - n)
}

/// What a byte starts, for the lexer's dispatch: one table load and one
/// jump per token, where range tests, a second table (`IDENT_BYTE`) and the
/// operators' own dispatch came one after another.
#[derive(Clone, Copy)]
enum Starts {
    Blank,
    Comment,
    Newline,
    Backslash,
    Digit,
    Dot,
    Quote,
    /// A name: `_`, a letter, or any non-ASCII byte (checked as a character).
    Name,
    Open,
    Close,
    /// An operator or delimiter other than a bracket or `.`, or a byte that
    /// starts none (`operator_len` tells).
    Other,
}

const STARTS: [Starts; 256] = {
    let mut t = [Starts::Other; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b' ' | b'\t' | b'\x0c' | b'\r' => Starts::Blank,
            b'#' => Starts::Comment,
            b'\n' => Starts::Newline,
            b'\\' => Starts::Backslash,
            b'0'..=b'9' => Starts::Digit,
            b'.' => Starts::Dot,
            b'"' | b'\'' => Starts::Quote,
            b'(' | b'[' | b'{' => Starts::Open,
            b')' | b']' | b'}' => Starts::Close,
            c if IDENT_BYTE[b] || c >= 0x80 => Starts::Name,
            _ => Starts::Other,
        };
        b += 1;
    }
    t
};

fn err(line: usize, col: usize, message: impl Into<String>) -> LowerError {
    LowerError {
        line,
        col,
        message: message.into(),
    }
}

/// `ASCII`: the whole source is ASCII (synthesized kernels always are), so
/// a column is a byte offset and needs no counting; a lexer of its own, so
/// that no token asks.
struct Lexer<'a, const ASCII: bool> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
    /// The last column computed, as (byte position, column): tokens come in
    /// order, so the next column counts on from there, not from the line's start.
    col_cache: std::cell::Cell<(usize, usize)>,
    tokens: Vec<Token<'a>>,
    indents: Vec<usize>,
    depth: usize,
}

impl<'a, const ASCII: bool> Lexer<'a, ASCII> {
    fn new(src: &'a str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
            col_cache: std::cell::Cell::new((0, 1)),
            // Kernel sources run 2.5-3 bytes a token: room for all of them.
            tokens: Vec::with_capacity(src.len() / 2),
            indents: vec![0],
            depth: 0,
        }
    }

    #[inline]
    fn col_of(&self, pos: usize) -> usize {
        if ASCII {
            return pos - self.line_start + 1;
        }
        column_counting(self.src, self.line_start, pos, &self.col_cache)
    }

    #[inline(always)]
    fn push(&mut self, kind: TokenKind, start: usize, end: usize, line: usize, col: usize) {
        // `word` by one unaligned load and a mask where the source has 8
        // bytes from `start`: packing byte by byte cost a fifth of the lexing.
        let len = end - start;
        let word = match self.bytes.get(start..start + 8) {
            Some(b) if (1..=8).contains(&len) => {
                let all = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                all & (u64::MAX >> (64 - 8 * len))
            }
            _ => word(&self.src[start..end]),
        };
        debug_assert!(self.src.is_char_boundary(start) && self.src.is_char_boundary(end));
        // SAFETY: `start..end` is within the source and both ends fall
        // between characters: the scan only ever stops at an ASCII byte, after
        // a whole character, or at the end (see `run`), and every token but a
        // string (which `Token::new` slices checked) is cut there. Checking
        // it again per token cost a tenth of the lexing.
        let text = unsafe { self.src.get_unchecked(start..end) };
        self.tokens.push(Token {
            kind,
            text,
            word,
            line: narrow(line),
            col: narrow(col),
        });
    }

    #[inline]
    fn newline_at(&mut self, pos: usize) {
        self.line += 1;
        self.line_start = pos + 1;
    }

    /// Handles the indentation at the start of a logical line. Returns false at EOF.
    #[inline]
    fn start_line(&mut self) -> Result<bool, LowerError> {
        loop {
            let mut width = 0usize;
            let mut p = self.pos;
            while p < self.bytes.len() {
                match self.bytes[p] {
                    b' ' => width += 1,
                    b'\t' => width = (width / 8 + 1) * 8,
                    b'\x0c' => width = 0,
                    _ => break,
                }
                p += 1;
            }
            if p >= self.bytes.len() {
                self.pos = p;
                return Ok(false);
            }
            match self.bytes[p] {
                b'#' => {
                    while p < self.bytes.len() && self.bytes[p] != b'\n' {
                        p += 1;
                    }
                    if p < self.bytes.len() {
                        self.newline_at(p);
                        p += 1;
                    }
                    self.pos = p;
                }
                b'\n' => {
                    self.newline_at(p);
                    self.pos = p + 1;
                }
                b'\r' => {
                    self.pos = p + 1;
                }
                b'\\' if self.bytes.get(p + 1) == Some(&b'\n') => {
                    // A continuation on an otherwise blank line joins it with the next.
                    self.newline_at(p + 1);
                    self.pos = p + 2;
                }
                _ => {
                    self.pos = p;
                    let col = self.col_of(p);
                    let top = *self.indents.last().unwrap_or(&0);
                    if width > top {
                        if self.indents.len() > MAX_INDENT_LEVELS {
                            return Err(err(
                                self.line,
                                col,
                                "too many levels of indentation (Python's limit is 100)",
                            ));
                        }
                        self.indents.push(width);
                        self.push(TokenKind::Indent, p, p, self.line, col);
                    } else {
                        while width < *self.indents.last().unwrap_or(&0) {
                            self.indents.pop();
                            self.push(TokenKind::Dedent, p, p, self.line, col);
                        }
                        if width != *self.indents.last().unwrap_or(&0) {
                            return Err(err(
                                self.line,
                                col,
                                "unindent does not match any outer indentation level",
                            ));
                        }
                    }
                    return Ok(true);
                }
            }
        }
    }

    fn run(mut self) -> Result<Vec<Token<'a>>, LowerError> {
        let at_line_start = !self.start_line()? || self.lines()?;
        if self.depth > 0 {
            return Err(err(self.line, 1, "unexpected end of file inside brackets"));
        }
        let end = self.bytes.len();
        let col = self.col_of(end.max(self.line_start));
        if !at_line_start
            && self
                .tokens
                .last()
                .is_some_and(|t| t.kind != TokenKind::Newline)
        {
            self.push(TokenKind::Newline, end, end, self.line, col);
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(TokenKind::Dedent, end, end, self.line, col);
        }
        self.push(TokenKind::EndMarker, end, end, self.line, col);
        Ok(self.tokens)
    }

    /// The tokens from the first token of a line (its indentation handled)
    /// to the end. Returns whether the source ends at the start of a line.
    /// Each NEWLINE handles the next line's indentation at once, where a
    /// flag for it was tested at every token.
    fn lines(&mut self) -> Result<bool, LowerError> {
        loop {
            // A space after a token is passed over here rather than by a turn
            // of the loop of its own: most tokens are followed by one. Only
            // one: a loop here kept several running copies of the position
            // in registers for every token; longer runs (rare) take a turn
            // as `Starts::Blank`.
            if self.bytes.get(self.pos) == Some(&b' ') {
                self.pos += 1;
            }
            if self.pos >= self.bytes.len() {
                return Ok(false);
            }
            let c = self.bytes[self.pos];
            let start = self.pos;
            let line = self.line;
            match STARTS[c as usize] {
                Starts::Blank => {
                    let blanks = self.bytes[start..]
                        .iter()
                        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c' | b'\r'))
                        .count();
                    self.pos += blanks;
                }
                Starts::Comment => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                Starts::Newline => {
                    let logical = self.depth == 0;
                    if logical {
                        let col = self.col_of(start);
                        self.push(TokenKind::Newline, start, start + 1, line, col);
                    }
                    self.newline_at(start);
                    self.pos += 1;
                    if logical && !self.start_line()? {
                        return Ok(true);
                    }
                }
                Starts::Backslash => {
                    if self.bytes.get(start + 1) == Some(&b'\n') {
                        self.newline_at(start + 1);
                        self.pos += 2;
                    } else if self.bytes.get(start + 1) == Some(&b'\r')
                        && self.bytes.get(start + 2) == Some(&b'\n')
                    {
                        self.newline_at(start + 2);
                        self.pos += 3;
                    } else {
                        return Err(err(
                            line,
                            self.col_of(start),
                            "unexpected character after line continuation",
                        ));
                    }
                }
                Starts::Digit => self.number(start)?,
                Starts::Dot if self.bytes.get(start + 1).is_some_and(u8::is_ascii_digit) => {
                    self.number(start)?
                }
                Starts::Quote => self.string(start, start)?,
                Starts::Name => {
                    let rest = &self.bytes[start..];
                    let n = ident_run(rest);
                    // In an ASCII source a name ends at the first byte that
                    // is no `IDENT_BYTE`, and starts with one (never empty).
                    let p = match rest.get(n) {
                        Some(&b) if !ASCII && b >= 0x80 => name_end_unicode(self.src, start + n),
                        _ => start + n,
                    };
                    if !ASCII && p == start {
                        let ch = self.src[p..].chars().next().unwrap_or('?');
                        return Err(err(
                            line,
                            self.col_of(start),
                            format!("invalid character '{ch}'"),
                        ));
                    }
                    // String prefixes: r, b, u, f, rb, br, fr, rf (any case).
                    if p - start <= 2 && matches!(self.bytes.get(p), Some(b'"' | b'\'')) {
                        let prefix = self.src[start..p].to_ascii_lowercase();
                        if matches!(
                            prefix.as_str(),
                            "r" | "b" | "u" | "f" | "rb" | "br" | "fr" | "rf" | "t" | "rt" | "tr"
                        ) {
                            self.string(start, p)?;
                            continue;
                        }
                    }
                    let col = self.col_of(start);
                    self.push(TokenKind::Name, start, p, line, col);
                    self.pos = p;
                }
                Starts::Open => {
                    if self.depth == MAX_BRACKET_DEPTH {
                        return Err(err(
                            line,
                            self.col_of(start),
                            "too many nested parentheses (Python's limit is 200)",
                        ));
                    }
                    self.depth += 1;
                    let col = self.col_of(start);
                    self.push(TokenKind::Op, start, start + 1, line, col);
                    self.pos = start + 1;
                }
                Starts::Close => {
                    if self.depth == 0 {
                        return Err(err(
                            line,
                            self.col_of(start),
                            format!("unmatched '{}'", c as char),
                        ));
                    }
                    self.depth -= 1;
                    let col = self.col_of(start);
                    self.push(TokenKind::Op, start, start + 1, line, col);
                    self.pos = start + 1;
                }
                Starts::Dot | Starts::Other => {
                    let Some(len) = operator_len(&self.bytes[start..]) else {
                        let ch = self.src[start..].chars().next().unwrap_or('?');
                        return Err(err(
                            line,
                            self.col_of(start),
                            format!("invalid character '{ch}'"),
                        ));
                    };
                    let col = self.col_of(start);
                    self.push(TokenKind::Op, start, start + len, line, col);
                    self.pos = start + len;
                }
            }
        }
    }

    #[inline]
    fn number(&mut self, start: usize) -> Result<(), LowerError> {
        let p = number_end(self.bytes, start)
            .map_err(|p| err(self.line, self.col_of(p), "invalid number literal"))?;
        let col = self.col_of(start);
        self.push(TokenKind::Number, start, p, self.line, col);
        self.pos = p;
        Ok(())
    }

    /// A string literal whose prefix starts at `start` and whose quote is at `quote`.
    #[inline]
    fn string(&mut self, start: usize, quote: usize) -> Result<(), LowerError> {
        let line = self.line;
        let col = self.col_of(start);
        let p = string_end(self.bytes, quote)
            .ok_or_else(|| err(line, col, "unterminated string literal"))?;
        // The line breaks inside (a triple-quoted string's, or escaped ones).
        for (k, &b) in self.bytes[quote..p].iter().enumerate() {
            if b == b'\n' {
                self.newline_at(quote + k);
            }
        }
        self.tokens.push(Token::new(
            TokenKind::String,
            &self.src[start..p],
            line,
            col,
        ));
        self.pos = p;
        Ok(())
    }
}

/// The column of byte `pos` in a source that is not all ASCII, counting on
/// from `cache` (the last one computed) where it lies on the same line.
/// A free function, not a method: the lexer's state stays out of memory.
#[cold]
#[inline(never)]
fn column_counting(
    src: &str,
    line_start: usize,
    pos: usize,
    cache: &std::cell::Cell<(usize, usize)>,
) -> usize {
    let (cached_pos, cached_col) = cache.get();
    let (from, col) = if cached_pos >= line_start && cached_pos <= pos {
        (cached_pos, cached_col)
    } else {
        (line_start, 1)
    };
    let seg = &src.as_bytes()[from..pos];
    let col = col
        + if seg.is_ascii() {
            seg.len()
        } else {
            src[from..pos].chars().count()
        };
    cache.set((pos, col));
    col
}

/// The end of a name whose ASCII bytes run up to `p`, where a non-ASCII
/// character stands: letters and digits of any script continue it.
#[cold]
#[inline(never)]
fn name_end_unicode(src: &str, mut p: usize) -> usize {
    let b = src.as_bytes();
    while p < b.len() {
        if IDENT_BYTE[b[p] as usize] {
            p += 1;
        } else if b[p] >= 0x80 {
            let ch = src[p..].chars().next().unwrap_or(' ');
            if ch.is_alphanumeric() {
                p += ch.len_utf8();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    p
}

/// The end of the number literal starting at `start`, or `Err` with where
/// a letter or `_` runs on from it.
fn number_end(b: &[u8], start: usize) -> Result<usize, usize> {
    let mut p = start;
    let radix_prefix =
        b[p] == b'0' && matches!(b.get(p + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B'));
    if radix_prefix {
        p += 2;
        while p < b.len() && (b[p].is_ascii_hexdigit() || b[p] == b'_') {
            p += 1;
        }
    } else {
        let digits = |p: &mut usize| {
            while *p < b.len() && (b[*p].is_ascii_digit() || b[*p] == b'_') {
                *p += 1;
            }
        };
        digits(&mut p);
        if p < b.len() && b[p] == b'.' {
            p += 1;
            digits(&mut p);
        }
        if p < b.len() && (b[p] == b'e' || b[p] == b'E') {
            let mut q = p + 1;
            if q < b.len() && (b[q] == b'+' || b[q] == b'-') {
                q += 1;
            }
            if q < b.len() && b[q].is_ascii_digit() {
                p = q;
                digits(&mut p);
            }
        }
        if p < b.len() && (b[p] == b'j' || b[p] == b'J') {
            p += 1;
        }
    }
    if p < b.len() && (b[p] == b'_' || b[p].is_ascii_alphabetic()) {
        return Err(p);
    }
    Ok(p)
}

/// The end of the string literal whose opening quote is at `quote`, or
/// `None` if it is not closed (a single-quoted one by the line's end).
fn string_end(b: &[u8], quote: usize) -> Option<usize> {
    let q = b[quote];
    let triple = b.get(quote + 1) == Some(&q) && b.get(quote + 2) == Some(&q);
    let mut p = quote + if triple { 3 } else { 1 };
    loop {
        if p >= b.len() {
            return None;
        }
        match b[p] {
            b'\\' => p += 2,
            b'\n' if !triple => return None,
            c if c == q => {
                if !triple {
                    return Some(p + 1);
                }
                if b.get(p + 1) == Some(&q) && b.get(p + 2) == Some(&q) {
                    return Some(p + 3);
                }
                p += 1;
            }
            _ => p += 1,
        }
    }
}

/// Tokenize a whole Python source file (of less than 4 GiB, so that every
/// line and column fits a token's 32 bits; tokens for a larger one would
/// take some 100 GiB anyway).
pub fn tokenize(src: &str) -> Result<Vec<Token<'_>>, LowerError> {
    if src.len() >= u32::MAX as usize {
        return Err(err(1, 1, "source of 4 GiB or more: too large to tokenize"));
    }
    if src.is_ascii() {
        Lexer::<true>::new(src).run()
    } else {
        Lexer::<false>::new(src).run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ident_runs_stop_where_the_bytes_say() {
        let byte_by_byte = |b: &[u8]| b.iter().take_while(|&&c| IDENT_BYTE[c as usize]).count();
        // Every byte value at every place of a block, and runs across blocks.
        for len in [0, 1, 15, 16, 17, 31, 32, 40] {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = c;
                    assert_eq!(ident_run(&b), byte_by_byte(&b), "{len} {at} {c}");
                }
            }
            assert_eq!(ident_run(&vec![b'Z'; len]), len);
        }
        for s in [
            "_x9 = 1",
            "Az_09az_AZ_09xyzXYZ(",
            "é",
            "abc",
            "a.b",
            "v0@v1",
        ] {
            assert_eq!(ident_run(s.as_bytes()), byte_by_byte(s.as_bytes()), "{s}");
        }
    }

    #[test]
    fn name_sets_find_their_names_only() {
        const NAMES: &[&str] = &[
            "zeta",
            "a",
            "isinstance",
            "mat44",
            "enumerate",
            "ab",
            "float32",
        ];
        const SET: NameSet<{ NAMES.len() }> = NameSet::new(NAMES);
        for n in NAMES {
            assert!(SET.contains(n), "{n}");
        }
        for n in [
            "",
            "b",
            "zet",
            "zetas",
            "isinstanc",
            "isinstancee",
            "enumerated",
            "float64",
        ] {
            assert!(!SET.contains(n), "{n}");
        }
    }

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        tokenize(src)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, t.text.to_string()))
            .collect()
    }

    /// The lexer's fast packing agrees with `word` for every token, near the
    /// end of the source too, and distinct short texts pack apart.
    #[test]
    fn tokens_carry_their_word() {
        let src =
            "if x<=y:\n    z = not a in b ** 2 // c\n    return None\nlongidentifier_9 != q\nx";
        let toks = tokenize(src).unwrap();
        assert!(toks.len() > 20);
        for t in &toks {
            assert_eq!(t.word, word(t.text), "{:?}", t.text);
        }
        assert_eq!(word("longidentifier_9"), u64::MAX);
        assert_eq!(word(""), u64::MAX);
        let short = [
            "<", "<=", "<<", "<<=", "in", "is", "not", "continue", "a", "ab",
        ];
        for (i, a) in short.iter().enumerate() {
            for b in &short[i + 1..] {
                assert_ne!(word(a), word(b), "{a} {b}");
            }
        }
    }

    #[test]
    fn indent_dedent_and_newlines() {
        let toks = kinds("def f(a,\n      b):\n    x = 1  # c\n\n    return x\ny = 2\n");
        let ks: Vec<TokenKind> = toks.iter().map(|t| t.0).collect();
        use TokenKind::*;
        assert_eq!(
            ks,
            vec![
                Name, Name, Op, Name, Op, Name, Op, Op, Newline, Indent, Name, Op, Number, Newline,
                Name, Name, Newline, Dedent, Name, Op, Number, Newline, EndMarker
            ]
        );
    }

    #[test]
    fn numbers_strings_operators() {
        let toks = kinds("x = 1.5e-3 + 0x1F // 2 ** .5\ns = rb'a\\'b' + \"\"\"q\n\"\"\"\n");
        let texts: Vec<&str> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "x",
                "=",
                "1.5e-3",
                "+",
                "0x1F",
                "//",
                "2",
                "**",
                ".5",
                "\n",
                "s",
                "=",
                "rb'a\\'b'",
                "+",
                "\"\"\"q\n\"\"\"",
                "\n",
                ""
            ]
        );
    }

    #[test]
    fn positions_are_one_based() {
        let toks = tokenize("a = 1\n  \n    \nif a:\n    b = 2\n").unwrap();
        let b = toks.iter().find(|t| t.text == "b").unwrap();
        assert_eq!((b.line(), b.col()), (5, 5));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // Python's col_offset + 1: `é` and `ü` are one column each, and a
        // non-ASCII character anywhere switches every column to counting.
        let col = |src: &str, text: &str| {
            let toks = tokenize(src).unwrap();
            let t = toks.iter().find(|t| t.text == text).unwrap();
            (t.line(), t.col())
        };
        assert_eq!(col("x = 1\né = x + 2\n", "x"), (1, 1));
        assert_eq!(col("a = 1\né = a + 2\n", "+"), (2, 7));
        assert_eq!(col("s = 'üü' + t\n", "t"), (1, 12));
        assert_eq!(col("s = 'uu' + t\n", "t"), (1, 12));
        assert_eq!(col("s = 'üü' + t\nq = s\n", "s"), (1, 1));
        let e = tokenize("é = 1 $\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 7));
    }

    #[test]
    fn errors_have_positions() {
        let e = tokenize("x = (1\n").unwrap_err();
        assert!(e.message.contains("brackets"));
        let e = tokenize("if x:\n        a\n    b\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = tokenize("x = 'abc\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 5));
        let e = tokenize("x = 1 $ 2").unwrap_err();
        assert_eq!((e.line, e.col), (1, 7));
    }
}
