//! Handing freed memory back to the OS at the pipeline's natural pauses.
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
