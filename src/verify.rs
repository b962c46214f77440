//! Pattern checks on the generated source, per target. They catch a lowering
//! that produced something which is not a launchable warp kernel (a missing
//! entry point, a broken grid-stride loop) before it reaches the dataset.
//! A failing row is rejected with a short, stable reason slug that the
//! manifest counts.
//!
//! This runs on every row, so the searches use memchr's SIMD substring
//! finders and stop at the first match: the patterns sit near the top of
//! each function.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::lower::{KernelIr, Target};
use crate::simd::{AVX2, AVX512, SSE2, Simd};

/// The CUDA grid-stride loop warp wraps every kernel body in, as three
/// pieces: start over blockDim/blockIdx/threadIdx, bound, stride over gridDim.
const GRID_STRIDE: [&str; 3] = [
    "_idx = static_cast<size_t>(blockDim.x) * static_cast<size_t>(blockIdx.x) + static_cast<size_t>(threadIdx.x);",
    "_idx < dim.size;",
    "_idx += static_cast<size_t>(blockDim.x) * static_cast<size_t>(gridDim.x))",
];

/// Block-level shared memory for tile programming, declared by every CUDA kernel.
const TILE_STORAGE: &str = "wp::tile_shared_storage_t tile_mem;";

/// At most this much layout (newline and indentation) between two pieces of
/// the grid-stride loop.
const MAX_GAP: usize = 64;

/// The declarations every entry point starts with, searched with finders
/// built once: the rest of a signature (kernel name, hash) is then compared
/// in place, instead of building a finder per row for a needle made per row.
// `extern "C" __launch_bounds__(N) __global__ void WP_MAXNREG(R) NAME(`: the
// kernel options put attributes around `__global__ void` (see `after_head`).
const CUDA_KERNEL: &str = "__global__ void ";
const CPU_KERNEL: &str = "static void ";
const CPU_ENTRY: &str = "WP_API void ";
static HEAD_FINDERS: LazyLock<[Finder<'static>; 3]> =
    LazyLock::new(|| [CUDA_KERNEL, CPU_KERNEL, CPU_ENTRY].map(Finder::new));

static GRID_FINDERS: LazyLock<[LongFinder; 3]> = LazyLock::new(|| GRID_STRIDE.map(LongFinder::new));
static TILE_FINDER: LazyLock<LongFinder> = LazyLock::new(|| LongFinder::new(TILE_STORAGE));

/// Finds a needle longer than memchr's vector searchers take (32 bytes):
/// its first 32 bytes by a vector searcher, the rest compared in place. For
/// a longer needle memchr runs Two-Way behind a prefilter: the tile storage
/// and the grid-stride loop took ~3,100 instructions a function to find that
/// way, ~1,700 this way.
struct LongFinder {
    head: Finder<'static>,
    needle: &'static [u8],
}

impl LongFinder {
    /// Up to this many leading bytes go to the vector searcher.
    const HEAD: usize = 32;

    fn new(needle: &'static str) -> LongFinder {
        let needle = needle.as_bytes();
        LongFinder {
            head: Finder::new(&needle[..needle.len().min(Self::HEAD)]),
            needle,
        }
    }

    /// Where `needle` first occurs in `haystack`. (Not by `find_iter`: its
    /// matches do not overlap, and the needle might start inside a false one.)
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        let mut from = 0;
        while let Some(k) = self.head.find(&haystack[from..]) {
            let at = from + k;
            if haystack[at..].starts_with(self.needle) {
                return Some(at);
            }
            from = at + 1;
        }
        None
    }
}

/// Check one kernel's generated code for `target`. `module` is the whole
/// module source the kernel's functions were taken from, if it was
/// assembled: the CPU checks need it (its entry points live there); a CUDA
/// kernel is checked on its own functions, and against the module when given.
pub fn verify(target: Target, ir: &KernelIr, module: Option<&str>) -> Result<(), &'static str> {
    match target {
        Target::Cuda => verify_cuda(ir, module),
        Target::Cpu => verify_cpu(ir, module.unwrap_or_default()),
    }
}

fn verify_cuda(ir: &KernelIr, module: Option<&str>) -> Result<(), &'static str> {
    let name = &ir.name;
    let head = &HEAD_FINDERS[0];
    let hash = entry_hash(&ir.forward, head, name, "_cuda_kernel_forward(")
        .ok_or("cuda_missing_forward_entry")?;
    let backward = [name.as_str(), "_", hash, "_cuda_kernel_backward("];
    if !has_backward(ir, module.unwrap_or_default(), head, &backward) {
        return Err("cuda_missing_backward_entry");
    }
    for body in passes(ir) {
        // `@wp.kernel(grid_stride=False)` kernels bound their one index instead.
        if !grid_stride_loop(body) && !body.contains(LEAN_BOUNDS_CHECK) {
            return Err("cuda_missing_grid_stride");
        }
        if TILE_FINDER.find(body.as_bytes()).is_none() {
            return Err("cuda_missing_tile_storage");
        }
        if !balanced(body) {
            return Err("cuda_unbalanced_braces");
        }
    }
    if let Some(module) = module
        && !passes(ir).all(|body| embeds(module, body))
    {
        return Err("cuda_ir_not_in_module");
    }
    Ok(())
}

fn verify_cpu(ir: &KernelIr, module: &str) -> Result<(), &'static str> {
    let name = ir.name.as_str();
    let [_, kernel, entry] = &*HEAD_FINDERS;
    let hash = entry_hash(&ir.forward, kernel, name, "_cpu_kernel_forward(")
        .ok_or("cpu_missing_forward_kernel")?;
    if !has_backward(
        ir,
        module,
        kernel,
        &[name, "_", hash, "_cpu_kernel_backward("],
    ) {
        return Err("cpu_missing_backward_kernel");
    }
    if !passes(ir).all(balanced) {
        return Err("cpu_unbalanced_braces");
    }
    if !contains_signature(module, entry, &[name, "_", hash, "_cpu_forward("]) {
        return Err("cpu_missing_forward_entry");
    }
    let backward_entry = [name, "_", hash, "_cpu_backward("];
    if contains_signature(module, entry, &backward_entry) == ir.backward.is_empty() {
        return Err("cpu_missing_backward_entry");
    }
    if !passes(ir).all(|body| embeds(module, body)) {
        return Err("cpu_ir_not_in_module");
    }
    Ok(())
}

/// Whether `text` holds `head` (a finder's needle) followed at once by `parts`.
fn contains_signature(text: &str, head: &Finder<'_>, parts: &[&str]) -> bool {
    head.find_iter(text.as_bytes()).any(|at| {
        let mut rest = after_head(&text[at + head.needle().len()..]).as_bytes();
        parts
            .iter()
            .all(|part| match rest.strip_prefix(part.as_bytes()) {
                Some(after) => {
                    rest = after;
                    true
                }
                None => false,
            })
    })
}

/// The text after a signature's head, past a CUDA register cap (`WP_MAXNREG(32) `).
fn after_head(rest: &str) -> &str {
    match rest.strip_prefix("WP_MAXNREG(") {
        Some(cap) => cap.split_once(") ").map_or(rest, |(_, name)| name),
        None => rest,
    }
}

/// How a kernel without a grid-stride loop stops threads past the launch.
const LEAN_BOUNDS_CHECK: &str = "if (_idx >= dim.size) return;";

/// The three pieces of the grid-stride loop, in order, separated only by layout.
fn grid_stride_loop(body: &str) -> bool {
    let bytes = body.as_bytes();
    let Some(mut at) = GRID_FINDERS[0].find(bytes) else {
        return false;
    };
    at += GRID_STRIDE[0].len();
    for (finder, piece) in GRID_FINDERS[1..].iter().zip(&GRID_STRIDE[1..]) {
        let window = &bytes[at..bytes.len().min(at + MAX_GAP + piece.len())];
        match finder.find(window) {
            Some(gap) if window[..gap].iter().all(u8::is_ascii_whitespace) => {
                at += gap + piece.len()
            }
            _ => return false,
        }
    }
    true
}

/// Whether the backward function is as it should be: present and starting
/// with `head` + `parts`, or, for a kernel declared `enable_backward=False`,
/// empty and absent from the module as well.
fn has_backward(ir: &KernelIr, module: &str, head: &Finder<'_>, parts: &[&str]) -> bool {
    if ir.backward.is_empty() {
        !contains_signature(module, head, parts)
    } else {
        contains_signature(&ir.backward, head, parts)
    }
}

/// The functions to check: forward, and backward unless it is disabled.
fn passes(ir: &KernelIr) -> impl Iterator<Item = &str> {
    std::iter::once(ir.forward.as_str()).chain(Some(ir.backward.as_str()).filter(|b| !b.is_empty()))
}

/// `module.contains(body)`, but fast for a needle of kilobytes: find the
/// body's first line, then compare the rest in place.
fn embeds(module: &str, body: &str) -> bool {
    let first = body.split_inclusive('\n').next().unwrap_or(body);
    let m = module.as_bytes();
    memchr::memmem::find_iter(m, first.as_bytes()).any(|at| m[at..].starts_with(body.as_bytes()))
}

/// Find `{head}{name}_{8 hex}{suffix}` in `text` and return the hash.
fn entry_hash<'t>(text: &'t str, head: &Finder<'_>, name: &str, suffix: &str) -> Option<&'t str> {
    head.find_iter(text.as_bytes()).find_map(|at| {
        let rest = after_head(&text[at + head.needle().len()..])
            .strip_prefix(name)?
            .strip_prefix('_')?;
        let hash = rest.get(..8)?;
        (hash.bytes().all(|b| b.is_ascii_hexdigit()) && rest[8..].starts_with(suffix))
            .then_some(hash)
    })
}

/// Braces balance outside `//` comments (the comments echo Python source),
/// and the function has a body at all. One pass over the bytes.
fn balanced(code: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    match crate::simd::level() {
        // SAFETY: the CPU has what each instance needs (`simd::level`).
        Simd::Avx512 => return unsafe { balanced_avx512(code.as_bytes()) },
        Simd::Avx2 => return unsafe { balanced_avx2(code.as_bytes()) },
        Simd::Sse2 => {}
    }
    balanced_by::<SSE2>(code.as_bytes())
}

/// [`balanced`] by AVX2 (half the instructions of SSE2's).
///
/// # Safety
/// The CPU must have AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn balanced_avx2(b: &[u8]) -> bool {
    balanced_by::<AVX2>(b)
}

/// [`balanced`] by AVX-512BW (a third fewer instructions than AVX2's).
///
/// # Safety
/// The CPU must have AVX-512BW and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw,popcnt")]
unsafe fn balanced_avx512(b: &[u8]) -> bool {
    balanced_by::<AVX512>(b)
}

/// [`balanced`], 64 bytes a step, by the [`Simd`] numbered `LEVEL`.
///
/// No branch per brace or comment: a brace, slash or line end comes every
/// ~20 bytes of IR, and stopping at each one (as this scan first did) cost a
/// mispredicted branch at most of them. Per block, the braces outside
/// comments are masked and counted by `popcnt`; the order of the braces
/// matters only in a block whose closing braces could take the depth below
/// zero, walked bit by bit.
///
/// The comments of a block by one subtraction: with `S` the bits of the
/// `//` that begin comments and `N` those of the line ends, `N - S - c`
/// (`c`: a comment open at the block's start, a begin at bit -1) borrows
/// from each begin up to the next line end, so it sets every bit from a
/// comment's first `/` to the byte before its `\n`. A second `//` inside a
/// comment leaves a hole at its own `/`, a segment without a comment keeps
/// its line end's bit: bits of slashes and line ends, never of a brace. The
/// borrow out of bit 63 is a comment still open at the block's end.
#[inline(always)]
fn balanced_by<const LEVEL: u8>(b: &[u8]) -> bool {
    let (mut depth, mut opened, mut in_comment) = (0u64, false, false);
    let mut block = |m: Masks, next_is_slash: bool| -> bool {
        let begins = m.slash & (m.slash >> 1 | u64::from(next_is_slash) << 63);
        let (rest, b1) = m.newline.overflowing_sub(begins);
        let (comments, b2) = rest.overflowing_sub(u64::from(in_comment));
        in_comment = b1 | b2;
        let (open, close) = (m.open & !comments, m.close & !comments);
        opened |= open != 0;
        let closes = u64::from(close.count_ones());
        if closes <= depth {
            depth = depth + u64::from(open.count_ones()) - closes;
            return true;
        }
        // Walk the braces in order: the depth may dip below zero.
        let mut braces = open | close;
        while braces != 0 {
            let bit = braces & braces.wrapping_neg();
            if open & bit != 0 {
                depth += 1;
            } else if depth == 0 {
                return false;
            } else {
                depth -= 1;
            }
            braces ^= bit;
        }
        true
    };
    let mut i = 0;
    while i + 64 <= b.len() {
        if !block(masks::<LEVEL>(&b[i..i + 64]), b.get(i + 64) == Some(&b'/')) {
            return false;
        }
        i += 64;
    }
    if i < b.len() {
        let mut tail = [0u8; 64];
        tail[..b.len() - i].copy_from_slice(&b[i..]);
        if !block(masks::<LEVEL>(&tail), false) {
            return false;
        }
    }
    opened && depth == 0
}

/// Where a 64-byte block has each byte [`balanced`] looks at, bit `k` for
/// byte `k`.
struct Masks {
    open: u64,
    close: u64,
    slash: u64,
    newline: u64,
}

/// [`Masks`] of `block` (64 bytes), by the [`Simd`] numbered `LEVEL`: only
/// in the instance of a function compiled for it ([`balanced_avx2`],
/// [`balanced_avx512`]), which runs only where the CPU has it.
#[inline(always)]
fn masks<const LEVEL: u8>(block: &[u8]) -> Masks {
    debug_assert_eq!(block.len(), 64);
    const NEEDLES: [u8; 4] = [b'{', b'}', b'/', b'\n'];
    let mut found = [0u64; 4];
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the loads read `block[0..64]`; AVX2 and AVX-512BW only as said
    // above, SSE2 is part of every x86_64 target.
    unsafe {
        use std::arch::x86_64::{
            __m128i, __m256i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
            _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
            _mm512_cmpeq_epi8_mask, _mm512_loadu_si512, _mm512_set1_epi8,
        };
        let at = block.as_ptr();
        if LEVEL == AVX512 {
            let v = _mm512_loadu_si512(at.cast());
            for (f, n) in found.iter_mut().zip(NEEDLES) {
                *f = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(n as i8));
            }
        } else if LEVEL == AVX2 {
            let v = [0, 32].map(|k| _mm256_loadu_si256(at.add(k) as *const __m256i));
            for (f, n) in found.iter_mut().zip(NEEDLES) {
                let n = _mm256_set1_epi8(n as i8);
                let [lo, hi] = v.map(|v| _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, n)) as u32);
                *f = u64::from(lo) | u64::from(hi) << 32;
            }
        } else {
            let v = [0, 16, 32, 48].map(|k| _mm_loadu_si128(at.add(k) as *const __m128i));
            for (f, n) in found.iter_mut().zip(NEEDLES) {
                let n = _mm_set1_epi8(n as i8);
                for (k, v) in v.iter().enumerate() {
                    *f |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(*v, n)) as u16) << (16 * k);
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (k, c) in block.iter().enumerate() {
        for (f, n) in found.iter_mut().zip(NEEDLES) {
            *f |= u64::from(*c == n) << k;
        }
    }
    let [open, close, slash, newline] = found;
    Masks {
        open,
        close,
        slash,
        newline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skeleton with the shape of warp's CUDA kernels (not its output: only
    /// the lines the rules look at).
    fn cuda_fn(name: &str, pass: &str) -> String {
        format!(
            "extern \"C\" __global__ void {name}_0badf00d_cuda_kernel_{pass}(\n    wp::launch_bounds_t<1> dim)\n{{\n    {TILE_STORAGE}\n\n    for (size_t {}\n         {}\n         {}\n    {{\n        // y[i] = {{}}\n    }}\n}}\n",
            GRID_STRIDE[0], GRID_STRIDE[1], GRID_STRIDE[2]
        )
    }

    fn cuda_ir() -> (KernelIr, String) {
        let ir = KernelIr {
            name: "k".into(),
            forward: cuda_fn("k", "forward"),
            backward: cuda_fn("k", "backward"),
        };
        let module = format!(
            "#include \"builtin.h\"\n\n{}\n\n{}\n",
            ir.forward, ir.backward
        );
        (ir, module)
    }

    #[test]
    fn cuda_rules() {
        let (ir, module) = cuda_ir();
        assert_eq!(verify(Target::Cuda, &ir, Some(module.as_str())), Ok(()));
        let mutate = |f: &dyn Fn(&mut KernelIr)| {
            let mut bad = ir.clone();
            f(&mut bad);
            verify(Target::Cuda, &bad, Some(module.as_str()))
        };
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("gridDim", "blockDim")),
            Err("cuda_missing_grid_stride")
        );
        assert_eq!(
            mutate(&|k| k.backward = k.backward.replace("tile_mem;", "mem;")),
            Err("cuda_missing_tile_storage")
        );
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("__global__ ", "")),
            Err("cuda_missing_forward_entry")
        );
        assert_eq!(
            mutate(&|k| k.backward = k.backward.replace("0badf00d", "0badf00e")),
            Err("cuda_missing_backward_entry")
        );
        assert_eq!(
            mutate(&|k| k.name = "j".into()),
            Err("cuda_missing_forward_entry")
        );
        assert_eq!(
            mutate(&|k| k.forward.push('}')),
            Err("cuda_unbalanced_braces")
        );
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("    {\n", "    {\n\n")),
            Err("cuda_ir_not_in_module")
        );
        // enable_backward=False: fine only if the module has no backward either.
        let fwd_only = KernelIr {
            backward: String::new(),
            ..ir.clone()
        };
        assert_eq!(
            verify(Target::Cuda, &fwd_only, Some(module.as_str())),
            Err("cuda_missing_backward_entry")
        );
        assert_eq!(
            verify(Target::Cuda, &fwd_only, Some(ir.forward.as_str())),
            Ok(())
        );
    }

    /// Without the module (not assembled when it is not stored) every check
    /// on the kernel's own functions still runs; only the embedding cannot.
    #[test]
    fn cuda_rules_without_the_module() {
        let (ir, _) = cuda_ir();
        assert_eq!(verify(Target::Cuda, &ir, None), Ok(()));
        let mutate = |f: &dyn Fn(&mut KernelIr)| {
            let mut bad = ir.clone();
            f(&mut bad);
            verify(Target::Cuda, &bad, None)
        };
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("gridDim", "blockDim")),
            Err("cuda_missing_grid_stride")
        );
        assert_eq!(
            mutate(&|k| k.backward = k.backward.replace("0badf00d", "0badf00e")),
            Err("cuda_missing_backward_entry")
        );
        assert_eq!(
            mutate(&|k| k.backward.push('{')),
            Err("cuda_unbalanced_braces")
        );
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("    {\n", "    {\n\n")),
            Ok(())
        );
        // The CPU checks read the module's entry points: none, no pass.
        let cpu = KernelIr {
            forward: "static void k_12345678_cpu_kernel_forward(\n)\n{\n}\n".into(),
            backward: String::new(),
            ..ir
        };
        assert_eq!(
            verify(Target::Cpu, &cpu, None),
            Err("cpu_missing_forward_entry")
        );
    }

    #[test]
    fn cpu_rules() {
        let f = |pass: &str| {
            format!(
                "template <bool c>\nstatic void k_12345678_cpu_kernel_{pass}(\n    size_t task_index)\n{{\n    return;\n}}\n"
            )
        };
        let ir = KernelIr {
            name: "k".into(),
            forward: f("forward"),
            backward: f("backward"),
        };
        let entries = "WP_API void k_12345678_cpu_forward(\n)\n{\n}\nWP_API void k_12345678_cpu_backward(\n)\n{\n}\n";
        let module = format!("{}\n{}\n{entries}", ir.forward, ir.backward);
        assert_eq!(verify(Target::Cpu, &ir, Some(module.as_str())), Ok(()));
        let no_bwd = module.replace("_cpu_backward(", "_cpu_bwd(");
        assert_eq!(
            verify(Target::Cpu, &ir, Some(no_bwd.as_str())),
            Err("cpu_missing_backward_entry")
        );
        let no_fwd = module.replace(
            "WP_API void k_12345678_cpu_forward",
            "void k_12345678_cpu_forward",
        );
        assert_eq!(
            verify(Target::Cpu, &ir, Some(no_fwd.as_str())),
            Err("cpu_missing_forward_entry")
        );
        let mut bad = ir.clone();
        bad.backward = bad.backward.replace("static void", "void");
        assert_eq!(
            verify(Target::Cpu, &bad, Some(module.as_str())),
            Err("cpu_missing_backward_kernel")
        );
        // enable_backward=False: no backward function, and no entry point for one.
        let fwd_only = KernelIr {
            backward: String::new(),
            ..ir.clone()
        };
        let module_fwd = format!(
            "{}\nWP_API void k_12345678_cpu_forward(\n)\n{{\n}}\n",
            ir.forward
        );
        assert_eq!(
            verify(Target::Cpu, &fwd_only, Some(module_fwd.as_str())),
            Ok(())
        );
        assert_eq!(
            verify(Target::Cpu, &fwd_only, Some(module.as_str())),
            Err("cpu_missing_backward_kernel")
        );
        // A CUDA kernel is not a CPU kernel.
        let (cuda, cuda_module) = cuda_ir();
        assert_eq!(
            verify(Target::Cpu, &cuda, Some(cuda_module.as_str())),
            Err("cpu_missing_forward_kernel")
        );
    }

    #[test]
    fn long_finder_finds_the_first_whole_needle() {
        // A head that repeats itself: the match starts inside false ones.
        let needle = "abababababababababababababababababababababc";
        let finder = LongFinder::new(needle);
        let haystack = format!("xx{}c {needle}", "ab".repeat(23));
        assert_eq!(finder.find(haystack.as_bytes()), Some(6));
        assert_eq!(finder.find(&haystack.as_bytes()[7..]), Some(43));
        assert_eq!(finder.find(&needle.as_bytes()[1..]), None);
    }

    /// The vector scans agree with a byte-by-byte reading on texts of
    /// braces, slashes and line breaks at every offset around their 32-byte
    /// steps.
    #[test]
    fn balanced_scans_agree_with_bytewise() {
        fn bytewise(b: &[u8]) -> bool {
            let (mut depth, mut opened, mut i) = (0i64, false, 0);
            while i < b.len() {
                match b[i] {
                    b'{' => {
                        depth += 1;
                        opened = true;
                    }
                    b'}' => {
                        depth -= 1;
                        if depth < 0 {
                            return false;
                        }
                    }
                    b'/' if b.get(i + 1) == Some(&b'/') => {
                        while i < b.len() && b[i] != b'\n' {
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            opened && depth == 0
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        // Every instance this CPU can run (CI's may lack AVX-512: its
        // instance is then checked where it runs).
        let check = |text: &[u8]| {
            let want = bytewise(text);
            assert_eq!(balanced_by::<SSE2>(text), want, "{:?}", text);
            #[cfg(target_arch = "x86_64")]
            {
                if crate::simd::level() >= Simd::Avx2 {
                    // SAFETY: the CPU has AVX2 and POPCNT (`simd::level`).
                    assert_eq!(unsafe { balanced_avx2(text) }, want, "{:?}", text);
                }
                if crate::simd::level() == Simd::Avx512 {
                    // SAFETY: the CPU has AVX-512BW and POPCNT (`simd::level`).
                    assert_eq!(unsafe { balanced_avx512(text) }, want, "{:?}", text);
                }
            }
            want
        };
        // Up to six 64-byte blocks and a tail: comments and braces across
        // block ends, a `//` split by one.
        for n in 0..6000 {
            let len = n % 400;
            let text: Vec<u8> = (0..len).map(|_| b"{}//\nab {"[next(9) as usize]).collect();
            check(&text);
        }
        // Balanced code whose comments hold stray braces, as generated IR's
        // comments quote Python: all of them balance, and each again with
        // a brace dropped or added agrees with the byte-by-byte reading.
        let (mut balanced_texts, mut cases) = (0, 0);
        for n in 0..3000 {
            let (mut text, mut depth) = (Vec::new(), 0usize);
            for _ in 0..n % 120 {
                match next(7) {
                    0 => {
                        text.push(b'{');
                        depth += 1;
                    }
                    1 if depth > 0 => {
                        text.push(b'}');
                        depth -= 1;
                    }
                    2 => {
                        text.extend_from_slice(b"// x = {a}} / {");
                        let n = next(70);
                        text.extend((0..n).map(|_| b"}{/ a"[next(5) as usize]));
                        text.push(b'\n');
                    }
                    3 => text.extend_from_slice(b"a / b;\n"),
                    _ => {
                        let n = next(20);
                        text.extend((0..n).map(|_| b" ab\n"[next(4) as usize]));
                    }
                }
            }
            text.push(b'{');
            text.extend(std::iter::repeat_n(b'}', depth + 1));
            balanced_texts += usize::from(check(&text));
            for _ in 0..4 {
                let mut mutated = text.clone();
                let at = next(mutated.len() as u64 + 1) as usize;
                match next(3) {
                    0 if at < mutated.len() => drop(mutated.remove(at)),
                    1 => mutated.insert(at, b'}'),
                    _ => mutated.insert(at, b'{'),
                }
                check(&mutated);
                cases += 1;
            }
        }
        assert_eq!(balanced_texts, 3000);
        assert_eq!(cases, 12000);
    }
}
