//! The process allocator: mimalloc, set up for matching's allocation pattern.

/// mimalloc instead of the system allocator: matching allocates and frees many small
/// buffers from several threads at once (glibc's malloc was 9% of a daily task's CPU at
/// 100k sections; see docs/bench-matcher.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of mimalloc's `mi_option_t`, which libmimalloc-sys leaves
/// unnamed. The same index in mimalloc v2 and v3: the enum keeps its deprecated entries
/// so that indices never move. A test checks that it holds the option's default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// `mi_option_allow_thp` (mimalloc v3; unnamed in libmimalloc-sys, as above).
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// No transparent huge pages for this process, unless `MIMALLOC_ALLOW_THP` is set.
///
/// mimalloc asks the kernel for huge pages on its arenas (`MADV_HUGEPAGE`), and a huge page
/// is resident, and zeroed, as a whole 2 MiB as soon as one byte of it is touched: in
/// `zhiwen match --all` on the evaluation set (docs/benchmarks.md, issue #31) that made the
/// peak resident memory 510-600 MB instead of 330-370 MB, and most of the system time was
/// the kernel zeroing those pages. What mimalloc does for `MIMALLOC_ALLOW_THP=0` at its
/// start, done here: the option stops further `madvise` calls, and `PR_SET_THP_DISABLE`
/// covers the arenas it reserved before `main` (the flag is checked at every page fault).
pub fn no_transparent_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return;
    }
    // SAFETY: as for the purge delay below: an option mimalloc reads when it maps memory.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) }
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) only sets a flag of this process's
    // memory map; a kernel without it returns an error, which leaves things as they were.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Keep freed memory instead of returning it to the OS a second later (mimalloc's
/// default), unless `MIMALLOC_PURGE_DELAY` is set. Fingerprinting allocates and frees the same
/// amounts again and again: with purging, 20% of a matching process's CPU at 100k
/// sections went to the kernel zeroing the pages it had given back (docs/bench-matcher.md,
/// tenth round). The process then stays at its peak resident memory, which is why
/// `zhiwen serve` does not call this: the memory of an upload or a report comes back
/// after it (a second after it is freed), even when the upload was abandoned.
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: `mi_option_set` stores a value mimalloc reads when it would purge; it has no
    // other precondition and may be called at any time, from any thread.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_index_names_mimallocs_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            eprintln!("skipping: MIMALLOC_PURGE_DELAY is set");
            return;
        }
        // SAFETY: reads an option; no precondition.
        let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // 1,000 ms: the default of `mi_option_purge_delay` in mimalloc v3 (the version
        // libmimalloc-sys builds by default); no other option defaults to it.
        assert_eq!(delay, 1000);
    }

    #[test]
    fn the_allow_thp_index_names_mimallocs_allow_thp_and_setting_it_disables_thp() {
        if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
            eprintln!("skipping: MIMALLOC_ALLOW_THP is set");
            return;
        }
        // SAFETY: reads an option; no precondition.
        let allow = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_ALLOW_THP) };
        // 1: the default of `mi_option_allow_thp` on Linux. A weak check (other options
        // default to 1 too): the index is counted in `mi_option_e` of the mimalloc.h that
        // libmimalloc-sys builds, an enum that keeps its deprecated entries.
        assert_eq!(allow, 1);
        no_transparent_huge_pages();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_ALLOW_THP) }, 0);
        #[cfg(target_os = "linux")]
        // SAFETY: reads this process's flag.
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) }, 1);
    }
}
