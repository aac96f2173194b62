//! tackle-gate: the permission gate as pure policy.
//!
//! **Owns** the decision for one call: given the call's permission keys (`tool.<name>`, then
//! `read:<path>`, `write:<path>`, `tool.bash.cmd:<verb> <args…>`, `fetch:<url>`,
//! `message:<relation>`, `call_peer:<peer>`, `read:artifact://<digest>`...), the
//! `allow`/`ask`/`deny` [`Rule`]s with their [`RuleSource`], the [`Mode`], the [`PathScope`]
//! and [`UrlScope`] and the session's [`Grants`], [`Policy::evaluate`] returns a [`Decision`]
//! that says, for every key that is not simply allowed, which rule, default, scope or mode
//! decided it and how to change that. It also decides whether a tool is advertised at all
//! ([`Policy::advertises`]): a tool no rule could ever allow is left out of the catalog.
//!
//! **Refuses** to do I/O, to parse shell scripts or URLs, to normalize paths (beyond reading
//! the words of a command key lexically), to load config files or to prompt anyone: callers
//! hand it keys and root-relative paths already derived, and route an [`Decision::Ask`] to
//! whatever approver they have. It depends on no other tackle
//! crate, so the runtime, the CLI and tests can all build policies without a store or a tool.
//!
//! **Key decision:** precedence is by effect, not by source or order — deny beats ask beats
//! allow wherever each rule was written — and the scopes sit beneath the rules: a path outside
//! the path scope or a URL outside the URL scope is denied whatever any rule or mode says. The
//! alternative, "last matching rule wins" (as in gitignore), makes a broad project allow
//! silently undo a user's deny. Beneath everything sit the built-in [`PROTECTED`] paths:
//! `write:` keys on `.agents/store/` are denied and on `.agents/` or `.git/` always ask, in
//! every mode, over allow rules and session grants. Patterns are compiled once, at [`Policy::new`], into
//! `globset::GlobSet`s bucketed by the action each pattern fixes (`write`, `tool.bash.cmd`,
//! `fetch`...), so a key meets only its own action's rules plus the few whose action is a
//! wildcard, in one set lookup per bucket, rather than a scan of every pattern.

// Tests report failure by panicking; unwrap is how they do it.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod command;
mod decision;
mod error;
mod grants;
mod key;
mod mode;
mod pattern;
mod policy;
mod protected;
mod rule;
mod scope;

pub use decision::{Because, Decision, KeyVerdict};
pub use error::{ParseEffectError, ParseModeError, PatternError, PolicyError};
pub use grants::Grants;
pub use key::{UNPARSEABLE_BASH, action};
pub use mode::Mode;
pub use pattern::{Pattern, gitignore_glob};
pub use policy::{Policy, Request};
pub use protected::{PROTECTED, ProtectedPath, Protection};
pub use rule::{Effect, Rule, RuleSource};
pub use scope::{PathScope, UrlScope};
