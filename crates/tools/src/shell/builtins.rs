//! Builtins that act on the shell itself rather than run a program: those that change how it
//! reads or runs later commands (`source`, `trap`, `enable`, `alias`, `hash -p`, `shopt -s
//! extglob`, `set -k`), those that take variable names (a subscript is arithmetic, and some
//! names change what commands do: `read PATH`, `printf -v HOME`, `declare -n`), and the
//! directory changes the walk follows (`cd`, `pushd`, `popd`).
//!
//! Key decision: name what is known to be inert and call everything else unresolved. A builtin
//! given a word that is not literal (`declare "$x"`, `set $opts`) is unresolved, because the
//! word may be exactly the option or name this module refuses.

use super::Dialect;
use super::analyze::{Location, ShellWord, SimpleCommand};
use super::arith;
use super::bash_names::{Effect, set_letter, set_option, shopt_option};
use super::sensitive::{changes_commands, is_inert_name};

/// Builtins that keep prefix assignments (POSIX special builtins) or run code under them:
/// `PATH=. eval git status` looks `git` up in `.`.
pub fn runs_code_with_prefix(verb: &str) -> bool {
    matches!(
        verb,
        "eval"
            | "source"
            | "."
            | "exec"
            | "command"
            | "builtin"
            | "trap"
            | ":"
            | "export"
            | "readonly"
            | "set"
            | "shift"
            | "times"
            | "unset"
            | "return"
            | "exit"
            | "break"
            | "continue"
    )
}

fn literal(w: &ShellWord) -> Option<&str> {
    w.literal.as_deref()
}

/// A name a builtin will assign: inert and not one that changes commands.
fn assignable(name: &str) -> bool {
    let base = name.split('[').next().unwrap_or(name);
    is_inert_name(name) && !changes_commands(base)
}

/// Whether the shell running `c` does something a key cannot describe.
pub fn unresolved(c: &SimpleCommand, dialect: Dialect) -> bool {
    let mut words = c.words.as_slice();
    // `command x` and `builtin x` run the builtin x.
    while let Some(v) = words.first().and_then(literal) {
        if matches!(v, "command" | "builtin") && words.len() > 1 {
            words = &words[1..];
            if words.first().and_then(literal) == Some("-p") {
                words = &words[1..];
            }
        } else {
            break;
        }
    }
    let Some((verb, args)) = words.split_first() else {
        return false;
    };
    let Some(verb) = literal(verb) else {
        return false;
    };
    let all_literal = || args.iter().all(|w| w.literal.is_some());
    match verb {
        "source" | "." | "enable" | "compgen" | "complete" | "bind" | "fc" | "let" => {
            // `let 1+2` evaluates nothing but numbers.
            !(verb == "let"
                && args
                    .iter()
                    .all(|w| literal(w).is_some_and(arith::is_literal)))
        }
        "trap" => !args.iter().all(|w| matches!(literal(w), Some("-p" | "-l"))),
        "alias" => !all_literal() || args.iter().any(|w| w.shown().contains('=')),
        "hash" => !all_literal() || args.iter().any(|w| w.shown().starts_with("-p")),
        "shopt" => shopt(args),
        "set" => set(args),
        "declare" | "typeset" | "local" | "export" | "readonly" => declare(args),
        "read" => read(args),
        "printf" => match args.first().and_then(literal) {
            Some("-v") => !args.get(1).and_then(literal).is_some_and(assignable),
            Some(a) if a.starts_with("-v") => true,
            Some(_) => false,
            None => !args.is_empty(),
        },
        "mapfile" | "readarray" => mapfile(args),
        "unset" => {
            !all_literal()
                || args
                    .iter()
                    .filter_map(literal)
                    .any(|a| !a.starts_with('-') && !assignable(a))
        }
        "getopts" => !args.get(1).and_then(literal).is_some_and(assignable),
        "wait" => match args.iter().position(|w| literal(w) == Some("-p")) {
            Some(i) => !args.get(i + 1).and_then(literal).is_some_and(assignable),
            None => false,
        },
        "test" => test(args, dialect),
        "[" => {
            let inner = match args.split_last() {
                Some((last, rest)) if literal(last) == Some("]") => rest,
                _ => args,
            };
            test(inner, dialect)
        }
        _ => false,
    }
}

fn shopt(args: &[ShellWord]) -> bool {
    if !args.iter().all(|w| w.literal.is_some()) {
        return true;
    }
    let flags: Vec<&str> = args
        .iter()
        .filter_map(literal)
        .filter(|a| a.starts_with('-'))
        .collect();
    // `-o` takes `set -o` names; the table of those is read through `set`.
    if flags.iter().any(|f| f.contains('o')) {
        return true;
    }
    if !flags.iter().any(|f| f.contains(['s', 'u'])) {
        return false;
    }
    args.iter()
        .filter_map(literal)
        .filter(|a| !a.starts_with('-'))
        .any(|o| !shopt_option(o).is_some_and(Effect::keys_stay_exact))
}

/// `set` with options: each letter and each `-o` name must leave the keys exact
/// ([`super::bash_names::SET_OPTIONS`]); history expansion, `-k`, `-a`, `-P`, posix do not.
fn set(args: &[ShellWord]) -> bool {
    let exact_name = |w: Option<&ShellWord>| {
        w.and_then(literal)
            .and_then(set_option)
            .is_some_and(Effect::keys_stay_exact)
    };
    let mut i = 0;
    while i < args.len() {
        let Some(a) = literal(&args[i]) else {
            return true;
        };
        if a == "--" || a == "-" {
            return false;
        }
        let Some(letters) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) else {
            // Positional parameters follow.
            return false;
        };
        // `set -o` / `set +o` alone print the options.
        if letters == "o" && i + 1 == args.len() {
            return false;
        }
        let mut names = 0;
        for c in letters.chars() {
            if c == 'o' {
                names += 1;
            } else if !set_letter(c).is_some_and(Effect::keys_stay_exact) {
                return true;
            }
        }
        // Each `o` of a cluster takes the next word as an option name.
        for k in 1..=names {
            if !exact_name(args.get(i + k)) {
                return true;
            }
        }
        i += 1 + names;
    }
    false
}

fn declare(args: &[ShellWord]) -> bool {
    for w in args {
        let Some(a) = literal(w) else {
            return true;
        };
        if let Some(flags) = a.strip_prefix('-') {
            // Integer variables evaluate what is assigned to them; namerefs follow names.
            if flags.contains(['i', 'n']) {
                return true;
            }
            continue;
        }
        if a.starts_with('+') {
            continue;
        }
        let (name, value) = match a.split_once('=') {
            Some((n, v)) => (n.strip_suffix('+').unwrap_or(n), Some(v)),
            None => (a, None),
        };
        if !assignable(name) {
            return true;
        }
        // `declare -a x='(…)'` evaluates the text as a compound assignment.
        if value.is_some_and(|v| v.starts_with('(')) {
            return true;
        }
    }
    false
}

fn read(args: &[ShellWord]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = literal(&args[i]) else {
            return true;
        };
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(flags) = a.strip_prefix('-')
            && !flags.is_empty()
        {
            // Options that take a value: the value is the rest of the word or the next word.
            let takes = flags.find(['a', 'd', 'i', 'n', 'N', 'p', 't', 'u']);
            match takes {
                Some(at) if at + 1 == flags.len() => {
                    if flags.as_bytes()[at] == b'a'
                        && !args.get(i + 1).and_then(literal).is_some_and(assignable)
                    {
                        return true;
                    }
                    i += 2;
                }
                Some(at) if flags.as_bytes()[at] == b'a' => {
                    if !assignable(&flags[at + 1..]) {
                        return true;
                    }
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        break;
    }
    args[i.min(args.len())..]
        .iter()
        .any(|w| !literal(w).is_some_and(assignable))
}

fn mapfile(args: &[ShellWord]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = literal(&args[i]) else {
            return true;
        };
        if let Some(flags) = a.strip_prefix('-')
            && !flags.is_empty()
        {
            // A callback is code.
            if flags.contains('C') {
                return true;
            }
            i += if flags.len() == 1 && "dnOsuc".contains(flags) {
                2
            } else {
                1
            };
            continue;
        }
        return !assignable(a) || i + 1 < args.len();
    }
    false
}

/// Unary operators of `test` (a following word is their operand).
const TEST_UNARY: &[&str] = &[
    "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x", "-G",
    "-L", "-N", "-O", "-S", "-z", "-n",
];
/// Binary operators of `test` other than `-a`/`-o`.
const TEST_BINARY: &[&str] = &[
    "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
];

/// `test`/`[`: `-v name` evaluates the name's subscript as arithmetic, so a word that is not
/// literal must sit where it can only be an operand (right after an operator or right before
/// a binary one, or alone), and be exactly one field.
fn test(args: &[ShellWord], dialect: Dialect) -> bool {
    if dialect == Dialect::Bash {
        for (i, w) in args.iter().enumerate() {
            if matches!(literal(w), Some("-v" | "-R"))
                && i + 1 < args.len()
                && !args.get(i + 1).and_then(literal).is_some_and(is_inert_name)
            {
                return true;
            }
        }
    }
    if args.len() == 1 {
        return !args[0].one_field;
    }
    for (i, w) in args.iter().enumerate() {
        if w.literal.is_some() {
            continue;
        }
        if !w.one_field {
            return true;
        }
        let after_operator = i > 0
            && literal(&args[i - 1])
                .is_some_and(|p| TEST_UNARY.contains(&p) || TEST_BINARY.contains(&p));
        let before_binary = args
            .get(i + 1)
            .and_then(literal)
            .is_some_and(|n| TEST_BINARY.contains(&n));
        if !after_operator && !before_binary {
            return true;
        }
    }
    false
}

/// A change of the shell's working directory.
pub struct DirectoryChange {
    /// Where it goes when it succeeds; `None` when that is not knowable (`cd "$d"`, `cd -`,
    /// `popd`).
    pub target: Option<Location>,
    /// The target is a bare name, which `CDPATH` may send elsewhere.
    pub by_name: bool,
}

/// `cd dir`, `pushd dir`, `popd`, also through `command`/`builtin`.
pub fn directory_change(c: &SimpleCommand) -> Option<DirectoryChange> {
    let mut words = c.words.as_slice();
    while let Some(v) = words.first().and_then(literal) {
        if matches!(v, "command" | "builtin") && words.len() > 1 {
            words = &words[1..];
        } else {
            break;
        }
    }
    let (verb, args) = words.split_first()?;
    let verb = literal(verb)?;
    let unknown = DirectoryChange {
        target: None,
        by_name: false,
    };
    match verb {
        "cd" | "pushd" => {}
        "popd" => return Some(unknown),
        _ => return None,
    }
    let args = match args.first().and_then(literal) {
        Some("--") => &args[1..],
        _ => args,
    };
    match args {
        [] if verb == "cd" => Some(DirectoryChange {
            target: Some(Location::Home(String::new())),
            by_name: false,
        }),
        [only] => match literal(only) {
            Some(t) if !t.is_empty() && !t.starts_with('-') && !t.starts_with('+') => {
                let by_name = !t.starts_with('/')
                    && !t.starts_with("./")
                    && !t.starts_with("../")
                    && t != "."
                    && t != "..";
                Some(DirectoryChange {
                    target: Some(Location::Path(t.to_owned())),
                    by_name,
                })
            }
            _ => Some(unknown),
        },
        _ => Some(unknown),
    }
}
