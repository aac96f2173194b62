//! `tackle artifacts ls|cat|gc`: the project's artifact store, listed, printed and collected.

use std::io::Write;
use std::time::SystemTime;

use anyhow::{Context, anyhow};
use tackle_protocol::ArtifactUri;
use tackle_store::{ArtifactId, ArtifactStore, DEFAULT_GRACE, Janitor, Manifest};

use crate::args::ArtifactsCommand;
use crate::commands::Failure;
use crate::config::Config;
use crate::{exit, leftovers};
use tackle_fs::SweepMode;

pub(crate) fn artifacts(config: &Config, command: ArtifactsCommand) -> Result<u8, Failure> {
    // Unswept: `gc` sweeps tmp/ itself and reports what it found (a dry run removes nothing).
    let store = ArtifactStore::open_unswept(&config.root.join(".agents").join("store"))
        .context("opening the artifact store")?;
    let mut out = std::io::stdout().lock();
    match command {
        ArtifactsCommand::Ls { json } => {
            let mut list = store.list().context("listing artifacts")?;
            list.sort_by_key(|a| std::cmp::Reverse(a.modified));
            let now = SystemTime::now();
            // Each artifact's label is its producers', from the event logs, as a read would get.
            let labels = tackle_runtime::Producers::scan(&store);
            if json {
                let rows: Vec<_> = list
                    .iter()
                    .map(|a| {
                        serde_json::json!({
                            "id": a.id.to_hex(),
                            "bytes": a.bytes,
                            "age_s": now.duration_since(a.modified).map_or(0, |d| d.as_secs()),
                            "label": labels.label_of(a.id),
                        })
                    })
                    .collect();
                serde_json::to_writer_pretty(&mut out, &rows).context("writing the list")?;
                writeln!(out).context("writing the list")?;
            } else {
                for a in &list {
                    let age = now.duration_since(a.modified).map_or(0, |d| d.as_secs());
                    let trust = match labels.label_of(a.id).trust {
                        tackle_protocol::Trust::Trusted => "trusted",
                        tackle_protocol::Trust::Untrusted => "untrusted",
                    };
                    writeln!(
                        out,
                        "{}  {:>12} bytes  {:>8}s old  {trust}",
                        a.id.to_hex(),
                        a.bytes,
                        age
                    )
                    .context("writing the list")?;
                }
                writeln!(out, "{} artifacts", list.len()).context("writing the list")?;
            }
        }
        ArtifactsCommand::Cat { artifact } => {
            let id = artifact_id(&store, &artifact)?;
            let bytes = store
                .read(id)
                .with_context(|| format!("reading artifact {}", id.to_hex()))?;
            out.write_all(&bytes).context("writing the artifact")?;
        }
        ArtifactsCommand::Gc { dry_run, json } => {
            let report = Janitor::new(&store, DEFAULT_GRACE)
                .collect(SystemTime::now(), dry_run)
                .context("collecting garbage")?;
            let mode = if dry_run {
                SweepMode::Count
            } else {
                SweepMode::Remove
            };
            let writes = leftovers::sweep_writes(&config.root, mode);
            let bucket = bucket_collection(config, dry_run).map_err(Failure::Engine)?;
            if json {
                let v = serde_json::json!({
                    "logs_scanned": report.logs_scanned,
                    "lines_skipped": report.lines_skipped,
                    "live": report.live,
                    "removed": report.removed.iter().map(|i| i.to_hex()).collect::<Vec<_>>(),
                    "kept_in_grace": report.kept_in_grace.len(),
                    "temps_removed": report.temps.files,
                    "temp_bytes_removed": report.temps.bytes,
                    "write_temps_removed": writes.files,
                    "write_temp_bytes_removed": writes.bytes,
                    "skipped_guard_held": report.skipped_guard_held,
                    "dry_run": report.dry_run,
                    "bucket": bucket.as_ref().map(BucketPass::json),
                });
                serde_json::to_writer_pretty(&mut out, &v).context("writing the report")?;
                writeln!(out).context("writing the report")?;
            } else {
                let verb = if dry_run { "would remove" } else { "removed" };
                if report.skipped_guard_held {
                    writeln!(
                        out,
                        "a call is publishing output right now; no artifact was collected, try again"
                    )
                    .context("writing the report")?;
                } else {
                    writeln!(
                        out,
                        "scanned {} event logs ({} unreadable lines skipped); {} live artifacts; {verb} {}; {} unreferenced but inside the one-hour grace",
                        report.logs_scanned,
                        report.lines_skipped,
                        report.live,
                        report.removed.len(),
                        report.kept_in_grace.len()
                    )
                    .context("writing the report")?;
                }
                writeln!(
                    out,
                    "abandoned temp files (their writer is gone): {verb} {} in the store ({} bytes) and {} in the worktree ({} bytes)",
                    report.temps.files, report.temps.bytes, writes.files, writes.bytes
                )
                .context("writing the report")?;
                if let Some(pass) = &bucket {
                    writeln!(out, "{}", pass.line()).context("writing the report")?;
                }
            }
        }
    }
    Ok(exit::OK)
}

/// Accept a bare digest, the public URI (optionally with a stream), or the internal form.
fn artifact_id(store: &ArtifactStore, s: &str) -> Result<ArtifactId, Failure> {
    let bad = || {
        Failure::Usage(anyhow!(
            "`{s}` is not an artifact reference; pass a 64-hex digest or artifact://<digest>[/<stream>]"
        ))
    };
    if let Some(hex) = s.strip_prefix("artifact://sha256/") {
        return ArtifactId::from_hex(hex).ok_or_else(bad);
    }
    if ArtifactUri::claims(s) {
        let uri = ArtifactUri::parse(s).map_err(|e| Failure::Usage(anyhow!("{s}: {e}")))?;
        let id = ArtifactId::from_hex(uri.digest_hex()).ok_or_else(bad)?;
        let Some(stream) = uri.stream() else {
            return Ok(id);
        };
        let bytes = store
            .read(id)
            .with_context(|| format!("reading artifact {}", id.to_hex()))?;
        let manifest = Manifest::parse(&bytes).ok_or_else(|| {
            Failure::Usage(anyhow!(
                "{} is not a manifest; drop the /{stream} suffix",
                id.to_hex()
            ))
        })?;
        return manifest
            .stream(stream.as_str())
            .map(|m| m.artifact)
            .ok_or_else(|| Failure::Usage(anyhow!("{} has no stream `{stream}`", id.to_hex())));
    }
    ArtifactId::from_hex(s).ok_or_else(bad)
}

/// One pass of the bucket's two-phase collection, when artifacts are kept in one.
enum BucketPass {
    /// `--dry-run`: the bucket is not touched (its collection marks before it deletes).
    NotOnDryRun,
    Ran(tackle_fleet::GcReport),
}

impl BucketPass {
    fn json(&self) -> serde_json::Value {
        match self {
            BucketPass::NotOnDryRun => serde_json::json!({"ran": false}),
            BucketPass::Ran(r) => serde_json::json!({
                "ran": !r.skipped_collector_running,
                "listed": r.listed,
                "marked": r.marked,
                "deleted": r.deleted.iter().map(|i| i.to_hex()).collect::<Vec<_>>(),
                "grace_seconds": tackle_fleet::BUCKET_GRACE.as_secs(),
            }),
        }
    }

    fn line(&self) -> String {
        match self {
            BucketPass::NotOnDryRun => {
                "bucket: not collected on a dry run (its collection marks first and deletes a day later)".to_owned()
            }
            BucketPass::Ran(r) if r.skipped_collector_running => {
                "bucket: another daemon is collecting it now; nothing done".to_owned()
            }
            BucketPass::Ran(r) => format!(
                "bucket: listed {} artifacts; removed {} marked a day or more ago and still unreferenced; marked {} unreferenced ones older than a day",
                r.listed,
                r.deleted.len(),
                r.marked
            ),
        }
    }
}

/// The bucket's collection pass, if `[artifacts] backend = "s3"`.
fn bucket_collection(config: &Config, dry_run: bool) -> anyhow::Result<Option<BucketPass>> {
    let Some(fleet) = crate::storage::connect(&config.storage)? else {
        return Ok(None);
    };
    let Some(bucket) = fleet.bucket else {
        return Ok(None);
    };
    if dry_run {
        return Ok(Some(BucketPass::NotOnDryRun));
    }
    let gc = tackle_fleet::ArtifactGc::new(&bucket, &fleet.db, tackle_fleet::BUCKET_GRACE);
    let report = fleet
        .io
        .run(async move { gc.collect().await })
        .and_then(|r| r)?;
    Ok(Some(BucketPass::Ran(report)))
}
