//! zhiwen-matcher (being built).
