//! Per-call overhead of the runtime: a no-op tool through every layer (resolve, strict parse,
//! prepare, gate hook, schedule, execute, capture and artifact publication, shaping, and the two
//! durable event appends), beside the cost of the two event appends alone; and the same call in
//! a session whose log lines are tagged with the user's key (`Session::open_sealed`, what every
//! `tackle` front end opens) beside one whose lines are not, in alternating rounds.
//!
//! Run: `cargo bench -p tackle-bench --bench call_overhead`

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_bench::{Stats, ratio};
use tackle_protocol::{CallId, Concurrency, ToolCall};
use tackle_runtime::{
    AllowAll, CancellationToken, Catalog, LogKey, Runtime, RuntimeConfig, Session, SessionOptions,
};
use tackle_store::EventLog;
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoopArgs {}

struct Noop;

impl Tool for Noop {
    type Args = NoopArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "noop"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Does nothing.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoopArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        Ok(ToolCompletion::single("ok\n"))
    }
}

const CALLS: usize = 500;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"call_overhead".contains(arg.as_str()))
    {
        return Ok(());
    }
    // Under target/, not tmpfs: fsync must cost what it costs on a real project disk.
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&base)?;
    let project = tempfile::tempdir_in(&base)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let runtime = Runtime::new(
        Catalog::new(vec![Arc::new(Noop)])?,
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    );
    let session = Session::open(project.path())?;
    let sealed = Session::open_sealed(
        project.path(),
        SessionOptions::default(),
        &LogKey::from_bytes(&[7; 32]),
    )?;

    let call = ToolCall {
        id: CallId("c".into()),
        name: "noop".into(),
        arguments: serde_json::json!({}),
    };
    let mut per_call = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        let r =
            rt.block_on(runtime.run_batch(&session, vec![call.clone()], CancellationToken::new()))?;
        per_call.push(start.elapsed());
        if r[0].is_error {
            return Err(format!("noop failed: {}", r[0].text()).into());
        }
    }

    // The same two appends a call performs, on a log in the same directory.
    let (log, _) = EventLog::open(&project.path().join("bench-events.jsonl"))?;
    let started = serde_json::json!({"type":"call_started","call_id":"c","tool":"noop","arguments":{},"at_ms":1});
    let finished = serde_json::json!({"type":"call_finished","call_id":"c","tool":"noop","status":"ok","at_ms":2,
        "queued_us":3,"ran_us":40,"retained_output":[{"artifact":"artifact://sha256/0000000000000000000000000000000000000000000000000000000000000000","bytes":3,"lines":1,"truncated":false}],
        "label":{"trust":"trusted","privacy":"private"}});
    let mut appends = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        log.append(&started)?;
        log.append(&finished)?;
        appends.push(start.elapsed());
    }

    // Tagged against untagged lines, alternating rounds so drift affects both alike.
    let mut plain = Vec::with_capacity(CALLS);
    let mut tagged = Vec::with_capacity(CALLS);
    for _ in 0..10 {
        for (session, into) in [(&session, &mut plain), (&sealed, &mut tagged)] {
            for _ in 0..CALLS / 10 {
                let start = Instant::now();
                let r = rt.block_on(runtime.run_batch(
                    session,
                    vec![call.clone()],
                    CancellationToken::new(),
                ))?;
                into.push(start.elapsed());
                if r[0].is_error {
                    return Err(format!("noop failed: {}", r[0].text()).into());
                }
            }
        }
    }
    let plain = Stats::of(&mut plain);
    let tagged = Stats::of(&mut tagged);
    println!("no-op call, untagged log:       {plain}");
    println!("no-op call, tagged log:         {tagged}");
    println!(
        "tagged / untagged:              median {:.3}x   mean {:.3}x",
        ratio(tagged.median, plain.median),
        ratio(tagged.mean, plain.mean)
    );

    let call = Stats::of(&mut per_call);
    let append = Stats::of(&mut appends);
    let (call_med, append_med) = (call.median, append.median);
    println!("no-op call through every layer: {call}");
    println!("its two event appends alone:    {append}");
    println!(
        "overhead beyond the appends:    median {:>9.1} µs  (call / appends = {:.2}x)",
        us(call_med.saturating_sub(append_med)),
        ratio(call_med, append_med)
    );
    Ok(())
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
