//! `tackle trust`: trust this root (after showing what its project config widens and the
//! secrets it would move), `--revoke` it, or `--list` every trusted root with where it stands.

use std::io::Write;

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::commands::Failure;
use crate::config;
use crate::exit;
use crate::settings::Flags;

use super::prompt::{NeverAsk, visible};
use super::{TrustState, TrustStore, describe};
use tackle_config::agent_types::ProjectFile;

/// What `tackle trust` was asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustAction {
    Grant,
    Revoke,
    List { json: bool },
}

fn store() -> Result<TrustStore, Failure> {
    TrustStore::user().ok_or_else(|| {
        Failure::Usage(anyhow!(
            "no user config directory to keep the trust store in; set XDG_CONFIG_HOME or HOME"
        ))
    })
}

pub fn run(
    root: Option<&std::path::Path>,
    flags: &Flags,
    action: TrustAction,
) -> Result<u8, Failure> {
    let store = store()?;
    match action {
        TrustAction::List { json } => list(&store, json),
        TrustAction::Revoke => {
            let root = find_root(root)?;
            let key = super::store::root_key(&root)?;
            let was = store.revoke(&key)?;
            let mut out = std::io::stdout().lock();
            if was {
                writeln!(
                    out,
                    "no longer trusted: {}; its project config may only narrow, and its MCP servers do not start",
                    visible(&key)
                )
            } else {
                writeln!(out, "{} was not trusted; nothing changed", visible(&key))
            }
            .context("writing the answer")?;
            Ok(exit::OK)
        }
        TrustAction::Grant => {
            let root = find_root(root)?;
            let config = config::load_with(&root, flags, Some(&store), &NeverAsk)?;
            let trust = &config.trust;
            let mut text = String::new();
            if trust.widenings.is_empty() {
                text.push_str(&format!(
                    "the project config of {} widens nothing; recorded as trusted, so a later widening asks\n",
                    visible(&trust.root)
                ));
            } else {
                text.push_str(&format!(
                    "trusting {}: its project config widens your settings with\n",
                    visible(&trust.root)
                ));
                text.push_str(&describe(&trust.widenings));
            }
            text.push_str(&agent_type_files(config.agent_types.project_files()));
            text.push_str(&skill_files(config.skills.project_files()));
            store.record(&trust.root, trust.digests(), super::now())?;
            let secrets: usize = trust.widenings.iter().map(|w| w.secrets.len()).sum();
            text.push_str(&format!(
                "trusted: {} setting(s) accepted, {secrets} secret(s) handed over as listed; a change that widens further asks again (undo with tackle trust --revoke)\n",
                trust.widenings.len()
            ));
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("writing the answer")?;
            Ok(exit::OK)
        }
    }
}

/// The project's agent type files and what trust changes for each: its model used instead of
/// ignored, its allow rules applied, its replacing a built-in or user type of the same name.
fn agent_type_files(files: &[ProjectFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "the project's agent type files, and what trusting the folder changes in each:\n",
    );
    for f in files {
        let head = format!(
            "  {} ({})",
            visible(&f.path.display().to_string()),
            visible(&f.name)
        );
        if f.trust_would.is_empty() {
            text.push_str(&format!("{head}: nothing; it only narrows\n"));
        }
        for change in &f.trust_would {
            text.push_str(&format!("{head}: {}\n", visible(change)));
        }
    }
    text
}

/// The project's skills and what trust changes for each: its `allowed-tools` pre-approving,
/// its replacing a user skill of the same name.
fn skill_files(files: &[tackle_config::skills::ProjectSkill]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut text =
        String::from("the project's skills, and what trusting the folder changes in each:\n");
    for f in files {
        let head = format!(
            "  {} ({})",
            visible(&f.path.display().to_string()),
            visible(&f.name)
        );
        if f.trust_would.is_empty() {
            text.push_str(&format!(
                "{head}: nothing; its instructions load either way\n"
            ));
        }
        for change in &f.trust_would {
            text.push_str(&format!("{head}: {}\n", visible(change)));
        }
    }
    text
}

fn find_root(root: Option<&std::path::Path>) -> Result<std::path::PathBuf, Failure> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    Ok(crate::root::find(root, &cwd)?)
}

/// Every trusted root, and whether its project config still holds only what was accepted.
fn list(store: &TrustStore, json_out: bool) -> Result<u8, Failure> {
    let records = store.read();
    if let Some(problem) = &records.problem {
        eprintln!("tackle: {}", visible(problem));
    }
    let rows: Vec<(String, u64, usize, String)> = records
        .roots
        .iter()
        .map(|(root, record)| {
            let path = std::path::Path::new(root);
            let state = if !path.is_dir() {
                "missing".to_owned()
            } else {
                match config::load_with(path, &Flags::default(), Some(store), &NeverAsk) {
                    Ok(c) => match c.trust.state {
                        TrustState::Changed => {
                            "changed: widens more than was accepted; run tackle trust there"
                                .to_owned()
                        }
                        s => s.as_str().to_owned(),
                    },
                    Err(e) => format!("unreadable config: {e:#}"),
                }
            };
            (
                root.clone(),
                record.trusted_at,
                record.accepted.len(),
                state,
            )
        })
        .collect();
    let sealed = super::vouch::listed();
    let mut out = std::io::stdout().lock();
    if json_out {
        let value = json!({
            "sealed": sealed.as_ref().map(|(file, roots)| json!({
                "file": file.display().to_string(),
                "roots": roots,
            })).ok(),
            "store": store.path().display().to_string(),
            "roots": rows.iter().map(|(root, at, accepted, state)| json!({
                "root": root, "trusted_at": at, "accepted": accepted, "state": state,
            })).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut out, &value).context("writing the list")?;
        writeln!(out).context("writing the list")?;
        return Ok(exit::OK);
    }
    for (root, at, accepted, state) in &rows {
        writeln!(
            out,
            "{}  ({accepted} setting(s) accepted at {}; {})",
            visible(root),
            tackle_tool::time::rfc3339_utc(i64::try_from(*at).unwrap_or(i64::MAX)),
            visible(state)
        )
        .context("writing the list")?;
    }
    writeln!(
        out,
        "{} trusted root(s) in {}",
        rows.len(),
        store.path().display()
    )
    .context("writing the list")?;
    match &sealed {
        Ok((file, roots)) if !roots.is_empty() => {
            for (root, vouches) in roots {
                let commands: Vec<String> = vouches.commands.iter().map(|c| c.join(" ")).collect();
                writeln!(
                    out,
                    "sealed: {}  directories: {}; commands: {}",
                    visible(root),
                    visible(&vouches.directories.join(", ")),
                    visible(&commands.join(", "))
                )
                .context("writing the list")?;
            }
            writeln!(
                out,
                "{} root(s) with sealed vouches in {}",
                roots.len(),
                file.display()
            )
            .context("writing the list")?;
        }
        Ok(_) => {}
        Err(problem) => eprintln!("tackle: sealed vouches: {}", visible(problem)),
    }
    Ok(exit::OK)
}
