//! Appending short strings without a call into libc.
//!
//! The lowering builds each kernel's C++ from thousands of pieces (names,
//! types, operators, indents), most under 16 bytes, and the dedup forms from
//! one piece per token. `String::push_str` hands every piece of unknown length
//! to `memcpy`, whose call and size dispatch cost more than copying a few
//! bytes: `perf` put 7% of the main job's time in the workers' `memmove`.
//! [`Put::put`] copies up to 64 bytes (a typical line of C++) with
//! overlapping loads and stores, in line, and leaves longer pieces to
//! `push_str`.

pub trait Put {
    /// `push_str`, in line for short pieces.
    fn put(&mut self, s: &str);

    /// [`Put::put`] of each piece in turn.
    #[inline(always)]
    fn put_all(&mut self, pieces: &[&str]) {
        for p in pieces {
            self.put(p);
        }
    }
}

impl Put for String {
    #[inline(always)]
    fn put(&mut self, s: &str) {
        let n = s.len();
        self.reserve(n);
        // SAFETY: `reserve` made room for `n` more bytes past `len`;
        // `copy_bytes` writes exactly the `n` bytes of `s` there, and `s` is
        // whole UTF-8, so the string stays valid UTF-8 at its new length.
        unsafe {
            let v = self.as_mut_vec();
            let len = v.len();
            copy_bytes(s.as_ptr(), v.as_mut_ptr().add(len), n);
            v.set_len(len + n);
        }
    }

    /// One `reserve` for all the pieces (a line of C++ is put as 5 to 15),
    /// and the end kept in a register while they are copied.
    #[inline(always)]
    fn put_all(&mut self, pieces: &[&str]) {
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        self.reserve(total);
        // SAFETY: `reserve` made room for `total` more bytes past `len`; the
        // pieces, `total` bytes together, are copied there back to back, each
        // whole UTF-8 (and none inside this string, which is borrowed
        // mutably), so the string stays valid UTF-8 at its new length.
        unsafe {
            let v = self.as_mut_vec();
            let len = v.len();
            let mut end = v.as_mut_ptr().add(len);
            for p in pieces {
                copy_bytes(p.as_ptr(), end, p.len());
                end = end.add(p.len());
            }
            v.set_len(len + total);
        }
    }
}

/// Copies `n` bytes from `src` to `dst` (not overlapping): short ones by
/// [`copy_short`], the rest by `memcpy`.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's.
    unsafe {
        if n > 64 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else {
            copy_short(src, dst, n);
        }
    }
}

/// Copies `n <= 64` bytes with possibly overlapping loads and stores of the
/// widest size that fits: one or two branches and no loop for every `n`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, not overlapping.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert!(n <= 64);
    // SAFETY (all blocks): every offset read or written is within `0..n`.
    unsafe {
        let copy16 = |at: usize| {
            let v = src.add(at).cast::<u128>().read_unaligned();
            dst.add(at).cast::<u128>().write_unaligned(v);
        };
        if n > 16 {
            copy16(0);
            copy16(n - 16);
            if n > 32 {
                copy16(16);
                copy16(n - 32);
            }
        } else if n >= 8 {
            let head = src.cast::<u64>().read_unaligned();
            let tail = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(head);
            dst.add(n - 8).cast::<u64>().write_unaligned(tail);
        } else if n >= 4 {
            let head = src.cast::<u32>().read_unaligned();
            let tail = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(head);
            dst.add(n - 4).cast::<u32>().write_unaligned(tail);
        } else if n > 0 {
            // 1 to 3 bytes: first, middle and last (some the same byte).
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
    }
}

/// `a == b`, in line for texts up to 16 bytes (the lowering's symbol tables
/// compare names of a few bytes many times a statement; `==` on `str` calls
/// libc's `memcmp` for each).
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    // SAFETY: both are `n` bytes long; every load is within `0..n`.
    unsafe {
        if n >= 8 {
            let load = |p: *const u8, at: usize| p.add(at).cast::<u64>().read_unaligned();
            load(pa, 0) == load(pb, 0) && load(pa, n - 8) == load(pb, n - 8)
        } else if n >= 4 {
            let load = |p: *const u8, at: usize| p.add(at).cast::<u32>().read_unaligned();
            load(pa, 0) == load(pb, 0) && load(pa, n - 4) == load(pb, n - 4)
        } else {
            // 0 to 3 bytes (`i`, `tid`): the first, middle and last byte
            // are every byte.
            n == 0
                || (*pa == *pb
                    && *pa.add(n / 2) == *pb.add(n / 2)
                    && *pa.add(n - 1) == *pb.add(n - 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_appends_every_length_exactly() {
        let source: String = ('a'..='z').chain('A'..='Z').cycle().take(100).collect();
        for start in 0..4 {
            for n in 0..=90 {
                let piece = &source[start..start + n];
                let mut out = String::from("x=");
                out.put(piece);
                assert_eq!(out, format!("x={piece}"), "{n} bytes from {start}");
                // Into a string with no spare room, and one with some.
                let mut tight = String::new();
                tight.put(piece);
                tight.put(piece);
                assert_eq!(tight, format!("{piece}{piece}"));
            }
        }
        for n in 0..=40 {
            let a = &source[..n];
            assert!(same(a, &String::from(a)), "{n} bytes");
            for i in 0..n {
                // One byte different anywhere, or one byte shorter.
                let mut b = a.as_bytes().to_vec();
                b[i] = b'#';
                assert!(
                    !same(a, std::str::from_utf8(&b).unwrap()),
                    "{n} bytes, at {i}"
                );
            }
            if n > 0 {
                assert!(!same(a, &a[..n - 1]));
            }
        }
        let mut multi = String::new();
        multi.put_all(&["é", "∂", "", "wp::add(", "var_12", ");"]);
        assert_eq!(multi, "é∂wp::add(var_12);");
        // Pieces of every length, short and long, into tight and roomy strings.
        for n in 0..=90 {
            let (a, b) = (&source[..n], &source[100 - n / 2..]);
            for mut out in [String::new(), String::with_capacity(256)] {
                out.put_all(&[a, ", ", b, a]);
                assert_eq!(out, format!("{a}, {b}{a}"), "{n} bytes");
            }
        }
    }
}
