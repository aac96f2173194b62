//! Every shell option, variable and builtin bash knows, and what changing or running it does to
//! the keys of the commands after it: harmless (with the reason), modelled by the walk, or
//! unresolved.
//!
//! Key decision: a table as data, checked against bash itself. The test
//! `every_name_bash_knows_is_classified` asks the real bash for its `set -o` options, its
//! `shopt` options, its variables (`compgen -v` in a clean environment, `help variables`, and the
//! variable-shaped strings of the binary) and its builtins (`enable -a`), and fails naming any the
//! table lacks, so a new bash cannot add an option or a variable that silently changes what runs.
//! A variable marked [`Effect::Unresolved`] must be one [`super::sensitive::changes_commands`]
//! names. Rejected: a short list of known-dangerous names, where whatever nobody thought of is
//! harmless by default.

/// What changing an option or a variable, or running a builtin, does to the keys of later
/// commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing a key describes; the reason says why.
    Harmless(&'static str),
    /// Changes what later commands are, and the walk follows it; the reason says where.
    Modelled(&'static str),
    /// Changes what later commands are or how a line is read, in a way the walk does not
    /// follow: the line is unresolved.
    Unresolved(&'static str),
}

impl Effect {
    /// Whether the walk can go on reading the line exactly after this.
    pub fn keys_stay_exact(self) -> bool {
        !matches!(self, Effect::Unresolved(_))
    }
}

use Effect::{Harmless, Modelled, Unresolved};

const INTERACTIVE: Effect = Harmless("acts only in an interactive shell; bash -c is not one");
const FEWER: Effect = Harmless("can only stop commands from running or fail them");
const GLOB: Effect = Harmless("changes only what globs match, and a glob is never literal");
const REPORTS: Effect = Harmless("changes only what the shell prints or reports");

/// `set -o` options with their `set` letter, if they have one.
pub const SET_OPTIONS: &[(&str, Option<char>, Effect)] = &[
    (
        "allexport",
        Some('a'),
        Unresolved("exports every later assignment to every command's environment"),
    ),
    (
        "braceexpand",
        Some('B'),
        Harmless("a word with braces is never literal"),
    ),
    ("emacs", None, INTERACTIVE),
    ("errexit", Some('e'), FEWER),
    (
        "errtrace",
        Some('E'),
        Harmless("passes the ERR trap on; a trap is unresolved"),
    ),
    (
        "functrace",
        Some('T'),
        Harmless("passes DEBUG and RETURN traps on; a trap is unresolved"),
    ),
    (
        "hashall",
        Some('h'),
        Harmless("remembers where commands were found; `hash -p` is unresolved"),
    ),
    (
        "histexpand",
        Some('H'),
        Unresolved("`!` history expansion rewrites later lines into commands no key showed"),
    ),
    (
        "history",
        None,
        Unresolved("records lines for history expansion, which rewrites later lines"),
    ),
    ("ignoreeof", None, INTERACTIVE),
    (
        "interactive-comments",
        None,
        Unresolved("turned off, `#` no longer starts a comment"),
    ),
    (
        "keyword",
        Some('k'),
        Unresolved("makes every later `NAME=value` word an assignment"),
    ),
    (
        "monitor",
        Some('m'),
        Harmless("job control changes no command"),
    ),
    ("noclobber", Some('C'), FEWER),
    ("noexec", Some('n'), FEWER),
    ("noglob", Some('f'), GLOB),
    ("nolog", None, REPORTS),
    ("notify", Some('b'), REPORTS),
    ("nounset", Some('u'), FEWER),
    ("onecmd", Some('t'), FEWER),
    (
        "physical",
        Some('P'),
        Unresolved("`cd` resolves symlinks, which the walk does not follow"),
    ),
    ("pipefail", None, REPORTS),
    (
        "posix",
        None,
        Unresolved("changes how bash parses and runs lines"),
    ),
    (
        "privileged",
        Some('p'),
        Unresolved("changes which startup files and variables bash reads"),
    ),
    ("verbose", Some('v'), REPORTS),
    ("vi", None, INTERACTIVE),
    (
        "xtrace",
        Some('x'),
        Harmless("expands PS4, which a script cannot set without being unresolved"),
    ),
];

/// `shopt` options. Either direction of a change counts.
pub const SHOPT_OPTIONS: &[(&str, Effect)] = &[
    (
        "autocd",
        Unresolved("a directory name given as a command becomes `cd`"),
    ),
    (
        "assoc_expand_once",
        Unresolved("changes how subscripts are evaluated"),
    ),
    (
        "cdable_vars",
        Unresolved("`cd NAME` goes to the directory NAME's value names"),
    ),
    (
        "cdspell",
        Unresolved("`cd` corrects a misspelt directory to another"),
    ),
    (
        "checkhash",
        Harmless("only checks that a remembered command still exists"),
    ),
    ("checkjobs", INTERACTIVE),
    ("checkwinsize", REPORTS),
    (
        "cmdhist",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "compat31",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat32",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat40",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat41",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat42",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat43",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    (
        "compat44",
        Unresolved("older bash semantics for quoting and matching"),
    ),
    ("complete_fullquote", INTERACTIVE),
    ("direxpand", INTERACTIVE),
    ("dirspell", INTERACTIVE),
    ("dotglob", GLOB),
    (
        "execfail",
        Harmless("only keeps the shell alive after a failed `exec`"),
    ),
    (
        "expand_aliases",
        Unresolved("aliases replace command words"),
    ),
    (
        "extdebug",
        Unresolved("a DEBUG trap's status can skip or change commands"),
    ),
    (
        "extglob",
        Unresolved("changes how a line is split into words"),
    ),
    (
        "extquote",
        Unresolved("changes how `$'…'` and `$\"…\"` read inside `${…}`"),
    ),
    ("failglob", FEWER),
    ("force_fignore", INTERACTIVE),
    ("globasciiranges", GLOB),
    ("globskipdots", GLOB),
    ("globstar", GLOB),
    ("gnu_errfmt", REPORTS),
    (
        "histappend",
        Harmless("history is never on in a resolved line"),
    ),
    ("histreedit", INTERACTIVE),
    ("histverify", INTERACTIVE),
    ("hostcomplete", INTERACTIVE),
    (
        "huponexit",
        Harmless("only signals jobs when a login shell exits"),
    ),
    ("inherit_errexit", FEWER),
    (
        "interactive_comments",
        Unresolved("turned off, `#` no longer starts a comment"),
    ),
    (
        "lastpipe",
        Unresolved("a pipeline's last command runs in this shell, with its `cd`"),
    ),
    (
        "lithist",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "localvar_inherit",
        Unresolved("changes which values functions see"),
    ),
    (
        "localvar_unset",
        Unresolved("changes which values functions see"),
    ),
    ("login_shell", Harmless("read-only")),
    ("mailwarn", INTERACTIVE),
    ("no_empty_cmd_completion", INTERACTIVE),
    ("nocaseglob", GLOB),
    (
        "nocasematch",
        Harmless("changes only which `case`/`[[` branch matches; each is walked"),
    ),
    (
        "noexpand_translation",
        Unresolved("changes what `$\"…\"` becomes"),
    ),
    ("nullglob", GLOB),
    (
        "patsub_replacement",
        Harmless("changes only `${x/…/…}`, which is never literal"),
    ),
    ("progcomp", INTERACTIVE),
    ("progcomp_alias", INTERACTIVE),
    ("promptvars", INTERACTIVE),
    ("restricted_shell", Harmless("read-only")),
    ("shift_verbose", REPORTS),
    (
        "sourcepath",
        Harmless("changes only where `source` looks; `source` is unresolved"),
    ),
    (
        "varredir_close",
        Harmless("closes `{fd}` descriptors; a named descriptor is unresolved"),
    ),
    ("xpg_echo", Harmless("changes only what `echo` prints")),
];

/// Variables bash gives a meaning. Assigning one marked unresolved must be unresolved:
/// [`super::sensitive::changes_commands`] names each.
pub const VARIABLES: &[(&str, Effect)] = &[
    (
        "BASH",
        Harmless("the shell's own path, read by nothing that runs"),
    ),
    (
        "BASHOPTS",
        Unresolved("sets shopt options for child shells"),
    ),
    ("BASHPID", Harmless("read-only")),
    (
        "BASH_ALIASES",
        Unresolved("assigning an element defines an alias"),
    ),
    ("BASH_ARGC", Harmless("debugger bookkeeping")),
    ("BASH_ARGV", Harmless("debugger bookkeeping")),
    ("BASH_ARGV0", Harmless("sets $0 only")),
    (
        "BASH_CMDS",
        Unresolved("assigning an element sets where a command is found"),
    ),
    ("BASH_COMMAND", Harmless("read-only")),
    ("BASH_COMPAT", Unresolved("older bash semantics")),
    (
        "BASH_ENV",
        Unresolved("a file every non-interactive bash runs first"),
    ),
    ("BASH_EXECUTION_STRING", Harmless("read-only")),
    (
        "BASH_FUNC_",
        Unresolved("the environment prefix of exported functions"),
    ),
    ("BASH_LINENO", Harmless("read-only")),
    (
        "BASH_LOADABLES_PATH",
        Unresolved("where `enable -f` finds builtins"),
    ),
    ("BASH_REMATCH", Harmless("the result of `=~`")),
    ("BASH_SOURCE", Harmless("read-only")),
    ("BASH_SUBSHELL", Harmless("read-only")),
    ("BASH_VERSINFO", Harmless("read-only")),
    ("BASH_VERSION", Harmless("read-only")),
    (
        "BASH_XTRACEFD",
        Unresolved("xtrace output goes to any descriptor, a file's included"),
    ),
    ("CDPATH", Unresolved("`cd NAME` searches it")),
    ("CHILD_MAX", FEWER),
    ("COLUMNS", REPORTS),
    ("COMPREPLY", INTERACTIVE),
    ("COMP_CWORD", INTERACTIVE),
    ("COMP_KEY", INTERACTIVE),
    ("COMP_LINE", INTERACTIVE),
    ("COMP_POINT", INTERACTIVE),
    ("COMP_TYPE", INTERACTIVE),
    ("COMP_WORDBREAKS", INTERACTIVE),
    ("COMP_WORDS", INTERACTIVE),
    (
        "COPROC",
        Harmless("the default name of a coprocess's descriptors"),
    ),
    (
        "DIRSTACK",
        Unresolved("assigning changes where `pushd`/`popd`/`~N` go"),
    ),
    ("EMACS", INTERACTIVE),
    (
        "ENV",
        Unresolved("a file an interactive or POSIX-mode shell runs first"),
    ),
    ("EPOCHREALTIME", Harmless("read-only")),
    ("EPOCHSECONDS", Harmless("read-only")),
    ("EUID", Harmless("read-only")),
    (
        "EXECIGNORE",
        Unresolved("command lookup skips what it matches, so `git` finds ./git"),
    ),
    ("FCEDIT", INTERACTIVE),
    ("FIGNORE", INTERACTIVE),
    ("FUNCNAME", Harmless("read-only")),
    ("FUNCNEST", FEWER),
    ("GLOBIGNORE", GLOB),
    ("GLOBSORT", GLOB),
    ("GROUPS", Harmless("read-only")),
    (
        "HISTCMD",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "HISTCONTROL",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "HISTFILE",
        Unresolved("where history is written: a file write no key shows"),
    ),
    ("HISTFILESIZE", Unresolved("truncates the history file")),
    (
        "HISTIGNORE",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "HISTSIZE",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "HISTTIMEFORMAT",
        Harmless("history is never on in a resolved line"),
    ),
    (
        "HOME",
        Unresolved("`~` and `cd` go there, and programs read their settings there"),
    ),
    ("HOSTFILE", INTERACTIVE),
    ("HOSTNAME", Harmless("read by nothing that runs")),
    ("HOSTTYPE", Harmless("read by nothing that runs")),
    ("IFS", Unresolved("how expansions are split into words")),
    ("IGNOREEOF", INTERACTIVE),
    ("INPUTRC", INTERACTIVE),
    ("INSIDE_EMACS", INTERACTIVE),
    (
        "LANG",
        Unresolved("selects the catalog `$\"…\"` is translated from"),
    ),
    (
        "LANGUAGE",
        Unresolved("selects the catalog `$\"…\"` is translated from"),
    ),
    (
        "LC_ALL",
        Unresolved("selects the catalog `$\"…\"` is translated from"),
    ),
    (
        "LC_COLLATE",
        Unresolved("changes what ranges in globs and `[[` match"),
    ),
    (
        "LC_CTYPE",
        Unresolved("changes which bytes are characters, blanks and letters"),
    ),
    (
        "LC_MESSAGES",
        Unresolved("selects the catalog `$\"…\"` is translated from"),
    ),
    ("LC_NUMERIC", Harmless("changes only how numbers print")),
    ("LC_TIME", Harmless("changes only how times print")),
    ("LINENO", Harmless("read-only in effect")),
    ("LINES", REPORTS),
    ("LS_COLORS", REPORTS),
    ("MACHTYPE", Harmless("read by nothing that runs")),
    ("MAIL", INTERACTIVE),
    ("MAILCHECK", INTERACTIVE),
    ("MAILPATH", INTERACTIVE),
    ("MAPFILE", Harmless("the default array of `mapfile`")),
    ("OLDPWD", Unresolved("`cd -` goes there")),
    ("OPTARG", Harmless("written by getopts")),
    ("OPTERR", REPORTS),
    ("OPTIND", Harmless("getopts' position")),
    ("OSTYPE", Harmless("read by nothing that runs")),
    ("PATH", Unresolved("where commands are found")),
    ("PIPESTATUS", Harmless("read-only")),
    ("POSIXLY_CORRECT", Unresolved("turns on POSIX mode")),
    ("POSIX_PEDANTIC", Unresolved("turns on POSIX mode")),
    (
        "POSIX_PEDANDTIC",
        Unresolved("a spelling bash's binary holds; treated as POSIX_PEDANTIC"),
    ),
    ("PPID", Harmless("read-only")),
    ("PROMPT_COMMAND", Unresolved("code run before each prompt")),
    ("PROMPT_DIRTRIM", INTERACTIVE),
    ("PS0", Unresolved("a prompt: its `$(…)` runs")),
    ("PS1", Unresolved("a prompt: its `$(…)` runs")),
    ("PS2", Unresolved("a prompt: its `$(…)` runs")),
    ("PS3", Unresolved("a prompt: its `$(…)` runs")),
    ("PS4", Unresolved("expanded by xtrace: its `$(…)` runs")),
    ("PWD", Unresolved("a logical `cd ..` starts from it")),
    ("RANDOM", Harmless("a number")),
    ("READLINE_ARGUMENT", INTERACTIVE),
    ("READLINE_LINE", INTERACTIVE),
    ("READLINE_MARK", INTERACTIVE),
    ("READLINE_POINT", INTERACTIVE),
    ("REPLY", Harmless("written by read and select")),
    ("SECONDS", Harmless("a number")),
    ("SHELL", Unresolved("programs run it as the user's shell")),
    (
        "SHELLOPTS",
        Unresolved("sets `set -o` options for child shells"),
    ),
    ("SHLVL", Harmless("a number")),
    ("SRANDOM", Harmless("a number")),
    (
        "SSH2_CLIENT",
        Harmless("read by bash only to find its startup files"),
    ),
    (
        "SSH_CLIENT",
        Harmless("read by bash only to find its startup files"),
    ),
    (
        "TERM",
        Unresolved("programs load the terminal description it names"),
    ),
    (
        "TERMCAP",
        Unresolved("programs load the terminal description it holds"),
    ),
    (
        "TERMINFO",
        Unresolved("programs load terminal descriptions from there"),
    ),
    (
        "TEXTDOMAIN",
        Unresolved("selects the catalog `$\"…\"` is translated from"),
    ),
    (
        "TEXTDOMAINDIR",
        Unresolved("where the catalog `$\"…\"` is translated from lives"),
    ),
    ("TIMEFORMAT", REPORTS),
    ("TMOUT", FEWER),
    (
        "TMPDIR",
        Unresolved("where bash and programs create temporary files"),
    ),
    ("UID", Harmless("read-only")),
    ("_", Harmless("the last argument")),
    ("auto_resume", INTERACTIVE),
    (
        "histchars",
        Harmless("history is never on in a resolved line"),
    ),
];

/// Strings of bash's binary shaped like variable names that are not variables.
pub const NOT_VARIABLES: &[(&str, &str)] = &[
    ("A8E", "binary data"),
    ("ASCII", "a word of bash's messages"),
    ("DESCRIPTION", "a word of bash's help text"),
    ("GNU", "a word of bash's messages"),
    ("IMPLEMENTATION", "a word of bash's help text"),
    ("NULL", "a word of bash's messages"),
    ("POSIX", "a word of bash's messages"),
    ("SYNOPSIS", "a word of bash's help text"),
    ("DEBUG", "a trap name"),
    ("ERR", "a trap name"),
    ("EXIT", "a trap name"),
    ("RETURN", "a trap name"),
    ("CAN", "a readline key name"),
    ("DC1", "a readline key name"),
    ("DC2", "a readline key name"),
    ("DC3", "a readline key name"),
    ("DC4", "a readline key name"),
    ("DEL", "a readline key name"),
    ("DLE", "a readline key name"),
    ("ENQ", "a readline key name"),
    ("EOT", "a readline key name"),
    ("ESC", "a readline key name"),
    ("ETB", "a readline key name"),
    ("ETX", "a readline key name"),
    ("IS1", "a readline key name"),
    ("IS2", "a readline key name"),
    ("IS3", "a readline key name"),
    ("IS4", "a readline key name"),
    ("LFD", "a readline key name"),
    ("NAK", "a readline key name"),
    ("NUL", "a readline key name"),
    ("RET", "a readline key name"),
    ("SOH", "a readline key name"),
    ("SPC", "a readline key name"),
    ("STX", "a readline key name"),
    ("SUB", "a readline key name"),
    ("SYN", "a readline key name"),
];

/// Builtins: what running one does to later commands. Every one is keyed as a command too;
/// those [`super::builtins`] reads are modelled there.
pub const BUILTINS: &[(&str, Effect)] = &[
    (".", Unresolved("runs a file's commands in this shell")),
    (":", Harmless("does nothing")),
    ("[", Modelled("builtins.rs: `-v` subscripts are arithmetic")),
    (
        "alias",
        Modelled("builtins.rs: defining an alias is unresolved"),
    ),
    ("bg", Harmless("job control changes no command")),
    ("bind", Unresolved("readline bindings can run commands")),
    ("break", FEWER),
    (
        "builtin",
        Modelled("keys.rs: the builtin it runs is read in its place"),
    ),
    ("caller", REPORTS),
    (
        "cd",
        Modelled("analyze.rs: the walk follows the working directory"),
    ),
    (
        "command",
        Modelled("keys.rs: the command it runs is read in its place"),
    ),
    ("compgen", Unresolved("`-C`/`-F` run commands")),
    (
        "complete",
        Unresolved("completion specifications name commands"),
    ),
    ("compopt", INTERACTIVE),
    ("continue", FEWER),
    (
        "declare",
        Modelled("builtins.rs: names, `-i`, `-n` and compound values"),
    ),
    (
        "dirs",
        Harmless("`dirs -c` only empties the stack, after which popd fails"),
    ),
    ("disown", Harmless("job control changes no command")),
    ("echo", Harmless("prints")),
    (
        "enable",
        Unresolved("loads builtins from files or turns builtins off"),
    ),
    ("eval", Modelled("keys.rs: its words are read as a script")),
    (
        "exec",
        Modelled("keys.rs: the command it runs is read in its place"),
    ),
    ("exit", FEWER),
    (
        "export",
        Modelled("builtins.rs: exported names are checked like assignments"),
    ),
    ("false", Harmless("does nothing")),
    ("fc", Unresolved("runs commands from history")),
    ("fg", Harmless("job control changes no command")),
    (
        "getopts",
        Modelled("builtins.rs: the name it assigns is checked"),
    ),
    ("hash", Modelled("builtins.rs: `hash -p` is unresolved")),
    ("help", REPORTS),
    (
        "history",
        Unresolved("`history -s`/`-r` feed history expansion"),
    ),
    ("jobs", REPORTS),
    ("kill", Harmless("keyed as a command; it starts nothing")),
    (
        "let",
        Modelled("builtins.rs: arithmetic is code unless literal"),
    ),
    ("local", Modelled("builtins.rs: like declare")),
    ("logout", FEWER),
    (
        "mapfile",
        Modelled("builtins.rs: the array name and `-C` callbacks"),
    ),
    (
        "popd",
        Modelled("analyze.rs: the working directory becomes unknown"),
    ),
    ("printf", Modelled("builtins.rs: `-v` names are checked")),
    (
        "pushd",
        Modelled("analyze.rs: the walk follows the working directory"),
    ),
    ("pwd", Harmless("prints")),
    (
        "read",
        Modelled("builtins.rs: the names it assigns are checked"),
    ),
    ("readarray", Modelled("builtins.rs: like mapfile")),
    ("readonly", Modelled("builtins.rs: like declare")),
    ("return", FEWER),
    ("set", Modelled("builtins.rs: options through SET_OPTIONS")),
    ("shift", Harmless("moves positional parameters")),
    (
        "shopt",
        Modelled("builtins.rs: options through SHOPT_OPTIONS"),
    ),
    ("source", Unresolved("runs a file's commands in this shell")),
    ("suspend", FEWER),
    (
        "test",
        Modelled("builtins.rs: `-v` subscripts are arithmetic"),
    ),
    ("times", REPORTS),
    ("trap", Unresolved("code run on a signal or at exit")),
    ("true", Harmless("does nothing")),
    ("type", REPORTS),
    ("typeset", Modelled("builtins.rs: like declare")),
    ("ulimit", FEWER),
    (
        "umask",
        Harmless("changes only the modes of files later keyed writes create"),
    ),
    (
        "unalias",
        Harmless("removes aliases, which are never expanded in a resolved line"),
    ),
    (
        "unset",
        Modelled("builtins.rs: the names it unsets are checked"),
    ),
    ("wait", Modelled("builtins.rs: `-p` names are checked")),
];

fn lookup<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
}

/// The effect of `set -o name`, `None` for a name bash does not have (an error).
pub fn set_option(name: &str) -> Option<Effect> {
    SET_OPTIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, e)| *e)
}

/// The effect of `set -X` for the letter `X`; `None` for a letter with no option of its own
/// (`-o`, `-c`, `-s`, `-i`, which the callers read).
pub fn set_letter(letter: char) -> Option<Effect> {
    SET_OPTIONS
        .iter()
        .find(|(_, l, _)| *l == Some(letter))
        .map(|(_, _, e)| *e)
}

/// The effect of `shopt -s/-u name`.
pub fn shopt_option(name: &str) -> Option<Effect> {
    lookup(SHOPT_OPTIONS, name)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::process::Command;

    use super::*;
    use crate::shell::sensitive::changes_commands;

    /// What `script` prints under a clean bash, which must exist where tests run.
    fn bash(script: &str) -> String {
        let out = Command::new("/bin/bash")
            .args(["--norc", "--noprofile", "-c", script])
            .env_clear()
            .output()
            .expect("tests need /bin/bash");
        assert!(out.status.success(), "bash -c {script:?} failed");
        String::from_utf8(out.stdout).expect("bash printed UTF-8")
    }

    fn is_variable_shaped(s: &str) -> bool {
        s.len() >= 3
            && s.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    }

    /// Every variable name bash knows: those set in a clean shell, those `help variables`
    /// documents, and every NUL-delimited variable-shaped string of its binary (which holds
    /// the names of the variables it gives a meaning, set or not: EXECIGNORE, TEXTDOMAIN).
    fn bash_variables() -> BTreeSet<String> {
        let mut names: BTreeSet<String> = bash("compgen -v").lines().map(str::to_owned).collect();
        // `help variables` lists `NAME<tab>meaning`, indented.
        for line in bash("help variables").lines() {
            if let Some((name, _)) = line.strip_prefix("    ").and_then(|l| l.split_once('\t'))
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                names.insert(name.to_owned());
            }
        }
        let signals: BTreeSet<String> = bash("compgen -A signal")
            .lines()
            .map(str::to_owned)
            .collect();
        let binary = std::fs::read("/bin/bash").expect("tests need /bin/bash");
        for s in binary.split(|b| *b == 0) {
            if let Ok(s) = std::str::from_utf8(s)
                && is_variable_shaped(s)
                && !signals.contains(s)
                && !s.starts_with("SIG")
            {
                names.insert(s.to_owned());
            }
        }
        names
    }

    #[test]
    fn every_name_bash_knows_is_classified() {
        let mut missing = Vec::new();
        for line in bash("set -o").lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            if set_option(name).is_none() {
                missing.push(format!("set -o {name}: add it to SET_OPTIONS"));
            }
        }
        for line in bash("shopt -p").lines() {
            let name = line.split_whitespace().last().unwrap_or("");
            if shopt_option(name).is_none() {
                missing.push(format!("shopt {name}: add it to SHOPT_OPTIONS"));
            }
        }
        // The letters `help set` documents, but `-o`, which names an option.
        for line in bash("help set").lines() {
            let mut words = line.split_whitespace();
            if let (Some(flag), Some(_)) = (words.next(), words.next())
                && let Some(c) = flag.strip_prefix('-')
                && c.len() == 1
                && c != "o"
                && c.chars().all(|c| c.is_ascii_alphabetic())
                && set_letter(c.chars().next().unwrap_or('o')).is_none()
            {
                missing.push(format!("set -{c}: give its option a letter in SET_OPTIONS"));
            }
        }
        for name in bash_variables() {
            if lookup(VARIABLES, &name).is_none() && !NOT_VARIABLES.iter().any(|(n, _)| *n == name)
            {
                missing.push(format!(
                    "variable {name}: add it to VARIABLES (or NOT_VARIABLES if it is none)"
                ));
            }
        }
        for line in bash("enable -a").lines() {
            let name = line.split_whitespace().last().unwrap_or("");
            if lookup(BUILTINS, name).is_none() {
                missing.push(format!("builtin {name}: add it to BUILTINS"));
            }
        }
        assert!(
            missing.is_empty(),
            "bash knows names the table does not classify; say what each does to keys:\n  {}",
            missing.join("\n  ")
        );
    }

    #[test]
    fn unresolved_variables_are_sensitive() {
        for (name, effect) in VARIABLES {
            if !effect.keys_stay_exact() {
                assert!(
                    changes_commands(name),
                    "{name} is unresolved in VARIABLES but sensitive.rs does not name it"
                );
            }
        }
    }

    #[test]
    fn history_expansion_cannot_be_turned_on_silently() {
        for name in ["histexpand", "history"] {
            assert!(!set_option(name).unwrap().keys_stay_exact(), "{name}");
        }
        assert!(!set_letter('H').unwrap().keys_stay_exact());
    }
}
