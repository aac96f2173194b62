//! A pre-started shell runs a script exactly as a fresh `sh -c` would, is used only when that
//! is certain, and never outlives its [`Shell`]; bash is never started ahead, and runs every
//! script exactly as a bare `bash -c` does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tackle_process::{
    BASH_PATHS, CancellationToken, Ended, EnvPolicy, MAX_SCRIPT_BYTES, OutputStream, RunOutcome,
    Shell, ShellKind, ShellProgram, ShellRun, removed_from_shell,
};

struct Collected {
    stdout: String,
    stderr: String,
    /// The bytes as they came, for comparisons byte for byte.
    raw: RawOutput,
    outcome: RunOutcome<()>,
}

/// What a run wrote and how it ended, exactly.
#[derive(PartialEq, Eq)]
struct RawOutput {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
    signal: Option<i32>,
}

impl std::fmt::Debug for RawOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawOutput")
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .field("code", &self.code)
            .field("signal", &self.signal)
            .finish()
    }
}

/// `/bin/sh` (dash here): the shell the pre-starting tests are about.
fn shell(prestart: bool) -> Shell {
    shell_of(ShellProgram::sh("/bin/sh"), prestart)
}

fn shell_of(program: ShellProgram, prestart: bool) -> Shell {
    Shell::new(
        program,
        EnvPolicy::default(),
        Duration::from_millis(200),
        prestart,
    )
}

/// This machine's bash, if it has one (found as tackle finds it).
fn bash() -> Option<ShellProgram> {
    let candidates: Vec<&Path> = BASH_PATHS.iter().map(Path::new).collect();
    let found = ShellProgram::find(&candidates, Path::new("/bin/sh"));
    (found.kind() == ShellKind::Bash).then_some(found)
}

async fn run_in(
    shell: &Shell,
    script: &str,
    parsed: bool,
    dir: &Path,
    timeout: Duration,
    cancel: CancellationToken,
) -> Collected {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let job = ShellRun {
        script,
        parsed,
        cwd: dir,
        timeout,
        stdin: None,
    };
    let outcome = shell
        .run(
            job,
            |s, b: &[u8]| {
                match s {
                    OutputStream::Stdout => stdout.extend_from_slice(b),
                    OutputStream::Stderr => stderr.extend_from_slice(b),
                }
                Ok::<(), ()>(())
            },
            cancel,
        )
        .await
        .unwrap();
    Collected {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        raw: RawOutput {
            stdout,
            stderr,
            code: outcome.status.code,
            signal: outcome.status.signal,
        },
        outcome,
    }
}

/// A pre-starting shell with a shell started for `dir`; `None` where `/bin/sh` is not dash
/// (nothing is pre-started there, which `a_prestarted_shell_behaves_as_sh_c` checks).
async fn warmed(dir: &Path) -> Option<Shell> {
    let warm = shell(true);
    if !warm.prestarts() {
        return None;
    }
    warm.warm_up(dir).await;
    Some(warm)
}

async fn run(shell: &Shell, script: &str, parsed: bool, dir: &Path) -> Collected {
    run_in(
        shell,
        script,
        parsed,
        dir,
        Duration::from_secs(30),
        CancellationToken::new(),
    )
    .await
}

/// Scripts whose every observable result must be the same from a pre-started shell, as
/// `(script, parsed by the caller, may use a pre-started shell)`.
const SAME_EITHER_WAY: &[(&str, bool, bool)] = &[
    ("true", true, true),
    ("exit 7", true, true),
    ("no_such_command_here", true, true),
    ("echo a; no_such_command_two arg", true, true),
    ("echo a\nno_such_command_three", true, true),
    ("echo \"$0\" $# \"$@\"", true, true),
    ("echo $LINENO; echo $LINENO\necho $LINENO", true, true),
    ("cat; echo after-cat", true, true),
    ("read x; echo \"[$x] $?\"", true, true),
    // The script redirects its own stdin; the rest of that file is data, never script.
    (
        "printf 'first\\necho PWNED-1\\n' > d1; exec < d1; read x; echo \"read $x\"",
        true,
        true,
    ),
    ("printf 'echo PWNED-2\\n' > d2; exec < d2", true, true),
    ("set -n; echo not-run", true, true),
    ("trap 'echo bye' EXIT; exit 3", true, true),
    // The script's own end, traced, trapped or with `exit` aliased away.
    ("set -x; echo traced", true, true),
    ("set -x; false", true, true),
    ("trap 'echo bye >&2' EXIT; echo hi", true, true),
    ("trap 'echo bye; exit 5' EXIT; true", true, true),
    ("alias exit='echo aliased'; echo hi", true, true),
    ("exec 2>&-; echo stderr-closed", true, true),
    ("set -e; false; echo not-reached", true, true),
    ("return 4; echo not-reached", true, true),
    ("kill -TERM $$; echo not-reached", true, true),
    ("echo -n no-newline", true, true),
    // bash syntax the caller's parser accepts and dash refuses: the same error either way.
    ("a=(1 2); echo $a", true, true),
    ("ls /proc/self/fd | sort", true, true),
    ("sleep 0.01 & wait; echo waited $?", true, true),
    ("x=1; f() { echo $x; }; f", true, true),
    ("exec echo replaced", true, true),
    ("cd /no/such/dir/anywhere", true, true),
    ("echo 'it''s' \"dq\" \\$HOME", true, true),
    ("# only a comment", true, true),
    ("echo a # trailing comment", true, true),
    ("echo trailing-newlines\n\n\n", true, true),
    // Not eligible: these always get a fresh `sh -c`.
    ("cat <<EOF\nheredoc $((1+2))\nEOF", true, false),
    ("cat <<<here-string", true, false),
    ("echo continued \\", true, false),
    ("set -v; echo verbose", true, false),
    ("if then", false, false),
    ("echo \"unterminated", false, false),
];

#[tokio::test]
async fn a_prestarted_shell_behaves_as_sh_c() {
    let warm = shell(true);
    let cold = shell(false);
    if !warm.prestarts() {
        // /bin/sh is not dash: every run must be fresh.
        let dir = tempfile::tempdir().unwrap();
        warm.warm_up(dir.path()).await;
        assert!(
            !run(&warm, "true", true, dir.path())
                .await
                .outcome
                .prestarted
        );
        return;
    }
    for &(script, parsed, eligible) in SAME_EITHER_WAY {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let fresh = run(&cold, script, parsed, a.path()).await;
        warm.warm_up(b.path()).await;
        let pre = run(&warm, script, parsed, b.path()).await;
        assert!(!fresh.outcome.prestarted);
        assert_eq!(pre.outcome.prestarted, eligible, "{script:?}");
        assert_eq!(pre.stdout, fresh.stdout, "stdout of {script:?}");
        assert_eq!(pre.stderr, fresh.stderr, "stderr of {script:?}");
        assert_eq!(
            pre.outcome.status, fresh.outcome.status,
            "status of {script:?}"
        );
        assert_eq!(pre.outcome.ended, Ended::Exited, "{script:?}");
        assert!(!pre.stdout.contains("PWNED"), "{script:?} ran its data");
    }
}

/// bash's own behaviour, where a shell read from stdin or an `eval` would show a difference
/// (`$-`, `BASH_EXECUTION_STRING`, `$BASH_COMMAND`, `$_`, error prefixes, `set -v`, data after
/// `exec <`…), and bash-only syntax (which dash reads otherwise).
const BASH_CASES: &[&str] = &[
    "echo \"$-\"",
    "echo \"$0\" \"$BASH\" $#",
    "echo \"[$BASH_EXECUTION_STRING]\"",
    "declare -p BASH_EXECUTION_STRING",
    "echo \"$_\"",
    "trap 'echo \"$BASH_COMMAND\"' EXIT; echo hi",
    "printf '<%s>\\n' \"${PIPESTATUS[@]}\"",
    "echo ${BASH_SOURCE[@]} ${#BASH_SOURCE[@]} ${FUNCNAME[@]} ${BASH_LINENO[@]}; caller; echo $?",
    "echo $LINENO\necho $LINENO\n\necho $LINENO",
    "[[ a == a ]] && echo yes",
    "[[ x > victim ]]; echo $?; ls",
    "echo $'a\\tb' $'a\\' ; echo not-a-comment ; #'",
    "((1+1)); echo $?",
    "((touch x)); echo $?; ls",
    "a=(1 2); echo ${a[1]} ${#a[@]}",
    "x=1; echo ${x@Q} ${x/1/2} ${x:-$(echo sub)}",
    "echo {a,b}{1,2} $(( 2 ** 10 ))",
    "cat <(echo process-substitution)",
    "alias ll='echo aliased'; ll",
    "shopt -s expand_aliases; alias ll='echo aliased'\nll x",
    "set -v; echo a\necho b",
    "set -x; echo traced; (echo sub); x=$(echo cs)",
    "printf 'first\\necho PWNED-3\\n' > d3; exec < d3; read x; echo \"read $x\"\necho after",
    "exec 0</dev/null; echo a\nno_such_command_four",
    "echo a\nno_such_command_five",
    "echo a; if then fi",
    "cat <<X\nunterminated heredoc",
    "shopt | cksum; set -o | cksum",
    "echo $SHLVL ${BASH_VERSINFO[0]}",
    "sh -c 'cat /proc/$PPID/comm'",
    "readonly r=1; r=2; echo $?",
    "set -u; echo $nope; echo not-reached",
    "f() { return 3; }; f; echo $?",
    "select x in a; do break; done; echo $?",
    "read -t 0.01 x; echo $?",
    "shopt -s lastpipe; echo piped | read x; echo $x",
    "type -t echo [[ cd ls",
    "enable -n echo; echo external",
    "echo ${BASH_ARGV0:-} ${BASH_ENV:-none} ${SHELLOPTS}",
];

/// The environment tackle's shell gets, for a bare `bash -c` to run with. Without the
/// variables that make bash read `~/.bashrc` (which `--norc` stops), so a bare `-c` reads no
/// more than tackle's shell does.
fn bare_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    use std::os::unix::ffi::OsStrExt;
    EnvPolicy::default()
        .filter(std::env::vars_os())
        .into_iter()
        .filter(|(k, _)| {
            !removed_from_shell(k.as_bytes()) && k != "SSH_CLIENT" && k != "SSH2_CLIENT"
        })
        .collect()
}

fn bare_bash_c(program: &ShellProgram, script: &str, dir: &Path) -> RawOutput {
    use std::os::unix::process::ExitStatusExt;
    let out = std::process::Command::new(program.path())
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .envs(bare_env())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    RawOutput {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code(),
        signal: out.status.signal(),
    }
}

/// Under bash, nothing is started ahead, whatever `prestart` says, and every script of both
/// corpora gives, with pre-starting on and off, exactly what a bare `bash -c` gives.
#[tokio::test]
async fn bash_runs_every_script_as_a_bare_bash_c_with_or_without_prestart() {
    let Some(program) = bash() else {
        return;
    };
    let on = shell_of(program.clone(), true);
    let off = shell_of(program.clone(), false);
    assert!(!on.prestarts(), "a bash is never started ahead");
    let scripts = SAME_EITHER_WAY
        .iter()
        .map(|&(script, parsed, _)| (script, parsed))
        .chain(BASH_CASES.iter().map(|&script| (script, true)));
    let mut compared = 0;
    for (script, parsed) in scripts {
        let dirs = [(); 3].map(|()| tempfile::tempdir().unwrap());
        on.warm_up(dirs[0].path()).await;
        let with = run(&on, script, parsed, dirs[0].path()).await;
        let without = run(&off, script, parsed, dirs[1].path()).await;
        let bare = bare_bash_c(&program, script, dirs[2].path());
        assert!(!with.outcome.prestarted && !without.outcome.prestarted);
        assert_eq!(with.raw, bare, "{script:?}, prestart on, beside bash -c");
        assert_eq!(
            without.raw, bare,
            "{script:?}, prestart off, beside bash -c"
        );
        assert!(!with.stdout.contains("PWNED"), "{script:?} ran its data");
        compared += 1;
    }
    assert_eq!(compared, SAME_EITHER_WAY.len() + BASH_CASES.len());
}

/// A few of the cases above, with what bash itself prints, so the comparison cannot pass by
/// both sides being wrong the same way (`-c:` in syntax errors, `c` in `$-`, the data after
/// `exec <` never run).
#[tokio::test]
async fn bash_shows_its_c_mode_and_never_runs_data() {
    let Some(program) = bash() else {
        return;
    };
    let sh = shell_of(program.clone(), true);
    let dir = tempfile::tempdir().unwrap();
    let bash_path = program.path().display().to_string();
    for (script, stdout, stderr) in [
        ("echo \"$-\"", "hBc\n".to_owned(), String::new()),
        (
            "echo \"[$BASH_EXECUTION_STRING]\"",
            "[echo \"[$BASH_EXECUTION_STRING]\"]\n".to_owned(),
            String::new(),
        ),
        ("echo \"$0\"", format!("{bash_path}\n"), String::new()),
        (
            "[[ a == a ]] && echo yes",
            "yes\n".to_owned(),
            String::new(),
        ),
        ("echo $'a\\tb'", "a\tb\n".to_owned(), String::new()),
        (
            "printf 'echo PWNED\\n' > d; exec < d; echo after",
            "after\n".to_owned(),
            String::new(),
        ),
        (
            "echo a\nno_such_command_six",
            "a\n".to_owned(),
            format!("{bash_path}: line 2: no_such_command_six: command not found\n"),
        ),
        (
            "if then",
            String::new(),
            format!(
                "{bash_path}: -c: line 1: syntax error near unexpected token `then'\n\
                 {bash_path}: -c: line 1: `if then'\n"
            ),
        ),
    ] {
        let c = run(&sh, script, true, dir.path()).await;
        assert_eq!((c.stdout, c.stderr), (stdout, stderr), "{script:?}");
    }
}

/// With `prestart` on, a `Shell` over bash leaves no shell waiting in the directory.
#[tokio::test]
async fn no_bash_waits_in_the_directory() {
    let Some(program) = bash() else {
        return;
    };
    let sh = shell_of(program, true);
    let dir = tempfile::tempdir().unwrap();
    sh.warm_up(dir.path()).await;
    let c = run(&sh, "true", true, dir.path()).await;
    assert!(!c.outcome.prestarted);
    sh.warm_up(dir.path()).await;
    assert!(children_in(dir.path()).is_empty());
}

#[tokio::test]
async fn dollar_dash_shows_the_documented_s() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    let c = run(&warm, "echo \"$-\"", true, dir.path()).await;
    assert!(c.outcome.prestarted);
    assert_eq!(c.stdout, "s\n");
    let fresh = run(&shell(false), "echo \"$-\"", true, dir.path()).await;
    assert_eq!(fresh.stdout, "\n");
}

/// Our live children whose working directory is `dir`, with their argv.
fn children_in(dir: &Path) -> Vec<(i32, Vec<u8>)> {
    let me = std::process::id().to_string();
    let dir = std::fs::canonicalize(dir).unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let mut rest = stat
                .rsplit_once(')')
                .map_or("", |(_, r)| r)
                .split_whitespace();
            let (state, ppid) = (rest.next(), rest.next());
            state.is_some_and(|s| s != "Z" && s != "X")
                && ppid == Some(me.as_str())
                && std::fs::read_link(format!("/proc/{pid}/cwd")).ok() == Some(dir.clone())
        })
        .map(|pid| {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, argv)
        })
        .collect()
}

/// Pre-started shells (`/bin/sh -s`, our children) whose working directory is `dir`.
fn prestarted_in(dir: &Path) -> Vec<i32> {
    children_in(dir)
        .into_iter()
        .filter(|(_, argv)| argv == b"/bin/sh\0-s\0")
        .map(|(pid, _)| pid)
        .collect()
}

/// The one pre-started shell in `dir`. `warm_up` returns once the spawn has returned, which
/// can be a moment before the kernel shows the new program's argv in `/proc`: wait (bounded).
async fn the_one_started_in(dir: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids = prestarted_in(dir);
        if pids.len() == 1 || Instant::now() >= deadline {
            assert_eq!(pids.len(), 1, "{pids:?}");
            return pids[0];
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Wait (bounded) until no pre-started shell runs in `dir`.
async fn none_left_in(dir: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if prestarted_in(dir).is_empty() {
            return true;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test]
async fn a_shell_started_for_another_directory_is_not_used_and_not_left() {
    let warm = shell(true);
    if !warm.prestarts() {
        return;
    }
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    warm.warm_up(a.path()).await;
    the_one_started_in(a.path()).await;
    let c = run(&warm, "pwd -P", true, b.path()).await;
    assert!(!c.outcome.prestarted);
    assert_eq!(
        PathBuf::from(c.stdout.trim_end()),
        std::fs::canonicalize(b.path()).unwrap()
    );
    assert!(
        none_left_in(a.path()).await,
        "the unused shell was not ended"
    );
}

#[tokio::test]
async fn a_directory_replaced_under_the_same_path_gets_a_fresh_shell() {
    let warm = shell(true);
    if !warm.prestarts() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("project");
    std::fs::create_dir(&dir).unwrap();
    warm.warm_up(&dir).await;
    std::fs::rename(&dir, root.path().join("old")).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("marker"), "new").unwrap();
    let c = run(&warm, "cat marker", true, &dir).await;
    assert!(!c.outcome.prestarted);
    assert_eq!(c.stdout, "new");
    assert!(none_left_in(&root.path().join("old")).await);
}

#[tokio::test]
async fn a_prestarted_shell_that_died_is_replaced_by_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    let pid = the_one_started_in(dir.path()).await;
    // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(none_left_in(dir.path()).await);
    let c = run(&warm, "echo still-runs", true, dir.path()).await;
    assert!(!c.outcome.prestarted);
    assert_eq!(c.stdout, "still-runs\n");
    assert_eq!(c.outcome.status.code, Some(0));
}

#[tokio::test]
async fn dropping_the_shell_ends_the_one_started_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    the_one_started_in(dir.path()).await;
    drop(warm);
    assert!(none_left_in(dir.path()).await);
}

#[tokio::test]
async fn after_a_run_the_next_shell_is_started_ahead() {
    let warm = shell(true);
    if !warm.prestarts() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = run(&warm, "true", true, dir.path()).await;
    assert!(
        !first.outcome.prestarted,
        "nothing was started before the first run"
    );
    // The replacement is started in the background; warm_up waits for it (or starts one).
    warm.warm_up(dir.path()).await;
    the_one_started_in(dir.path()).await;
    let second = run(&warm, "echo second", true, dir.path()).await;
    assert!(second.outcome.prestarted);
    assert_eq!(second.stdout, "second\n");
}

#[tokio::test]
async fn timeout_and_cancellation_end_a_prestarted_run_and_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    let c = run_in(
        &warm,
        "trap '' TERM; sleep 30 & echo $!; wait",
        true,
        dir.path(),
        Duration::from_millis(1000),
        CancellationToken::new(),
    )
    .await;
    assert!(c.outcome.prestarted);
    assert_eq!(c.outcome.ended, Ended::TimedOut);
    let sleeper: i32 = c.stdout.trim().parse().unwrap();
    assert!(
        !alive(sleeper),
        "the SIGTERM-ignoring child outlived the timeout"
    );

    warm.warm_up(dir.path()).await;
    // Cancelled before the script could finish: the run ends as cancelled, group and all.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let c = run_in(
        &warm,
        "sleep 30",
        true,
        dir.path(),
        Duration::from_secs(60),
        cancel,
    )
    .await;
    assert!(c.outcome.prestarted);
    assert_eq!(c.outcome.ended, Ended::Cancelled);
    assert!(!alive(c.outcome.pid as i32));
}

/// Whether `pid` runs (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

#[tokio::test]
async fn setsid_escapees_of_a_prestarted_run_are_ended_however_long_it_waited() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    // Pids allocated while the shell waits are not the run's: the scan looks only past the
    // last pid at hand-over, and the run's own descendants must all be found there.
    for _ in 0..300 {
        std::process::Command::new("/bin/true").status().unwrap();
    }
    let c = run(
        &warm,
        "setsid sleep 30 >/dev/null 2>&1 & echo $!",
        true,
        dir.path(),
    )
    .await;
    assert!(c.outcome.prestarted);
    let escapee: i32 = c.stdout.trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(escapee) && Instant::now() < deadline {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!alive(escapee), "the setsid escapee outlived its run");
}

#[test]
fn a_shell_outlives_the_runtime_that_started_its_next_shell() {
    let warm = shell(true);
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..5 {
        // The run asks for the next shell on this runtime's blocking pool; the runtime is shut
        // down at once, before or after that start runs.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let c = rt.block_on(run(&warm, "echo once", true, dir.path()));
        assert_eq!(c.stdout, "once\n");
        rt.shutdown_background();
    }
    // A later runtime still runs scripts: nothing waits for a start that never came.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let c = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(30),
            run(&warm, "echo later", true, dir.path()),
        )
        .await
        .expect("the run waited for a start that never came")
    });
    assert_eq!(c.stdout, "later\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_share_the_shell_started_ahead_without_mixing_up() {
    let dir = tempfile::tempdir().unwrap();
    let Some(warm) = warmed(dir.path()).await else {
        return;
    };
    for _ in 0..3 {
        let runs = (0..8).map(|i| {
            let (warm, dir) = (warm.clone(), dir.path().to_path_buf());
            tokio::spawn(async move {
                let script = format!("echo run-{i}; echo err-{i} >&2; exit {i}");
                let c = run(&warm, &script, true, &dir).await;
                (i, c)
            })
        });
        let mut prestarted = 0;
        for handle in runs.collect::<Vec<_>>() {
            let (i, c) = handle.await.unwrap();
            assert_eq!(c.stdout, format!("run-{i}\n"));
            assert_eq!(c.stderr, format!("err-{i}\n"));
            assert_eq!(c.outcome.status.code, Some(i));
            prestarted += usize::from(c.outcome.prestarted);
        }
        // The shell started ahead went to one of them (and each run got its own output, so no
        // shell ran two scripts).
        assert!(prestarted >= 1, "the shell started ahead was not used");
        warm.warm_up(dir.path()).await;
    }
    drop(warm);
    assert!(none_left_in(dir.path()).await);
}

/// A script as long as one argument may be runs; one byte more is refused with a message that
/// says what to do, not a spawn failure that blames the shell.
#[tokio::test]
async fn the_longest_script_runs_and_a_longer_one_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut programs = vec![ShellProgram::sh("/bin/sh")];
    programs.extend(bash());
    for program in programs {
        let sh = shell_of(program.clone(), false);
        let longest = format!("echo ok #{}", "x".repeat(MAX_SCRIPT_BYTES - 9));
        assert_eq!(longest.len(), MAX_SCRIPT_BYTES);
        let c = run(&sh, &longest, true, dir.path()).await;
        assert_eq!(c.stdout, "ok\n", "{program:?}");
        let longer = format!("{longest}x");
        let job = ShellRun {
            script: &longer,
            parsed: true,
            cwd: dir.path(),
            timeout: Duration::from_secs(30),
            stdin: None,
        };
        let err = sh
            .run(job, |_, _| Ok::<(), ()>(()), CancellationToken::new())
            .await
            .err()
            .unwrap();
        let message = err.to_string();
        assert!(
            message.contains(&format!("{} bytes", MAX_SCRIPT_BYTES + 1))
                && message.contains("write it to a file"),
            "{message}"
        );
    }
}
