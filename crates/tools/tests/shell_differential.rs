//! The differential shell corpus: every line is analysed as `bash` would run it, then run by
//! `/bin/bash -c` in a fresh temp root, with every external command resolved to a recording
//! shim (argv, cwd, exported environment) and every file under the case's directory observed
//! before and after. Each command that ran must be covered by a derived `tool.bash.cmd:` key
//! (verb and literal arguments), each file written by a `write:` key, each file read by a
//! `read:` key, and no command may run with a changed variable that changes commands unless its
//! key names the assignment — or the line must have been keyed `tool.bash.cmd:?`.
//!
//! The corpus is the hand-written cases in `tests/data/shell_differential.txt` (one a line,
//! `⏎` for a newline) plus lines generated from a grammar of constructs by a seeded generator.
//! The shell runs as an unprivileged user, with `PATH` holding only the shims.

// A test binary of its own (`harness = false`, so it prints its figures): a failed set-up
// step should stop it loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use tackle_tools::shell::Dialect;
use tackle_tools::shell::analyze::{Analysis, SimpleCommand, analyze};
use tackle_tools::shell::keys::{basename, command_target, command_targets};
use tackle_tools::shell::routing::{LineEnvironment, routing_keys};
use tackle_tools::shell::sensitive::changes_commands;

/// Generated lines on top of the hand-written ones.
const GENERATED: usize = 1800;
/// Generated lines of the forms bash reads in ways a parser may not (here-documents, history
/// expansion, translation, wrapper option clusters).
const GENERATED_READING: usize = 600;
const SEED: u64 = 0x5eed_0013;
/// The unprivileged user the shell runs as when the test runs as root.
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Programs that get a recording shim (anything else reaches `command_not_found_handle`).
const SHIMS: &[&str] = &[
    "touch", "rm", "git", "cat", "ls", "curl", "wget", "mkdir", "cp", "mv", "wc", "sort", "head",
    "tail", "make", "cargo", "python3", "node", "npm", "grep", "sed", "awk", "tr", "date", "sleep",
    "chmod", "chown", "dd", "tee", "diff", "wipefs", "mkfs", "sudo", "doas", "a", "b", "c", "f",
    "x", "y", "z", "tool", "ok", "evil", "id", "whoami", "uname", "printenv", "nc", "ssh", "scp",
    "tar", "zip", "unzip", "base64", "xxd", "od", "stat", "true_cmd", "go", "rustc", "gcc", "yes",
    "seq", "basename", "dirname", "realpath", "readlink", "ln", "install", "rsync", "patch",
];
/// Programs whose shim records and then runs the real program (which runs the shims in turn).
const PASS_THROUGH: &[(&str, &str)] = &[
    ("env", "/usr/bin/env"),
    ("nice", "/usr/bin/nice"),
    ("nohup", "/usr/bin/nohup"),
    ("timeout", "/usr/bin/timeout"),
    ("xargs", "/usr/bin/xargs"),
    ("find", "/usr/bin/find"),
    ("setsid", "/usr/bin/setsid"),
    ("taskset", "/usr/bin/taskset"),
    ("ionice", "/usr/bin/ionice"),
    ("sh", "/bin/dash"),
    ("dash", "/bin/dash"),
    ("bash", "/bin/bash"),
    ("script", "/usr/bin/script"),
];

/// `su` and `runuser` cannot switch users for an unprivileged shell: their shims read the
/// options with util-linux `getopt`, which is GNU `getopt_long` as they call it (the same
/// option strings, clusters, abbreviations and permutation), then run what the program would
/// run as the user: the `-c` command through the user's shell (`/bin/dash`: nobody's shell is
/// not one), that shell on stdin without one, or for `runuser -u` the command itself.
const SWITCH_USER: &[(&str, &str)] = &[
    ("su", "c:fg:G:lmpPs:hVw:"),
    ("runuser", "c:fg:G:lmpPs:u:hVw:"),
];
const SWITCH_USER_LONG: &str = "command:,session-command:,fast,group:,supp-group:,login,\
     preserve-environment,pty,shell:,user:,help,version,whitelist-environment:";

fn switch_user_tail(name: &str, short: &str) -> String {
    format!(
        "args=$(/usr/bin/getopt -n {name} -o '{short}' -l '{SWITCH_USER_LONG}' -- \"$@\") || exit 1\n\
         eval set -- \"$args\"\n\
         cmd=; has=; user=\n\
         while :; do case \"$1\" in\n\
           -c|--command|--session-command) cmd=$2; has=1; shift 2;;\n\
           -u|--user) user=$2; shift 2;;\n\
           -g|-G|-s|-w|--group|--supp-group|--shell|--whitelist-environment) shift 2;;\n\
           -h|-V|--help|--version) exit 0;;\n\
           --) shift; break;;\n\
           *) shift;;\n\
         esac; done\n\
         [ -n \"$user\" ] && exec \"$@\"\n\
         [ \"$1\" = - ] && shift\n\
         [ $# -gt 0 ] && shift\n\
         [ -n \"$has\" ] && exec /bin/dash -c \"$cmd\" \"$@\"\n\
         exec /bin/dash \"$@\""
    )
}

/// The end of a shim: read stdin as the real program would (so a file redirected to it is
/// read), unless it is `/dev/null` or a terminal (`script` gives its command one, which never
/// ends).
const DRAIN: &str = "[ -t 0 ] || [ /dev/stdin -ef /dev/null ] || exec /bin/cat > /dev/null";

/// Variables the shell itself sets for its children.
const SHELL_OWNED: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

struct Harness {
    base: PathBuf,
    shims: PathBuf,
    bash_env: PathBuf,
}

/// One program that ran, as its shim saw it.
#[derive(Debug, Clone)]
struct Ran {
    name: String,
    exe: String,
    cwd: String,
    parent: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    len: u64,
    mtime: i64,
    mtime_ns: i64,
    ctime: i64,
    ctime_ns: i64,
    atime: i64,
    atime_ns: i64,
    ino: u64,
}

type Snapshot = BTreeMap<PathBuf, Entry>;

fn snapshot(dir: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let kind = if m.file_type().is_symlink() {
                "link"
            } else if m.is_dir() {
                stack.push(p.clone());
                "dir"
            } else if m.is_file() {
                "file"
            } else {
                "other"
            };
            out.insert(
                p,
                Entry {
                    kind,
                    len: m.len(),
                    mtime: m.mtime(),
                    mtime_ns: m.mtime_nsec(),
                    ctime: m.ctime(),
                    ctime_ns: m.ctime_nsec(),
                    atime: m.atime(),
                    atime_ns: m.atime_nsec(),
                    ino: m.ino(),
                },
            );
        }
    }
    out
}

/// Files written (created, changed, removed) and files read (access time moved).
fn observed(before: &Snapshot, after: &Snapshot) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut written = Vec::new();
    let mut read = Vec::new();
    for (p, a) in after {
        match before.get(p) {
            None => written.push(p.clone()),
            Some(b) if b.kind == "dir" && a.kind == "dir" => {}
            Some(b) => {
                let changed = (
                    b.kind, b.len, b.mtime, b.mtime_ns, b.ctime, b.ctime_ns, b.ino,
                ) != (
                    a.kind, a.len, a.mtime, a.mtime_ns, a.ctime, a.ctime_ns, a.ino,
                );
                if changed {
                    written.push(p.clone());
                } else if a.kind == "file" && (b.atime, b.atime_ns) != (a.atime, a.atime_ns) {
                    read.push(p.clone());
                }
            }
        }
    }
    for p in before.keys() {
        if !after.contains_key(p) {
            written.push(p.clone());
        }
    }
    (written, read)
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn shim_text(name: &str, then: &str) -> String {
    format!(
        "#!/bin/dash\n\
         pc=''; read -r pc < /proc/$PPID/comm 2>/dev/null\n\
         {{ printf '\\001%s\\000%s\\000%s\\000%s\\000%s\\000' '{name}' \"$0\" \"$PWD\" \"$pc\" \"$#\"\n\
         for a in \"$@\"; do printf '%s\\000' \"$a\"; done\n\
         export -p; printf '\\000'; }} >> \"$TACKLE_SHIM_LOG/$$\"\n\
         {then}\n"
    )
}

impl Harness {
    fn new(base: &Path) -> Harness {
        let shims = base.join("shims");
        std::fs::create_dir_all(&shims).unwrap();
        for name in SHIMS {
            write(&shims.join(name), &shim_text(name, DRAIN), 0o755);
        }
        for (name, real) in PASS_THROUGH {
            let marker = if matches!(*name, "sh" | "dash" | "bash") {
                "case \"$1\" in -*|'') ;; *) export TACKLE_SCRIPT_FILE=\"$1\";; esac\n"
            } else {
                ""
            };
            write(
                &shims.join(name),
                &shim_text(name, &format!("{marker}exec {real} \"$@\"")),
                0o755,
            );
        }
        for (name, short) in SWITCH_USER {
            write(
                &shims.join(name),
                &shim_text(name, &switch_user_tail(name, short)),
                0o755,
            );
        }
        let bash_env = base.join("bash_env.sh");
        write(
            &bash_env,
            "command_not_found_handle() {\n\
             { printf '\\001%s\\000%s\\000%s\\000%s\\000%s\\000' \"$1\" notfound \"$PWD\" bash \"$(($# - 1))\"\n\
             shift; for a in \"$@\"; do printf '%s\\000' \"$a\"; done\n\
             export -p; printf '\\000'; } >> \"$TACKLE_SHIM_LOG/nf.$$.$RANDOM\"\n\
             return 127\n}\n",
            0o644,
        );
        Harness {
            base: base.to_path_buf(),
            shims,
            bash_env,
        }
    }

    /// A fresh case directory: `root/` (the project), `outside/` and `home/`, all observed.
    fn fixture(&self, n: usize) -> PathBuf {
        let case = self.base.join("cases").join(n.to_string());
        let root = case.join("root");
        let outside = case.join("outside");
        let home = case.join("home");
        for d in [
            root.join("sub"),
            root.join("elsewhere"),
            root.join(".git/hooks"),
            outside.clone(),
            home.join(".ssh"),
            case.join("log"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        for (p, text) in [
            ("f", "f\n"),
            ("g", "g\n"),
            ("list", "a\nb\n"),
            ("in.txt", "in\n"),
            ("secret", "secret\n"),
            ("script.sh", "touch fromscript\n"),
            ("sub/g", "subg\n"),
            ("sub/f", "subf\n"),
            (".git/config", "[core]\n"),
        ] {
            std::fs::write(root.join(p), text).unwrap();
        }
        std::fs::write(outside.join("target"), "outside\n").unwrap();
        std::fs::write(outside.join("x"), "x\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "key\n").unwrap();
        std::fs::write(home.join(".gitconfig"), "[core]\n").unwrap();
        // A program of the repository's own that a changed PATH would run.
        write(&root.join("git"), &shim_text("ROGUE:git", DRAIN), 0o755);
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).unwrap();
        };
        link("../outside/target", "link");
        link(&outside.to_string_lossy(), "outlink");
        link(".git/config", "gitlink");
        link("sub", "dirlink");
        link(".git", "gitdir");
        // Every file's access time before its change time, so a read moves it (relatime).
        let past = SystemTime::now() - Duration::from_secs(7200);
        let mut stack = vec![case.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let m = std::fs::symlink_metadata(e.path()).unwrap();
                if is_root() {
                    std::os::unix::fs::lchown(e.path(), Some(NOBODY), Some(NOBODY)).unwrap();
                }
                if m.is_dir() {
                    stack.push(e.path());
                } else if m.is_file() {
                    let f = std::fs::File::options().write(true).open(e.path()).unwrap();
                    f.set_times(std::fs::FileTimes::new().set_accessed(past))
                        .unwrap();
                }
            }
        }
        if is_root() {
            std::os::unix::fs::chown(&case, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        case
    }

    fn run(&self, case: &Path, line: &str, shell: Shell) {
        let root = case.join("root");
        let mut env: Vec<(&str, OsString)> = vec![
            ("PATH", self.shims.clone().into_os_string()),
            ("HOME", case.join("home").into_os_string()),
            ("LANG", "C".into()),
            ("TACKLE_SHIM_LOG", case.join("log").into_os_string()),
            ("BASH_ENV", self.bash_env.clone().into_os_string()),
        ];
        env.sort();
        // Every process the line starts inherits the write end of this pipe as fd 9, so the
        // read end ends only once the last of them (background jobs included) has exited.
        let (mut done, held) = std::io::pipe().unwrap();
        let held_fd = held.as_raw_fd();
        let mut command = Command::new(shell.program);
        // SAFETY: between fork and exec only async-signal-safe system calls run: the shell
        // gets fd 9 and runs as an unprivileged user, so a line that reached a real program
        // could touch nothing but the case's own files.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(held_fd, 9) < 0
                    || (libc::geteuid() == 0
                        && (libc::setgroups(0, std::ptr::null()) != 0
                            || libc::setgid(NOBODY) != 0
                            || libc::setuid(NOBODY) != 0))
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .args(["-c", line])
            .env_clear()
            .envs(env)
            .current_dir(&root)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        drop(held);
        let pgid = child.id() as i32;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut rest = Vec::new();
            let _ = std::io::Read::read_to_end(&mut done, &mut rest);
            let _ = tx.send(());
        });
        if rx.recv_timeout(Duration::from_secs(10)).is_err() {
            // SAFETY: kill has no memory effects; the group is the line's own.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            panic!("the line did not finish within 10 s: {line:?}");
        }
        child.wait().unwrap();
    }
}

/// The records the shims wrote.
fn records(log: &Path) -> Vec<Ran> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(log).unwrap().flatten() {
        let bytes = std::fs::read(e.path()).unwrap();
        for rec in bytes.split(|b| *b == 1).filter(|r| !r.is_empty()) {
            let fields: Vec<String> = rec
                .split(|b| *b == 0)
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            if fields.len() < 5 {
                continue;
            }
            let argc: usize = fields[4].parse().unwrap_or(0);
            let args = fields[5..(5 + argc).min(fields.len())].to_vec();
            let exports = fields.get(5 + argc).cloned().unwrap_or_default();
            out.push(Ran {
                name: fields[0].clone(),
                exe: fields[1].clone(),
                cwd: fields[2].clone(),
                parent: fields[3].clone(),
                args,
                env: exported(&exports),
            });
        }
    }
    out
}

/// `export -p` text (dash: `export N='v'`; bash: `declare -x N="v"`) → name → value as printed.
fn exported(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let decl = line
            .strip_prefix("export ")
            .or_else(|| line.strip_prefix("declare -x "));
        match decl {
            Some(d) => {
                if let Some((n, v)) = current.take() {
                    out.insert(n, v);
                }
                let (n, v) = d.split_once('=').unwrap_or((d, ""));
                current = Some((n.to_owned(), v.to_owned()));
            }
            None => {
                if let Some((_, v)) = &mut current {
                    v.push('\n');
                    v.push_str(line);
                }
            }
        }
    }
    if let Some((n, v)) = current {
        out.insert(n, v);
    }
    out
}

/// Whether `pattern` (a command's words after the verb) covers `args`: a literal word matches
/// itself, a word that expands at run time any run of arguments; under `find` or `xargs` a `{}`
/// matches any arguments and `xargs` may append more.
fn covers(pattern: &[Option<String>], args: &[String], under: &str) -> bool {
    let placeholder = matches!(under, "find" | "xargs");
    match pattern.split_first() {
        None => args.is_empty() || under == "xargs",
        Some((None, rest)) => (0..=args.len()).any(|k| covers(rest, &args[k..], under)),
        Some((Some(p), rest)) if placeholder && p.contains("{}") => {
            (1..=args.len()).any(|k| covers(rest, &args[k..], under))
        }
        Some((Some(p), rest)) => {
            args.first().is_some_and(|a| a == p) && covers(rest, &args[1..], under)
        }
    }
}

fn command_covers(c: &SimpleCommand, ran: &Ran, shims: &Path) -> bool {
    if command_target(c).is_none() {
        return false;
    }
    let Some(verb) = c.words[0].literal.as_deref() else {
        return false;
    };
    if let Some(program) = ran.name.strip_prefix("ROGUE:") {
        // Only a line that names the repository's program by path, or whose key states the
        // `PATH` that finds it, runs it.
        let path_stated = c.assignments.iter().any(|a| a.starts_with("PATH="));
        return (verb.contains('/') || path_stated) && basename(verb) == program;
    }
    // A command a script file runs is what the key naming the file (`bash script.sh`) stands
    // for, as `python3 tool.py` stands for what the program does.
    if let Some(file) = ran.env.get("TACKLE_SCRIPT_FILE") {
        let file = file.trim_matches(['\'', '"']);
        return matches!(basename(verb), "sh" | "bash" | "dash")
            && c.words[1..]
                .iter()
                .any(|w| w.literal.as_deref() == Some(file));
    }
    if verb != ran.name {
        return false;
    }
    if ran.exe != "notfound" && Path::new(&ran.exe).parent() != Some(shims) {
        return false;
    }
    let pattern: Vec<Option<String>> = c.words[1..].iter().map(|w| w.literal.clone()).collect();
    covers(&pattern, &ran.args, &ran.parent)
}

/// The key form of an observed path: root-relative inside the root, absolute outside.
fn key_path(root: &Path, p: &Path) -> String {
    match p.strip_prefix(root) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => p.to_string_lossy().into_owned(),
    }
}

struct Verdict {
    unresolved: bool,
    escape: Option<String>,
}

/// Values as a shim printed them, with the case's own directory replaced by `@CASE`, so one
/// baseline serves every case.
fn normalized(env: BTreeMap<String, String>, case: &Path) -> BTreeMap<String, String> {
    let c = case.to_string_lossy();
    env.into_iter()
        .map(|(k, v)| (k, v.replace(c.as_ref(), "@CASE")))
        .collect()
}

/// A shell the corpus runs under, and the dialect the analyzer is told.
#[derive(Clone, Copy)]
struct Shell {
    program: &'static str,
    dialect: Dialect,
}

const BASH: Shell = Shell {
    program: "/bin/bash",
    dialect: Dialect::Bash,
};
/// Where `/bin/sh` is not bash, `bash` runs lines with it, and every construct whose meaning
/// differs must be unresolved.
const DASH: Shell = Shell {
    program: "/bin/dash",
    dialect: Dialect::Sh,
};

fn judge(
    h: &Harness,
    n: usize,
    line: &str,
    shell: Shell,
    baseline: &BTreeSet<(String, String)>,
) -> Verdict {
    judge_with(h, n, line, &analyze(line, shell.dialect), shell, baseline)
}

/// Lines judged against the analysis of another line that misses what they do: the harness
/// must report each as an escape, or it proves nothing.
const CANARIES: &[(&str, &str)] = &[
    ("touch x", ""),
    ("echo x > f", "echo x"),
    ("echo x >> link", "echo x >> outside_name"),
    ("cat < secret", "cat"),
    ("cat < ~/.ssh/id_rsa", "cat"),
    ("PATH=.:$PATH; git status", "git status"),
    ("HOME=$PWD; git status", "git status"),
    ("find . -maxdepth 0 -exec rm {} \\;", "find . -maxdepth 0"),
    ("rm -rf x", "rm -rf y"),
    ("cd sub && echo x > f", "echo x > f"),
];

fn judge_with(
    h: &Harness,
    n: usize,
    line: &str,
    analysis: &Analysis,
    shell: Shell,
    baseline: &BTreeSet<(String, String)>,
) -> Verdict {
    let started = std::time::Instant::now();
    if command_targets(analysis).iter().any(|t| t == "?") {
        // No allow rule matches the line: nothing it could do needs a key.
        return Verdict {
            unresolved: true,
            escape: None,
        };
    }
    let case = h.fixture(n);
    let root = case.join("root");
    let env = LineEnvironment {
        home: Some(case.join("home")),
        cdpath_set: false,
    };
    let keys: Vec<String> = routing_keys(analysis, &root, &env)
        .iter()
        .map(|r| r.key())
        .collect();
    if keys.iter().any(|k| k == "tool.bash.cmd:?") {
        // No allow rule matches the line: nothing it could do needs a key.
        let _ = std::fs::remove_dir_all(&case);
        return Verdict {
            unresolved: true,
            escape: None,
        };
    }
    let before = snapshot(&case);
    h.run(&case, line, shell);
    let ran: Vec<Ran> = records(&case.join("log"))
        .into_iter()
        .map(|mut r| {
            r.env = normalized(std::mem::take(&mut r.env), &case);
            r
        })
        .collect();
    let after = snapshot(&case);
    let (written, read) = observed(&before, &after);
    let written: Vec<PathBuf> = written
        .into_iter()
        .filter(|p| !p.starts_with(case.join("log")))
        .collect();
    let verdict = {
        let mut problems = Vec::new();
        for r in &ran {
            let covering: Vec<&SimpleCommand> = analysis
                .commands
                .iter()
                .filter(|c| command_covers(c, r, &h.shims))
                .collect();
            if covering.is_empty() {
                problems.push(format!(
                    "ran {} {:?} (exe {}, cwd {}, under {}) with no key",
                    r.name, r.args, r.exe, r.cwd, r.parent
                ));
                continue;
            }
            for (name, value) in &r.env {
                if SHELL_OWNED.contains(&name.as_str())
                    || name == "TACKLE_SCRIPT_FILE"
                    || baseline.contains(&(name.clone(), value.clone()))
                {
                    continue;
                }
                let stated = covering.iter().any(|c| {
                    c.assignments
                        .iter()
                        .any(|a| a.split(['=', '+']).next() == Some(name.as_str()))
                });
                if changes_commands(name) && !stated {
                    problems.push(format!(
                        "ran {} {:?} with {name}={value} that no key states",
                        r.name, r.args
                    ));
                }
            }
        }
        for p in &written {
            let k = format!("write:{}", key_path(&root, p));
            if !keys.contains(&k) {
                problems.push(format!("wrote {} with no {k} key", p.display()));
            }
        }
        let interpreted: Vec<String> = analysis
            .commands
            .iter()
            .filter(|c| matches!(c.words[0].literal.as_deref(), Some("sh" | "bash" | "dash")))
            .flat_map(|c| c.words[1..].iter().filter_map(|w| w.literal.clone()))
            .collect();
        let rogue_ran = ran.iter().any(|r| r.name.starts_with("ROGUE:"));
        for p in &read {
            let rel = key_path(&root, p);
            // A program reading itself to run, or a shell reading the script file it was
            // given: not a redirection.
            if interpreted.contains(&rel) || (rogue_ran && rel == "git") {
                continue;
            }
            let k = format!("read:{rel}");
            if !keys.contains(&k) {
                problems.push(format!("read {} with no {k} key", p.display()));
            }
        }
        Verdict {
            unresolved: false,
            escape: (!problems.is_empty()).then(|| {
                format!(
                    "ESCAPE {line:?}\n  {}\n  keys: {keys:?}\n  ran: {:?}",
                    problems.join("\n  "),
                    ran.iter()
                        .map(|r| format!("{} {:?}", r.name, r.args))
                        .collect::<Vec<_>>()
                )
            }),
        }
    };
    let _ = std::fs::remove_dir_all(&case);
    if started.elapsed() > Duration::from_millis(500) {
        println!("slow ({:?}): {line:?}", started.elapsed());
    }
    verdict
}

/// The hand-written cases: one a line, `⏎` for a newline, `⇥` for a tab, `#` for a comment.
fn hand_written() -> Vec<String> {
    include_str!("data/shell_differential.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace('⏎', "\n").replace('⇥', "\t"))
        .collect()
}

/// SplitMix64: small, seeded, the same lines on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// The grammar of generated lines: lists of pipelines of simple and compound commands, whose
/// words take every quoting and expansion form, with wrappers, redirections, heredocs,
/// assignments and directory changes, over a root whose links lead into `.git` and outside.
struct Grammar<'r> {
    rng: &'r mut Rng,
    depth: usize,
}

const VERBS: &[&str] = &[
    "touch",
    "rm",
    "git",
    "cat",
    "ls",
    "curl",
    "mkdir",
    "wc",
    "sort",
    "head",
    "make",
    "cargo",
    "evil",
    "echo",
    "printf",
    "true",
    ":",
    "a",
    "b",
    "unknown_cmd",
];
const PLAIN: &[&str] = &[
    "x", "-f", "-rf", "f", "sub", "--force", "a.txt", "status", "-n", "1",
];
const TARGETS: &[&str] = &[
    "f",
    "g",
    "new",
    "sub/f",
    "sub/new",
    "link",
    "gitlink",
    "dirlink/x",
    "outlink/x",
    "outlink/target",
    "gitdir/config",
    ".git/config",
    "~/x",
    "~/.gitconfig",
    "../outside/x",
    "/dev/null",
    "\"$v\"",
    "$v",
    "'sp ace'",
    "elsewhere/f",
];
const READS: &[&str] = &[
    "f",
    "secret",
    "sub/g",
    "link",
    "gitlink",
    "outlink/target",
    "~/.ssh/id_rsa",
    "../outside/x",
    "dirlink/g",
    "g",
];
const PRELUDES: &[&str] = &[
    "",
    "",
    "",
    "v=f; ",
    "x='a[$(touch p)]'; ",
    "i='a[$(touch q)]'; a=(1 2); ",
    "off='a[$(touch o)]'; s=abc; ",
    "set -- 'a[$(touch pos)]'; ",
];
const STATE: &[&str] = &[
    "cd sub",
    "cd elsewhere",
    "cd nonexist",
    "cd dirlink",
    "cd .git",
    "cd gitdir",
    "cd ..",
    "cd",
    "cd -",
    "cd \"$v\"",
    "pushd sub",
    "popd",
    "cd outlink",
    "PATH=.:$PATH",
    "PATH=.",
    "export PATH=.",
    "HOME=$PWD",
    "export HOME=$PWD",
    "export GIT_DIR=x",
    "GIT_DIR=x",
    "export LD_PRELOAD=x",
    "IFS=:",
    "x=1",
    "export X=1",
    "read x < f",
    "read PATH < list",
    "declare y=1",
    "declare -i y=x",
    "printf -v PATH %s .",
    "printf -v w %s 1",
    "set -e",
    "set -f",
    "shopt -s lastpipe",
    "shopt -s nullglob",
    "alias ls=evil",
    "f() { touch inf; }",
    "trap 'touch trapped' EXIT",
    "source script.sh",
    ". ./script.sh",
    "eval 'cd sub'",
    "let x",
    "(( x ))",
    "((1+2))",
    "[[ $x -eq 1 ]]",
    "[[ -v x ]]",
    "[ -f \"$v\" ]",
    "[ \"$v\" = f ]",
    "test -v \"$x\"",
    "unset v",
    "mapfile -t arr < list",
];

impl Grammar<'_> {
    fn word(&mut self) -> String {
        let r = &mut *self.rng;
        match r.below(24) {
            0..=5 => r.pick(PLAIN).to_owned(),
            6 => format!("'{}'", r.pick(&["a b", "$(touch sq)", "x;touch sq"])),
            7 => format!(
                "\"{}\"",
                r.pick(&[
                    "a b",
                    "$v",
                    "${v}",
                    "$(touch dq)",
                    "`touch dq`",
                    "\\$(touch dq)"
                ])
            ),
            8 => format!(
                "$'{}'",
                r.pick(&["a\\' ; touch ansi ; #", "\\x74ouch", "a\\nb", "\\'"])
            ),
            9 => format!("$({})", self.simple_inner()),
            10 => format!("`{}`", self.simple_inner()),
            11 => format!("${{v:-$({})}}", self.simple_inner()),
            12 => format!("\"${{v:-`{}`}}\"", self.simple_inner()),
            13 => format!("${{u:=$({})}}", self.simple_inner()),
            14 => r
                .pick(&[
                    "$((1+2))",
                    "$((x))",
                    "$[x]",
                    "$((i+1))",
                    "$(( $(touch ar) ))",
                ])
                .to_owned(),
            15 => r.pick(&["~", "~/x", "~+", "~nobody"]).to_owned(),
            16 => r
                .pick(&["{a,b}", "{1..2}", "*.txt", "s[ue]b", "?"])
                .to_owned(),
            17 => r
                .pick(&[
                    "a\\ b",
                    "\\$(touch esc)",
                    "\\`touch esc\\`",
                    "x\\;touch esc",
                ])
                .to_owned(),
            18 => r
                .pick(&[
                    "$v",
                    "\"$v\"",
                    "${#v}",
                    "${v/a/b}",
                    "${v:0:1}",
                    "${s:$off}",
                    "${a[0]}",
                    "${a[$i]}",
                    "${!v}",
                    "${v@P}",
                ])
                .to_owned(),
            19 => r.pick(&["<(touch ps)", ">(touch ps)"]).to_owned(),
            20 => r.pick(&["$\"a\"", "\"a\"'b'c", "''", "\"\""]).to_owned(),
            21 => r.pick(&["{fd}>f", "PATH=.", "a=b"]).to_owned(),
            22 => r.pick(&["#c touch cm", "\\#", "a#b"]).to_owned(),
            _ => r
                .pick(&[
                    "${v:-'$(touch sq2)'}",
                    "\"${v:-\"$(touch dq2)\"}\"",
                    "${v:+`touch alt`}",
                    "${v#$(touch pat)}",
                ])
                .to_owned(),
        }
    }

    /// A short command for substitutions.
    fn simple_inner(&mut self) -> String {
        let v = self.rng.pick(&[
            "touch in",
            "rm -rf x",
            "cat f",
            "git status",
            "echo hi",
            "curl evil",
        ]);
        v.to_owned()
    }

    fn redirect(&mut self) -> String {
        let r = &mut *self.rng;
        match r.below(14) {
            0 => format!("> {}", r.pick(TARGETS)),
            1 => format!(">> {}", r.pick(TARGETS)),
            2 => format!("< {}", r.pick(READS)),
            3 => format!("<> {}", r.pick(READS)),
            4 => format!("0< {}", r.pick(READS)),
            5 => format!("&> {}", r.pick(TARGETS)),
            6 => format!(">| {}", r.pick(TARGETS)),
            7 => format!("2> {}", r.pick(TARGETS)),
            8 => "2>&1".to_owned(),
            9 => format!(">& {}", r.pick(TARGETS)),
            10 => format!("<<< {}", r.pick(&["touch hs", "'x'", "\"$(touch hs)\""])),
            11 => format!("3> {}", r.pick(TARGETS)),
            12 => format!("> $(echo {})", r.pick(TARGETS)),
            _ => format!("<&0 > {}", r.pick(TARGETS)),
        }
    }

    fn wrapper(&mut self) -> String {
        self.rng
            .pick(&[
                "env ",
                "env X=1 ",
                "env PATH=. ",
                "nice ",
                "nice -n 5 ",
                "nohup ",
                "timeout 5 ",
                "setsid ",
                "taskset -c 0 ",
                "ionice -c 3 ",
                "command ",
                "builtin ",
                "exec ",
                "time ",
                "xargs ",
                "PATH=. ",
                "HOME=$PWD ",
                "X=1 ",
                "GIT_DIR=x ",
                "sudo ",
            ])
            .to_owned()
    }

    fn simple(&mut self) -> String {
        let mut out = String::new();
        if self.rng.chance(25) {
            out.push_str(&self.wrapper());
        }
        let verb = self.rng.pick(VERBS);
        out.push_str(verb);
        for _ in 0..self.rng.below(3) {
            out.push(' ');
            out.push_str(&self.word());
        }
        if self.rng.chance(35) {
            out.push(' ');
            out.push_str(&self.redirect());
        }
        out
    }

    fn command(&mut self) -> String {
        if self.depth >= 2 {
            return self.simple();
        }
        self.depth += 1;
        let r = self.rng.below(30);
        let c = match r {
            0..=11 => self.simple(),
            12..=15 => self.rng.pick(STATE).to_owned(),
            16 => format!("{{ {}; }}", self.list()),
            17 => format!("( {} )", self.list()),
            18 => format!("if {}; then {}; fi", self.simple(), self.list()),
            19 => format!("for w in a b; do {}; done", self.list()),
            20 => format!("while false; do {}; done", self.list()),
            21 => format!("case x in x) {};; esac", self.list()),
            22 => format!("sh -c '{}'", self.simple().replace('\'', "")),
            23 => format!("bash -c '{}'", self.simple().replace('\'', "")),
            24 => format!("eval '{}'", self.simple().replace('\'', "")),
            25 => format!(
                "find . -maxdepth 0 {} {} {{}} \\;",
                self.rng.pick(&["-exec", "-execdir", "-ok"]),
                self.rng
                    .pick(&["rm", "touch", "cat", "sh -c 'touch fe'", "git"])
            ),
            26 => format!(
                "{} <<{}⏎{}⏎EOF",
                self.rng.pick(&["cat", "sh", "bash", "cat > f", "sh -s"]),
                self.rng.pick(&["EOF", "'EOF'", "-EOF"]),
                self.rng.pick(&[
                    "touch hd",
                    "${v:-$(touch hd)}",
                    "$(rm -rf x)",
                    "`touch hd`",
                    "plain text",
                    "$v"
                ])
            ),
            27 => format!("echo {} | {}", self.word(), self.simple()),
            28 => format!("f() {{ {}; }}; f", self.list()),
            _ => format!(
                "[[ {} ]]",
                self.rng.pick(&[
                    "-n $v",
                    "$x -eq 1",
                    "a || sh -c 'touch t'",
                    "x > victim",
                    "-v x",
                    "$v == f"
                ])
            ),
        };
        self.depth -= 1;
        c
    }

    fn list(&mut self) -> String {
        let mut out = self.command();
        for _ in 0..self.rng.below(3) {
            out.push_str(self.rng.pick(&["; ", " && ", " || ", "⏎", " & ", " | "]));
            out.push_str(&self.command());
        }
        out
    }

    fn line(&mut self) -> String {
        let prelude = self.rng.pick(PRELUDES);
        format!("{prelude}{}", self.list()).replace('⏎', "\n")
    }
}

/// The families of [`Grammar::reading_form`], counted apart in the figures.
const READING_FAMILIES: [&str; 4] = ["here-document", "history", "translation/lookup", "wrapper"];

/// Delimiter words in every quoting form bash reads (the everyday four first), each with the line bash ends its body on
/// and lines that look like it but do not end it under bash (or under a parser that reads the
/// word another way).
const HEREDOC_TAGS: &[(&str, &str, &[&str])] = &[
    ("EOF", "EOF", &["'EOF'", "EOF ", "\\EOF"]),
    ("'EOF'", "EOF", &["'EOF'", "\"EOF\""]),
    ("\"EOF\"", "EOF", &["\"EOF\""]),
    ("\\EOF", "EOF", &["\\EOF"]),
    ("E\"O\"F", "EOF", &["E\"O\"F"]),
    ("$'EOF'", "EOF", &["$EOF", "$'EOF'"]),
    ("$'E\\x4fF'", "EOF", &["E\\x4fF", "Ex4fF"]),
    ("\"a'b\"", "a'b", &["ab", "\"a'b\""]),
    ("'a\\b'", "a\\b", &["ab", "'a\\b'"]),
    ("\"E\\$F\"", "E$F", &["E\\$F", "EF"]),
    ("\"E\\qF\"", "E\\qF", &["EqF"]),
    ("E\\$F", "E$F", &["E\\$F"]),
    ("''", "", &["''"]),
    ("$\"EOF\"", "EOF", &["$\"EOF\"", "$EOF"]),
];

impl Grammar<'_> {
    /// One here-document operator (`<<` or `<<-`) with its delimiter word, and the body lines
    /// after the command line: lines that look like commands, like the delimiter (split by a
    /// backslash-newline, indented by a tab, with a trailing blank), then the delimiter line.
    fn heredoc(&mut self) -> (String, Vec<String>) {
        // Half the time one of the four everyday forms, which the keys should read.
        let pick = if self.rng.chance(50) {
            self.rng.below(4)
        } else {
            self.rng.below(HEREDOC_TAGS.len())
        };
        let (tag, ends, decoys) = HEREDOC_TAGS[pick];
        let dash = self.rng.chance(30);
        let op = format!("<<{}{tag}", if dash { "-" } else { "" });
        let mut body = Vec::new();
        for _ in 0..self.rng.below(4) {
            let line = match self.rng.below(9) {
                0 => "touch hb".to_owned(),
                1 => "echo $(touch hx)".to_owned(),
                2 => self.rng.pick(decoys).to_owned(),
                3 if ends.len() > 1 => {
                    // The delimiter split by a backslash-newline.
                    let at = 1 + self.rng.below(ends.len() - 1);
                    format!("{}\\\n{}", &ends[..at], &ends[at..])
                }
                4 => format!("\t{ends}"),
                5 => format!("{ends}\\"),
                6 => "x\\".to_owned(),
                7 => "x\\\\".to_owned(),
                _ => "plain text".to_owned(),
            };
            body.push(line);
        }
        let end = if dash && self.rng.chance(50) {
            format!("\t{ends}")
        } else {
            ends.to_owned()
        };
        body.push(end);
        (op, body)
    }

    /// A line built to find where the analyzer and bash read a line differently:
    /// here-documents, history expansion, `$"…"` translation, wrapper option clusters.
    fn reading_form(&mut self) -> (&'static str, String) {
        match self.rng.below(4) {
            0 => (READING_FAMILIES[0], {
                // Some contexts make `<<` something else for bash: a subscript, arithmetic.
                let verb = self.rng.pick(&[
                    "cat",
                    "cat",
                    "sh",
                    "cat > f",
                    "bash",
                    "sh -s",
                    ": ",
                    "a[1",
                    "a[1 ",
                    "declare a[1",
                    "x=1 a[1",
                    "echo a[",
                    "((1 ",
                    "echo $((1",
                    "a=([1",
                ]);
                let mut line = verb.to_owned();
                let mut bodies = Vec::new();
                for _ in 0..1 + self.rng.below(2) {
                    let (op, body) = self.heredoc();
                    line.push(' ');
                    line.push_str(&op);
                    bodies.push(body);
                }
                if self.rng.chance(30) {
                    line.push_str(self.rng.pick(&["]=1", "))", "]", "]=1)", " ]"]));
                }
                if self.rng.chance(30) {
                    line.push_str(
                        self.rng
                            .pick(&["; touch op", " | cat", " && \\\ntouch cont"]),
                    );
                }
                for body in bodies {
                    for b in body {
                        line.push('\n');
                        line.push_str(&b);
                    }
                }
                line.push('\n');
                line.push_str(
                    self.rng
                        .pick(&["touch after", "EOF", "ab", "$EOF", "echo done"]),
                );
                line
            }),
            1 => (READING_FAMILIES[1], {
                let on = self.rng.pick(&[
                    "set -H",
                    "set -o histexpand",
                    "set -o history",
                    "set -o history -o histexpand",
                    "set -o history; set -H",
                    "set -o history; set -eH",
                    "set -o history -H",
                    "set -ho history",
                    "shopt -s -o history; set -H",
                    "set -B -o history -o histexpand",
                    // Forms that leave history expansion off: the `!` words are commands.
                    "",
                    "set -e",
                    "set +H",
                    "set -B",
                    "set +o history",
                    "set -o errexit -o nounset",
                ]);
                let use_ = self
                    .rng
                    .pick(&["!!:s/#//", "!-1:s/#//", "^#^", "!echo:s/#//", "!!"]);
                format!("{on}\necho x #;touch hx\n{use_}")
            }),
            2 => (
                READING_FAMILIES[2],
                self.rng
                    .pick(&[
                        "echo $\"hi\"",
                        "echo $\"$(touch tr)\"",
                        "TEXTDOMAIN=x; echo $\"hi\"",
                        "TEXTDOMAINDIR=. echo $\"a\"",
                        "export TEXTDOMAINDIR=.; echo hi",
                        "LANGUAGE=fr; echo $\"a\"",
                        "LC_MESSAGES=fr_FR.UTF-8; echo $\"a\"",
                        "echo \"$\"a",
                        "EXECIGNORE='*/shims/*'; git status",
                        "export EXECIGNORE=x; git status",
                        // Prefix assignments stay in the command's key.
                        "TEXTDOMAIN=x TEXTDOMAINDIR=. echo hi",
                        "LANGUAGE=fr echo hi",
                        "env TEXTDOMAINDIR=. echo hi",
                        "EXECIGNORE='*/shims/*' git status",
                    ])
                    .to_owned(),
            ),
            _ => (READING_FAMILIES[3], {
                let inner = self.simple().replace('\'', "");
                let form = self.rng.pick(&[
                    "script -qc '@' /dev/null",
                    "script -qc '@'",
                    "script -q -c '@' /dev/null",
                    "script -qec '@' /dev/null",
                    "script --command='@' /dev/null",
                    "script /dev/null -qc '@'",
                    "su -lc '@'",
                    "su -c'@'",
                    "su --comm='@'",
                    "su - -c '@'",
                    "su nobody -mc '@'",
                    "su -s /bin/sh -c '@'",
                    "su -pc '@' nobody",
                    "runuser -lc '@'",
                    "runuser -u nobody -- @",
                    "runuser -u nobody @",
                    "runuser -mu nobody @",
                    "bash -oc errexit '@'",
                    "bash -co errexit '@'",
                    "bash -Oc extglob '@'",
                    "bash -xc '@'",
                    "bash -ic '@'",
                    "bash -o history -o histexpand -c '@'",
                    "sh -ec '@'",
                    "flock f -c '@'",
                    "timeout -s9 5 @",
                    "nice -n5 @",
                    "env -i @",
                    "setsid -f @",
                    "xargs -0r @",
                ]);
                form.replace('@', &inner)
            }),
        }
    }
}

fn main() {
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let h = Harness::new(&base);
    let mut lines = hand_written();
    let hand = lines.len();
    let mut families = vec!["hand-written"; hand];
    let mut rng = Rng(SEED);
    for _ in 0..GENERATED {
        let mut g = Grammar {
            rng: &mut rng,
            depth: 0,
        };
        lines.push(g.line());
        families.push("grammar");
    }
    for _ in 0..GENERATED_READING {
        let mut g = Grammar {
            rng: &mut rng,
            depth: 0,
        };
        let (family, line) = g.reading_form();
        lines.push(line);
        families.push(family);
    }
    // What a shim sees when nothing changed its environment, in each shell's format.
    let baseline = {
        let case = h.fixture(usize::MAX);
        h.run(
            &case,
            "touch; sh -c 'notashim_x' ; bash -c 'notashim_y'",
            BASH,
        );
        let mut env = BTreeSet::new();
        for r in records(&case.join("log")) {
            env.extend(normalized(r.env, &case));
        }
        let _ = std::fs::remove_dir_all(&case);
        env
    };
    let mut passes = Vec::new();
    for shell in [BASH, DASH] {
        let next = AtomicUsize::new(0);
        let escapes = Mutex::new(Vec::new());
        let unresolved = AtomicUsize::new(0);
        // Per family: lines, keyed `?`.
        let tally: Mutex<BTreeMap<&str, (usize, usize)>> = Mutex::new(BTreeMap::new());
        let pass_started = std::time::Instant::now();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let Some(line) = lines.get(n) else {
                            break;
                        };
                        let id = if shell.dialect == Dialect::Bash {
                            n
                        } else {
                            lines.len() + n
                        };
                        let v = judge(&h, id, line, shell, &baseline);
                        if v.unresolved {
                            unresolved.fetch_add(1, Ordering::Relaxed);
                        }
                        let mut t = tally.lock().unwrap();
                        let entry = t.entry(families[n]).or_default();
                        entry.0 += 1;
                        entry.1 += usize::from(v.unresolved);
                        if let Some(e) = v.escape {
                            escapes.lock().unwrap().push(e);
                        }
                    }
                });
            }
        });
        let escapes = escapes.into_inner().unwrap();
        for e in &escapes {
            println!("[{}] {e}", shell.program);
        }
        println!(
            "shell differential corpus under {} ({:?}): {} lines ({hand} hand-written, {GENERATED} + {GENERATED_READING} generated), {} keyed `?`, {} escapes, {:.1} s",
            shell.program,
            shell.dialect,
            lines.len(),
            unresolved.load(Ordering::Relaxed),
            escapes.len(),
            pass_started.elapsed().as_secs_f64()
        );
        let tally = tally.into_inner().unwrap();
        for (family, (n, q)) in &tally {
            println!(
                "  {family}: {n} lines, {q} keyed `?`, {} keyed and run",
                n - q
            );
        }
        // A family all of whose lines are `?` proves nothing about the keys it yields.
        for family in READING_FAMILIES {
            let (n, q) = tally.get(family).copied().unwrap_or_default();
            assert!(
                n > q,
                "every generated {family} line was keyed `?`: the grammar no longer tests keys"
            );
        }
        passes.push(escapes.len());
    }

    let caught = CANARIES
        .iter()
        .enumerate()
        .filter(|(i, (line, stand_in))| {
            let analysis = analyze(stand_in, Dialect::Bash);
            judge_with(&h, 2 * lines.len() + i, line, &analysis, BASH, &baseline)
                .escape
                .is_some()
        })
        .count();
    println!(
        "harness canaries (lines judged against keys that miss what they do): {caught} of {} reported",
        CANARIES.len()
    );
    assert!(lines.len() >= 2000, "the corpus has fewer than 2,000 lines");
    assert_eq!(caught, CANARIES.len(), "the harness missed a canary escape");
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    let escapes: usize = passes.iter().sum();
    if escapes > 0 {
        eprintln!("{escapes} escapes");
        std::process::exit(1);
    }
}
