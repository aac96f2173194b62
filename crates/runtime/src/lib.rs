//! tackle-runtime
