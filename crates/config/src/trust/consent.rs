//! Who may say yes to trusting a root. The front end that has a person at it supplies the
//! asking kind (the binary's terminal question); everything else never asks.

use super::ProjectTrust;

/// Whoever may say yes to trusting a root.
pub trait Consent {
    /// Whether the user trusts `trust.root` with everything in `trust.widenings`.
    fn ask(&self, trust: &ProjectTrust) -> bool;
}

/// Never asks, never trusts: `serve`, `config`, `--headless`, no terminal.
pub struct NeverAsk;

impl Consent for NeverAsk {
    fn ask(&self, _: &ProjectTrust) -> bool {
        false
    }
}
