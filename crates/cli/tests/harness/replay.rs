//! Scripted models for `tackle run`/`tackle chat` (`--model replay:<file>`): the script file,
//! the flag that names it, the `--json` lines a run prints, and the requests a recording
//! (`TACKLE_REPLAY_RECORD`) holds.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Project;

/// A replay script of `turns` (each `{"turn": …}` or `{"error": …}`), outside the root.
pub fn script(project: &Project, name: &str, turns: &[Value]) -> PathBuf {
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for t in turns {
        text.push_str(&t.to_string());
        text.push('\n');
    }
    project.write_outside(name, text)
}

/// The `--model` value that plays `file`.
pub fn model(file: &Path) -> String {
    format!("replay:{}", file.display())
}

/// `--json` output, one value a line.
pub fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// The requests a recording holds (a torn last line, from a kill, is left out).
pub fn recorded_requests(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| e.get("request").cloned())
        .collect()
}
