//! `tackle trust --sealed DIR` and `--sealed-command "ARGV"`: what the user vouches for in the
//! sealed posture, kept in their own config directory (`tackle_sealed::vouches`).

use std::io::Write;

use anyhow::{Context, anyhow};

use crate::commands::Failure;
use crate::exit;

use super::prompt::visible;

/// The user's vouch file and every root's vouches in it.
pub fn listed() -> Result<
    (
        std::path::PathBuf,
        std::collections::BTreeMap<String, tackle_sealed::Vouches>,
    ),
    String,
> {
    let path = tackle_sealed::vouches::file_path()
        .ok_or("no user config directory: set XDG_CONFIG_HOME or HOME")?;
    let roots = tackle_sealed::vouches::all(&path)?;
    Ok((path, roots))
}

pub fn run(
    root: Option<&std::path::Path>,
    dirs: &[String],
    commands: &[String],
    revoke: bool,
) -> Result<u8, Failure> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let root = crate::root::find(root, &cwd)?;
    let handle = tackle_fs::Root::open(&root)
        .map_err(|e| Failure::Engine(anyhow!("opening the project root: {e}")))?;
    let mut directories = Vec::new();
    for dir in dirs {
        directories.push(directory(&handle, &root, dir, revoke)?);
    }
    let mut argvs = Vec::new();
    for command in commands {
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        if argv.is_empty() {
            return Err(Failure::Usage(anyhow!(
                "--sealed-command: give the command, e.g. \"git status\""
            )));
        }
        argvs.push(argv);
    }
    let path = tackle_sealed::vouches::file_path().ok_or_else(|| {
        Failure::Usage(anyhow!(
            "no user config directory to keep vouches in; set XDG_CONFIG_HOME or HOME"
        ))
    })?;
    let mut out = std::io::stdout().lock();
    let vouches = if revoke {
        let (vouches, removed) = tackle_sealed::vouches::remove(&path, &root, &directories, &argvs)
            .map_err(|e| Failure::Engine(anyhow!("taking the vouches back: {e}")))?;
        writeln!(
            out,
            "took back {removed} of {} vouch(es): the model sees references for them again",
            directories.len() + argvs.len()
        )
        .context("writing the answer")?;
        vouches
    } else {
        let vouches = tackle_sealed::vouches::add(&path, &root, &directories, &argvs)
            .map_err(|e| Failure::Engine(anyhow!("recording the vouches: {e}")))?;
        for dir in &directories {
            writeln!(
                out,
                "vouched for {}: in the sealed posture the model sees the content and names of its files",
                visible(dir)
            )
            .context("writing the answer")?;
        }
        for argv in &argvs {
            writeln!(
                out,
                "vouched for the command `{}`: in the sealed posture it runs without asking and the model sees its output (that exact argv only)",
                visible(&argv.join(" "))
            )
            .context("writing the answer")?;
        }
        vouches
    };
    writeln!(
        out,
        "{} now vouches for {} director(ies) and {} command(s) ({}); undo with tackle trust --revoke --sealed DIR / --sealed-command ARGV",
        visible(&root.display().to_string()),
        vouches.directories.len(),
        vouches.commands.len(),
        visible(&path.display().to_string())
    )
    .context("writing the answer")?;
    Ok(exit::OK)
}

/// `dir` as the vouch file keeps it: root-relative, links followed, `.` for the root. A vouch
/// must name a directory of the project; taking one back needs only the name.
fn directory(
    handle: &tackle_fs::Root,
    root: &std::path::Path,
    dir: &str,
    revoke: bool,
) -> Result<String, Failure> {
    let rel = handle
        .resolve(dir)
        .map_err(|e| Failure::Usage(anyhow!("--sealed {}: {e}", visible(dir))))?;
    let real = match handle.real_path(&rel) {
        Ok(real) => real,
        Err(_) if revoke => rel,
        Err(e) => return Err(Failure::Usage(anyhow!("--sealed {}: {e}", visible(dir)))),
    };
    if !revoke
        && !matches!(handle.metadata(&real), Ok(Some(meta)) if meta.kind == tackle_fs::EntryKind::Dir)
    {
        return Err(Failure::Usage(anyhow!(
            "--sealed {}: not a directory of the project; give a directory relative to {}",
            visible(dir),
            visible(&root.display().to_string())
        )));
    }
    Ok(if real.is_root() {
        ".".to_owned()
    } else {
        real.as_str().to_owned()
    })
}
