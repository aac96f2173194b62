//! What the sealed posture costs per call, measured side by side in one run:
//!
//! 1. label propagation: the sealed read_file of a vouched file (resolve, trust map, the sealed
//!    gate over the user's, the page) against the standard read_file of the same file through
//!    the user's gate alone; and a quarantined read of a file not read before (a new reference
//!    recorded in the session's log, synced) beside both;
//! 2. a two-stage pipeline: the sealed `run` of `printf … | tr a-z A-Z` (a vouched command, so
//!    nothing asks; stages connected without a shell) against the same pipeline as a bash line
//!    under the standard posture (allowed by a rule).
//!
//! Rounds alternate so drift on this shared machine touches both sides alike. Medians, and
//! their ratio.
//!
//! Run: `cargo bench -p tackle-bench --bench sealed`

use std::sync::Arc;
use std::time::Instant;

use tackle_bench::{Stats, ratio};
use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle_process::{EnvPolicy, StdinRegistry};
use tackle_protocol::{CallId, ToolCall};
use tackle_runtime::{
    CancellationToken, Catalog, HeadlessApprover, PolicyGate, Runtime, RuntimeConfig, Session,
    SessionOptions,
};
use tackle_sealed::recorder::SessionRecorder;
use tackle_sealed::tools::Shared;
use tackle_sealed::{SealedGate, SealedState, TrustMap, Vouches};
use tackle_tools::{Bash, ReadFile, SearchGate, SearchGateMode};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const ROUNDS: usize = 10;
const PER_ROUND: usize = 40;

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"sealed".contains(arg.as_str()))
    {
        return Ok(());
    }
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&base)?;
    let project = tempfile::tempdir_in(&base)?;
    let root = project.path();
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::create_dir_all(root.join("notes"))?;
    let text: String = (0..60)
        .map(|i| format!("line {i}: fn item_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(root.join("src/lib.rs"), &text)?;
    // One file a quarantined read: each read records a new reference (a synced append).
    for i in 0..ROUNDS * PER_ROUND {
        std::fs::write(root.join(format!("notes/n{i}.md")), &text)?;
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let policy = || -> BenchResult<Policy> {
        Ok(Policy::new(
            vec![Rule::new(
                Effect::Allow,
                Pattern::parse("tool.bash.cmd:*")?,
                RuleSource::BuiltIn,
            )],
            Mode::Ask,
            PathScope::default(),
            UrlScope::default(),
        )?)
    };

    // The standard posture: read_file and bash behind the user's gate.
    let names: Vec<String> = ["bash", "read_file"].map(String::from).to_vec();
    let standard = Runtime::new(
        Catalog::new(vec![
            Arc::new(ReadFile::new()),
            Arc::new(Bash::new(
                SearchGate::new(SearchGateMode::Allow, &names),
                EnvPolicy::default(),
                StdinRegistry::new(),
                false,
            )),
        ])?,
        Arc::new(PolicyGate::new(policy()?)),
        RuntimeConfig::default(),
    )
    .with_approver(Arc::new(HeadlessApprover));
    let standard_session = Session::open(root)?;

    // The sealed posture: its eleven tools behind the sealed gate over the same policy.
    let sealed_session = Session::open_with(
        root,
        SessionOptions {
            posture: tackle_runtime::Posture::Sealed,
            ..SessionOptions::default()
        },
    )?;
    let vouches = Vouches {
        directories: vec!["src".into()],
        commands: vec![
            vec![
                "printf".into(),
                "%s\\n".into(),
                "alpha".into(),
                "beta".into(),
            ],
            vec!["tr".into(), "a-z".into(), "A-Z".into()],
        ],
        tainted: Vec::new(),
    };
    let state = SealedState::new(Arc::new(SessionRecorder(Arc::new(sealed_session.clone()))));
    let shared = Shared {
        root: tackle_fs::Root::open_shared(root)?,
        state: state.clone(),
        trust: TrustMap::new(vouches.clone(), state),
        processor: None,
        questions: None,
        voucher: None,
        skills: Vec::new(),
        env: EnvPolicy::default(),
        path_var: std::env::var_os("PATH"),
        run_timeout: std::time::Duration::from_secs(30),
    };
    let sealed = Runtime::new(
        Catalog::new(tackle_sealed::tools(shared))?,
        Arc::new(SealedGate::new(
            Arc::new(PolicyGate::new(policy()?)),
            vouches,
        )),
        RuntimeConfig::default(),
    )
    .with_approver(Arc::new(HeadlessApprover));

    let call = |name: &str, arguments: serde_json::Value| ToolCall {
        id: CallId("c".into()),
        name: name.into(),
        arguments,
    };
    let measure = |runtime: &Runtime,
                   session: &Session,
                   call: &ToolCall,
                   want: &str|
     -> BenchResult<std::time::Duration> {
        let start = Instant::now();
        let r =
            rt.block_on(runtime.run_batch(session, vec![call.clone()], CancellationToken::new()))?;
        let took = start.elapsed();
        if r[0].is_error || !r[0].text().contains(want) {
            return Err(format!("{} did not do what it should: {}", call.name, r[0].text()).into());
        }
        Ok(took)
    };

    let std_read = call("read_file", serde_json::json!({"path": "src/lib.rs"}));
    let sealed_read = call("read_file", serde_json::json!({"path": "src/lib.rs"}));
    let std_pipe = call(
        "bash",
        serde_json::json!({"command": "printf '%s\\n' alpha beta | tr a-z A-Z"}),
    );
    let sealed_pipe = call(
        "run",
        serde_json::json!({"pipeline": [
            {"program": "printf", "args": ["%s\\n", "alpha", "beta"]},
            {"program": "tr", "args": ["a-z", "A-Z"]}
        ]}),
    );

    let (mut a, mut b, mut q, mut c, mut d) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for _ in 0..PER_ROUND {
            a.push(measure(&standard, &standard_session, &std_read, "line 59")?);
            b.push(measure(&sealed, &sealed_session, &sealed_read, "line 59")?);
            let fresh = call(
                "read_file",
                serde_json::json!({"path": format!("notes/n{}.md", q.len())}),
            );
            q.push(measure(&sealed, &sealed_session, &fresh, "ref:")?);
        }
        for _ in 0..PER_ROUND / 4 {
            c.push(measure(&standard, &standard_session, &std_pipe, "ALPHA")?);
            d.push(measure(&sealed, &sealed_session, &sealed_pipe, "ALPHA")?);
        }
    }
    let (a, b, q, c, d) = (
        Stats::of(&mut a),
        Stats::of(&mut b),
        Stats::of(&mut q),
        Stats::of(&mut c),
        Stats::of(&mut d),
    );
    println!("read_file of a 60-line file, standard posture:     {a}");
    println!("read_file of the same file, sealed (vouched):      {b}");
    println!("read_file, sealed, quarantined (a new reference): {q}");
    println!(
        "label propagation overhead per call: sealed/standard median {:.3}x ({:+.0} µs); quarantined/standard {:.3}x",
        ratio(b.median, a.median),
        (b.median.as_secs_f64() - a.median.as_secs_f64()) * 1e6,
        ratio(q.median, a.median)
    );
    println!("two-stage pipeline, standard bash:                 {c}");
    println!("two-stage pipeline, sealed run (vouched):          {d}");
    println!(
        "pipeline: sealed run / standard bash median {:.3}x ({:+.0} µs)",
        ratio(d.median, c.median),
        (d.median.as_secs_f64() - c.median.as_secs_f64()) * 1e6
    );
    Ok(())
}
