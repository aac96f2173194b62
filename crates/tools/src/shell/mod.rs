//! Reading shell scripts without running them: the simple commands and the files redirections
//! write and read ([`analyze`], following `cd` and the dialect of the shell that runs the line),
//! the command keys they yield and the wrappers unwrapped ([`keys`]), the second command key
//! of path words resolved through symlinks and `cd` ([`command_paths`]), what is unresolved
//! because it is code or changes later commands ([`arith`], [`builtins`], [`sensitive`]), the
//! `write:`/`read:` keys of redirection targets through symlinks ([`paths`], [`routing`]), the
//! bash search gate ([`search_gate`]) and the denylist of destructive commands ([`denylist`]).
//! Before any of it, [`depth`] bounds how deeply a line nests, so no line can exhaust the
//! recursive parser's stack; a line past the limits is refused, never parsed.
//!
//! What a key set claims is tested against what bash really does: the differential corpus
//! (`tests/shell_differential.rs`) runs every line under bash and dash with recording shims.
//!
//! Refuses to own: deciding. This module says what a script would run and write; the gate
//! decides whether it may, and the bash tool refuses what the search gate or the denylist name.
//!
//! Key decision: scripts are parsed with a real bash grammar (`brush-parser`) and every word is
//! decoded as bash would decode it (quotes, backslashes, `$'…'`), so `c\url`, `'c'url` and
//! `cu''rl` are all `curl`. Whatever cannot be known without running the script — a verb built
//! from an expansion, a parse error, an absurd number of commands — is reported as unresolved,
//! which becomes the key `tool.bash.cmd:?` that no allow rule matches. Rejected: splitting on
//! `;`/`&&`/`|` with a regex, which every quoting trick defeats.

/// The shell that will run a script. The analyzer models bash; under another `sh` every
/// construct whose meaning differs from bash's must be unresolved, so a key never names less
/// than what runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `bash -c`: the grammar the analyzer reads.
    Bash,
    /// A POSIX `sh` that is not bash (dash, busybox ash).
    Sh,
}

pub mod analyze;
pub mod arith;
pub mod builtins;
pub mod command_paths;
pub mod denylist;
pub mod depth;
pub mod keys;
pub mod paths;
pub mod routing;
pub mod search_gate;
pub mod sensitive;

#[cfg(test)]
mod corpus;
