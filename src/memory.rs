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
            if new_size >= ROOM_FROM_BYTES && new_size > layout.size() {
                // SAFETY: the caller's contract, passed on; a plain alignment.
                if let Some(p) = unsafe { grow_in_room(ptr, layout.size(), new_size) } {
                    return p;
                }
            }
            // SAFETY: see the impl; `ptr` is a live mimalloc block, and a
            // block it moves to is aligned as in `alloc`.
            unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

thread_local! {
    /// The room of [`with_growth_room`] on this thread; 0 outside it.
    static GROWTH_ROOM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Least size past which a block growing in [`with_growth_room`] gets the
/// room: smaller blocks (levels, dictionaries, small pages) stay as sized.
#[cfg(not(feature = "system-alloc"))]
const ROOM_FROM_BYTES: usize = 32 << 10;

/// Runs `f` with every block that grows past 32 KiB on this thread, and not
/// past `room`, given `room` bytes at once, so that it grows on in place up
/// to `room`. Parquet's plain encoder starts each page's buffer empty and
/// doubles it value by value: its `realloc` copies were more bytes than the
/// text it copies in. Only the pages touched count in memory, and a freed
/// room is reused whole by the next page's.
pub fn with_growth_room<R>(room: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the previous room back, also when `f` unwinds.
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            GROWTH_ROOM.set(self.0);
        }
    }
    let _restore = Restore(GROWTH_ROOM.replace(room));
    f()
}

/// The block `ptr` (`old_size` bytes asked) grown to `new_size` bytes by the
/// room of [`with_growth_room`]: `ptr` itself if it has room, else a block
/// of the whole room; `None` outside a room or past it.
///
/// # Safety
/// `ptr` is a live block of this allocator with a plain alignment
/// ([`Allocator::plain`]), `old_size` the size it was asked with.
#[cfg(not(feature = "system-alloc"))]
#[cold]
unsafe fn grow_in_room(ptr: *mut u8, old_size: usize, new_size: usize) -> Option<*mut u8> {
    let room = GROWTH_ROOM.get();
    if new_size > room {
        return None;
    }
    // SAFETY: `ptr` is a live mimalloc block (the caller).
    if unsafe { libmimalloc_sys::mi_usable_size(ptr.cast()) } >= new_size {
        return Some(ptr);
    }
    // SAFETY: a non-zero size; a block of at least 16 bytes is aligned to
    // 16, enough for a plain alignment.
    let grown: *mut u8 = unsafe { libmimalloc_sys::mi_malloc(room).cast() };
    if grown.is_null() {
        return None;
    }
    // SAFETY: both blocks hold `old_size` bytes and are distinct; `ptr` is
    // freed once, here, and not used again (it is not returned).
    unsafe {
        std::ptr::copy_nonoverlapping(ptr, grown, old_size);
        libmimalloc_sys::mi_free(ptr.cast());
    }
    Some(grown)
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

/// A table of `len` zeroed `T`s in an anonymous mapping of its own, on
/// transparent huge pages where the kernel gives them. A token counter's
/// line table (8 MiB, read at random, one lookup a line) spans 2,048 pages
/// of 4 KiB, and its lookups waited on TLB misses, prefetches included
/// (`perf annotate`, at 4 MiB); on 2 MiB pages it spans four (its word
/// table, one).
///
/// The process keeps THP off (`main`: its heap churns), so the table's huge
/// pages are faulted in ([`HugePageTable::fault_in`]) with THP allowed for a
/// moment, process-wide: fault tables in before starting other threads,
/// whose page faults in that moment could get huge pages too (harmless, but
/// what `main` avoids). A table not faulted in gets its pages as it is used
/// (small pages then, where THP is off).
///
/// Making a table (map and advise) and faulting it in are two steps, the
/// second on several threads at once ([`HugePageTable::fault_in_on`]), all
/// tables made first: when each thread made its own tables, one thread's
/// advice (which splits or merges the mapping it falls in, neighbours
/// included) waited for the other's faults in the mapping next to it, so the
/// two threads took turns (a `sched_switch` trace: ~16 ms with one core
/// idle). The zeroing is most of the start-up: ~0.15 ms a huge page of
/// memory a process had just freed, 3-8 ms a huge page where the VM had
/// handed the memory back to its host (BENCHMARKS.md, session 26).
pub struct HugePageTable<T> {
    map: memmap2::MmapMut,
    len: usize,
    _items: std::marker::PhantomData<T>,
}

/// Transparent huge pages' size on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

impl<T: bytemuck::Zeroable> HugePageTable<T> {
    /// `len` zeroed items, advised for huge pages (only a hint: where the
    /// kernel says no, the table works the same); out of memory ends the
    /// process, as a `Vec`'s allocation would.
    pub fn zeroed(len: usize) -> HugePageTable<T> {
        let layout = std::alloc::Layout::array::<T>(len).expect("table size fits");
        // A mapping is page-aligned: enough for any `T` up to 4 KiB.
        assert!(layout.align() <= 4096, "item alignment above a page");
        let map = memmap2::MmapMut::map_anon(layout.size().max(1))
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(layout));
        // Linux aligns an anonymous mapping of whole huge pages to one.
        #[cfg(target_os = "linux")]
        if map.len() % HUGE_PAGE == 0 {
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        HugePageTable {
            map,
            len,
            _items: std::marker::PhantomData,
        }
    }
}

impl<T> HugePageTable<T> {
    /// Faults the table's pages in now, as huge pages: each write below
    /// faults in the whole huge page it falls in (zeroed: the items stay
    /// all zero bytes).
    pub fn fault_in(&mut self) {
        self.fault_in_on(1);
    }

    /// [`HugePageTable::fault_in`] on up to `threads` threads, each taking
    /// a share of the huge pages (the zeroing is the work; see above).
    pub fn fault_in_on(&mut self, threads: usize) {
        #[cfg(target_os = "linux")]
        if self.map.len() % HUGE_PAGE == 0 && !self.map.is_empty() {
            let _allowed = ThpAllowed::new();
            let pages = self.map.len() / HUGE_PAGE;
            let per_thread = pages.div_ceil(threads.clamp(1, pages)) * HUGE_PAGE;
            let touch = |share: &mut [u8]| {
                for page in share.chunks_mut(HUGE_PAGE) {
                    page[0] = 0;
                }
            };
            let mut shares = self.map.chunks_mut(per_thread);
            let first = shares.next();
            std::thread::scope(|s| {
                for share in shares {
                    s.spawn(move || touch(share));
                }
                first.map(touch);
            });
        }
        #[cfg(not(target_os = "linux"))]
        let _ = threads;
    }
}

/// THP allowed for the process while any `ThpAllowed` lives. The setting
/// (PR_SET_THP_DISABLE) is the process's, not a thread's: with two threads
/// each lifting and restoring it, one could restore it while the other still
/// faults its table in. So the first guard lifts it and the last one puts it
/// back as it was.
#[cfg(target_os = "linux")]
struct ThpAllowed;

/// Live guards, and the flags the first one found (restored by the last).
#[cfg(target_os = "linux")]
static THP_ALLOWED: std::sync::Mutex<(usize, libc::c_int)> = std::sync::Mutex::new((0, 0));

#[cfg(target_os = "linux")]
impl ThpAllowed {
    fn new() -> ThpAllowed {
        let mut state = THP_ALLOWED.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 == 0 {
            // SAFETY: PR_GET/SET_THP_DISABLE take plain integers and touch no
            // memory of ours.
            let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            if disabled > 0 {
                // SAFETY: as above.
                unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0) };
            }
            state.1 = disabled;
        }
        state.0 += 1;
        ThpAllowed
    }
}

#[cfg(target_os = "linux")]
impl Drop for ThpAllowed {
    fn drop(&mut self) {
        let mut state = THP_ALLOWED.lock().unwrap_or_else(|e| e.into_inner());
        state.0 -= 1;
        let disabled = state.1;
        if state.0 == 0 && disabled > 0 {
            // The flags as they were (bit 0 is "disabled", the others modes).
            // SAFETY: as in `ThpAllowed::new`.
            unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, disabled & !1, 0, 0) };
        }
    }
}

impl<T> std::ops::Deref for HugePageTable<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the mapping holds `len` items' bytes, is page-aligned
        // (checked against `T`'s alignment when made), was zeroed by the OS
        // and written only as `T`s, and all-zero bytes are a `T` (`Zeroable`).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T> std::ops::DerefMut for HugePageTable<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the view unique.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<T>(), self.len) }
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

    #[cfg(not(feature = "system-alloc"))]
    #[test]
    fn a_block_grows_in_place_within_its_room_and_keeps_its_bytes() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = Allocator;
        let room = 1 << 20;
        let layout = |size| Layout::from_size_align(size, 1).unwrap();
        // SAFETY: non-zero sizes; each block is used with the layout it last
        // had and freed once.
        unsafe {
            let small = 20_000;
            let p = a.alloc(layout(small));
            p.write_bytes(0x5a, small);
            let (roomy, size, in_place) = with_growth_room(room, || {
                let roomy = a.realloc(p, layout(small), 2 * small);
                let mut q = roomy;
                let mut size = 2 * small;
                while size * 2 <= room {
                    q = a.realloc(q, layout(size), size * 2);
                    size *= 2;
                }
                (roomy, size, q == roomy)
            });
            assert!(in_place, "doublings up to the room stay in place");
            assert!((0..small).all(|i| *roomy.add(i) == 0x5a), "contents kept");
            // Outside the room, a block grows as mimalloc grows it.
            let beyond = a.realloc(roomy, layout(size), 2 * room);
            assert!((0..small).all(|i| *beyond.add(i) == 0x5a), "contents kept");
            a.dealloc(beyond, layout(2 * room));
            let p = a.alloc(layout(small));
            let grown = a.realloc(p, layout(small), 2 * small);
            assert!(
                libmimalloc_sys::mi_usable_size(grown.cast()) < room,
                "no room outside"
            );
            a.dealloc(grown, layout(2 * small));
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

    #[test]
    fn huge_page_tables_are_zeroed_tables_of_their_length() {
        #[derive(Clone, Copy, bytemuck::Zeroable)]
        #[repr(C, align(64))]
        struct Set([u64; 8]);
        // Whole huge pages (faulted in at once), part of one and empty
        // (`fault_in` leaves those to fault in as used).
        for len in [1 << 16, 3, 0] {
            let mut t = HugePageTable::<Set>::zeroed(len);
            t.fault_in();
            assert_eq!(t.len(), len);
            assert!(t.iter().all(|s| s.0 == [0; 8]));
            assert_eq!(t.as_ptr() as usize % 64, 0, "aligned as a Set");
            for (i, s) in t.iter_mut().enumerate() {
                s.0[i % 8] = i as u64 + 1;
            }
            assert!(
                t.iter()
                    .enumerate()
                    .all(|(i, s)| s.0[i % 8] == i as u64 + 1)
            );
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn making_a_table_leaves_the_thp_switch_as_it_was() {
        // SAFETY: PR_GET/SET_THP_DISABLE take plain integers.
        let get = || unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        let before = get();
        for disabled in [1, 0] {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, disabled, 0, 0, 0) };
            HugePageTable::<u64>::zeroed(1 << 19).fault_in();
            assert_eq!(get(), disabled as i32);
        }
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, before & 1, before & !1, 0, 0) };
    }
}
