//! Retained tool output (seed 000, "Retained tool output"): capture, previews, artifacts, hints.

pub mod capture;
pub mod preview;
pub mod render;

pub use capture::{CallOutput, FinishedOutput, FinishedStream};
pub use preview::Preview;
