//! Commands bash refuses before spawning anything, whatever the permission rules say: defence in
//! depth against a model (or a rule like `tool.bash.cmd:*`) wiping a disk or the home directory.
//!
//! It checks every simple command the analysis found, wrappers included (`sudo rm -rf /`), and
//! the raw script for a fork bomb. It is a backstop, not the boundary: the gate is.

use super::Dialect;
use super::analyze::{Analysis, SimpleCommand};
use super::keys::basename;

/// Top-level directories whose recursive removal or permission change is refused.
const SYSTEM_DIRS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
    "/sbin", "/srv", "/sys", "/usr", "/var",
];

/// Block devices and kernel memory: writes to these destroy data.
const DEVICE_PREFIXES: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/disk",
    "/dev/mapper/",
    "/dev/md",
    "/dev/dm-",
    "/dev/loop",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
];

/// Why `script`, run by `dialect`, is refused, or `None`.
///
/// Under [`Dialect::Sh`] the analysis reads bash grammar, where `((wipefs /dev/sda))` is
/// arithmetic and `[[ a || mkfs /dev/sda ]]` a test; dash runs both commands. Such a line is
/// keyed `tool.bash.cmd:?`, which `yolo` lets through, so the denylist also reads the line as
/// dash splits those spellings ([`dash_view`]).
pub fn refusal_in(script: &str, a: &Analysis, dialect: Dialect) -> Option<String> {
    refusal(script, a).or_else(|| match dialect {
        Dialect::Bash => None,
        Dialect::Sh => {
            let view = dash_view(script);
            (view != script)
                .then(|| refusal(&view, &super::analyze::analyze(&view, Dialect::Bash)))
                .flatten()
        }
    })
}

/// `script` with the bash-only spellings that dash reads differently rewritten as dash reads
/// them: `((`/`))` are subshells (nested, in dash; one level shows the same commands), `[[`/`]]` ordinary words (the `||` inside splits two
/// commands), and `$'…'`/`$"…"` a `$` before an ordinary quote. An approximation for the
/// backstop alone: the keys of such a line are `?` anyway.
fn dash_view(script: &str) -> String {
    script
        .replace("((", " ( ")
        .replace("))", " ) ")
        .replace("[[", "[")
        .replace("]]", "]")
        .replace("$'", "'")
        .replace("$\"", "\"")
}

/// Why `script` is refused, or `None`.
pub fn refusal(script: &str, a: &Analysis) -> Option<String> {
    if fork_bomb(script) {
        return Some("a fork bomb".to_owned());
    }
    for path in &a.writes {
        if let super::analyze::Location::Path(path) = path
            && is_device(path)
        {
            return Some(format!("a write to the block device `{path}`"));
        }
    }
    a.commands.iter().find_map(command)
}

/// Why writing `paths` is refused: a block device, also when reached through a symlink (the
/// paths a redirection's target resolves to).
pub fn device_write<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<String> {
    paths
        .into_iter()
        .find(|p| is_device(p))
        .map(|p| format!("a write to the block device `{p}`"))
}

fn is_device(path: &str) -> bool {
    DEVICE_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// `/`, `/*`, a system directory, or the home directory however spelt.
fn is_precious(arg: &str) -> bool {
    let trimmed = arg.trim_end_matches("/*").trim_end_matches('/');
    let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
    SYSTEM_DIRS.contains(&trimmed)
        || matches!(
            trimmed,
            "~" | "$HOME" | "${HOME}" | "\"$HOME\"" | "\"${HOME}\""
        )
        || arg == "/*"
}

fn recursive_flag(c: &SimpleCommand) -> bool {
    c.words[1..].iter().any(|w| {
        let w = w.shown();
        w == "--recursive"
            || (w.starts_with('-') && !w.starts_with("--") && (w.contains('r') || w.contains('R')))
    })
}

fn command(c: &SimpleCommand) -> Option<String> {
    let verb = basename(c.words[0].shown());
    let args = || c.words[1..].iter().map(|w| w.shown());
    let shown = || {
        c.words
            .iter()
            .map(|w| w.shown())
            .collect::<Vec<_>>()
            .join(" ")
    };
    match verb {
        "rm" if recursive_flag(c) && args().any(|a| !a.starts_with('-') && is_precious(a)) => {
            Some(format!(
                "`{}` (recursive removal of a system or home directory)",
                shown()
            ))
        }
        "rm" if args().any(|a| a == "--no-preserve-root") => {
            Some(format!("`{}` (--no-preserve-root)", shown()))
        }
        "chmod" | "chown" | "chgrp"
            if recursive_flag(c) && args().any(|a| !a.starts_with('-') && is_precious(a)) =>
        {
            Some(format!(
                "`{}` (recursive permission change of a system or home directory)",
                shown()
            ))
        }
        v if v == "mkfs"
            || v.starts_with("mkfs.")
            || matches!(v, "mke2fs" | "mkswap" | "wipefs") =>
        {
            Some(format!("`{}` (formats a file system)", shown()))
        }
        "dd" if args().any(|a| {
            a.strip_prefix("of=")
                .is_some_and(|p| p.starts_with("/dev/") && p != "/dev/null")
        }) =>
        {
            Some(format!("`{}` (writes to a device)", shown()))
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            Some(format!("`{}` (stops the machine)", shown()))
        }
        _ => None,
    }
}

/// `:(){ :|:& };:` and its renamings: a function that pipes itself into itself in the
/// background.
fn fork_bomb(script: &str) -> bool {
    let squeezed: String = script.chars().filter(|c| !c.is_whitespace()).collect();
    let mut rest = squeezed.as_str();
    while let Some(at) = rest.find("(){") {
        let name_start = rest[..at]
            .rfind([';', '&', '|', '(', ')', '{', '}'])
            .map_or(0, |i| i + 1);
        let name = rest[name_start..at].trim_start_matches("function");
        if !name.is_empty() {
            let body = &rest[at + 3..];
            if body.contains(&format!("{name}|{name}&")) {
                return true;
            }
        }
        rest = &rest[at + 3..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::analyze::analyze;

    /// Issue 13 §2: bash-only spellings under which dash runs a destructive command are refused
    /// when dash runs the line. One case a row: (line, refused under Sh, refused under Bash).
    #[test]
    fn dash_readings_of_bash_only_spellings_are_checked() {
        let cases: &[(&str, bool, bool)] = &[
            ("((wipefs -a /dev/sda))", true, false),
            ("(( mkfs.ext4 /dev/vda1 ))", true, false),
            ("[[ a || mkfs /dev/sda ]]", true, false),
            ("echo $'a\\' ; rm -rf / ; #'", true, false),
            ("echo $\"x\" ; rm -rf ~", true, true),
            ("((1 + 2))", false, false),
            ("[[ -f x ]] && echo yes", false, false),
            ("rm -rf /", true, true),
        ];
        for &(line, sh, bash) in cases {
            for (dialect, want) in [(Dialect::Sh, sh), (Dialect::Bash, bash)] {
                let got = refusal_in(line, &analyze(line, dialect), dialect);
                assert_eq!(got.is_some(), want, "{line:?} under {dialect:?}: {got:?}");
            }
        }
    }
}
