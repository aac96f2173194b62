//! Folder trust: a cloned repository cannot grant itself anything.
//!
//! Owns: judging a project layer (`.agents/config.toml`, `.agents/mcp.json`) against the layers
//! beneath it ([`classify`]; the project's agent type files are judged by
//! [`crate::agent_types`], whose widenings join these), the user's record of trusted roots ([`store`]), the decision for
//! one root ([`evaluate`] → [`ProjectTrust`]), how it is shown (the start-up notice, the trust
//! listing) and who may consent to it ([`consent`]; the terminal question is the binary's).
//!
//! Key decision: trust is kept per widening, not per file. A record holds the digest of every
//! widening the user accepted; a project whose widenings are all among them is trusted, so a
//! change that only narrows (a new deny rule, a removed allow, a line moved) keeps trust, and
//! any new or changed widening drops the whole project back to narrow-only until the user
//! trusts it again. A digest of the whole file would re-ask on every harmless edit, which
//! teaches people to say yes without reading.
//!
//! Refuses: to decide anything from the project's own files about whether they are trusted,
//! and to trust implicitly anywhere but on a terminal the user is at (`serve`, `call` without a
//! terminal and `--headless` never ask and never trust).
//!
//! Lives in the binary for now, beside the settings it judges; DESIGN §2 puts folder trust in a
//! `config` crate, which will take `settings/`, `config.rs` and this module together once the
//! agent front ends need them.

pub mod classify;
pub mod consent;
pub mod store;

use std::collections::BTreeSet;
use std::path::Path;

pub use classify::Widening;
pub use store::{TrustRecord, TrustStore};
use tackle_runtime::visible::visible;

/// Where a root stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustState {
    /// The project layer widens nothing (or there is none): it applies whole.
    NothingToTrust,
    /// Trusted, and every widening was accepted.
    Trusted,
    /// Never trusted.
    Untrusted,
    /// Trusted once, but it now widens something that was not accepted.
    Changed,
}

impl TrustState {
    pub fn as_str(self) -> &'static str {
        match self {
            TrustState::NothingToTrust => "nothing to trust",
            TrustState::Trusted => "trusted",
            TrustState::Untrusted => "untrusted",
            TrustState::Changed => "changed since trusted",
        }
    }
}

/// The trust decision for one root.
#[derive(Clone, Debug)]
pub struct ProjectTrust {
    /// The canonical root, as the store keys it.
    pub root: String,
    pub state: TrustState,
    /// Every project setting that widens the layers beneath it.
    pub widenings: Vec<Widening>,
    /// The trust store could not be believed (then every root reads as untrusted).
    pub store_problem: Option<String>,
    /// The user recorded trust in this root (`tackle trust`), whatever it widens now.
    pub recorded: bool,
}

impl ProjectTrust {
    /// Whether the project layer applies whole (its MCP servers start, its widenings hold).
    pub fn applies(&self) -> bool {
        matches!(self.state, TrustState::NothingToTrust | TrustState::Trusted)
    }

    /// Whether the user trusted this root and it widens nothing beyond what they accepted:
    /// what a setting from outside the project's files (an editor's MCP servers) needs.
    pub fn trusted_by_user(&self) -> bool {
        self.recorded && self.applies()
    }

    /// The settings left out because the root is not trusted.
    pub fn ignored(&self) -> &[Widening] {
        if self.applies() { &[] } else { &self.widenings }
    }

    /// What trusting the root now would record.
    pub fn digests(&self) -> BTreeSet<String> {
        self.widenings
            .iter()
            .map(|w| store::digest(&w.item()))
            .collect()
    }

    /// The lines printed to stderr when something was ignored; `None` when nothing was.
    pub fn notice(&self) -> Option<String> {
        let mut text = String::new();
        if let Some(problem) = &self.store_problem {
            text.push_str(&format!("tackle: {}\n", visible(problem)));
        }
        if self.ignored().is_empty() {
            return (!text.is_empty()).then_some(text);
        }
        let why = match self.state {
            TrustState::Changed => {
                "changed since it was trusted and now widens more than was accepted"
            }
            _ => "not trusted",
        };
        text.push_str(&format!(
            "tackle: the project config of {} is {why}; these settings were ignored:\n",
            visible(&self.root)
        ));
        text.push_str(&describe(self.ignored()));
        text.push_str(
            "tackle: review them with `tackle config`; trust this folder with `tackle trust`\n",
        );
        Some(text)
    }
}

/// Each widening on a line, its secrets indented beneath it; every repository-written string
/// made visible (no control characters reach the terminal).
pub fn describe(widenings: &[Widening]) -> String {
    let mut text = String::new();
    for w in widenings {
        text.push_str(&format!(
            "  {} {} ({}): {}\n",
            w.key,
            visible(&w.value),
            visible(&w.origin.to_string()),
            visible(&w.effect)
        ));
        for s in &w.secrets {
            text.push_str(&format!(
                "      secret ${} → {}\n",
                visible(&s.var),
                visible(&s.destination)
            ));
        }
    }
    text
}

/// The decision for `root`, whose project layer has `widenings`, from the store's records.
pub fn evaluate(
    root: &Path,
    widenings: Vec<Widening>,
    store: Option<&TrustStore>,
) -> crate::Result<ProjectTrust> {
    let key = store::root_key(root)?;
    let records = store.map(TrustStore::read).unwrap_or_default();
    let mut trust = ProjectTrust {
        root: key,
        state: TrustState::Untrusted,
        widenings,
        store_problem: records.problem,
        recorded: false,
    };
    trust.recorded = records.roots.contains_key(&trust.root);
    trust.state = decide(&trust.digests(), records.roots.get(&trust.root));
    Ok(trust)
}

/// Pure: a project widening `current` (digests) against what a record accepted.
pub fn decide(current: &BTreeSet<String>, record: Option<&TrustRecord>) -> TrustState {
    match record {
        _ if current.is_empty() => TrustState::NothingToTrust,
        None => TrustState::Untrusted,
        Some(r) if current.is_subset(&r.accepted) => TrustState::Trusted,
        Some(_) => TrustState::Changed,
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|i| store::digest(i)).collect()
    }

    #[test]
    fn decisions_table() {
        let record = TrustRecord {
            trusted_at: 1,
            accepted: set(&["a", "b"]),
        };
        let cases: &[(&[&str], Option<&TrustRecord>, TrustState)] = &[
            (&[], None, TrustState::NothingToTrust),
            (&[], Some(&record), TrustState::NothingToTrust),
            (&["a"], None, TrustState::Untrusted),
            (&["a", "b"], Some(&record), TrustState::Trusted),
            (&["a"], Some(&record), TrustState::Trusted),
            (&["a", "c"], Some(&record), TrustState::Changed),
            (&["c"], Some(&record), TrustState::Changed),
        ];
        for (current, record, want) in cases {
            assert_eq!(decide(&set(current), *record), *want, "{current:?}");
        }
    }
}
