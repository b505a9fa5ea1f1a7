//! zhiwen-eval (being built).
