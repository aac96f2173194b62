//! The configured model catalog (resolved by `tackle_config::models`) and `tackle models`.

pub use tackle_config::models::*;
pub mod show;
