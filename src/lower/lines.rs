//! Statement lines of a lowered body, stored back to back in one string.
//!
//! A kernel's adjoint emits hundreds of short lines (forward, replay and
//! reverse); one `String` per line made allocation the largest cost of the
//! lowering. Here a line is a range of a shared buffer: pushing one allocates
//! nothing once the buffer has grown, and a block is spliced into its parent
//! with one copy.

use crate::text::Put;

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

    /// Pushes a copy of the last line of `other` (the forward pass's line
    /// again in the replay): one copy instead of assembling it twice.
    pub fn push_last_of(&mut self, other: &Lines) {
        let last = other.len().checked_sub(1).expect("no line to copy");
        self.push(other.line(last));
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
        let Some((_, before_last)) = self.ends.split_last() else {
            return;
        };
        out.reserve(self.text.len() + self.len() * (indent.len() + 1));
        // A function in line at both uses (a closure used twice was called).
        #[inline(always)]
        fn put(out: &mut String, indent: &str, text: &str, start: u32, end: u32) {
            let bytes = &text.as_bytes()[start as usize..end as usize];
            // SAFETY: as in `line`, every end is a character boundary.
            let line = unsafe { std::str::from_utf8_unchecked(bytes) };
            out.put_all(&[indent, line, "\n"]);
        }
        // The last end is the text's length; the first line starts at 0.
        let starts = std::iter::once(&0).chain(before_last);
        if reversed {
            let mut end = self.text.len() as u32;
            for &start in starts.rev() {
                put(out, indent, &self.text, start, end);
                end = start;
            }
        } else {
            for (&start, &end) in starts.zip(&self.ends) {
                put(out, indent, &self.text, start, end);
            }
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.line(i))
    }

    /// Appends every line of `other`, in order.
    pub fn extend_from(&mut self, other: &Lines) {
        let base = u32::try_from(self.text.len()).expect("lines exceed 4 GiB");
        self.text.put(&other.text);
        self.ends.extend(other.ends.iter().map(|e| base + e));
    }

    /// Appends the lines of `other` last to first.
    pub fn extend_reversed_from(&mut self, other: &Lines) {
        self.text.reserve(other.text.len());
        for line in other.iter().rev() {
            self.push(line);
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
        let mut b = of(&["p;"]);
        b.push_last_of(&a);
        a.push("é;");
        b.push_last_of(&a);
        assert_eq!(b.iter().collect::<Vec<_>>(), ["p;", "x = f(a, b);", "é;"]);
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
