//! tackle-tools
