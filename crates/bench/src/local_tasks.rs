//! The coding tasks of the local-model benchmark (`benches/local_tasks.rs`), kept as data in
//! `crates/bench/local_tasks/<task>/`:
//!
//! - `task.md`: what the agent is told, word for word.
//! - `repo/`: the project it works in; each run gets a fresh copy.
//! - `check`: an executable that judges the end state, run as `check PROJECT LAST_MESSAGE`
//!   (the project after the run, a file holding the agent's final answer, perhaps empty). It
//!   exits 0 and prints a line starting `ok:` when the task is done, and exits non-zero with a
//!   line starting `fail:` saying what is wrong otherwise. A check may read the untouched
//!   fixture beside itself (`repo/`) to see what must not change.
//! - `solution/`: a reference solution: `files/` copied over the project, and
//!   `last-message.txt`, the final answer, for tasks judged by what the agent says.
//!
//! The checks are tested without a model (`tests/local_tasks.rs`): each fails on the untouched
//! fixture and passes once its solution is applied, so a task the agent fails is the agent's.
//! This module refuses to know any agent: it copies, judges and applies, nothing more.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::bounded::run_bounded;

/// The most a check may take; only code an agent wrote could make it run long.
pub const CHECK_BOUND: Duration = Duration::from_secs(120);

/// One task of the suite.
#[derive(Clone, Debug)]
pub struct Task {
    /// The directory's name, e.g. `fix-off-by-one`.
    pub name: String,
    /// `crates/bench/local_tasks/<name>`.
    pub dir: PathBuf,
    /// `task.md`, trimmed.
    pub prompt: String,
}

/// A check's verdict on a project.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub passed: bool,
    /// What the check printed (stdout and stderr, interleaved).
    pub output: String,
}

impl Verdict {
    /// The check's verdict line: its last line starting `ok:` or `fail:`, else its last line.
    pub fn summary(&self) -> &str {
        let lines = || {
            self.output
                .lines()
                .rev()
                .map(str::trim)
                .filter(|l| !l.is_empty())
        };
        lines()
            .find(|l| l.starts_with("ok:") || l.starts_with("fail:"))
            .or_else(|| lines().next())
            .unwrap_or("")
    }
}

/// Where the tasks live.
pub fn tasks_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("local_tasks")
}

/// Every task, by name.
pub fn tasks() -> std::io::Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for entry in std::fs::read_dir(tasks_dir())? {
        let dir = entry?.path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prompt = std::fs::read_to_string(dir.join("task.md"))
            .map_err(|e| std::io::Error::other(format!("{}/task.md: {e}", dir.display())))?
            .trim()
            .to_owned();
        tasks.push(Task { name, dir, prompt });
    }
    tasks.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tasks)
}

/// `PATH` with the directory of the Python 3 that `python3` names first, so checks and agents
/// run the real interpreter even under a home that a version manager's shims do not know.
pub fn tool_path() -> std::ffi::OsString {
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    match python.as_deref().and_then(Path::parent) {
        Some(dir) => {
            let mut path = dir.as_os_str().to_owned();
            path.push(":");
            path.push(&inherited);
            path
        }
        None => inherited,
    }
}

impl Task {
    /// The untouched project.
    pub fn fixture(&self) -> PathBuf {
        self.dir.join("repo")
    }

    /// Copies the fixture's files into `project` (created if missing).
    pub fn copy_fixture(&self, project: &Path) -> std::io::Result<()> {
        copy_tree(&self.fixture(), project)
    }

    /// Applies the reference solution: its files over `project`, its final answer (when the
    /// task has one) to `last_message`.
    pub fn apply_solution(&self, project: &Path, last_message: &Path) -> std::io::Result<()> {
        let solution = self.dir.join("solution");
        let files = solution.join("files");
        if files.is_dir() {
            copy_tree(&files, project)?;
        }
        let answer = solution.join("last-message.txt");
        if answer.is_file() {
            std::fs::copy(answer, last_message)?;
        }
        Ok(())
    }

    /// Runs the task's check on `project` and the agent's final answer, with `path` as `PATH`.
    /// The check's output is kept in `log`.
    pub fn check(
        &self,
        project: &Path,
        last_message: &Path,
        path: &std::ffi::OsStr,
        log: &Path,
    ) -> std::io::Result<Verdict> {
        std::fs::write(log, "")?;
        let mut cmd = Command::new(self.dir.join("check"));
        cmd.arg(project)
            .arg(last_message)
            .current_dir(project)
            .env("PATH", path)
            // Python writes no bytecode beside the fixture a check reads.
            .env("PYTHONDONTWRITEBYTECODE", "1");
        let ended = run_bounded(cmd, CHECK_BOUND, log)?;
        let mut output = std::fs::read_to_string(log)?;
        if ended.timed_out {
            output.push_str(&format!(
                "\nfail: the check took longer than {CHECK_BOUND:?}\n"
            ));
        }
        Ok(Verdict {
            passed: ended.status.success() && !ended.timed_out,
            output,
        })
    }
}

/// Copies the regular files and directories under `from` into `to`, keeping their modes.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&source, &dest)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_summed_up_by_its_last_verdict_line() {
        let verdict = |output: &str| Verdict {
            passed: false,
            output: output.to_owned(),
        };
        assert_eq!(
            verdict("Traceback\nfail: the suite fails\n  x\n").summary(),
            "fail: the suite fails"
        );
        assert_eq!(verdict("ok: done\n").summary(), "ok: done");
        assert_eq!(verdict("boom\n\n").summary(), "boom");
        assert_eq!(verdict("").summary(), "");
    }
}
