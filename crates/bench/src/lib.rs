//! tackle-bench
