//! Simple commands → `tool.bash.cmd:<verb> <args…>` targets, including the commands that
//! wrappers run (`env`, `sudo`, `timeout`, `xargs`, `sh -c`, `eval`, …).

use super::analyze::{Analysis, ShellWord, SimpleCommand, Stdin, walk_nested};

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

/// Options of a wrapper: those that take a value (short letters and long names).
struct Options {
    short_with_value: &'static str,
    long_with_value: &'static [&'static str],
}

impl Options {
    const NONE: Options = Options {
        short_with_value: "",
        long_with_value: &[],
    };

    /// Index of the first word after the options; `None` if an option is not literal.
    fn skip(&self, words: &[ShellWord]) -> Option<usize> {
        let mut i = 0;
        while i < words.len() {
            let w = words[i].literal.as_deref()?;
            if w == "--" {
                return Some(i + 1);
            }
            if let Some(long) = w.strip_prefix("--") {
                i += 1;
                if !long.contains('=') && self.long_with_value.contains(&long) {
                    i += 1;
                }
                continue;
            }
            if w.len() > 1 && w.starts_with('-') {
                i += 1;
                // `-u root` takes the next word; `-uroot` does not.
                if let Some(last) = w[1..]
                    .chars()
                    .position(|c| self.short_with_value.contains(c))
                    && last == w.len() - 2
                {
                    i += 1;
                }
                continue;
            }
            return Some(i);
        }
        Some(i)
    }
}

/// If `c` runs another command or script, record what it runs. `stdin` is what `c` reads: a
/// shell given no script runs its stdin.
pub(crate) fn unwrap_inner(c: &SimpleCommand, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    let Some(verb) = c.words[0].literal.as_deref() else {
        return;
    };
    let rest = &c.words[1..];
    let opts = match basename(verb) {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" => {
            return shell_dash_c(rest, stdin, depth, a);
        }
        "eval" => {
            let parts: Option<Vec<&str>> = rest.iter().map(|w| w.literal.as_deref()).collect();
            match parts {
                Some(p) => walk_nested(&p.join(" "), depth, a),
                None => a.unresolved = true,
            }
            return;
        }
        "env" => {
            return env(rest, stdin, depth, a);
        }
        "sudo" | "doas" => Options {
            short_with_value: "ugCDhprtUTR",
            long_with_value: &[
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
        },
        "timeout" => {
            let opts = Options {
                short_with_value: "sk",
                long_with_value: &["signal", "kill-after"],
            };
            let Some(i) = opts.skip(rest) else {
                a.unresolved = true;
                return;
            };
            // The duration, then the command.
            return inner(
                &rest[(i + 1).min(rest.len())..],
                Vec::new(),
                stdin,
                depth,
                a,
            );
        }
        "nice" => Options {
            short_with_value: "n",
            long_with_value: &["adjustment"],
        },
        "xargs" => Options {
            short_with_value: "adEILnPs",
            long_with_value: &[
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
        },
        "exec" => Options {
            short_with_value: "a",
            long_with_value: &[],
        },
        "stdbuf" => Options {
            short_with_value: "ioe",
            long_with_value: &["input", "output", "error"],
        },
        "time" => Options {
            short_with_value: "fo",
            long_with_value: &["format", "output"],
        },
        "nohup" | "command" | "setsid" | "builtin" => Options::NONE,
        _ => return,
    };
    match opts.skip(rest) {
        Some(i) => {
            // sudo takes NAME=value assignments before the command.
            let mut j = i;
            let mut assignments = Vec::new();
            while let Some(w) = rest.get(j).and_then(|w| w.literal.as_deref())
                && is_assignment(w)
            {
                assignments.push(rest[j].raw.clone());
                j += 1;
            }
            inner(&rest[j..], assignments, stdin, depth, a);
        }
        None => a.unresolved = true,
    }
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn env(rest: &[ShellWord], stdin: &Stdin, depth: usize, a: &mut Analysis) {
    let mut i = 0;
    let mut assignments = Vec::new();
    while i < rest.len() {
        let Some(w) = rest[i].literal.as_deref() else {
            a.unresolved = true;
            return;
        };
        if w == "--" {
            i += 1;
            break;
        }
        if matches!(w, "-S" | "--split-string")
            || w.starts_with("-S")
            || w.starts_with("--split-string=")
        {
            // `env -S 'cmd args'` splits its argument into a command line.
            let value = if matches!(w, "-S" | "--split-string") {
                rest.get(i + 1).and_then(|w| w.literal.clone())
            } else {
                w.split_once('=')
                    .map(|(_, v)| v.to_owned())
                    .or_else(|| Some(w[2..].to_owned()))
            };
            match value {
                Some(v) => walk_nested(&v, depth, a),
                None => a.unresolved = true,
            }
            return;
        }
        if matches!(w, "-u" | "--unset" | "-C" | "--chdir") {
            i += 2;
        } else if w.starts_with('-') && w.len() > 1 {
            i += 1;
        } else if is_assignment(w) {
            assignments.push(rest[i].raw.clone());
            i += 1;
        } else {
            break;
        }
    }
    inner(&rest[i.min(rest.len())..], assignments, stdin, depth, a);
}

/// A shell runs the script of `-c`, else a script file, else (no operand, or `-s`) its stdin.
fn shell_dash_c(rest: &[ShellWord], stdin: &Stdin, depth: usize, a: &mut Analysis) {
    let (mut saw_c, mut saw_s) = (false, false);
    let mut i = 0;
    while i < rest.len() {
        let Some(w) = rest[i].literal.as_deref() else {
            if saw_c {
                a.unresolved = true;
            }
            return;
        };
        if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 && !w.starts_with("--") {
            saw_c |= w.starts_with('-') && w.contains('c');
            saw_s |= w.starts_with('-') && w.contains('s');
            i += if w.ends_with('o') || w.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        if w == "-" || w == "--" {
            i += 1;
            break;
        }
        if w.starts_with("--") {
            i += 1;
            continue;
        }
        break;
    }
    match rest.get(i) {
        Some(w) if saw_c => match w.literal.as_deref() {
            Some(script) => walk_nested(script, depth, a),
            None => a.unresolved = true,
        },
        // `-c` without its script is an error; nothing runs.
        None if saw_c => {}
        // Without -c or -s the word is a script file: its commands are not knowable here (the
        // key names the file).
        Some(_) if !saw_s => {}
        _ => shell_stdin(stdin, depth, a),
    }
}

/// A shell reading its script from stdin: a literal heredoc or here-string is walked as the
/// script; a pipe, a file or an expanding text is unresolved. The call's own stdin is empty
/// unless the call is interactive.
fn shell_stdin(stdin: &Stdin, depth: usize, a: &mut Analysis) {
    match stdin {
        Stdin::Inherited => {}
        Stdin::Text(Some(script)) => walk_nested(script, depth, a),
        Stdin::Text(None) | Stdin::Pipe | Stdin::File => a.unresolved = true,
    }
}

/// Record the command a wrapper runs (and what that one wraps in turn).
fn inner(
    words: &[ShellWord],
    assignments: Vec<String>,
    stdin: &Stdin,
    depth: usize,
    a: &mut Analysis,
) {
    if words.is_empty() {
        return;
    }
    let c = SimpleCommand {
        assignments,
        words: words.to_vec(),
    };
    unwrap_inner(&c, stdin, depth, a);
    a.commands.push(c);
}
