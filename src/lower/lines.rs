//! Statement lines of a lowered body, stored back to back in one string.
//!
//! A kernel's adjoint emits hundreds of short lines (forward, replay and
//! reverse); one `String` per line made allocation the largest cost of the
//! lowering. Here a line is a range of a shared buffer: pushing one allocates
//! nothing once the buffer has grown, and a block is spliced into its parent
//! with one copy. A replay pass ([`Replay`]) keeps the lines it repeats
//! from its forward pass as their indices there.
//!
//! Every line is stored after [`LINE_START`]: a newline (ending the line
//! before it) and a CUDA kernel's body indent. The lowering writes it as the
//! start of its own indentation, so storing it costs nothing, and a CUDA
//! kernel, the main job's only rendering, then copies a body as it is stored
//! (a run of lines at once) instead of indenting it line by line.

use crate::text::Put;
use std::ops::Range;

/// A CUDA kernel's body indent.
pub const CUDA_INDENT: &str = "        ";

/// What every stored line starts with: a newline and [`CUDA_INDENT`].
pub const LINE_START: &str = "\n        ";

#[derive(Debug, Default, Clone)]
pub struct Lines {
    /// The lines, each after `LINE_START`.
    text: String,
    /// End offset in `text` of each line.
    ends: Vec<u32>,
}

impl Lines {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes of all lines together (each without its `LINE_START`).
    pub fn text_len(&self) -> usize {
        self.text.len() - self.len() * LINE_START.len()
    }

    pub fn with_capacity(bytes: usize, lines: usize) -> Lines {
        Lines {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(lines),
        }
    }

    /// Empties the lines, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Pushes one line, `LINE_START` first, in a single copy: most pushes
    /// copy a line already made (a forward line into the replay, a closed
    /// block's into its parent).
    pub fn push(&mut self, line: &str) {
        self.text.put(line);
        self.end_line();
    }

    /// Pushes one line made of `parts` joined, `LINE_START` first.
    pub fn push_parts(&mut self, parts: &[&str]) {
        self.text.put_all(parts);
        self.end_line();
    }

    /// Pushes one line written by `format_args!`, `LINE_START` first,
    /// straight into the buffer (no `String` of its own, which `format!`
    /// would also grow as it writes).
    pub fn push_fmt(&mut self, line: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let _ = self.text.write_fmt(line);
        self.end_line();
    }

    /// Pushes one line written in place by `write` (which appends the whole
    /// line, `LINE_START` first, to the buffer it is given, and may return
    /// what it measured): no line buffer of its own to fill and copy. In
    /// line, so that `write` (one closure per call site, each called once)
    /// is compiled into its caller rather than called with its captures.
    #[inline(always)]
    pub fn push_with<R>(&mut self, write: impl FnOnce(&mut String) -> R) -> R {
        let r = write(&mut self.text);
        self.end_line();
        r
    }

    /// The last line pushed, as it was pushed (`LINE_START` first).
    pub fn last_stored(&self) -> Option<&str> {
        let last = self.len().checked_sub(1)?;
        let stored = self.span(last..last + 1);
        Some(slice(&self.text, stored.start, stored.end))
    }

    fn end_line(&mut self) {
        let start = self.ends.last().map_or(0, |&e| e as usize);
        debug_assert!(
            self.text[start..].starts_with(LINE_START),
            "a line starts with LINE_START"
        );
        // Kernels are a few KB; a 4 GiB body would fail far earlier.
        self.ends
            .push(u32::try_from(self.text.len()).expect("lines exceed 4 GiB"));
    }

    /// Where lines `lines` sit in the text, from the first one's start to
    /// the last one's end.
    fn span(&self, lines: Range<usize>) -> Range<usize> {
        let end_of = |n: usize| n.checked_sub(1).map_or(0, |i| self.ends[i] as usize);
        end_of(lines.start)..end_of(lines.end)
    }

    /// Whether some line contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        memchr::memmem::find(self.text.as_bytes(), needle.as_bytes()).is_some()
    }

    /// Line `i` without its `LINE_START`.
    fn line(&self, i: usize) -> &str {
        self.unstarted(self.span(i..i + 1))
    }

    /// Bytes of line `i` without its `LINE_START`.
    fn line_len(&self, i: usize) -> usize {
        self.span(i..i + 1).len() - LINE_START.len()
    }

    /// The stored line at `stored` without its `LINE_START`.
    fn unstarted(&self, stored: Range<usize>) -> &str {
        // Sliced as a `str`: that its start is past a whole `LINE_START` is
        // the pushers' word, not the type's.
        &self.text[stored.start + LINE_START.len()..stored.end]
    }

    /// Appends every line to `out` (last first with `reversed`), each after
    /// `indent` and ended by a newline, as a body is rendered: room for all
    /// of them is reserved once, and each line is cut between its end and the
    /// one before it, without an index per line.
    pub fn write_indented(&self, out: &mut String, indent: &str, reversed: bool) {
        if !reversed {
            return self.write_indented_range(out, indent, 0..self.len());
        }
        let Some((_, before_last)) = self.ends.split_last() else {
            return;
        };
        out.reserve(self.text_len() + self.len() * (indent.len() + 1));
        // The last end is the text's length; the first line starts at 0.
        let starts = std::iter::once(&0).chain(before_last);
        let mut end = self.text.len();
        // At the CUDA indent each stored line is its newline and the line:
        // after `out`'s last newline is taken off, they are copied as stored,
        // and the last line's newline is put back at the end.
        let as_stored = indent == CUDA_INDENT && out.ends_with('\n');
        if as_stored {
            out.pop();
        }
        for &start in starts.rev() {
            let start = start as usize;
            if as_stored {
                out.put(slice(&self.text, start, end));
            } else {
                out.put_all(&[indent, self.unstarted(start..end), "\n"]);
            }
            end = start;
        }
        if as_stored {
            out.put("\n");
        }
    }

    /// [`Lines::write_indented`] of lines `lines`, in order: at the CUDA
    /// indent, one copy of them all.
    pub fn write_indented_range(&self, out: &mut String, indent: &str, lines: Range<usize>) {
        if lines.is_empty() {
            return;
        }
        let span = self.span(lines.clone());
        if indent == CUDA_INDENT {
            // The run without its first newline, and the last line's.
            out.put_all(&[&self.text[span.start + 1..span.end], "\n"]);
            return;
        }
        let text_len = span.len() - lines.len() * LINE_START.len();
        out.reserve(text_len + lines.len() * (indent.len() + 1));
        let mut start = span.start;
        for &end in &self.ends[lines] {
            let end = end as usize;
            out.put_all(&[indent, self.unstarted(start..end), "\n"]);
            start = end;
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.line(i))
    }

    /// Appends every line of `other`, in order.
    pub fn extend_from(&mut self, other: &Lines) {
        self.extend_from_range(other, 0..other.len());
    }

    /// Appends lines `lines` of `other`, in order, in one copy.
    fn extend_from_range(&mut self, other: &Lines, lines: Range<usize>) {
        let span = other.span(lines.clone());
        // Each line keeps its offset from the first one's start.
        let base = u32::try_from(self.text.len()).expect("lines exceed 4 GiB");
        let start = span.start as u32;
        self.text.put(&other.text[span]);
        self.ends
            .extend(other.ends[lines].iter().map(|e| base + (e - start)));
    }

    /// Appends the lines of `other` last to first.
    pub fn extend_reversed_from(&mut self, other: &Lines) {
        self.text.reserve(other.text.len());
        for i in (0..other.len()).rev() {
            let stored = other.span(i..i + 1);
            self.push(slice(&other.text, stored.start, stored.end));
        }
    }
}

/// `text[start..end]`, where both are ends of lines of `text` (or 0).
#[inline(always)]
fn slice(text: &str, start: usize, end: usize) -> &str {
    let bytes = &text.as_bytes()[start..end];
    // SAFETY: every end is the text's length right after a whole `&str` (or
    // a formatted one) was appended, so it is a character boundary: the
    // slice is UTF-8. (Slicing the `str` would check both boundaries again
    // for every line of every kernel.)
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// A block's replay pass: its forward pass's lines again, but for the few
/// that read differently there (a call commented out, a store replayed by
/// another call). A line shared with the forward pass is kept as its index
/// there, not as a second copy of its text, and runs of such lines are
/// copied at once.
#[derive(Debug, Default, Clone)]
pub struct Replay {
    /// The lines of its own.
    own: Lines,
    /// Its lines in order: [`SHARED`] and the index of a forward-pass line,
    /// or the index of a line of `own`.
    order: Vec<u32>,
    /// Bytes of all its lines together.
    text_len: usize,
}

/// The tag of a [`Replay`] line shared with the forward pass.
const SHARED: u32 = 1 << 31;

impl Replay {
    /// Room for `lines` lines, a few of them its own.
    pub fn with_capacity(lines: usize) -> Replay {
        Replay {
            own: Lines::with_capacity(8 * lines, lines / 4),
            order: Vec::with_capacity(lines),
            text_len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Bytes of all lines together, as if each were stored.
    pub fn text_len(&self) -> usize {
        self.text_len
    }

    pub fn clear(&mut self) {
        self.own.clear();
        self.order.clear();
        self.text_len = 0;
    }

    /// Shares the last line of `forward`, the forward pass of its block.
    pub fn push_last_of(&mut self, forward: &Lines) {
        let last = forward.len().checked_sub(1).expect("no line to share");
        self.text_len += forward.line_len(last);
        // Kernels are a few KB: far fewer than 2^31 lines.
        self.order.push(SHARED | last as u32);
    }

    /// Pushes a line of its own, made of `parts` joined.
    pub fn push_parts(&mut self, parts: &[&str]) {
        self.own.push_parts(parts);
        let last = self.own.len() - 1;
        self.text_len += self.own.line_len(last);
        self.order.push(last as u32);
    }

    /// Its lines in order as runs: `Ok` for consecutive lines of the
    /// forward pass, `Err` for one line of its own.
    fn runs(&self) -> impl Iterator<Item = Result<Range<usize>, usize>> + '_ {
        let mut rest = &self.order[..];
        std::iter::from_fn(move || {
            let (&first, tail) = rest.split_first()?;
            if first & SHARED == 0 {
                rest = tail;
                return Some(Err(first as usize));
            }
            let n = 1 + tail
                .iter()
                .zip(first..)
                .take_while(|&(&next, prev)| next == prev + 1)
                .count();
            rest = &rest[n..];
            let start = (first & !SHARED) as usize;
            Some(Ok(start..start + n))
        })
    }

    /// Appends its lines to `out`, the shared ones from `forward`.
    pub fn append_to(&self, out: &mut Lines, forward: &Lines) {
        for run in self.runs() {
            match run {
                Ok(lines) => out.extend_from_range(forward, lines),
                Err(i) => out.extend_from_range(&self.own, i..i + 1),
            }
        }
    }

    /// [`Lines::write_indented`] of its lines in order, the shared ones from
    /// `forward`. `rendered`, if given, is `forward` already written that
    /// way (each line after `indent`, then a newline, from its start): a run
    /// of shared lines is then one copy of it.
    pub fn write_indented(
        &self,
        out: &mut String,
        indent: &str,
        forward: &Lines,
        rendered: Option<&str>,
    ) {
        let per_line = indent.len() + 1;
        for run in self.runs() {
            match (run, rendered) {
                (Ok(lines), Some(rendered)) => {
                    // `byte` is past `n` stored lines, each written there as
                    // `indent`, the line and a newline.
                    let span = forward.span(lines.clone());
                    let at = |n: usize, byte: usize| byte - n * LINE_START.len() + n * per_line;
                    out.put(&rendered[at(lines.start, span.start)..at(lines.end, span.end)]);
                }
                (Ok(lines), None) => forward.write_indented_range(out, indent, lines),
                (Err(i), _) => self.own.write_indented_range(out, indent, i..i + 1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `line` as it is pushed.
    fn stored(line: &str) -> String {
        format!("{LINE_START}{line}")
    }

    fn of(lines: &[&str]) -> Lines {
        let mut l = Lines::default();
        for line in lines {
            l.push(&stored(line));
        }
        l
    }

    #[test]
    fn lines_keep_their_boundaries_and_order() {
        let mut a = of(&["x = 1;", "", "y = x;"]);
        assert_eq!(a.iter().collect::<Vec<_>>(), ["x = 1;", "", "y = x;"]);
        assert_eq!(a.len(), 3);
        a.push_parts(&[LINE_START, "    ", "z", ";"]);
        let b = of(&["p;", "q;"]);
        a.extend_from(&b);
        a.extend_reversed_from(&b);
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            ["x = 1;", "", "y = x;", "    z;", "p;", "q;", "q;", "p;"]
        );
        assert_eq!(a.iter().rev().take(2).collect::<Vec<_>>(), ["p;", "q;"]);
        assert_eq!(a.text_len(), a.iter().map(str::len).sum::<usize>());
        assert_eq!(Lines::default().len(), 0);
        // Lines of multi-byte characters come back whole.
        let mut u = of(&["// é = 1", "∂", ""]);
        u.push_parts(&[LINE_START, "x", "é", "𝔸"]);
        u.push_fmt(format_args!("{LINE_START}{}∂", "ü"));
        assert_eq!(
            u.iter().collect::<Vec<_>>(),
            ["// é = 1", "∂", "", "xé𝔸", "ü∂"]
        );
    }

    #[test]
    fn formatted_lines_and_reuse_after_clear() {
        let mut a = Lines::with_capacity(64, 4);
        a.push(&stored("a;"));
        a.push_fmt(format_args!("{LINE_START}var_{} = {}{};", 3, "x", 1.5));
        assert_eq!(a.iter().collect::<Vec<_>>(), ["a;", "var_3 = x1.5;"]);
        a.clear();
        assert_eq!((a.len(), a.text_len()), (0, 0));
        a.push_fmt(format_args!("{LINE_START}{}", "b;"));
        a.push(LINE_START);
        assert_eq!(a.iter().collect::<Vec<_>>(), ["b;", ""]);
    }

    #[test]
    fn lines_written_in_place_and_copied() {
        let mut a = Lines::default();
        assert_eq!(a.last_stored(), None);
        let at = a.push_with(|t| {
            t.push_str(LINE_START);
            t.push_str("x = f(");
            let at = t.len();
            t.push_str("a, b);");
            at
        });
        let line = stored("x = f(a, b);");
        assert_eq!((a.last_stored(), at), (Some(line.as_str()), 15));
    }

    #[test]
    fn replay_shares_forward_lines_and_keeps_its_own() {
        let mut forward = of(&["a;"]);
        let mut replay = Replay::with_capacity(4);
        replay.push_last_of(&forward);
        forward.push(&stored("é;"));
        replay.push_last_of(&forward);
        replay.push_parts(&[LINE_START, "// ", "s;"]);
        forward.push(&stored("s;"));
        forward.push(&stored("t;"));
        replay.push_last_of(&forward);
        assert_eq!((replay.len(), replay.text_len()), (4, 2 + 3 + 5 + 2));
        let mut lines = of(&["p;"]);
        replay.append_to(&mut lines, &forward);
        assert_eq!(
            lines.iter().collect::<Vec<_>>(),
            ["p;", "a;", "é;", "// s;", "t;"]
        );
        // A run that starts past the text appended to.
        let mut tail = Replay::with_capacity(1);
        tail.push_last_of(&forward);
        let mut lines = Lines::default();
        tail.append_to(&mut lines, &forward);
        assert_eq!(lines.iter().collect::<Vec<_>>(), ["t;"]);
        // Written from the lines, or copied from the forward pass written
        // alike, at the CUDA indent (copied as stored) or another.
        for indent in ["  ", CUDA_INDENT] {
            let mut rendered = String::new();
            forward.write_indented(&mut rendered, indent, false);
            let expected: String = ["a;", "é;", "// s;", "t;"]
                .iter()
                .map(|l| format!("{indent}{l}\n"))
                .collect();
            for from in [None, Some(rendered.as_str())] {
                let mut out = String::new();
                replay.write_indented(&mut out, indent, &forward, from);
                assert_eq!(out, expected);
            }
        }
        replay.clear();
        assert_eq!((replay.len(), replay.text_len()), (0, 0));
    }

    #[test]
    fn lines_written_indented_in_either_order() {
        let mut out = String::from("{\n");
        Lines::default().write_indented(&mut out, "  ", true);
        let a = of(&["a;", "", "é = 1;"]);
        assert!(a.contains("= 1;") && !a.contains("b"));
        a.write_indented(&mut out, "  ", false);
        a.write_indented(&mut out, "", true);
        assert_eq!(out, "{\n  a;\n  \n  é = 1;\né = 1;\n\na;\n");
        // At the CUDA indent, as stored: the same text.
        let i = CUDA_INDENT;
        for start in ["{\n", ""] {
            let mut out = String::from(start);
            a.write_indented(&mut out, i, false);
            a.write_indented(&mut out, i, true);
            a.write_indented_range(&mut out, i, 1..2);
            Lines::default().write_indented(&mut out, i, true);
            let expected = format!("{start}{i}a;\n{i}\n{i}é = 1;\n{i}é = 1;\n{i}\n{i}a;\n{i}\n");
            assert_eq!(out, expected);
        }
    }
}
