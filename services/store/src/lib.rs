//! zhiwen-store (being built).
