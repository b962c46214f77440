//! Statement lines of a lowered body, stored back to back in one string.
//!
//! A kernel's adjoint emits hundreds of short lines (forward, replay and
//! reverse); one `String` per line made allocation the largest cost of the
//! lowering. Here a line is a range of a shared buffer: pushing one allocates
//! nothing once the buffer has grown, and a block is spliced into its parent
//! with one copy. A replay pass ([`Replay`]) keeps the lines it repeats
//! from its forward pass as their indices there.

use crate::text::Put;
use std::ops::Range;

#[derive(Debug, Default, Clone)]
pub struct Lines {
    text: String,
    /// End offset in `text` of each line.
    ends: Vec<u32>,
}

impl Lines {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes of all lines together.
    pub fn text_len(&self) -> usize {
        self.text.len()
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

    /// Pushes one line, in a single copy: most pushes copy a line already
    /// made (a forward line into the replay, a closed block's into its parent).
    pub fn push(&mut self, line: &str) {
        self.text.put(line);
        self.end_line();
    }

    /// Pushes one line made of `parts` joined.
    pub fn push_parts(&mut self, parts: &[&str]) {
        self.text.put_all(parts);
        self.end_line();
    }

    /// Pushes one line written by `format_args!`, straight into the buffer
    /// (no `String` of its own, which `format!` would also grow as it writes).
    pub fn push_fmt(&mut self, line: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let _ = self.text.write_fmt(line);
        self.end_line();
    }

    /// Pushes one line written in place by `write` (which appends the whole
    /// line to the buffer it is given, and may return what it measured):
    /// no line buffer of its own to fill and copy. In line, so that `write`
    /// (one closure per call site, each called once) is compiled into its
    /// caller rather than called with its captures.
    #[inline(always)]
    pub fn push_with<R>(&mut self, write: impl FnOnce(&mut String) -> R) -> R {
        let r = write(&mut self.text);
        self.end_line();
        r
    }

    /// The last line pushed.
    pub fn last(&self) -> Option<&str> {
        self.len().checked_sub(1).map(|i| self.line(i))
    }

    fn end_line(&mut self) {
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

    fn line(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let bytes = &self.text.as_bytes()[start..self.ends[i] as usize];
        // SAFETY: every end is the text's length right after a whole `&str`
        // (or a formatted one) was appended, so each line starts and ends on
        // a character boundary: the slice is UTF-8. (Slicing the `str` would
        // check both boundaries again for every line of every kernel.)
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Appends every line to `out` (last first with `reversed`), each after
    /// `indent` and ended by a newline, as a body is rendered: room for all
    /// of them is reserved once, and each line is cut between its end and the
    /// one before it, without an index per line.
    pub fn write_indented(&self, out: &mut String, indent: &str, reversed: bool) {
        if reversed {
            let Some((_, before_last)) = self.ends.split_last() else {
                return;
            };
            out.reserve(self.text.len() + self.len() * (indent.len() + 1));
            // The last end is the text's length; the first line starts at 0.
            let starts = std::iter::once(&0).chain(before_last);
            let mut end = self.text.len() as u32;
            for &start in starts.rev() {
                put_indented(out, indent, &self.text, start, end);
                end = start;
            }
        } else {
            self.write_indented_range(out, indent, 0..self.len());
        }
    }

    /// [`Lines::write_indented`] of lines `lines`, in order.
    fn write_indented_range(&self, out: &mut String, indent: &str, lines: Range<usize>) {
        let span = self.span(lines.clone());
        out.reserve(span.len() + lines.len() * (indent.len() + 1));
        let mut start = span.start as u32;
        for &end in &self.ends[lines] {
            put_indented(out, indent, &self.text, start, end);
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
        for line in other.iter().rev() {
            self.push(line);
        }
    }
}

/// Appends `indent`, the text between `start` and `end`, and a newline.
#[inline(always)]
fn put_indented(out: &mut String, indent: &str, text: &str, start: u32, end: u32) {
    let bytes = &text.as_bytes()[start as usize..end as usize];
    // SAFETY: as in `Lines::line`, every end is a character boundary.
    let line = unsafe { std::str::from_utf8_unchecked(bytes) };
    out.put_all(&[indent, line, "\n"]);
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
        self.text_len += forward.span(last..last + 1).len();
        // Kernels are a few KB: far fewer than 2^31 lines.
        self.order.push(SHARED | last as u32);
    }

    /// Pushes a line of its own, made of `parts` joined.
    pub fn push_parts(&mut self, parts: &[&str]) {
        self.own.push_parts(parts);
        let last = self.own.len() - 1;
        self.text_len += self.own.span(last..last + 1).len();
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
                Err(i) => out.push(self.own.line(i)),
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
                    let span = forward.span(lines.clone());
                    let at = |n: usize, byte: usize| byte + n * per_line;
                    out.put(&rendered[at(lines.start, span.start)..at(lines.end, span.end)]);
                }
                (Ok(lines), None) => forward.write_indented_range(out, indent, lines),
                (Err(i), _) => out.put_all(&[indent, self.own.line(i), "\n"]),
            }
        }
    }
}

impl<'a> Extend<&'a str> for Lines {
    fn extend<I: IntoIterator<Item = &'a str>>(&mut self, lines: I) {
        for line in lines {
            self.push(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(lines: &[&str]) -> Lines {
        let mut l = Lines::default();
        l.extend(lines.iter().copied());
        l
    }

    #[test]
    fn lines_keep_their_boundaries_and_order() {
        let mut a = of(&["x = 1;", "", "y = x;"]);
        assert_eq!(a.iter().collect::<Vec<_>>(), ["x = 1;", "", "y = x;"]);
        assert_eq!(a.len(), 3);
        a.push_parts(&["    ", "z", ";"]);
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
        u.push_parts(&["x", "é", "𝔸"]);
        u.push_fmt(format_args!("{}∂", "ü"));
        assert_eq!(
            u.iter().collect::<Vec<_>>(),
            ["// é = 1", "∂", "", "xé𝔸", "ü∂"]
        );
    }

    #[test]
    fn formatted_lines_and_reuse_after_clear() {
        let mut a = Lines::with_capacity(64, 4);
        a.push("a;");
        a.push_fmt(format_args!("var_{} = {}{};", 3, "x", 1.5));
        assert_eq!(a.iter().collect::<Vec<_>>(), ["a;", "var_3 = x1.5;"]);
        a.clear();
        assert_eq!((a.len(), a.text_len()), (0, 0));
        a.push_fmt(format_args!("{}", "b;"));
        a.push("");
        assert_eq!(a.iter().collect::<Vec<_>>(), ["b;", ""]);
    }

    #[test]
    fn lines_written_in_place_and_copied() {
        let mut a = Lines::default();
        assert_eq!(a.last(), None);
        let at = a.push_with(|t| {
            t.push_str("x = f(");
            let at = t.len();
            t.push_str("a, b);");
            at
        });
        assert_eq!((a.last(), at), (Some("x = f(a, b);"), 6));
    }

    #[test]
    fn replay_shares_forward_lines_and_keeps_its_own() {
        let mut forward = of(&["a;"]);
        let mut replay = Replay::with_capacity(4);
        replay.push_last_of(&forward);
        forward.push("é;");
        replay.push_last_of(&forward);
        replay.push_parts(&["// ", "s;"]);
        forward.push("s;");
        forward.push("t;");
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
        // Written from the lines, or copied from the forward pass written alike.
        let mut rendered = String::new();
        forward.write_indented(&mut rendered, "  ", false);
        let expected = "  a;\n  é;\n  // s;\n  t;\n";
        for from in [None, Some(rendered.as_str())] {
            let mut out = String::new();
            replay.write_indented(&mut out, "  ", &forward, from);
            assert_eq!(out, expected);
        }
        replay.clear();
        assert_eq!((replay.len(), replay.text_len()), (0, 0));
    }

    #[test]
    fn lines_written_indented_in_either_order() {
        let mut out = String::from("{\n");
        Lines::default().write_indented(&mut out, "  ", true);
        let a = of(&["a;", "", "é = 1;"]);
        a.write_indented(&mut out, "  ", false);
        a.write_indented(&mut out, "", true);
        assert_eq!(out, "{\n  a;\n  \n  é = 1;\né = 1;\n\na;\n");
    }
}
