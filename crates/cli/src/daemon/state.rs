//! A daemon's state directory (`--state-dir`, default `$XDG_STATE_HOME/tackle/daemon`, else
//! `~/.local/state/tackle/daemon`), private to the user (0700, files 0600):
//!
//! - `daemon.lock`, held for the daemon's life: one daemon per directory.
//! - `daemon.json`: the running daemon's pid, address, epoch and start time, for `tackle daemon
//!   status|stop` and for clients that are not told the address (no token is ever written).
//! - `token`: the bearer token the daemon drew at start when no `--token-env` names one, so
//!   only this user's clients (`tackle attach`, `daemon status|stop`) can reach it: a port on
//!   loopback is open to every local user.
//! - `sessions.json`: every session the daemon hosts (id and project root), rewritten whole
//!   (write, then rename) whenever one is added, so a restarted daemon resumes them all.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};

/// The running daemon, as `daemon.json` says.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Running {
    pub pid: u32,
    /// `http://ADDR`.
    pub url: String,
    pub epoch: String,
    pub started_at: String,
    /// The environment variable the daemon's token is in, when it has one (never the token).
    pub token_env: Option<String>,
}

/// One hosted session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostedSession {
    pub id: String,
    pub root: PathBuf,
}

#[derive(Default, Serialize, Deserialize)]
struct SessionsFile {
    sessions: Vec<HostedSession>,
}

/// The directory, locked for this daemon.
pub struct StateDir {
    dir: PathBuf,
    /// Held for the daemon's life.
    _lock: File,
    /// Serializes rewrites of `sessions.json`.
    writing: Mutex<()>,
}

/// The default state directory.
pub fn default_dir() -> anyhow::Result<PathBuf> {
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(state).join("tackle/daemon"));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .ok_or_else(|| anyhow!("neither XDG_STATE_HOME nor HOME is set; pass --state-dir"))?;
    Ok(PathBuf::from(home).join(".local/state/tackle/daemon"))
}

impl StateDir {
    /// Makes `dir` (0700) and takes its lock; an error names the daemon already there.
    pub fn take(dir: &Path) -> anyhow::Result<StateDir> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("making the state directory {}", dir.display()))?;
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(dir.join("daemon.lock"))
            .with_context(|| format!("opening {}", dir.join("daemon.lock").display()))?;
        if lock.try_lock().is_err() {
            let running = read_running(dir)
                .map(|r| format!(" (pid {}, {})", r.pid, r.url))
                .unwrap_or_default();
            return Err(anyhow!(
                "another daemon uses the state directory {}{running}; stop it with `tackle daemon stop`, or pass another --state-dir",
                dir.display()
            ));
        }
        Ok(StateDir {
            dir: dir.to_path_buf(),
            _lock: lock,
            writing: Mutex::new(()),
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn write_running(&self, running: &Running) -> anyhow::Result<()> {
        write_atomically(
            &self.dir.join("daemon.json"),
            &serde_json::to_vec_pretty(running)?,
        )
    }

    /// Writes the token clients of this directory read.
    pub fn write_token(&self, token: &str) -> anyhow::Result<()> {
        write_atomically(&self.dir.join("token"), token.as_bytes())
    }

    /// Takes `daemon.json` away (the daemon is stopping).
    pub fn clear_running(&self) {
        let _ = std::fs::remove_file(self.dir.join("daemon.json"));
    }

    /// The sessions a daemon hosted here, oldest first.
    pub fn hosted(&self) -> anyhow::Result<Vec<HostedSession>> {
        let path = self.dir.join("sessions.json");
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice::<SessionsFile>(&bytes)
                .with_context(|| format!("reading {}", path.display()))?
                .sessions),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Adds `session` to `sessions.json` (once).
    pub fn add_hosted(&self, session: HostedSession) -> anyhow::Result<()> {
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = SessionsFile {
            sessions: self.hosted()?,
        };
        if file.sessions.contains(&session) {
            return Ok(());
        }
        file.sessions.push(session);
        write_atomically(
            &self.dir.join("sessions.json"),
            &serde_json::to_vec_pretty(&file)?,
        )
    }

    /// Takes session `id` out of `sessions.json` (it was closed).
    pub fn remove_hosted(&self, id: &str) -> anyhow::Result<()> {
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let mut file = SessionsFile {
            sessions: self.hosted()?,
        };
        file.sessions.retain(|s| s.id != id);
        write_atomically(
            &self.dir.join("sessions.json"),
            &serde_json::to_vec_pretty(&file)?,
        )
    }

    /// Keeps only `sessions` in `sessions.json` (those a restart could not resume are dropped).
    pub fn keep_hosted(&self, sessions: &[HostedSession]) -> anyhow::Result<()> {
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let file = SessionsFile {
            sessions: sessions.to_vec(),
        };
        write_atomically(
            &self.dir.join("sessions.json"),
            &serde_json::to_vec_pretty(&file)?,
        )
    }
}

/// The token the daemon of `dir` drew, if it drew one.
pub fn read_token(dir: &Path) -> Option<String> {
    let token = std::fs::read_to_string(dir.join("token")).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

/// The running daemon `daemon.json` in `dir` names, if any.
pub fn read_running(dir: &Path) -> Option<Running> {
    serde_json::from_slice(&std::fs::read(dir.join("daemon.json")).ok()?).ok()
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let temp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&temp)
        .with_context(|| format!("writing {}", temp.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_daemon_per_directory_and_its_sessions_survive_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::take(dir.path()).unwrap();
        let second = StateDir::take(dir.path()).err().unwrap().to_string();
        assert!(second.contains("another daemon"), "{second}");
        let one = HostedSession {
            id: "s1".into(),
            root: "/p".into(),
        };
        state.add_hosted(one.clone()).unwrap();
        state.add_hosted(one.clone()).unwrap();
        drop(state);
        let again = StateDir::take(dir.path()).unwrap();
        assert_eq!(again.hosted().unwrap(), vec![one]);
    }
}
