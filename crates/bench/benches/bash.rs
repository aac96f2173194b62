//! bash through the runtime beside its floors:
//!
//! 1. `true` end to end (resolve, parse, prepare with the shell parser, gate hook, run in a
//!    process group — with `[bash] prestart` on, which starts a shell ahead only where
//!    `/bin/sh` runs lines and is dash, and off — stream, end the group, publish two empty
//!    streams and a manifest, the call's start written and its end fdatasync'd) beside a bare
//!    `Command` of the same shell with the same arguments (`/bin/bash --norc --noprofile -c
//!    true` where bash runs lines) `.output()`, with the breakdown: the process runner alone, the
//!    tool's `Shell` alone, and the appends alone (a written start, a synced end), all
//!    interleaved. The batch runs as a task, as `serve` and the daemon run theirs (the call is
//!    then polled in place); once more driven by `block_on` from outside the runtime, as
//!    `tackle run`, `tackle call` and an embedder that does not spawn run it (the call is then
//!    a task of its own, and its end a wake-up of the calling thread).
//! 2. A command writing 1 GiB to stdout, captured, hashed and retained, beside hashing the same
//!    bytes in memory with sha2; peak resident memory of the bench process is reported, and
//!    that of one more capture once the floor's buffer is freed. Two commands write the same
//!    bytes: the `yes | head` pipeline, whose own processes and pipes cost more CPU than the
//!    capture on a small machine, and `cat` of a file of those lines (generated once under
//!    `target/bench-data/`), a single process moving 128 KiB per write. For scale, each
//!    command alone into /dev/null and read by the process runner alone (discarded, and hashed
//!    inline).
//!
//! Run: `cargo bench -p tackle-bench --bench bash` (`TACKLE_BENCH_SPAWN_ONLY=1`: part 1 only)

use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tackle_bench::{Stats, ratio};
use tackle_process::ShellProgram;
use tackle_protocol::{CallId, ToolCall};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};
use tackle_store::{Durability, EventLog};
use tackle_tools::{BuiltinConfig, builtin_tools};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const SPAWNS: usize = 300;
const GIB: u64 = 1 << 30;
const BIG_RUNS: usize = 3;
/// A realistic line (55 bytes + newline), repeated to 1 GiB.
const LINE: &str = "the quick brown fox jumps over the lazy dog 0123456789";

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"bash".contains(arg.as_str()))
    {
        return Ok(());
    }
    // `cargo bench` runs benches with an `LD_LIBRARY_PATH` of every build-script output
    // directory; every dynamically linked program started from here would then search all of
    // them for libc (+0.4 ms per `sh -c true` on the reference machine). A user's tackle has no
    // such path, so neither do the programs measured here.
    // SAFETY: no other thread exists yet (the tokio runtime is built below).
    unsafe { std::env::remove_var("LD_LIBRARY_PATH") };
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&base)?;
    let project = tempfile::tempdir_in(&base)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let runtime_with = |prestart: bool| -> BenchResult<Runtime> {
        let tools = builtin_tools(&BuiltinConfig {
            registered: vec!["bash".into()],
            bash_prestart: prestart,
            ..BuiltinConfig::default()
        })
        .into_iter()
        .filter(|t| t.name() == "bash")
        .collect();
        Ok(Runtime::new(
            Catalog::new(tools)?,
            Arc::new(AllowAll),
            RuntimeConfig::default(),
        ))
    };
    // The shell the tool runs lines with, which the bare side runs too.
    let shell = ShellProgram::discover();
    println!("shell: {}", shell.invocation());
    // The default (`[bash] prestart = true`): a shell is started ahead of each call where that
    // is exact (an `sh` that is dash; never bash).
    let runtime = runtime_with(true)?;
    // Every call spawns its shell (`prestart = false`).
    let cold_runtime = runtime_with(false)?;
    let session = Session::open(project.path())?;
    let call = |command: &str| ToolCall {
        id: CallId("c".into()),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }),
    };

    // 1. Spawn overhead, interleaved so both sides see the same machine state. Each
    // measurement starts after the same short pause, long enough for the shell a warm call
    // starts for the next one to be up: its start-up is then not charged to whatever is
    // measured next (the bare spawn, in this order).
    let pause = || std::thread::sleep(Duration::from_millis(3));
    let (mut tackle, mut bare, mut runner) = (Vec::new(), Vec::new(), Vec::new());
    // The tool's own runner (the shell's environment scrubbed, its arguments), without the
    // runtime around it.
    let tool_shell = tackle_process::Shell::new(
        shell.clone(),
        tackle_process::EnvPolicy::default(),
        Duration::from_secs(2),
        false,
    );
    let mut shell_alone = Vec::new();
    let mut cold = Vec::new();
    let (log, _) = EventLog::open(&project.path().join("bench-events.jsonl"))?;
    let started = serde_json::json!({"type":"call_started","call_id":"c","tool":"bash","arguments":{"command":"true"},"at_ms":1});
    let finished = serde_json::json!({"type":"call_finished","call_id":"c","tool":"bash","status":"ok","at_ms":2,
        "queued_us":3,"ran_us":900,"retained_output":[{"artifact":"artifact://sha256/0000000000000000000000000000000000000000000000000000000000000000","bytes":3,"lines":1,"truncated":false}],
        "label":{"trust":"trusted","privacy":"private"}});
    let mut appends = Vec::new();
    // A batch as `serve` and the daemon run one: a task on the runtime.
    let in_task = |runtime: &Runtime| -> BenchResult<Duration> {
        let (runtime, session) = (runtime.clone(), session.clone());
        let start = Instant::now();
        let r = rt.block_on(async move {
            tokio::spawn(async move {
                runtime
                    .run_batch(&session, vec![call("true")], CancellationToken::new())
                    .await
            })
            .await
        })??;
        let took = start.elapsed();
        if r[0].is_error {
            return Err(format!("bash true failed: {}", r[0].text()).into());
        }
        Ok(took)
    };
    let mut driven = Vec::new();
    for _ in 0..SPAWNS {
        pause();
        tackle.push(in_task(&runtime)?);
        pause();
        cold.push(in_task(&cold_runtime)?);
        pause();
        let start = Instant::now();
        let r = rt.block_on(cold_runtime.run_batch(
            &session,
            vec![call("true")],
            CancellationToken::new(),
        ))?;
        driven.push(start.elapsed());
        if r[0].is_error {
            return Err(format!("bash true failed: {}", r[0].text()).into());
        }
        pause();
        let start = Instant::now();
        let out = std::process::Command::new(shell.path())
            .args(shell.args_for("true"))
            .output()?;
        bare.push(start.elapsed());
        assert!(out.status.success());
        pause();
        let start = Instant::now();
        rt.block_on(tackle_process::run(
            tackle_process::RunSpec {
                program: shell.path().into(),
                args: shell.args_for("true"),
                cwd: project.path().to_path_buf(),
                env: tackle_process::EnvPolicy::default(),
                timeout: Duration::from_secs(60),
                grace: Duration::from_secs(2),
                stdin: None,
            },
            |_, _| Ok::<(), ()>(()),
            CancellationToken::new(),
        ))?;
        runner.push(start.elapsed());
        pause();
        let start = Instant::now();
        let job = tackle_process::ShellRun {
            script: "true",
            parsed: true,
            cwd: project.path(),
            timeout: Duration::from_secs(60),
            stdin: None,
        };
        rt.block_on(tool_shell.run(job, |_, _| Ok::<(), ()>(()), CancellationToken::new()))?;
        shell_alone.push(start.elapsed());
        pause();
        let start = Instant::now();
        log.append_with(&started, Durability::Written)?;
        log.append(&finished)?;
        appends.push(start.elapsed());
    }
    let (tackle, cold, driven, bare, runner, shell_alone, appends) = (
        Stats::of(&mut tackle),
        Stats::of(&mut cold),
        Stats::of(&mut driven),
        Stats::of(&mut bare),
        Stats::of(&mut runner),
        Stats::of(&mut shell_alone),
        Stats::of(&mut appends),
    );
    println!("bash `true` through the runtime (prestart on):  {tackle}");
    println!("  the same, prestart off:                       {cold}");
    println!("  prestart off, driven by block_on:             {driven}");
    println!("bare Command {} true .output(): {bare}", shell.invocation());
    println!("  process runner alone (group, pipes): {runner}");
    println!("  the tool's Shell alone (same, env scrubbed): {shell_alone}");
    println!("  its appends alone (written + synced): {appends}");
    println!(
        "ratio tackle / bare: {:.2}x (median); without the appends: {:.2}x",
        ratio(tackle.median, bare.median),
        ratio(tackle.median.saturating_sub(appends.median), bare.median)
    );
    println!(
        "ratio tackle, prestart off / bare: {:.2}x (median); without the appends: {:.2}x",
        ratio(cold.median, bare.median),
        ratio(cold.median.saturating_sub(appends.median), bare.median)
    );
    println!(
        "ratio tackle, driven by block_on / bare: {:.2}x (median); without the appends: {:.2}x",
        ratio(driven.median, bare.median),
        ratio(driven.median.saturating_sub(appends.median), bare.median)
    );
    println!(
        "ratio process runner / bare: {:.2}x (median); the tool's Shell / bare: {:.2}x",
        ratio(runner.median, bare.median),
        ratio(shell_alone.median, bare.median)
    );
    // Part 2 takes a while; `TACKLE_BENCH_SPAWN_ONLY=1` stops here when iterating on spawns.
    if std::env::var_os("TACKLE_BENCH_SPAWN_ONLY").is_some() {
        return Ok(());
    }

    // 2. 1 GiB through capture + hash + retain, beside the sha2 floor on the same bytes, from
    //    two producers of those same bytes.
    let mut floor_bytes = Vec::with_capacity(GIB as usize);
    while (floor_bytes.len() as u64) < GIB {
        floor_bytes.extend_from_slice(LINE.as_bytes());
        floor_bytes.push(b'\n');
    }
    floor_bytes.truncate(GIB as usize);
    let lines_file = lines_file(&floor_bytes)?;
    let mut producers = [
        // Three processes and two pipes: `yes` writes 8 KiB at a time and `head` moves it on
        // in 4 KiB writes, so on a small machine the pipeline costs more CPU than everything
        // the capture does.
        Producer::new(
            "`yes | head -c 1GiB`",
            format!("yes '{LINE}' | head -c {GIB}"),
        ),
        // One process writing the same bytes from the page cache: GNU cat reads and writes
        // 128 KiB at a time, which leaves mostly the capture's own cost.
        Producer::new(
            "`cat` of a 1 GiB file",
            format!("cat '{}'", lines_file.display()),
        ),
    ];
    // Into the page cache before anything is timed (a file generated earlier may have been
    // evicted since).
    std::process::Command::new("cat")
        .arg(&lines_file)
        .stdout(std::process::Stdio::null())
        .status()?;
    let mut floor = Vec::new();
    let rss_before = peak_rss_kib();
    for _ in 0..BIG_RUNS {
        for p in &mut producers {
            p.run_once(&rt, &runtime, &session, project.path())?;
        }
        let start = Instant::now();
        let digest = Sha256::digest(&floor_bytes);
        floor.push(start.elapsed());
        std::hint::black_box(digest);
    }
    drop(floor_bytes);
    let rss_after = peak_rss_kib();
    // Without the floor's buffer: the peak of one more capture alone, from each producer (Linux
    // resets VmHWM on writing 5 to clear_refs).
    let mut capture_peaks = Vec::new();
    for p in &producers {
        if std::fs::write("/proc/self/clear_refs", "5").is_err() {
            break;
        }
        let r = rt.block_on(runtime.run_batch(
            &session,
            vec![bash_call(&p.script)],
            CancellationToken::new(),
        ))?;
        if r[0].is_error {
            return Err(format!("1 GiB run failed: {}", r[0].text()).into());
        }
        capture_peaks.push((p.name, peak_rss_kib()));
    }
    let floor = Stats::of(&mut floor);
    println!("sha2 over the same 1 GiB in memory (the floor): {floor}");
    for p in &mut producers {
        p.report(floor.median);
    }
    println!(
        "peak RSS of the bench process: {} MiB before the 1 GiB runs (includes the 1 GiB floor buffer), {} MiB after",
        rss_before / 1024,
        rss_after / 1024
    );
    for (name, peak) in capture_peaks {
        println!(
            "peak RSS during one more 1 GiB capture from {name}, the floor buffer freed: {} MiB",
            peak / 1024
        );
    }
    Ok(())
}

fn bash_call(command: &str) -> ToolCall {
    ToolCall {
        id: CallId("c".into()),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }),
    }
}

/// One way of writing the 1 GiB to stdout, and its timings.
struct Producer {
    name: &'static str,
    script: String,
    /// Through bash: capture + hash + retain.
    big: Vec<Duration>,
    /// The command alone into /dev/null.
    alone: Vec<Duration>,
    /// Read by the process runner alone, discarded.
    piped: Vec<Duration>,
    /// Read by the process runner alone, hashed inline.
    piped_hashed: Vec<Duration>,
}

impl Producer {
    fn new(name: &'static str, script: String) -> Self {
        Self {
            name,
            script,
            big: Vec::new(),
            alone: Vec::new(),
            piped: Vec::new(),
            piped_hashed: Vec::new(),
        }
    }

    /// One of each measurement, in turn, so all see the same machine state. The command's
    /// share: the same command into /dev/null, then read by the process runner (discarded, and
    /// hashed inline), so the reader sees how much of the wall time the command and its pipe
    /// take on this machine before capture does anything.
    fn run_once(
        &mut self,
        rt: &tokio::runtime::Runtime,
        runtime: &Runtime,
        session: &Session,
        cwd: &std::path::Path,
    ) -> BenchResult<()> {
        let start = Instant::now();
        let shell = ShellProgram::discover();
        let status = std::process::Command::new(shell.path())
            .args(shell.args_for(&format!("{} > /dev/null", self.script)))
            .status()?;
        self.alone.push(start.elapsed());
        assert!(status.success());
        let start = Instant::now();
        let read = runner_alone(rt, &self.script, cwd, false)?;
        self.piped.push(start.elapsed());
        assert_eq!(read, GIB);
        let start = Instant::now();
        let read = runner_alone(rt, &self.script, cwd, true)?;
        self.piped_hashed.push(start.elapsed());
        assert_eq!(read, GIB);

        let start = Instant::now();
        let r = rt.block_on(runtime.run_batch(
            session,
            vec![bash_call(&self.script)],
            CancellationToken::new(),
        ))?;
        self.big.push(start.elapsed());
        if r[0].is_error || r[0].retained_output.iter().all(|o| o.bytes != GIB) {
            return Err(format!("1 GiB run from {} failed: {}", self.name, r[0].text()).into());
        }
        Ok(())
    }

    fn report(&mut self, floor: Duration) {
        // Both producers write the same bytes: the very first capture publishes a new artifact
        // (fsynced: bash has effects); every later one finds it and discards its temp.
        let in_order = self
            .big
            .iter()
            .map(|d| format!("{d:.2?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let (big, alone, piped, piped_hashed) = (
            Stats::of(&mut self.big),
            Stats::of(&mut self.alone),
            Stats::of(&mut self.piped),
            Stats::of(&mut self.piped_hashed),
        );
        println!("1 GiB stdout from {}:", self.name);
        println!("  via bash (capture+hash+retain):        {big}");
        println!(
            "  ratio to the sha2 floor: {:.2}x (median); {:.0} MiB/s",
            ratio(big.median, floor),
            GIB as f64 / (1 << 20) as f64 / big.median.as_secs_f64()
        );
        println!("  in run order: {in_order}");
        println!("  the command alone, into /dev/null:     {alone}");
        println!("  read by the process runner, discarded: {piped}");
        println!("  read by the process runner, sha2 inline: {piped_hashed}");
        println!(
            "  ratio bash / the runner reading and discarding: {:.2}x (median)",
            ratio(big.median, piped.median)
        );
    }
}

/// The 1 GiB of `bytes` as a file under `target/bench-data/`, written once and reused (its
/// contents are checked by length only: they are always the same lines).
fn lines_file(bytes: &[u8]) -> BenchResult<std::path::PathBuf> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
    };
    let dir = target.join("bench-data");
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let path = dir.join(format!("bash_lines_{}.txt", bytes.len()));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(path);
    }
    // Renaming only a complete file means an interrupted run never leaves a short one behind.
    let partial = path.with_extension("txt.partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// `script` through the process runner alone, its output discarded or hashed inline; returns
/// the stdout bytes read. The run is a task of its own, as a call is in the server: driven
/// by `block_on` from this thread, every readiness event would be a hand-off from the worker
/// that polls the reactor to this thread, which costs more than the reading itself.
fn runner_alone(
    rt: &tokio::runtime::Runtime,
    script: &str,
    cwd: &std::path::Path,
    hash: bool,
) -> BenchResult<u64> {
    let shell = ShellProgram::discover();
    let spec = tackle_process::RunSpec {
        program: shell.path().into(),
        args: shell.args_for(script),
        cwd: cwd.to_path_buf(),
        env: tackle_process::EnvPolicy::default(),
        timeout: Duration::from_secs(600),
        grace: Duration::from_secs(2),
        stdin: None,
    };
    let task = rt.spawn(async move {
        let mut hasher = hash.then(Sha256::new);
        let out = tackle_process::run(
            spec,
            |_, bytes| {
                if let Some(h) = &mut hasher {
                    h.update(bytes);
                }
                Ok::<(), ()>(())
            },
            CancellationToken::new(),
        )
        .await;
        std::hint::black_box(hasher.map(Sha256::finalize));
        out.map(|o| o.stdout_bytes)
    });
    Ok(rt.block_on(task)??)
}

/// VmHWM from /proc/self/status, in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
