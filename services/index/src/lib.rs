//! zhiwen-index (being built).
