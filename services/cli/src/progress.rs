//! Progress bars on stderr for long runs (hidden when stderr is not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// Renders the ingest and matcher progress callbacks with indicatif.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar that appears when the first phase starts.
    pub fn new() -> Self {
        Bar { bar: ProgressBar::hidden() }
    }
}

impl zhiwen_ingest::Progress for Bar {
    fn start(&self, phase: &str, total: Option<u64>) {
        self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        match total {
            Some(n) => {
                self.bar.set_length(n);
                self.bar.set_style(
                    ProgressStyle::with_template("{msg:>14} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
            }
            None => self.bar.set_style(ProgressStyle::default_spinner()),
        }
        self.bar.set_position(0);
        self.bar.set_message(phase.to_owned());
    }
    fn set_total(&self, total: u64) {
        self.bar.set_length(total);
    }
    fn advance(&self, units: u64) {
        self.bar.inc(units);
    }
    fn message(&self, msg: &str) {
        self.bar.set_message(msg.to_owned());
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
