//! The three ways a tool-against-peer benchmark measures tackle, so each prints what a user
//! and an agent actually pay beside what the tool itself costs:
//!
//! 1. **tool**: the tool's own `prepare` + `execute` in process, no runtime layers
//!    ([`crate::direct`]);
//! 2. **runtime**: one call through [`tackle_runtime::Runtime::run_batch`] with the catalog and
//!    gate the project's configuration builds (strict parse, the gate and its per-file read
//!    scope, scheduling, retention of the output, the durable start and end of the call in the
//!    session's log), as `tackle run` and `tackle serve` pay it on every call ([`InRuntime`]);
//! 3. **process**: `tackle call` as a child process of the release binary, start-up, loading
//!    the configuration, opening the session and printing included, against the peer's own
//!    process ([`process_call`]), as a person timing both commands would.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tackle_protocol::{CallId, ToolCall};

use crate::{Stats, ratio};
use tackle_runtime::{CancellationToken, Runtime, Session};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A runtime and a session over one project root, built as `tackle call` builds them (the
/// configuration's catalog and gate, `--no-digest`), to call tools through every layer.
pub struct InRuntime {
    rt: tokio::runtime::Runtime,
    runtime: Runtime,
    session: Session,
}

impl InRuntime {
    /// Loads `root`'s configuration (untrusted project settings are left out, as for a root
    /// nobody vouched for) and opens a session in its store.
    pub fn open(root: &Path) -> Result<InRuntime> {
        let flags = tackle_config::settings::Flags {
            no_digest: true,
            ..Default::default()
        };
        let store = tackle_config::trust::TrustStore::user();
        let config = tackle_config::load_with(
            root,
            &flags,
            store.as_ref(),
            &tackle_config::trust::consent::NeverAsk,
        )?;
        let runtime = Runtime::new(
            tackle_config::host::catalog(&config)?,
            tackle_config::host::gate(&config),
            config.runtime.clone(),
        );
        let session = Session::open(root)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        Ok(InRuntime {
            rt,
            runtime,
            session,
        })
    }

    /// One call through every layer; its text, or an error when the call failed.
    pub fn call(&self, tool: &str, arguments: &serde_json::Value) -> Result<String> {
        let call = ToolCall {
            id: CallId("bench".to_owned()),
            name: tool.to_owned(),
            arguments: arguments.clone(),
        };
        let results = self.rt.block_on(self.runtime.run_batch(
            &self.session,
            vec![call],
            CancellationToken::new(),
        ))?;
        let result = results
            .into_iter()
            .next()
            .ok_or("the runtime returned no result")?;
        if result.is_error {
            return Err(format!("{tool} failed: {}", result.text()).into());
        }
        Ok(result.text())
    }
}

/// Runs `tackle call <tool> <arguments> --no-digest --root <root>` with the binary `tackle`,
/// its output read from a pipe as a peer's is; fails unless it exits 0.
pub fn process_call(
    tackle: &Path,
    root: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> Result<Vec<u8>> {
    let out = crate::user_env::command(tackle)
        .args([
            "call",
            tool,
            &arguments.to_string(),
            "--no-digest",
            "--root",
        ])
        .arg(root)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "tackle call {tool} exited {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out.stdout)
}

/// Times the three ways of one case against the same peer, `runs` times, interleaved (each way
/// right before a peer run of its own, so a change in the machine's load falls on both), and
/// prints each way's timings beside its peer's with the ratio of medians, lines indented by
/// `indent`; returns the three ratios (tool, runtime, process).
pub fn three_ways(
    runs: usize,
    indent: &str,
    peer_name: &str,
    ways: [&mut dyn FnMut() -> Result<()>; 3],
    peer: &mut dyn FnMut() -> Result<()>,
) -> Result<[f64; 3]> {
    let mut ours: [Vec<Duration>; 3] = Default::default();
    let mut theirs: [Vec<Duration>; 3] = Default::default();
    let mut ways = ways;
    for _ in 0..runs {
        for (i, way) in ways.iter_mut().enumerate() {
            ours[i].push(time(&mut *way)?);
            theirs[i].push(time(&mut *peer)?);
        }
    }
    let mut ratios = [0.0; 3];
    for (i, label) in ["tool", "runtime", "process"].into_iter().enumerate() {
        let (t, p) = (Stats::of(&mut ours[i]), Stats::of(&mut theirs[i]));
        ratios[i] = ratio(t.median, p.median);
        println!("{indent}{label:<8} tackle {t}");
        println!(
            "{indent}{:<8} {peer_name:<6} {p}   ratio {:.2}x",
            "", ratios[i]
        );
    }
    Ok(ratios)
}

/// How long `f` took.
pub fn time(f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}
