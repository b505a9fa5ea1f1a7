//! zhiwen-eval: measures whether zhiwen finds every copy and accuses no one.
//!
//! It owns the labelled evaluation set ([`dataset`]: registered works drawn from the
//! test corpus (or a larger one named with `--corpus`), and pages made from them by every transformation a
//! pirate uses, plus negatives), the seam to the system under test ([`Detector`]), a
//! brute-force baseline ([`PairwiseDetector`]: the core's `compare` against every
//! registered section, no index), and the metrics ([`metrics`]). [`run_eval`] ties them
//! together for `zhiwen eval`.
//!
//! It reads the corpus at run time and never writes corpus text anywhere: the news sets
//! are copyrighted and must not enter the repository.

pub mod corpus;
pub mod dataset;
mod detector;
mod error;
mod explain;
pub mod metrics;
mod report;
pub mod rng;

pub use detector::{family_flags, Detection, Detector, DetectorOutput, Family, FamilyHit, PairwiseDetector, DNA_FLAG};
pub use error::EvalError;
pub use explain::explain;
pub use report::{default_sweep, evaluate, run_eval, sweep_rows, DatasetSummary, EvalOptions, EvalReport, SweepRow};
