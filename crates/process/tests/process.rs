//! The runner against real programs: groups end whole, streams never deadlock, bytes arrive
//! exactly, stdin reaches interactive children, cancellation ends the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use tackle_process::{
    CancellationToken, Ended, EnvPolicy, OutputStream, RunOutcome, RunSpec, StdinInput,
    StdinRegistry, run,
};

fn spec(script: &str, dir: &Path, timeout: Duration) -> RunSpec {
    RunSpec {
        program: "/bin/sh".into(),
        args: vec![OsString::from("-c"), OsString::from(script)],
        cwd: dir.to_path_buf(),
        env: EnvPolicy::default(),
        timeout,
        grace: Duration::from_millis(200),
        stdin: None,
    }
}

struct Collected {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    outcome: RunOutcome<()>,
}

async fn collect(spec: RunSpec, cancel: CancellationToken) -> Collected {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let outcome = run(
        spec,
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
        stdout,
        stderr,
        outcome,
    }
}

/// Whether `pid` is a running process. A zombie counts as gone: orphaned grandchildren are
/// reparented to pid 1, whose reaping is not ours (and some container inits never reap).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn pids(text: &[u8]) -> Vec<i32> {
    String::from_utf8_lossy(text)
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[tokio::test]
async fn exit_status_streams_and_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let c = collect(
        spec(
            "pwd; echo err >&2; exit 3",
            dir.path(),
            Duration::from_secs(30),
        ),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.outcome.ended, Ended::Exited);
    assert_eq!(c.outcome.status.code, Some(3));
    assert_eq!(
        String::from_utf8(c.stdout).unwrap().trim_end(),
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    assert_eq!(c.stderr, b"err\n");
    let c = collect(
        spec("kill -9 $$", dir.path(), Duration::from_secs(30)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.outcome.status.signal, Some(libc::SIGKILL));
    assert_eq!(c.outcome.status.code, None);
}

#[tokio::test]
async fn timeout_ends_the_whole_group_including_sigterm_ignorers_and_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    // The shell prints its own pid, a child that ignores SIGTERM, and a grandchild, then waits.
    let script = "trap '' TERM; \
                  sh -c 'trap \"\" TERM; sleep 600 & echo $!; wait' & \
                  sleep 600 & echo $!; echo $$; \
                  wait";
    let c = collect(
        spec(script, dir.path(), Duration::from_millis(500)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.outcome.ended, Ended::TimedOut);
    let pids = pids(&c.stdout);
    assert_eq!(pids.len(), 3, "{:?}", String::from_utf8_lossy(&c.stdout));
    for pid in pids {
        assert!(!alive(pid), "pid {pid} outlived the timeout");
    }
    assert!(!alive(c.outcome.pid as i32));
}

#[tokio::test]
async fn background_leftovers_are_ended_when_the_program_exits() {
    let dir = tempfile::tempdir().unwrap();
    let c = collect(
        spec(
            "sleep 600 >/dev/null 2>&1 & echo $!",
            dir.path(),
            Duration::from_secs(30),
        ),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.outcome.ended, Ended::Exited);
    for pid in pids(&c.stdout) {
        assert!(!alive(pid), "background pid {pid} was left running");
    }
}

/// Poll until `pid` is no longer running, for at most ten seconds; whether it ended.
async fn gone(pid: i32) -> bool {
    for _ in 0..1000 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    !alive(pid)
}

/// Descendants that left the process group with `setsid` (a new session, so `kill(-pgid)`
/// misses them) are found by the run's environment marker and ended with the group.
#[tokio::test]
async fn setsid_escapees_are_ended_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // (script, timeout, how the run ends)
    // Each escapee writes its pid to a FIFO only after setsid(2), and the program prints what
    // it reads, so the pid printed is always that of a process outside the group.
    let cases = [
        // Backgrounded and not a group leader: setsid(2), then exec.
        "setsid sh -c 'echo $$ > p; exec sleep 1000' >/dev/null 2>&1 & cat p",
        // setsid -f always forks; the escapee lets go of the pipes.
        "setsid -f sh -c 'echo $$ > p; exec sleep 1000 >/dev/null 2>&1'; cat p",
        // An escapee that keeps stdout open.
        "setsid -f sh -c 'echo $$ > p; exec sleep 1000'; cat p",
        // A double fork into a new session.
        "(setsid sh -c 'echo $$ > p; exec sleep 1000 >/dev/null 2>&1' &); cat p",
    ];
    for script in cases {
        let script = format!("rm -f p; mkfifo p; {script}");
        let c = collect(
            spec(&script, dir.path(), Duration::from_secs(30)),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(c.outcome.ended, Ended::Exited, "{script}");
        let pids = pids(&c.stdout);
        assert_eq!(
            pids.len(),
            1,
            "{script}: {:?}",
            String::from_utf8_lossy(&c.stdout)
        );
        for pid in pids {
            assert!(gone(pid).await, "{script}: escapee {pid} outlived the run");
        }
    }
}

#[tokio::test]
async fn a_cancelled_run_ends_its_setsid_escapees() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let (mut stdout, trigger) = (Vec::new(), cancel.clone());
    let outcome = run(
        spec(
            "mkfifo p; setsid -f sh -c 'echo $$ > p; exec sleep 1000 >/dev/null 2>&1'; cat p; \
             sleep 1000",
            dir.path(),
            Duration::from_secs(600),
        ),
        |_, b: &[u8]| {
            stdout.extend_from_slice(b);
            if !pids(&stdout).is_empty() {
                trigger.cancel();
            }
            Ok::<(), ()>(())
        },
        cancel,
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, Ended::Cancelled);
    for pid in pids(&stdout) {
        assert!(gone(pid).await, "escapee {pid} outlived cancellation");
    }
}

#[tokio::test]
async fn the_run_marker_is_fresh_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = collect(
        spec("echo $TACKLE_RUN", dir.path(), Duration::from_secs(30)),
        CancellationToken::new(),
    )
    .await;
    let second = collect(
        spec("echo $TACKLE_RUN", dir.path(), Duration::from_secs(30)),
        CancellationToken::new(),
    )
    .await;
    let (first, second) = (
        String::from_utf8(first.stdout).unwrap(),
        String::from_utf8(second.stdout).unwrap(),
    );
    assert!(!first.trim().is_empty());
    assert_ne!(first, second);
}

#[tokio::test]
async fn huge_output_on_both_streams_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    // 32 MiB on each stream, written concurrently: a reader draining one pipe at a time would
    // block the writer on the other.
    let script = "head -c 33554432 /dev/zero & head -c 33554432 /dev/zero >&2; wait";
    let c = collect(
        spec(script, dir.path(), Duration::from_secs(120)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.outcome.ended, Ended::Exited);
    assert_eq!(c.stdout.len(), 32 << 20);
    assert_eq!(c.stderr.len(), 32 << 20);
    assert_eq!(c.outcome.stdout_bytes, 32 << 20);
}

#[tokio::test]
async fn binary_output_arrives_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let c = collect(
        spec(
            "printf '\\000\\377\\376abc\\200\\n'",
            dir.path(),
            Duration::from_secs(30),
        ),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(c.stdout, b"\x00\xff\xfeabc\x80\n");
}

#[tokio::test]
async fn interactive_stdin_gets_bytes_and_eof() {
    let dir = tempfile::tempdir().unwrap();
    let registry = StdinRegistry::new();
    let (registration, rx) = registry.register("s1", "call-1");
    let mut spec = spec("cat; echo done", dir.path(), Duration::from_secs(30));
    spec.stdin = Some(rx);
    assert!(registry.is_live("s1", "call-1"));
    registry
        .send("s1", "call-1", StdinInput::Bytes(b"hello\n".to_vec()))
        .unwrap();
    registry.send("s1", "call-1", StdinInput::Eof).unwrap();
    let c = collect(spec, CancellationToken::new()).await;
    assert_eq!(c.stdout, b"hello\ndone\n");
    drop(registration);
    assert!(
        registry
            .send("s1", "call-1", StdinInput::Eof)
            .unwrap_err()
            .to_string()
            .contains("has finished")
    );
}

#[tokio::test]
async fn non_interactive_stdin_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let c = collect(
        spec("wc -c", dir.path(), Duration::from_secs(30)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(String::from_utf8(c.stdout).unwrap().trim(), "0");
}

#[tokio::test]
async fn cancellation_mid_run_ends_the_group_and_keeps_output() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let (mut stdout, trigger) = (Vec::new(), cancel.clone());
    let outcome = run(
        spec(
            "echo $$; sleep 600 & echo $!; wait",
            dir.path(),
            Duration::from_secs(600),
        ),
        |_, b: &[u8]| {
            stdout.extend_from_slice(b);
            // Cancel once both pids have been printed.
            if pids(&stdout).len() == 2 {
                trigger.cancel();
            }
            Ok::<(), ()>(())
        },
        cancel,
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, Ended::Cancelled);
    for pid in pids(&stdout) {
        assert!(!alive(pid), "pid {pid} outlived cancellation");
    }
}

#[tokio::test]
async fn a_failing_handler_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(
        spec("yes", dir.path(), Duration::from_secs(600)),
        |_, _: &[u8]| Err("sink full"),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, Ended::Stopped("sink full"));
}

#[tokio::test]
async fn secrets_do_not_reach_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("env", dir.path(), Duration::from_secs(30));
    s.env = EnvPolicy {
        deny: vec!["PATH".into()],
        pass: vec![],
        withhold: vec![],
    };
    let c = collect(s, CancellationToken::new()).await;
    let env = String::from_utf8(c.stdout).unwrap();
    assert!(!env.lines().any(|l| l.starts_with("PATH=")), "{env}");
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec("", dir.path(), Duration::from_secs(30));
    s.program = "/nonexistent/prog".into();
    let err = run(s, |_, _: &[u8]| Ok::<(), ()>(()), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/prog"), "{err}");
}

/// Two streams both writing without pause: each must keep being read. A reader that kept
/// serving whichever pipe was ready last would never see the other's bytes, and the run would
/// only end at its timeout.
#[tokio::test]
async fn two_busy_streams_are_both_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = [0u64; 2];
    let outcome = run(
        spec(
            "yes out & yes err >&2",
            dir.path(),
            Duration::from_secs(120),
        ),
        |s, b: &[u8]| {
            bytes[s as usize] += b.len() as u64;
            if bytes.iter().all(|&n| n >= 4 << 20) {
                return Err("both streams flowed");
            }
            Ok(())
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, Ended::Stopped("both streams flowed"));
}

/// A single line on stderr gets through while stdout is flooded.
#[tokio::test]
async fn a_flooded_stdout_does_not_hide_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(
        spec(
            "yes & echo marker >&2; wait",
            dir.path(),
            Duration::from_secs(120),
        ),
        |s, b: &[u8]| match s {
            OutputStream::Stderr if b.starts_with(b"marker") => Err("stderr seen"),
            _ => Ok(()),
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, Ended::Stopped("stderr seen"));
}

/// The deadline and cancellation are observed while output never pauses (the reader does not
/// only look at them when a pipe runs dry).
#[tokio::test]
async fn timeout_and_cancellation_end_a_run_that_never_stops_writing() {
    let dir = tempfile::tempdir().unwrap();
    let timed = run(
        spec("yes", dir.path(), Duration::from_millis(300)),
        |_, _: &[u8]| Ok::<(), ()>(()),
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(timed.ended, Ended::TimedOut);
    assert!(timed.stdout_bytes > 0);

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut seen = 0u64;
    let cancelled = run(
        spec("yes", dir.path(), Duration::from_secs(120)),
        |_, b: &[u8]| {
            seen += b.len() as u64;
            if seen >= 8 << 20 {
                trigger.cancel();
            }
            Ok::<(), ()>(())
        },
        cancel,
    )
    .await
    .unwrap();
    assert_eq!(cancelled.ended, Ended::Cancelled);
}
