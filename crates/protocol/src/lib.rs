//! tackle-protocol
