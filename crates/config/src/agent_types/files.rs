//! Reading the directories agent types live in: the user's `agents/` in their config directory
//! and the project's `.claude/agents/` and `.agents/agents/`.
//!
//! Every file goes through the one reading path, [`OwnFile::AGENT_TYPE`]: opened non-blocking,
//! a regular file or a refusal, refused unread past its cap. The project's directories are read
//! through the root handle, so a link (the directory or a file) that leads out of the project is
//! refused; the user's are the user's own, and their links (a dotfiles manager's) are followed.
//! At most [`MAX_FILES_PER_DIR`] files are read from one directory, the first by name; names
//! starting with `.` are not types (editors' lock files are dangling links named `.#x.md`).
//!
//! Rejected: refusing a link that leaves the agents directory but stays in the project. A link
//! from `.claude/agents/x.md` to `.agents/agents/x.md` is how one file serves two tools, and
//! every file of the project is the repository's alike: the project is the boundary.

use std::path::{Path, PathBuf};

use tackle_fs::{FsError, OwnFile, OwnFileError, Root};

use super::{FileFault, Report};

/// The most files read from one directory.
pub const MAX_FILES_PER_DIR: usize = 200;

/// The project's directories of types, lowest first: `.agents` wins over `.claude`.
pub const PROJECT_DIRS: [&str; 2] = [".claude/agents", ".agents/agents"];

/// The user's directory of types, inside their config directory (`user_config_dir()`).
pub const USER_DIR: &str = "agents";

/// One file read whole.
pub(super) struct Source {
    /// As messages and origins show it: root-relative in the project, absolute for the user's.
    pub path: PathBuf,
    pub text: String,
}

fn is_type_file(name: &str) -> bool {
    name.len() > ".md".len() && name.ends_with(".md") && !name.starts_with('.')
}

/// The type files among `names` (sorted), at most [`MAX_FILES_PER_DIR`], saying so when there
/// were more.
fn chosen(mut names: Vec<String>, dir: &Path, report: &mut Report) -> Vec<String> {
    names.retain(|n| is_type_file(n));
    names.sort();
    if names.len() > MAX_FILES_PER_DIR {
        report.note(
            dir,
            None,
            format!(
                "holds {} agent type files; only the first {MAX_FILES_PER_DIR} by name are read",
                names.len()
            ),
        );
        names.truncate(MAX_FILES_PER_DIR);
    }
    names
}

fn refused_read(path: &Path, e: &OwnFileError, report: &mut Report) {
    report.refuse(path, FileFault::whole(e.problem.to_string()));
}

/// The `agents/` of the user's config directory `config_dir`.
pub(super) fn read_user(config_dir: &Path, report: &mut Report) -> Vec<Source> {
    let dir = config_dir.join(USER_DIR);
    let listing = match std::fs::read_dir(&dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            let problem = if e.kind() == std::io::ErrorKind::NotADirectory {
                "is not a directory; agent types are Markdown files in a directory of that name"
                    .to_owned()
            } else {
                format!("could not be listed ({e}); check its permissions")
            };
            report.refuse(&dir, FileFault::whole(problem));
            return Vec::new();
        }
    };
    let names = listing
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    let mut sources = Vec::new();
    for name in chosen(names, &dir, report) {
        let path = dir.join(&name);
        let shown = path.display().to_string();
        let read = OwnFile::AGENT_TYPE.read_at(&path).and_then(|bytes| {
            bytes
                .map(|b| b.into_text(OwnFile::AGENT_TYPE, &shown))
                .transpose()
        });
        match read {
            Ok(Some(text)) => sources.push(Source { path, text }),
            Ok(None) => {}
            Err(e) => refused_read(&path, &e, report),
        }
    }
    sources
}

/// The project's directory `dir` (one of [`PROJECT_DIRS`]), through the root handle.
pub(super) fn read_project(root: &Root, dir: &str, report: &mut Report) -> Vec<Source> {
    let shown_dir = Path::new(dir);
    let listing = root.resolve(dir).and_then(|rel| root.read_dir(&rel));
    let entries = match listing {
        Ok(entries) => entries,
        Err(FsError::NotFound { .. }) => return Vec::new(),
        Err(e) => {
            let problem = match e {
                FsError::OutsideRoot { .. } => "leads out of the project through a symbolic \
                                                link; replace the link with the directory itself"
                    .to_owned(),
                FsError::NotADirectory { .. } => "is not a directory; agent types are Markdown \
                                                  files in a directory of that name"
                    .to_owned(),
                other => format!("could not be listed ({other})"),
            };
            report.refuse(shown_dir, FileFault::whole(problem));
            return Vec::new();
        }
    };
    let names = entries
        .into_iter()
        .filter_map(|entry| entry.name.into_string().ok())
        .collect();
    let mut sources = Vec::new();
    for name in chosen(names, shown_dir, report) {
        let rel = format!("{dir}/{name}");
        let read = OwnFile::AGENT_TYPE.read_in(root, &rel).and_then(|bytes| {
            bytes
                .map(|b| b.into_text(OwnFile::AGENT_TYPE, &rel))
                .transpose()
        });
        match read {
            Ok(Some(text)) => sources.push(Source {
                path: PathBuf::from(rel),
                text,
            }),
            Ok(None) => {}
            Err(e) => refused_read(Path::new(&rel), &e, report),
        }
    }
    sources
}

/// Whether `.claude/agents` is a link to `.agents/agents` (one directory for both tools), whose
/// files are then read once.
pub(super) fn project_dirs_are_one(root: &Root) -> bool {
    let real = |dir: &str| root.resolve(dir).and_then(|rel| root.real_path(&rel)).ok();
    match (real(PROJECT_DIRS[0]), real(PROJECT_DIRS[1])) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}
