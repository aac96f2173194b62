//! Simple commands → `tool.bash.cmd:<verb> <args…>` targets, including the commands that
//! wrappers run (`env`, `sudo`, `timeout`, `xargs`, `find -exec`, `sh -c`, `eval`, …).
//!
//! Key decision: a wrapper is unwrapped only when its options are all known; an option it
//! does not know (which might take the next word as its value, so that the inner command is
//! another word) or an inner command that is not literal is unresolved.

use super::Dialect;
use super::analyze::{Analysis, Cwds, ShellWord, SimpleCommand, Stdin, Walker};

/// The action of command keys.
pub const BASH_CMD_ACTION: &str = "tool.bash.cmd";
/// The target of the key no allow rule matches.
pub const UNRESOLVED: &str = "?";

/// The command targets of a script, deduplicated in order of appearance; `?` among them when
/// anything was unresolved. Over [`super::analyze::MAX_COMMANDS`] commands only `?` is left.
pub fn command_targets(a: &Analysis) -> Vec<String> {
    if a.commands.len() > super::analyze::MAX_COMMANDS {
        return vec![UNRESOLVED.to_owned()];
    }
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: String| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    for c in &a.commands {
        push(command_target(c).unwrap_or_else(|| UNRESOLVED.to_owned()));
    }
    if a.unresolved {
        push(UNRESOLVED.to_owned());
    }
    out
}

/// `FOO=1 git log -3`: assignments as written (they can change what runs: `LD_PRELOAD=x ls`
/// is not `ls`), then the verb as written (`./cat` stays `./cat`), then each argument decoded
/// (as written when it expands at run time). `None` when the verb is not literal or
/// the command contains control characters.
pub fn command_target(c: &SimpleCommand) -> Option<String> {
    let verb = c.words.first()?.literal.as_deref()?;
    if verb.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = c.assignments.iter().map(String::as_str).collect();
    parts.push(verb);
    parts.extend(c.words[1..].iter().map(ShellWord::shown));
    let target = parts.join(" ");
    // A carriage return or escape sequence in a key could make an approval prompt show one
    // command while another runs.
    (!target.chars().any(char::is_control)).then_some(target)
}

/// The file name of a path-qualified verb (`/usr/bin/env` → `env`).
pub fn basename(verb: &str) -> &str {
    verb.rsplit('/').next().unwrap_or(verb)
}

/// The options a wrapper takes; any other option is unresolved.
struct Options {
    /// Short options that take a value (`-u root`, `-uroot`).
    short_value: &'static str,
    /// Short options whose value, if any, is the rest of the word (`xargs -i{}`).
    short_optional: &'static str,
    /// Short options that take none.
    short_flags: &'static str,
    long_value: &'static [&'static str],
    /// Long options that take no value, or only an attached one (`--preserve-env=A`).
    long_flags: &'static [&'static str],
    /// `-5` is an option (`nice -5 make`).
    numeric: bool,
}

impl Options {
    const NONE: Options = Options {
        short_value: "",
        short_optional: "",
        short_flags: "",
        long_value: &[],
        long_flags: &[],
        numeric: false,
    };

    /// Index of the first word after the options; `None` if an option is unknown or not
    /// literal.
    fn skip(&self, words: &[ShellWord]) -> Option<usize> {
        let mut i = 0;
        while i < words.len() {
            let w = words[i].literal.as_deref()?;
            if w == "--" {
                return Some(i + 1);
            }
            if let Some(long) = w.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                if self.long_value.contains(&name) {
                    i += if attached { 1 } else { 2 };
                } else if self.long_flags.contains(&name) {
                    i += 1;
                } else {
                    return None;
                }
                continue;
            }
            if w.len() > 1 && w.starts_with('-') {
                let letters = &w[1..];
                if self.numeric && letters.chars().all(|c| c.is_ascii_digit()) {
                    i += 1;
                    continue;
                }
                let mut next_is_value = false;
                for (k, c) in letters.char_indices() {
                    if self.short_value.contains(c) {
                        // `-u root` takes the next word; `-uroot` does not.
                        next_is_value = k + c.len_utf8() == letters.len();
                        break;
                    }
                    if self.short_optional.contains(c) {
                        break;
                    }
                    if !self.short_flags.contains(c) {
                        return None;
                    }
                }
                i += if next_is_value { 2 } else { 1 };
                continue;
            }
            return Some(i);
        }
        Some(i)
    }

    /// Whether a short option letter or a long name appears among the options.
    fn has(words: &[ShellWord], short: char, long: &str) -> bool {
        words.iter().filter_map(|w| w.literal.as_deref()).any(|w| {
            w.strip_prefix("--")
                .is_some_and(|l| l.split('=').next() == Some(long))
                || (w.starts_with('-') && !w.starts_with("--") && w[1..].contains(short))
        })
    }
}

const SUDO: Options = Options {
    short_value: "ugCDhprtUTR",
    short_optional: "",
    short_flags: "AbEHKknPSVvB",
    long_value: &[
        "user",
        "group",
        "close-from",
        "chdir",
        "host",
        "prompt",
        "role",
        "type",
        "other-user",
        "command-timeout",
        "chroot",
    ],
    long_flags: &[
        "askpass",
        "background",
        "bell",
        "preserve-env",
        "set-home",
        "remove-timestamp",
        "reset-timestamp",
        "non-interactive",
        "preserve-groups",
        "stdin",
    ],
    numeric: false,
};

/// Whether a prefix assignment sets a variable that changes commands (`BASH_ENV=x bash -c …`).
fn sensitive_prefix(c: &SimpleCommand) -> bool {
    c.assignments.iter().any(|a| {
        let name = a.split(['=', '[', '+']).next().unwrap_or(a);
        super::sensitive::changes_commands(name)
    })
}

/// If `c` runs another command or script, record what it runs. `stdin` is what `c` reads: a
/// shell given no script runs its stdin. `Some` with the directories after it when what it
/// ran ran in this shell (`eval 'cd x'`).
pub(crate) fn unwrap_inner(
    w: &mut Walker<'_>,
    c: &SimpleCommand,
    stdin: &Stdin,
    cwds: &Cwds,
) -> Option<Cwds> {
    let verb = c.words[0].literal.as_deref()?;
    let rest = &c.words[1..];
    let pass = c.assignments.clone();
    let opts = match basename(verb) {
        "sh" | "dash" | "ash" | "ksh" | "mksh" | "zsh" => {
            shell_dash_c(w, c, rest, stdin, cwds, Dialect::Sh);
            return None;
        }
        "bash" => {
            shell_dash_c(w, c, rest, stdin, cwds, Dialect::Bash);
            return None;
        }
        "fish" | "csh" | "tcsh" | "nu" | "xonsh" | "elvish" | "pwsh" | "parallel"
        | "systemd-run" | "tmux" | "screen" => {
            // Scripts in another language, or commands run through a shell the walk does not
            // read.
            if rest
                .iter()
                .any(|w| w.literal.as_deref() != Some("--version"))
            {
                w.unresolved();
            }
            return None;
        }
        "eval" => {
            if sensitive_prefix(c) {
                w.unresolved();
            }
            let parts: Option<Vec<&str>> = rest.iter().map(|w| w.literal.as_deref()).collect();
            return match parts {
                Some(p) => Some(w.nested(&p.join(" "), true, cwds, w.dialect)),
                None => {
                    w.unresolved();
                    None
                }
            };
        }
        "env" => {
            env(w, rest, pass, stdin, cwds);
            return None;
        }
        "find" => {
            find(w, rest, pass, stdin, cwds);
            return None;
        }
        "watch" => {
            watch(w, rest, pass, stdin, cwds);
            return None;
        }
        "script" => {
            script(w, c, rest, stdin, cwds);
            return None;
        }
        "su" | "sg" => {
            su(w, c, rest, stdin, cwds);
            return None;
        }
        "runuser" => {
            if Options::has(rest, 'u', "user") {
                Options {
                    short_value: "ugGws",
                    short_flags: "lmpPf",
                    long_value: &[
                        "user",
                        "group",
                        "supp-group",
                        "whitelist-environment",
                        "shell",
                    ],
                    long_flags: &["login", "preserve-environment", "pty"],
                    ..Options::NONE
                }
            } else {
                su(w, c, rest, stdin, cwds);
                return None;
            }
        }
        "flock" => {
            flock(w, c, rest, pass, stdin, cwds);
            return None;
        }
        "chrt" | "taskset" => {
            let opts = if basename(verb) == "chrt" {
                Options {
                    short_value: "TPD",
                    short_flags: "abdfiormvRe",
                    long_value: &["sched-runtime", "sched-period", "sched-deadline"],
                    long_flags: &[
                        "all-tasks",
                        "batch",
                        "deadline",
                        "fifo",
                        "idle",
                        "other",
                        "rr",
                        "max",
                        "verbose",
                        "reset-on-fork",
                    ],
                    ..Options::NONE
                }
            } else {
                Options {
                    short_flags: "ac",
                    long_flags: &["all-tasks", "cpu-list"],
                    ..Options::NONE
                }
            };
            // `-p` acts on a running process: no command.
            if Options::has(rest, 'p', "pid") {
                return None;
            }
            let Some(i) = opts.skip(rest) else {
                w.unresolved();
                return None;
            };
            // The priority or the CPU mask, then the command.
            inner(
                w,
                &rest[(i + 1).min(rest.len())..],
                pass,
                stdin,
                cwds,
                false,
            );
            return None;
        }
        "ionice" => {
            if Options::has(rest, 'p', "pid")
                || Options::has(rest, 'P', "pgid")
                || Options::has(rest, 'u', "uid")
            {
                return None;
            }
            Options {
                short_value: "cn",
                short_flags: "t",
                long_value: &["class", "classdata"],
                long_flags: &["ignore"],
                ..Options::NONE
            }
        }
        "timeout" => {
            let opts = Options {
                short_value: "sk",
                short_flags: "vf",
                long_value: &["signal", "kill-after"],
                long_flags: &["foreground", "preserve-status", "verbose"],
                ..Options::NONE
            };
            let Some(i) = opts.skip(rest) else {
                w.unresolved();
                return None;
            };
            // The duration, then the command.
            inner(
                w,
                &rest[(i + 1).min(rest.len())..],
                pass,
                stdin,
                cwds,
                false,
            );
            return None;
        }
        "sudo" => {
            // `-s`/`-i` run the command through a shell, `-e` edits files, `-l` lists.
            if Options::has(rest, 's', "shell")
                || Options::has(rest, 'i', "login")
                || Options::has(rest, 'e', "edit")
            {
                w.unresolved();
                return None;
            }
            if Options::has(rest, 'l', "list") || Options::has(rest, 'v', "validate") {
                return None;
            }
            SUDO
        }
        "doas" => {
            if Options::has(rest, 's', "") {
                w.unresolved();
                return None;
            }
            Options {
                short_value: "uC",
                short_flags: "nL",
                ..Options::NONE
            }
        }
        "pkexec" => Options {
            long_value: &["user"],
            long_flags: &["disable-internal-agent", "keep-cwd"],
            ..Options::NONE
        },
        "nice" => Options {
            short_value: "n",
            long_value: &["adjustment"],
            numeric: true,
            ..Options::NONE
        },
        "xargs" => Options {
            short_value: "adEILnPs",
            short_optional: "iel",
            short_flags: "0oprtx",
            long_value: &[
                "arg-file",
                "delimiter",
                "eof",
                "replace",
                "max-lines",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            long_flags: &[
                "null",
                "open-tty",
                "interactive",
                "no-run-if-empty",
                "verbose",
                "exit",
                "show-limits",
            ],
            numeric: false,
        },
        "exec" => Options {
            short_value: "a",
            short_flags: "cl",
            ..Options::NONE
        },
        "stdbuf" => Options {
            short_value: "ioe",
            long_value: &["input", "output", "error"],
            ..Options::NONE
        },
        "time" => Options {
            short_value: "fo",
            short_flags: "pvaq",
            long_value: &["format", "output"],
            long_flags: &["append", "verbose", "portability", "quiet"],
            ..Options::NONE
        },
        "setsid" => Options {
            short_flags: "cfw",
            long_flags: &["ctty", "fork", "wait"],
            ..Options::NONE
        },
        "chroot" => Options {
            long_value: &["userspec", "groups"],
            long_flags: &["skip-chdir"],
            ..Options::NONE
        },
        "fakeroot" => Options {
            short_value: "lsib",
            short_flags: "u",
            long_value: &["lib", "faked"],
            long_flags: &["unknown-is-real"],
            ..Options::NONE
        },
        "unbuffer" => Options {
            short_flags: "p",
            ..Options::NONE
        },
        "nohup" | "nocache" | "busybox" => Options::NONE,
        "command" | "builtin" => {
            let (flags, in_shell) = if basename(verb) == "command" {
                // `command -v`/`-V` only say what a name is.
                if Options::has(rest, 'v', "") || Options::has(rest, 'V', "") {
                    return None;
                }
                ("p", true)
            } else {
                ("", true)
            };
            let opts = Options {
                short_flags: flags,
                ..Options::NONE
            };
            let Some(i) = opts.skip(rest) else {
                w.unresolved();
                return None;
            };
            return inner(w, &rest[i..], pass, stdin, cwds, in_shell);
        }
        _ => return None,
    };
    let Some(i) = opts.skip(rest) else {
        w.unresolved();
        return None;
    };
    // sudo and env take NAME=value assignments before the command.
    let mut j = i;
    let mut assignments = pass;
    while let Some(word) = rest.get(j).and_then(|w| w.literal.as_deref())
        && is_assignment(word)
    {
        assignments.push(rest[j].raw.clone());
        j += 1;
    }
    // chroot's first operand is the new root.
    if basename(verb) == "chroot" {
        j += 1;
    }
    inner(
        w,
        &rest[j.min(rest.len())..],
        assignments,
        stdin,
        cwds,
        false,
    );
    None
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => super::sensitive::is_name(name),
        None => false,
    }
}

fn env(w: &mut Walker<'_>, rest: &[ShellWord], pass: Vec<String>, stdin: &Stdin, cwds: &Cwds) {
    let mut i = 0;
    let mut assignments = pass;
    while i < rest.len() {
        let Some(word) = rest[i].literal.as_deref() else {
            w.unresolved();
            return;
        };
        if word == "--" {
            i += 1;
            break;
        }
        if matches!(word, "-S" | "--split-string")
            || word.starts_with("-S")
            || word.starts_with("--split-string=")
        {
            // `env -S 'cmd args'` splits its argument into a command line.
            let value = if matches!(word, "-S" | "--split-string") {
                rest.get(i + 1).and_then(|w| w.literal.clone())
            } else {
                word.split_once('=')
                    .map(|(_, v)| v.to_owned())
                    .or_else(|| Some(word[2..].to_owned()))
            };
            match value {
                Some(v) => {
                    w.nested(&v, false, cwds, Dialect::Sh);
                }
                None => w.unresolved(),
            }
            return;
        }
        if matches!(word, "-u" | "--unset" | "-C" | "--chdir") {
            i += 2;
        } else if matches!(
            word,
            "-i" | "-0" | "-v" | "--ignore-environment" | "--null" | "--debug" | "-"
        ) || word.starts_with("--unset=")
            || word.starts_with("--chdir=")
            || word.starts_with("--default-signal")
            || word.starts_with("--ignore-signal")
            || word.starts_with("--block-signal")
            || (word.starts_with("-u") && word.len() > 2)
            || (word.starts_with("-C") && word.len() > 2)
        {
            i += 1;
        } else if word.starts_with('-') && word.len() > 1 {
            w.unresolved();
            return;
        } else if is_assignment(word) {
            assignments.push(rest[i].raw.clone());
            i += 1;
        } else {
            break;
        }
    }
    inner(
        w,
        &rest[i.min(rest.len())..],
        assignments,
        stdin,
        cwds,
        false,
    );
}

/// Predicates of `find` that take the next word as their operand.
const FIND_VALUED: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-size",
    "-perm",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-maxdepth",
    "-mindepth",
    "-links",
    "-inum",
    "-samefile",
    "-used",
    "-fstype",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fprintf",
    "-fls",
    "-context",
    "-files0-from",
];

/// `find … -exec cmd args ;` (and `-execdir`, `-ok`, `-okdir`, `… {} +`) runs `cmd`. A word
/// that is not literal might be `-exec` itself, unless it is the single-field operand of a
/// predicate (`-name "$pat"`).
fn find(w: &mut Walker<'_>, rest: &[ShellWord], pass: Vec<String>, stdin: &Stdin, cwds: &Cwds) {
    let mut i = 0;
    while i < rest.len() {
        match rest[i].literal.as_deref() {
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let start = i + 1;
                let mut end = start;
                while end < rest.len() {
                    match rest[end].literal.as_deref() {
                        Some(";") => break,
                        Some("+")
                            if end > start && rest[end - 1].literal.as_deref() == Some("{}") =>
                        {
                            break;
                        }
                        _ => end += 1,
                    }
                }
                inner(w, &rest[start..end], pass.clone(), stdin, cwds, false);
                i = end + 1;
            }
            Some(p) if FIND_VALUED.contains(&p) || p.starts_with("-newer") => {
                if rest.get(i + 1).is_some_and(|v| !v.one_field) {
                    w.unresolved();
                }
                i += 2;
            }
            Some(_) => i += 1,
            None => {
                w.unresolved();
                i += 1;
            }
        }
    }
}

/// `watch cmd args` runs `sh -c 'cmd args'`; `watch -x cmd args` runs the command.
fn watch(w: &mut Walker<'_>, rest: &[ShellWord], pass: Vec<String>, stdin: &Stdin, cwds: &Cwds) {
    let opts = Options {
        short_value: "nq",
        short_optional: "d",
        short_flags: "bcCefgprtwx",
        long_value: &["interval", "equexit"],
        long_flags: &[
            "differences",
            "beep",
            "color",
            "no-color",
            "errexit",
            "chgexit",
            "precise",
            "no-rerun",
            "no-title",
            "no-wrap",
            "no-linewrap",
            "exec",
        ],
        numeric: false,
    };
    let Some(i) = opts.skip(rest) else {
        w.unresolved();
        return;
    };
    if Options::has(&rest[..i], 'x', "exec") {
        inner(w, &rest[i..], pass, stdin, cwds, false);
        return;
    }
    let parts: Option<Vec<&str>> = rest[i..].iter().map(|w| w.literal.as_deref()).collect();
    match parts {
        Some(p) if !p.is_empty() => {
            w.nested(&p.join(" "), false, cwds, Dialect::Sh);
        }
        Some(_) => {}
        None => w.unresolved(),
    }
}

/// `script -c 'cmd'` runs the command through a shell; without `-c` a shell reads stdin.
fn script(w: &mut Walker<'_>, c: &SimpleCommand, rest: &[ShellWord], stdin: &Stdin, cwds: &Cwds) {
    let opts = Options {
        short_value: "cEIOBTm",
        short_optional: "t",
        short_flags: "aefqV",
        long_value: &[
            "command",
            "echo",
            "log-in",
            "log-out",
            "log-io",
            "log-timing",
            "logging-format",
            "output-limit",
        ],
        long_flags: &["append", "return", "flush", "force", "quiet", "timing"],
        numeric: false,
    };
    if opts.skip(rest).is_none() {
        w.unresolved();
        return;
    }
    dash_c_value(w, c, rest, stdin, cwds);
}

/// The script given as `-c script`, `--command=script` or `--command script`, run by a shell;
/// without one the shell reads stdin.
fn dash_c_value(
    w: &mut Walker<'_>,
    c: &SimpleCommand,
    rest: &[ShellWord],
    stdin: &Stdin,
    cwds: &Cwds,
) {
    if sensitive_prefix(c) {
        w.unresolved();
    }
    for (i, word) in rest.iter().enumerate() {
        let Some(t) = word.literal.as_deref() else {
            w.unresolved();
            return;
        };
        let value = if matches!(t, "-c" | "--command" | "-C" | "--session-command") {
            Some(rest.get(i + 1).and_then(|v| v.literal.clone()))
        } else {
            t.strip_prefix("--command=")
                .or_else(|| t.strip_prefix("--session-command="))
                .map(|v| Some(v.to_owned()))
        };
        if let Some(v) = value {
            match v {
                Some(script) => {
                    w.nested(&script, false, cwds, Dialect::Sh);
                }
                None => w.unresolved(),
            }
            return;
        }
    }
    shell_stdin(w, stdin, cwds, Dialect::Sh);
}

/// `su [-] [user] -c cmd`, `sg group -c cmd`: the command runs through the user's shell;
/// without `-c` that shell reads stdin.
fn su(w: &mut Walker<'_>, c: &SimpleCommand, rest: &[ShellWord], stdin: &Stdin, cwds: &Cwds) {
    dash_c_value(w, c, rest, stdin, cwds);
}

/// `flock [opts] file cmd args`, `flock [opts] file -c 'cmd'`, `flock [opts] fd`.
fn flock(
    w: &mut Walker<'_>,
    c: &SimpleCommand,
    rest: &[ShellWord],
    pass: Vec<String>,
    stdin: &Stdin,
    cwds: &Cwds,
) {
    let opts = Options {
        short_value: "wE",
        short_optional: "",
        short_flags: "sxenuoF",
        long_value: &["timeout", "conflict-exit-code"],
        long_flags: &[
            "shared",
            "exclusive",
            "unlock",
            "nonblock",
            "nb",
            "close",
            "no-fork",
            "verbose",
        ],
        numeric: false,
    };
    let Some(i) = opts.skip(rest) else {
        w.unresolved();
        return;
    };
    let after = &rest[(i + 1).min(rest.len())..];
    match after.first().map(|w| w.literal.as_deref()) {
        None => {}
        Some(Some(t)) if t.starts_with('-') => dash_c_value(w, c, after, stdin, cwds),
        Some(_) => {
            inner(w, after, pass, stdin, cwds, false);
        }
    }
}

/// A shell runs the script of `-c`, else a script file, else (no operand, or `-s`) its stdin.
fn shell_dash_c(
    w: &mut Walker<'_>,
    c: &SimpleCommand,
    rest: &[ShellWord],
    stdin: &Stdin,
    cwds: &Cwds,
    dialect: Dialect,
) {
    let (mut saw_c, mut saw_s) = (false, false);
    let mut i = 0;
    while i < rest.len() {
        let Some(word) = rest[i].literal.as_deref() else {
            if saw_c {
                w.unresolved();
            }
            return;
        };
        if (word.starts_with('-') || word.starts_with('+'))
            && word.len() > 1
            && !word.starts_with("--")
        {
            saw_c |= word.starts_with('-') && word.contains('c');
            saw_s |= word.starts_with('-') && word.contains('s');
            // `-k` makes every later `NAME=value` word an assignment.
            if word.starts_with('-') && word.contains('k') {
                w.unresolved();
            }
            i += if word.ends_with('o') || word.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        if word == "-" || word == "--" {
            i += 1;
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let runs_script = saw_c || saw_s || rest.get(i).is_none();
    if runs_script && sensitive_prefix(c) {
        w.unresolved();
    }
    match rest.get(i) {
        Some(word) if saw_c => match word.literal.as_deref() {
            Some(script) => {
                w.nested(script, false, cwds, dialect);
            }
            None => w.unresolved(),
        },
        // `-c` without its script is an error; nothing runs.
        None if saw_c => {}
        // Without -c or -s the word is a script file: its commands are not knowable here (the
        // key names the file).
        Some(_) if !saw_s => {}
        _ => shell_stdin(w, stdin, cwds, dialect),
    }
}

/// A shell reading its script from stdin: a literal heredoc or here-string is walked as the
/// script; a pipe, a file or an expanding text is unresolved. The call's own stdin is empty
/// unless the call is interactive.
fn shell_stdin(w: &mut Walker<'_>, stdin: &Stdin, cwds: &Cwds, dialect: Dialect) {
    match stdin {
        Stdin::Inherited => {}
        Stdin::Text(Some(script)) => {
            w.nested(script, false, cwds, dialect);
        }
        Stdin::Text(None) | Stdin::Pipe | Stdin::File => w.unresolved(),
    }
}

/// Record the command a wrapper runs (and what that one wraps in turn); `Some` with the
/// directories after it when it ran in this shell.
fn inner(
    w: &mut Walker<'_>,
    words: &[ShellWord],
    assignments: Vec<String>,
    stdin: &Stdin,
    cwds: &Cwds,
    in_shell: bool,
) -> Option<Cwds> {
    if words.is_empty() {
        return None;
    }
    let c = SimpleCommand {
        assignments,
        words: words.to_vec(),
        dirs: None,
    };
    let o = w.record(c, stdin, cwds, in_shell);
    in_shell.then(|| o.ok.union(&o.failed))
}
