//! Which vector instructions the byte scanners use (`verify`'s brace
//! balance, the token counter's text scan), asked of the CPU once.
//!
//! A scanner is written once, generic over a level number (one of the
//! constants below), and compiled once per level into a function with that
//! level's `target_feature`s; [`level`] picks the instance this CPU can run.

use std::sync::LazyLock;

/// The vector instructions a scanner instance uses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Simd {
    /// 16 bytes a step: part of every x86_64 target (and the portable code
    /// elsewhere).
    Sse2,
    /// 32 bytes a step, with POPCNT.
    Avx2,
    /// AVX-512BW: a 64-byte block in one load, compares straight to bit
    /// masks; with POPCNT.
    Avx512,
}

/// [`Simd::Sse2`] as a const generic argument.
pub const SSE2: u8 = Simd::Sse2 as u8;
/// [`Simd::Avx2`] as a const generic argument.
pub const AVX2: u8 = Simd::Avx2 as u8;
/// [`Simd::Avx512`] as a const generic argument.
pub const AVX512: u8 = Simd::Avx512 as u8;

static LEVEL: LazyLock<Simd> = LazyLock::new(|| {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("popcnt") && has!("avx512bw") {
            return Simd::Avx512;
        }
        if has!("popcnt") && has!("avx2") {
            return Simd::Avx2;
        }
    }
    Simd::Sse2
});

/// The best level this CPU has.
#[inline]
pub fn level() -> Simd {
    *LEVEL
}
