//! The configured model catalog (resolved by `tackle_config::models`), `tackle models`
//! (`show.rs`, and `probe.rs` for `--probe`), and the windows servers name (`window.rs`).

pub use tackle_config::models::*;
pub mod probe;
pub mod show;
pub mod window;
