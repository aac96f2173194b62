//! What a shell must not inherit: variables that make it run code the line does not name, or
//! read the line differently from the bash grammar the caller analyzed.
//!
//! A key names what a line runs only if nothing outside the line decides that. bash reads an
//! environment as code and as settings: `BASH_ENV` is a file it sources before the line,
//! `BASH_FUNC_git%%` is a function it defines (so `git status` runs whatever the function does),
//! `SHELLOPTS`/`BASHOPTS` turn on options such as `noglob`, `xtrace` or `expand_aliases`,
//! `POSIXLY_CORRECT` switches to posix mode, `PS4` is expanded (command substitutions
//! included) on every traced command, `CDPATH` and `OLDPWD` move `cd`. Each of those is
//! removed from what the shell gets, and so from what its commands inherit, whatever
//! `env_pass` says; the list is [`SHELL_ENV_REMOVED`] plus every `BASH_FUNC_*` name.
//!
//! Kept on purpose: `PATH`, `HOME`, the locale and `LD_*`. The user set them for every program
//! they run, and a line that changes them is keyed by the analyzer.
//! Rejected: an empty environment (builds and tools need the user's), and a fixed allowlist
//! (it breaks every toolchain that reads a variable of its own).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// Removed from every shell's environment (names compared exactly, as the shell does), each
/// for what it would change:
pub const SHELL_ENV_REMOVED: &[&str] = &[
    // A file sourced before the line (bash non-interactive; `sh` interactive or posix mode).
    "BASH_ENV",
    "ENV",
    // Shell options and shopt options set before the line runs.
    "SHELLOPTS",
    "BASHOPTS",
    // Posix mode (bash turns it on from the environment, overriding `+o posix`).
    "POSIXLY_CORRECT",
    // Behaviour of an older bash release.
    "BASH_COMPAT",
    // `$0` of the line.
    "BASH_ARGV0",
    // Expanded, command substitutions and all, before every command `set -x` traces.
    "PS4",
    // Where `set -x` traces go.
    "BASH_XTRACEFD",
    // Where `enable -f` loads builtins from.
    "BASH_LOADABLES_PATH",
    // Where a relative `cd` and `cd -` go.
    "CDPATH",
    "OLDPWD",
    // Which words a glob yields, which files command lookup skips.
    "GLOBIGNORE",
    "EXECIGNORE",
    // Word splitting (bash and dash reset it; other `sh` may not).
    "IFS",
    // Limits that make a function call or a `read` fail.
    "FUNCNEST",
    "TMOUT",
    // The value `$SECONDS` counts from.
    "SECONDS",
];

/// The prefix of exported functions (`BASH_FUNC_<name>%%`), which bash defines at start-up.
pub const EXPORTED_FUNCTION_PREFIX: &str = "BASH_FUNC_";

/// Whether a variable of this name is withheld from the shell.
pub fn removed_from_shell(name: &[u8]) -> bool {
    name.starts_with(EXPORTED_FUNCTION_PREFIX.as_bytes())
        || SHELL_ENV_REMOVED.iter().any(|r| r.as_bytes() == name)
}

/// `env` without what [`removed_from_shell`] names.
pub fn scrub(env: &mut Vec<(OsString, OsString)>) {
    env.retain(|(name, _)| !removed_from_shell(name.as_bytes()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_names_are_exact_and_functions_by_prefix() {
        for (name, removed) in [
            ("BASH_ENV", true),
            ("ENV", true),
            ("SHELLOPTS", true),
            ("BASHOPTS", true),
            ("PS4", true),
            ("CDPATH", true),
            ("OLDPWD", true),
            ("POSIXLY_CORRECT", true),
            ("BASH_FUNC_git%%", true),
            ("BASH_FUNC_", true),
            ("BASH_FUNC_a b%%", true),
            ("PATH", false),
            ("HOME", false),
            ("LANG", false),
            ("LD_LIBRARY_PATH", false),
            ("ENVIRONMENT", false),
            ("bash_env", false),
            ("MY_BASH_ENV", false),
            ("BASH_FUNCTIONS", false),
            ("PS1", false),
        ] {
            assert_eq!(removed_from_shell(name.as_bytes()), removed, "{name}");
        }
    }

    #[test]
    fn scrub_keeps_everything_else_in_order() {
        let var = |k: &str, v: &str| (OsString::from(k), OsString::from(v));
        let mut env = vec![
            var("PATH", "/usr/bin"),
            var("BASH_ENV", "/tmp/x"),
            var("BASH_FUNC_ls%%", "() { id; }"),
            var("HOME", "/home/u"),
            var("SHELLOPTS", "xtrace"),
        ];
        scrub(&mut env);
        assert_eq!(env, [var("PATH", "/usr/bin"), var("HOME", "/home/u")]);
    }
}
