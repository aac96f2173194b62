//! tackle-tool
