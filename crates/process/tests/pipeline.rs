//! Pipelines of real programs: stages connected without a shell, arguments passed literally,
//! stdin given or empty, output captured up to a limit and counted past it, the whole pipeline
//! ended on timeout and cancellation, every stage's status reported.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tackle_process::{
    CancellationToken, Ended, EnvPolicy, PipelineOutcome, PipelineSpec, ProcessError, Stage,
    find_on_path, run_pipeline,
};

fn stage(program: &str, args: &[&str]) -> Stage {
    Stage {
        program: Path::new("/usr/bin").join(program),
        args: args.iter().map(OsString::from).collect(),
    }
}

fn spec(dir: &Path, stages: Vec<Stage>) -> PipelineSpec {
    PipelineSpec {
        stages,
        cwd: dir.to_path_buf(),
        env: EnvPolicy::default(),
        timeout: Duration::from_secs(30),
        grace: Duration::from_millis(200),
        stdin: None,
        capture_limit: 1 << 20,
    }
}

async fn run(spec: PipelineSpec) -> PipelineOutcome {
    run_pipeline(spec, CancellationToken::new()).await.unwrap()
}

fn codes(outcome: &PipelineOutcome) -> Vec<Option<i32>> {
    outcome.statuses.iter().map(|s| s.code).collect()
}

/// Whether `pid` is a running process (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// No stage is running and the process group is empty.
fn all_gone(outcome: &PipelineOutcome) {
    for &pid in &outcome.pids {
        assert!(!alive(pid), "stage {pid} outlived the pipeline");
    }
    // SAFETY: signal 0 only checks for existence; a negative pid names the group.
    let group = unsafe { libc::kill(-(outcome.pids[0] as libc::pid_t), 0) };
    assert_eq!(group, -1, "the pipeline's process group still has members");
}

#[tokio::test]
async fn printf_into_sed_and_tr() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(spec(
        dir.path(),
        vec![
            stage("printf", &["hello\\nworld\\n"]),
            stage("sed", &["s/o/0/g"]),
            stage("tr", &["a-z", "A-Z"]),
        ],
    ))
    .await;
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.stdout.bytes, b"HELL0\nW0RLD\n");
    assert_eq!(out.stdout.total, 12);
    assert!(!out.stdout.truncated);
    assert_eq!(codes(&out), [Some(0); 3]);
    assert_eq!(out.pids.len(), 3);
}

#[tokio::test]
async fn shell_syntax_in_an_argument_is_passed_literally() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x"), "kept").unwrap();
    let arg = "; rm -rf x | y && $(echo z) `id` > out";
    let out = run(spec(
        dir.path(),
        vec![stage("printf", &["%s", arg]), stage("cat", &[])],
    ))
    .await;
    assert_eq!(out.stdout.bytes, arg.as_bytes());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x")).unwrap(),
        "kept"
    );
    assert!(!dir.path().join("out").exists());
}

#[tokio::test]
async fn a_stage_given_no_stdin_reads_eof_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for program in [stage("cat", &[]), stage("head", &["-c1"])] {
        let out = run(spec(dir.path(), vec![program.clone()])).await;
        assert_eq!(out.ended, Ended::Exited, "{program:?}");
        assert_eq!(out.stdout.bytes, b"", "{program:?}");
        assert_eq!(codes(&out), [Some(0)], "{program:?}");
    }
}

#[tokio::test]
async fn stdin_bytes_reach_the_first_stage() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        vec![stage("cat", &[]), stage("tr", &["a-z", "A-Z"])],
    );
    s.stdin = Some(b"abc; def | ghi\n".to_vec());
    let out = run(s).await;
    assert_eq!(out.stdout.bytes, b"ABC; DEF | GHI\n");

    // More than any pipe holds: written while the stages read.
    let mut s = spec(dir.path(), vec![stage("cat", &[]), stage("wc", &["-c"])]);
    s.stdin = Some(vec![b'x'; 5_000_000]);
    let out = run(s).await;
    assert_eq!(out.stdout.bytes, b"5000000\n");

    // A stage that stops reading early is not a failure of the pipeline.
    let mut s = spec(dir.path(), vec![stage("head", &["-c1"])]);
    s.stdin = Some(vec![b'y'; 5_000_000]);
    let out = run(s).await;
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.stdout.bytes, b"y");
    assert_eq!(codes(&out), [Some(0)]);
}

#[tokio::test]
async fn large_output_through_three_stages_is_counted_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        vec![
            stage("head", &["-c", "20000000", "/dev/zero"]),
            stage("tr", &["\\0", "a"]),
            stage("cat", &[]),
        ],
    );
    s.capture_limit = 4096;
    let out = run(s).await;
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.stdout.total, 20_000_000);
    assert!(out.stdout.truncated);
    assert_eq!(out.stdout.bytes, vec![b'a'; 4096]);
    assert_eq!(codes(&out), [Some(0); 3]);
}

/// Stage 1 fills stderr while stage 2 waits for its stdout, and stage 2 writes a lot to stderr
/// after: stderr must be read all along, or every stage blocks.
#[tokio::test]
async fn heavy_stderr_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        vec![
            stage("sh", &["-c", "head -c 8000000 /dev/zero >&2; printf done"]),
            stage("sh", &["-c", "cat; head -c 3000000 /dev/zero >&2"]),
            stage("cat", &[]),
        ],
    );
    s.capture_limit = 1024;
    let out = run(s).await;
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.stdout.bytes, b"done");
    assert_eq!(out.stderr.total, 11_000_000);
    assert_eq!(out.stderr.bytes.len(), 1024);
    assert!(out.stderr.truncated);
}

#[tokio::test]
async fn stderr_of_every_stage_arrives_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(spec(
        dir.path(),
        vec![
            stage("sh", &["-c", "echo one >&2; printf x"]),
            stage("sh", &["-c", "cat >/dev/null; echo two >&2; exit 4"]),
        ],
    ))
    .await;
    assert_eq!(out.stderr.bytes, b"one\ntwo\n");
    assert_eq!(codes(&out), [Some(0), Some(4)]);
}

#[tokio::test]
async fn every_stage_has_the_group_the_environment_and_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    // Each stage prints its process group and its run marker; the second after the first's.
    let report = "read -r _ _ _ _ pgrp _ < /proc/$$/stat; echo $pgrp $TACKLE_RUN; \
                  env | grep -c '^PATH=' || true";
    let mut s = spec(
        dir.path(),
        vec![
            stage("sh", &["-c", report]),
            stage("sh", &["-c", &format!("cat; {report}")]),
        ],
    );
    s.env = EnvPolicy {
        deny: vec!["PATH".into()],
        pass: vec![],
        withhold: vec![],
    };
    let out = run(s).await;
    let text = String::from_utf8(out.stdout.bytes.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let (pgrp, marker) = lines[0].split_once(' ').unwrap();
    assert_eq!(pgrp, out.pids[0].to_string());
    assert!(!marker.is_empty());
    assert_eq!(lines[0], lines[2], "{text}");
    assert_eq!(
        (lines[1], lines[3]),
        ("0", "0"),
        "PATH reached a stage: {text}"
    );
}

#[tokio::test]
async fn timeout_ends_the_whole_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        vec![stage("sleep", &["1000"]), stage("cat", &[])],
    );
    s.timeout = Duration::from_millis(300);
    let out = run(s).await;
    assert_eq!(out.ended, Ended::TimedOut);
    for status in &out.statuses {
        assert_eq!(status.signal, Some(libc::SIGTERM), "{:?}", out.statuses);
    }
    assert!(out.duration < Duration::from_secs(20));
    all_gone(&out);
}

/// The first stage tells the test through a FIFO that it runs; the test then cancels.
#[tokio::test]
async fn cancellation_ends_the_whole_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ready");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let cancel = CancellationToken::new();
    let s = spec(
        dir.path(),
        vec![
            stage(
                "sh",
                &[
                    "-c",
                    "printf ready > \"$0\"; exec sleep 1000",
                    fifo.to_str().unwrap(),
                ],
            ),
            stage("cat", &[]),
        ],
    );
    let running = tokio::spawn(run_pipeline(s, cancel.clone()));
    let ready = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::fs::File::open(&fifo)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    });
    assert_eq!(ready.await.unwrap(), "ready");
    cancel.cancel();
    let out = running.await.unwrap().unwrap();
    assert_eq!(out.ended, Ended::Cancelled);
    assert_eq!(out.statuses[0].signal, Some(libc::SIGTERM));
    all_gone(&out);
}

/// A later stage's descendant that left the group with `setsid` carries the run's marker and
/// is ended with the pipeline, though it holds the last stage's stdout open. It reports its pid
/// through a FIFO only after `setsid(2)`, and the stage prints it.
#[tokio::test]
async fn a_setsid_escapee_of_a_later_stage_is_ended() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(spec(
        dir.path(),
        vec![
            stage("printf", &["x"]),
            stage(
                "sh",
                &[
                    "-c",
                    "cat >/dev/null; mkfifo p; setsid sh -c 'echo $$ > p; exec sleep 1000' & cat p",
                ],
            ),
        ],
    ))
    .await;
    assert_eq!(out.ended, Ended::Exited);
    let text = String::from_utf8(out.stdout.bytes.clone()).unwrap();
    let pid: u32 = text.trim().parse().expect(&text);
    assert!(!alive(pid), "escapee {pid} outlived the pipeline");
    all_gone(&out);
}

/// Whether a live process runs `argv` exactly.
fn running_with_args(argv: &[&str]) -> bool {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|entry| std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == wanted))
}

#[tokio::test]
async fn a_program_that_cannot_start_is_an_error_naming_it_and_ends_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let unique = format!("{}.{}", 900_000 + std::process::id() % 1000, line!());
    let missing = run_pipeline(
        spec(
            dir.path(),
            vec![
                stage("sleep", &[&unique]),
                Stage {
                    program: "/nonexistent/prog".into(),
                    args: vec![],
                },
            ],
        ),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(missing, ProcessError::Spawn { .. }), "{missing}");
    assert!(
        missing.to_string().contains("/nonexistent/prog"),
        "{missing}"
    );
    assert!(
        !running_with_args(&["/usr/bin/sleep", &unique]),
        "the first stage outlived the failed start"
    );

    let plain = dir.path().join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let err = run_pipeline(
        spec(
            dir.path(),
            vec![
                stage("true", &[]),
                Stage {
                    program: plain.clone(),
                    args: vec![],
                },
            ],
        ),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains(plain.to_str().unwrap()), "{err}");
}

#[tokio::test]
async fn empty_pipelines_and_relative_programs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = run_pipeline(spec(dir.path(), vec![]), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ProcessError::EmptyPipeline), "{err}");
    let relative = Stage {
        program: "sh".into(),
        args: vec![],
    };
    let err = run_pipeline(spec(dir.path(), vec![relative]), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ProcessError::RelativeProgram { .. }), "{err}");
    assert!(err.to_string().contains("`sh`"), "{err}");
}

#[tokio::test]
async fn statuses_report_codes_and_signals_per_stage() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(spec(
        dir.path(),
        vec![
            stage("sh", &["-c", "exit 3"]),
            stage("sh", &["-c", "cat; kill -9 $$"]),
            stage("true", &[]),
        ],
    ))
    .await;
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.statuses[0].code, Some(3));
    assert_eq!(out.statuses[1].signal, Some(libc::SIGKILL));
    assert_eq!(out.statuses[2].code, Some(0));
}

fn executable(path: &Path, mode: u32) {
    std::fs::write(path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn find_on_path_finds_sh() {
    let found = find_on_path(OsStr::new("sh"), Some(OsStr::new("/nonexistent:/usr/bin")));
    assert_eq!(found, Some(PathBuf::from("/usr/bin/sh")));
    assert_eq!(find_on_path(OsStr::new("sh"), None), None);
    assert_eq!(
        find_on_path(
            OsStr::new("no-such-program-anywhere"),
            Some(OsStr::new("/usr/bin"))
        ),
        None
    );
}

#[test]
fn find_on_path_skips_non_executable_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    for d in [&a, &b, &c] {
        std::fs::create_dir(d).unwrap();
    }
    executable(&a.join("tool"), 0o644);
    std::fs::create_dir(b.join("tool")).unwrap();
    std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
    executable(&c.join("tool"), 0o700);
    let path = std::env::join_paths([&a, &b, &c]).unwrap();
    assert_eq!(
        find_on_path(OsStr::new("tool"), Some(&path)),
        Some(c.join("tool"))
    );
}

/// An empty entry means the current directory to a shell, and a relative one is relative to
/// it: neither is searched.
#[test]
fn find_on_path_skips_empty_and_relative_entries() {
    let dir = tempfile::tempdir().unwrap();
    executable(&dir.path().join("tool"), 0o755);
    // The same directory, named relative to the current one.
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count() - 1);
    let relative = format!("{up}{}", dir.path().strip_prefix("/").unwrap().display());
    assert!(Path::new(&relative).join("tool").is_file());
    assert_eq!(
        find_on_path(OsStr::new("tool"), Some(OsStr::new(&relative))),
        None
    );
    assert_eq!(find_on_path(OsStr::new("sh"), Some(OsStr::new("::"))), None);
    assert_eq!(find_on_path(OsStr::new("sh"), Some(OsStr::new(""))), None);
    assert_eq!(
        find_on_path(OsStr::new("sh"), Some(OsStr::new(":/usr/bin:"))),
        Some(PathBuf::from("/usr/bin/sh"))
    );
}

#[test]
fn find_on_path_refuses_names_with_a_slash() {
    let path = Some(OsStr::new("/usr/bin:/"));
    for name in ["/usr/bin/sh", "bin/sh", "./sh", "usr/bin/sh", ""] {
        assert_eq!(find_on_path(OsStr::new(name), path), None, "{name}");
    }
}
