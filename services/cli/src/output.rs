//! Standard output of the commands. `println!` panics when stdout is a closed pipe
//! (`zhiwen ... | head`); [`outln!`] returns the write's error instead, which `main`
//! turns into a quiet success for a broken pipe and into one error line otherwise.

/// `println!` to standard output that returns `std::io::Result<()>` instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

pub(crate) use outln;
