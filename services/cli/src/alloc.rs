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
}
