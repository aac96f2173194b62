//! Folder trust (judged by `tackle_config::trust`): the terminal question and `tackle trust`.

pub use tackle_config::trust::*;
pub mod command;
pub mod prompt;
pub mod vouch;
