//! tackle-tools

pub mod page;
