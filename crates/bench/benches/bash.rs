//! bash through the runtime beside its floors:
//!
//! 1. `true` end to end (resolve, parse, prepare with the shell parser, gate hook, run in a
//!    process group — by default in the shell started ahead of the call, and also measured
//!    with every call spawning its shell — stream, end the group, publish two empty streams and
//!    a manifest, the call's start written and its end fdatasync'd) beside a bare
//!    `Command::new("/bin/sh").arg("-c").arg("true").output()`, with the breakdown: the process
//!    runner alone and the appends alone (a written start, a synced end), all interleaved.
//! 2. A command writing 1 GiB to stdout, captured, hashed and retained, beside hashing the same
//!    bytes in memory with sha2; peak resident memory of the bench process is reported, and
//!    that of one more capture once the floor's buffer is freed. For scale, the same command
//!    alone into /dev/null and read by the process runner alone (discarded, and hashed inline):
//!    on a small machine the command and its pipe are a large share of the wall time.
//!
//! Run: `cargo bench -p tackle-bench --bench bash` (`TACKLE_BENCH_SPAWN_ONLY=1`: part 1 only)

use std::ffi::OsString;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tackle_bench::{Stats, ratio};
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
    // The default: a shell is started ahead of each call (`[bash] prestart`).
    let runtime = runtime_with(true)?;
    // Every call spawns its shell (`prestart = false`, or a shell other than dash).
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
    let mut cold = Vec::new();
    let (log, _) = EventLog::open(&project.path().join("bench-events.jsonl"))?;
    let started = serde_json::json!({"type":"call_started","call_id":"c","tool":"bash","arguments":{"command":"true"},"at_ms":1});
    let finished = serde_json::json!({"type":"call_finished","call_id":"c","tool":"bash","status":"ok","at_ms":2,
        "queued_us":3,"ran_us":900,"retained_output":[{"artifact":"artifact://sha256/0000000000000000000000000000000000000000000000000000000000000000","bytes":3,"lines":1,"truncated":false}],
        "label":{"trust":"trusted","privacy":"private"}});
    let mut appends = Vec::new();
    for _ in 0..SPAWNS {
        pause();
        let start = Instant::now();
        let r =
            rt.block_on(runtime.run_batch(&session, vec![call("true")], CancellationToken::new()))?;
        tackle.push(start.elapsed());
        if r[0].is_error {
            return Err(format!("bash true failed: {}", r[0].text()).into());
        }
        pause();
        let start = Instant::now();
        let r = rt.block_on(cold_runtime.run_batch(
            &session,
            vec![call("true")],
            CancellationToken::new(),
        ))?;
        cold.push(start.elapsed());
        if r[0].is_error {
            return Err(format!("bash true failed: {}", r[0].text()).into());
        }
        pause();
        let start = Instant::now();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg("true")
            .output()?;
        bare.push(start.elapsed());
        assert!(out.status.success());
        let start = Instant::now();
        rt.block_on(tackle_process::run(
            tackle_process::RunSpec {
                program: "/bin/sh".into(),
                args: vec![OsString::from("-c"), OsString::from("true")],
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
        log.append_with(&started, Durability::Written)?;
        log.append(&finished)?;
        appends.push(start.elapsed());
    }
    let (tackle, cold, bare, runner, appends) = (
        Stats::of(&mut tackle),
        Stats::of(&mut cold),
        Stats::of(&mut bare),
        Stats::of(&mut runner),
        Stats::of(&mut appends),
    );
    println!("bash `true` through the runtime:      {tackle}");
    println!("  the same, shell not started ahead:  {cold}");
    println!("bare Command sh -c true .output():    {bare}");
    println!("  process runner alone (group, pipes): {runner}");
    println!("  its appends alone (written + synced): {appends}");
    println!(
        "ratio tackle / bare: {:.2}x (median); without the appends: {:.2}x",
        ratio(tackle.median, bare.median),
        ratio(tackle.median.saturating_sub(appends.median), bare.median)
    );
    println!(
        "ratio tackle, shell not started ahead / bare: {:.2}x (median); without the appends: {:.2}x",
        ratio(cold.median, bare.median),
        ratio(cold.median.saturating_sub(appends.median), bare.median)
    );
    println!(
        "ratio process runner / bare: {:.2}x (median)",
        ratio(runner.median, bare.median)
    );
    // Part 2 takes a while; `TACKLE_BENCH_SPAWN_ONLY=1` stops here when iterating on spawns.
    if std::env::var_os("TACKLE_BENCH_SPAWN_ONLY").is_some() {
        return Ok(());
    }

    // 2. 1 GiB through capture + hash + retain, beside the sha2 floor on the same bytes.
    let script = format!("yes '{LINE}' | head -c {GIB}");
    let mut floor_bytes = Vec::with_capacity(GIB as usize);
    while (floor_bytes.len() as u64) < GIB {
        floor_bytes.extend_from_slice(LINE.as_bytes());
        floor_bytes.push(b'\n');
    }
    floor_bytes.truncate(GIB as usize);
    let (mut big, mut floor) = (Vec::new(), Vec::new());
    let (mut producer, mut piped, mut piped_hashed) = (Vec::new(), Vec::new(), Vec::new());
    let rss_before = peak_rss_kib();
    for _ in 0..BIG_RUNS {
        // The command's share: the same command into /dev/null, then read by the process
        // runner (discarded, and hashed inline), so the reader sees how much of the wall time
        // the command and its pipe take on this machine before capture does anything.
        let start = Instant::now();
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{script} > /dev/null"))
            .status()?;
        producer.push(start.elapsed());
        assert!(status.success());
        let start = Instant::now();
        let out = rt.block_on(run_script(&script, project.path(), |_, _| Ok(())))?;
        piped.push(start.elapsed());
        assert_eq!(out.stdout_bytes, GIB);
        let mut hasher = Sha256::new();
        let start = Instant::now();
        let out = rt.block_on(run_script(&script, project.path(), |_, bytes| {
            hasher.update(bytes);
            Ok(())
        }))?;
        std::hint::black_box(hasher.finalize());
        piped_hashed.push(start.elapsed());
        assert_eq!(out.stdout_bytes, GIB);

        let start = Instant::now();
        let r = rt.block_on(runtime.run_batch(
            &session,
            vec![call(&script)],
            CancellationToken::new(),
        ))?;
        big.push(start.elapsed());
        if r[0].is_error || r[0].retained_output.iter().all(|o| o.bytes != GIB) {
            return Err(format!("1 GiB run failed: {}", r[0].text()).into());
        }
        let start = Instant::now();
        let digest = Sha256::digest(&floor_bytes);
        floor.push(start.elapsed());
        std::hint::black_box(digest);
    }
    drop(floor_bytes);
    let rss_after = peak_rss_kib();
    // Without the floor's buffer: the peak of one more capture alone (Linux resets VmHWM on
    // writing 5 to clear_refs).
    let capture_peak = match std::fs::write("/proc/self/clear_refs", "5") {
        Ok(()) => {
            let r = rt.block_on(runtime.run_batch(
                &session,
                vec![call(&script)],
                CancellationToken::new(),
            ))?;
            if r[0].is_error {
                return Err(format!("1 GiB run failed: {}", r[0].text()).into());
            }
            Some(peak_rss_kib())
        }
        Err(_) => None,
    };
    // The first run publishes a new artifact (fsynced: bash has effects); the others find it
    // and discard their temp.
    let in_order = big
        .iter()
        .map(|d| format!("{d:.2?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let (big, floor) = (Stats::of(&mut big), Stats::of(&mut floor));
    let (producer, piped, piped_hashed) = (
        Stats::of(&mut producer),
        Stats::of(&mut piped),
        Stats::of(&mut piped_hashed),
    );
    println!("1 GiB stdout via bash (capture+hash+retain): {big}");
    println!("sha2 over the same 1 GiB in memory:          {floor}");
    println!(
        "ratio: {:.2}x (median); {:.0} MiB/s",
        ratio(big.median, floor.median),
        GIB as f64 / (1 << 20) as f64 / big.median.as_secs_f64()
    );
    println!("  in run order (the first publishes, the rest deduplicate): {in_order}");
    println!("  the command alone, into /dev/null:          {producer}");
    println!("  read by the process runner, discarded:      {piped}");
    println!("  read by the process runner, sha2 inline:    {piped_hashed}");
    println!(
        "  ratio bash / the runner reading and discarding: {:.2}x (median)",
        ratio(big.median, piped.median)
    );
    println!(
        "peak RSS of the bench process: {} MiB before the 1 GiB runs (includes the 1 GiB floor buffer), {} MiB after",
        rss_before / 1024,
        rss_after / 1024
    );
    if let Some(peak) = capture_peak {
        println!(
            "peak RSS during one more 1 GiB capture, the floor buffer freed: {} MiB",
            peak / 1024
        );
    }
    Ok(())
}

/// `script` through the process runner alone, its output going to `on_output`.
async fn run_script(
    script: &str,
    cwd: &std::path::Path,
    on_output: impl FnMut(tackle_process::OutputStream, &[u8]) -> Result<(), ()>,
) -> BenchResult<tackle_process::RunOutcome<()>> {
    let out = tackle_process::run(
        tackle_process::RunSpec {
            program: "/bin/sh".into(),
            args: vec![OsString::from("-c"), OsString::from(script)],
            cwd: cwd.to_path_buf(),
            env: tackle_process::EnvPolicy::default(),
            timeout: Duration::from_secs(600),
            grace: Duration::from_secs(2),
            stdin: None,
        },
        on_output,
        CancellationToken::new(),
    )
    .await?;
    Ok(out)
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
