//! The process's allocator (mimalloc), and handing freed memory back to the
//! OS at the pipeline's natural pauses.
//!
//! mimalloc keeps the pages a thread freed for that thread to reuse, and a
//! row's strings are allocated by a worker and freed by the writer, so pages
//! of every size a row ever had linger half-used in the workers' heaps and the
//! writer's heap keeps what its largest row group needed. Over a long run the
//! retained part grows: a 2 GiB run peaked ~14% above the 200 MiB main job.
//! A forced collection of the thread's heap after a written row group (the
//! writer, at most every 100 ms) and every [`RELEASE_EVERY_SAMPLES`] samples
//! (each worker) brought that to ~9-10%, for 2-4% more wall time; after
//! every row group it was ~7-10% for 4-13% (BENCHMARKS.md). The writer now
//! releases at most once a second: +7.5-7.8%, with about half the page faults.

/// mimalloc as the global allocator, asked through its plain entry points
/// where they give the alignment a request needs. The `mimalloc` crate asks
/// `mi_malloc_aligned` and `mi_realloc_aligned` for every block, which only
/// find by extra checks and calls that a plain block will do: ~0.6% of the
/// main job's instructions, most of them in the workers' small allocations.
#[cfg(not(feature = "system-alloc"))]
pub struct Allocator;

/// The alignment `mi_malloc` gives a block of at least that size (mimalloc's
/// `MI_MAX_ALIGN_SIZE`, `max_align_t` on 64-bit targets); a smaller block is
/// aligned to its size rounded up to a word or two.
#[cfg(not(feature = "system-alloc"))]
const MI_MAX_ALIGN_SIZE: usize = 16;

#[cfg(not(feature = "system-alloc"))]
impl Allocator {
    /// Whether `mi_malloc` alone aligns a block of `size` bytes to `align`:
    /// mimalloc's own test (`mi_malloc_is_naturally_aligned`) before it
    /// takes the plain path, and the standard library's before `malloc`.
    fn plain(size: usize, align: usize) -> bool {
        align <= MI_MAX_ALIGN_SIZE && align <= size
    }
}

// SAFETY: every block comes from mimalloc and goes back to it: `mi_free`,
// `mi_realloc` and `mi_realloc_aligned` take blocks from its plain and aligned
// entry points alike, and the plain ones are used only where
// `Allocator::plain` says they give the alignment asked for.
#[cfg(not(feature = "system-alloc"))]
unsafe impl std::alloc::GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Allocator::plain(layout.size(), layout.align()) {
            // SAFETY: see the impl; a non-zero size (`plain`).
            unsafe { libmimalloc_sys::mi_malloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Allocator::plain(layout.size(), layout.align()) {
            // SAFETY: as in `alloc`.
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if Allocator::plain(new_size, layout.align()) {
            // SAFETY: see the impl; `ptr` is a live mimalloc block, and a
            // block it moves to is aligned as in `alloc`.
            unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

/// Samples a worker processes between two collections of its heap.
pub const RELEASE_EVERY_SAMPLES: u64 = 1024;

/// Releases at most once per `interval`: for the writer, which asks at every
/// row group (~35 a second on the main job), while the creep it stops takes
/// seconds to build up.
pub struct Releaser {
    interval: std::time::Duration,
    last: std::time::Instant,
}

impl Releaser {
    pub fn new(interval: std::time::Duration) -> Releaser {
        Releaser {
            interval,
            last: std::time::Instant::now(),
        }
    }

    /// Releases this thread's free memory if `interval` has passed since the
    /// last release; true if it did.
    pub fn maybe_release(&mut self) -> bool {
        if self.last.elapsed() < self.interval {
            return false;
        }
        release_free_memory();
        self.last = std::time::Instant::now();
        true
    }
}

/// Returns the calling thread's free pages to the OS. A no-op under the
/// system allocator (the `system-alloc` feature).
pub fn release_free_memory() {
    #[cfg(not(feature = "system-alloc"))]
    // SAFETY: mi_collect takes a flag and works on the allocator's own state;
    // with mimalloc not the global allocator it finds its heaps empty.
    unsafe {
        libmimalloc_sys::mi_collect(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[cfg(not(feature = "system-alloc"))]
    #[test]
    fn blocks_have_the_alignment_asked_for_through_every_entry_point() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 3, 7, 8, 9, 15, 16, 17, 24, 40, 48, 100, 1000, 70_000] {
                let Ok(layout) = Layout::from_size_align(size, align) else {
                    continue;
                };
                let aligned = |p: *mut u8| !p.is_null() && p as usize % align == 0;
                // SAFETY: non-zero sizes; each block is freed once, with its layout.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(aligned(p), "alloc {size} / {align}");
                    p.write_bytes(0xa5, size);
                    let grown = size * 3 + 5;
                    let p = a.realloc(p, layout, grown);
                    assert!(aligned(p), "realloc {size} -> {grown} / {align}");
                    assert!((0..size).all(|i| *p.add(i) == 0xa5), "contents kept");
                    let grown = Layout::from_size_align(grown, align).unwrap();
                    let q = a.realloc(p, grown, size);
                    assert!(aligned(q), "realloc {grown:?} -> {size}");
                    a.dealloc(q, layout);
                    let z = a.alloc_zeroed(layout);
                    assert!(aligned(z), "alloc_zeroed {size} / {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "zeroed");
                    a.dealloc(z, layout);
                }
            }
        }
    }

    #[test]
    fn releases_at_most_once_per_interval() {
        let mut r = Releaser::new(Duration::from_millis(40));
        assert!(!r.maybe_release(), "not before the first interval");
        std::thread::sleep(Duration::from_millis(50));
        assert!(r.maybe_release());
        assert!(!r.maybe_release(), "the interval starts again");
        let mut every_time = Releaser::new(Duration::ZERO);
        assert!(every_time.maybe_release() && every_time.maybe_release());
    }
}
