//! tackle-cli
