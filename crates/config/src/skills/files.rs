//! Finding skills: the folders of each skills directory, each one's `SKILL.md` and the files
//! it bundles.
//!
//! The project's directories are read through the root handle ([`Root`]): a skills directory,
//! a skill folder or a `SKILL.md` that is a link out of the project is refused, and so is a
//! FIFO or a file past [`OwnFile::SKILL`]'s cap, exactly as any file tackle reads for itself.
//! The user's directories are their own, and their links (a dotfiles manager's, or a skill
//! installed once and linked into several agents' directories) are followed.
//!
//! Bounds: at most [`MAX_SKILLS_PER_DIR`] folders a directory (the first by name), and a
//! skill's bundled files listed at most [`MAX_FILE_DEPTH`] folders deep and
//! [`MAX_LISTED_FILES`] in all; names starting with `.` and `node_modules` are passed over.

use std::path::{Path, PathBuf};

use tackle_fs::{EntryKind, FsError, OwnFile, Root};

use super::Report;
use super::rules;

/// The most skill folders read from one directory.
pub const MAX_SKILLS_PER_DIR: usize = 200;
/// How deep a skill's bundled files are listed (`references/a/b/c/x.md` is 4).
pub const MAX_FILE_DEPTH: usize = 4;
/// The most bundled files listed for one skill.
pub const MAX_LISTED_FILES: usize = 200;

/// The skills directories of one project directory, lowest first: `.agents` wins.
pub const PROJECT_DIRS: [&str; 2] = [".claude/skills", ".agents/skills"];

/// The file a skill folder holds; `skill.md` is accepted as the reference validator does.
const SKILL_FILE_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

/// One skill folder, read.
#[derive(Clone, Debug)]
pub(super) struct Found {
    /// The folder's name.
    pub folder: String,
    /// The folder as messages show it: root-relative in the project, absolute for the user's.
    pub dir: PathBuf,
    /// The `SKILL.md` as messages show it.
    pub file: PathBuf,
    pub text: String,
    /// Bundled files, relative to the folder, sorted.
    pub files: Vec<String>,
}

fn skipped(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules"
}

/// The folder names of a listing, sorted, at most [`MAX_SKILLS_PER_DIR`], saying so when
/// there were more.
fn chosen(mut names: Vec<String>, dir: &Path, report: &mut Report) -> Vec<String> {
    names.retain(|n| !skipped(n));
    names.sort();
    if names.len() > MAX_SKILLS_PER_DIR {
        report.note(
            dir,
            None,
            format!(
                "holds {} skill folders; only the first {MAX_SKILLS_PER_DIR} by name are read",
                names.len()
            ),
        );
        names.truncate(MAX_SKILLS_PER_DIR);
    }
    names
}

/// The skills of the user's directory `dir` (absolute).
pub(super) fn read_user(dir: &Path, report: &mut Report) -> Vec<Found> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            report.invalid(
                dir,
                None,
                rules::SKILL_FILE,
                format!("could not be listed ({e})"),
            );
            return Vec::new();
        }
    };
    let names = listing
        .filter_map(Result::ok)
        .filter(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let mut found = Vec::new();
    for folder in chosen(names, dir, report) {
        let skill_dir = dir.join(&folder);
        let mut text = None;
        for name in SKILL_FILE_NAMES {
            let path = skill_dir.join(name);
            let shown = path.display().to_string();
            match OwnFile::SKILL.read_at(&path) {
                Ok(None) => continue,
                Ok(Some(bytes)) => match bytes.into_text(OwnFile::SKILL, &shown) {
                    Ok(t) => text = Some(Ok((t, path))),
                    Err(e) => text = Some(Err((e.problem.to_string(), path))),
                },
                Err(e) => text = Some(Err((e.problem.to_string(), path))),
            }
            break;
        }
        match text {
            None => no_skill_file(&skill_dir, report),
            Some(Err((problem, path))) => {
                report.invalid(&path, None, rules::SKILL_FILE, problem);
            }
            Some(Ok((text, file))) => {
                let mut files = Vec::new();
                list_user_files(&skill_dir, "", 1, &mut files);
                found.push(Found {
                    files: bounded(files, &skill_dir, report),
                    folder,
                    dir: skill_dir,
                    file,
                    text,
                });
            }
        }
    }
    found
}

fn no_skill_file(dir: &Path, report: &mut Report) {
    report.invalid(
        dir,
        None,
        rules::SKILL_FILE,
        "holds no SKILL.md; a skill is a folder with its instructions in SKILL.md (remove the \
         folder if it is not a skill)"
            .to_owned(),
    );
}

/// The bundled files under `dir/prefix`, following the user's links.
fn list_user_files(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(listing) = std::fs::read_dir(dir.join(prefix)) else {
        return;
    };
    for entry in listing.filter_map(Result::ok) {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // One past the bound says "more" to `bounded`; the rest of a huge folder is not read.
        if out.len() > MAX_LISTED_FILES {
            break;
        }
        if skipped(&name) {
            continue;
        }
        let rel = join(prefix, &name);
        match std::fs::metadata(entry.path()) {
            Ok(m) if m.is_file() && !is_skill_file(&rel) => out.push(rel),
            Ok(m) if m.is_dir() && depth < MAX_FILE_DEPTH => {
                list_user_files(dir, &rel, depth + 1, out)
            }
            _ => {}
        }
    }
}

fn is_skill_file(rel: &str) -> bool {
    SKILL_FILE_NAMES.contains(&rel)
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

/// `files` sorted and cut at [`MAX_LISTED_FILES`], with a note when cut.
fn bounded(mut files: Vec<String>, dir: &Path, report: &mut Report) -> Vec<String> {
    files.sort();
    if files.len() > MAX_LISTED_FILES {
        files.truncate(MAX_LISTED_FILES);
        report.note(
            dir,
            None,
            format!("bundles more than {MAX_LISTED_FILES} files; the first {MAX_LISTED_FILES} are listed to the model"),
        );
    }
    files
}

/// The skills of the project's directory `dir` (root-relative), through the root handle.
pub(super) fn read_project(root: &Root, dir: &str, report: &mut Report) -> Vec<Found> {
    let shown_dir = Path::new(dir);
    let listing = root.resolve(dir).and_then(|rel| root.read_dir(&rel));
    let entries = match listing {
        Ok(entries) => entries,
        Err(FsError::NotFound { .. }) => return Vec::new(),
        Err(e) => {
            report.invalid(shown_dir, None, rules::SKILL_FILE, listing_problem(e));
            return Vec::new();
        }
    };
    let names = entries
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::Dir | EntryKind::Symlink))
        .filter_map(|entry| entry.name.into_string().ok())
        .collect();
    let mut found = Vec::new();
    for folder in chosen(names, shown_dir, report) {
        let skill_dir = format!("{dir}/{folder}");
        let listing = root.resolve(&skill_dir).and_then(|rel| root.read_dir(&rel));
        let entries = match listing {
            Ok(entries) => entries,
            // A link to a file, not a folder: not a skill, and nothing to say.
            Err(FsError::NotADirectory { .. }) => continue,
            Err(e) => {
                report.invalid(
                    Path::new(&skill_dir),
                    None,
                    rules::SKILL_FILE,
                    listing_problem(e),
                );
                continue;
            }
        };
        let Some(file_name) = SKILL_FILE_NAMES
            .iter()
            .find(|n| entries.iter().any(|e| e.name == **n))
        else {
            no_skill_file(Path::new(&skill_dir), report);
            continue;
        };
        let rel = format!("{skill_dir}/{file_name}");
        let read = OwnFile::SKILL
            .read_in(root, &rel)
            .and_then(|b| b.map(|b| b.into_text(OwnFile::SKILL, &rel)).transpose());
        match read {
            Ok(Some(text)) => {
                let mut files = Vec::new();
                list_project_files(root, &skill_dir, "", 1, &mut files);
                found.push(Found {
                    files: bounded(files, Path::new(&skill_dir), report),
                    folder,
                    dir: PathBuf::from(&skill_dir),
                    file: PathBuf::from(rel),
                    text,
                });
            }
            Ok(None) => no_skill_file(Path::new(&skill_dir), report),
            Err(e) => report.invalid(
                Path::new(&rel),
                None,
                rules::SKILL_FILE,
                e.problem.to_string(),
            ),
        }
    }
    found
}

fn listing_problem(e: FsError) -> String {
    match e {
        FsError::OutsideRoot { .. } => "leads out of the project through a symbolic link; \
                                        replace the link with the folder itself"
            .to_owned(),
        FsError::NotADirectory { .. } => "is not a directory; skills are folders in a \
                                          directory of that name"
            .to_owned(),
        other => format!("could not be listed ({other})"),
    }
}

/// The bundled files under `skill_dir/prefix`, through the root: regular files and links
/// (a link out is refused when it is read), never FIFOs or devices.
fn list_project_files(
    root: &Root,
    skill_dir: &str,
    prefix: &str,
    depth: usize,
    out: &mut Vec<String>,
) {
    let at = join(skill_dir, prefix);
    let Ok(entries) = root.resolve(&at).and_then(|rel| root.read_dir(&rel)) else {
        return;
    };
    for entry in entries {
        let Ok(name) = entry.name.into_string() else {
            continue;
        };
        // One past the bound says "more" to `bounded`; the rest of a huge folder is not read.
        if out.len() > MAX_LISTED_FILES {
            break;
        }
        if skipped(&name) {
            continue;
        }
        let rel = join(prefix, &name);
        match entry.kind {
            EntryKind::File | EntryKind::Symlink if !is_skill_file(&rel) => out.push(rel),
            EntryKind::Dir if depth < MAX_FILE_DEPTH => {
                list_project_files(root, skill_dir, &rel, depth + 1, out)
            }
            _ => {}
        }
    }
}
