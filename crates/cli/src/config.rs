//! Project configuration (`.agents/config.toml`), validated before any work starts.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;
use tackle_runtime::{PreviewLimits, RuntimeConfig};

/// The validated configuration a command runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub root: PathBuf,
    pub runtime: RuntimeConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    tool_output: Option<ToolOutputSection>,
}

/// `[tool_output]`: per-stream preview limits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolOutputSection {
    /// Lines of each stream a model sees before the rest is left in the artifact.
    lines: Option<usize>,
    /// Bytes of each stream a model sees.
    bytes: Option<usize>,
}

pub fn load(root: &Path) -> anyhow::Result<Config> {
    let path = root.join(".agents").join("config.toml");
    let file: ProjectFile = match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ProjectFile::default(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut runtime = RuntimeConfig::default();
    if let Some(t) = file.tool_output {
        let PreviewLimits {
            max_lines,
            max_bytes,
        } = PreviewLimits::DEFAULT;
        let lines = t.lines.unwrap_or(max_lines);
        let bytes = t.bytes.unwrap_or(max_bytes);
        if lines == 0 || bytes == 0 {
            bail!(
                "{}: [tool_output] lines and bytes must be at least 1 (got lines = {lines}, bytes = \
                 {bytes})",
                path.display()
            );
        }
        runtime.preview = PreviewLimits {
            max_lines: lines,
            max_bytes: bytes,
        };
    }
    Ok(Config {
        root: root.to_path_buf(),
        runtime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> anyhow::Result<Config> {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".agents")).unwrap();
        std::fs::write(t.path().join(".agents/config.toml"), text).unwrap();
        load(t.path())
    }

    #[test]
    fn tool_output_limits_and_typos() {
        let c = with_config("[tool_output]\nlines = 10\nbytes = 99\n").unwrap();
        assert_eq!(
            c.runtime.preview,
            PreviewLimits {
                max_lines: 10,
                max_bytes: 99
            }
        );
        let e = with_config("[tool_ouput]\nlines = 10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tool_ouput") && e.contains("tool_output"), "{e}");
        let e = with_config("[tool_output]\nline = 10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`line`") && e.contains("lines"), "{e}");
        assert!(with_config("[tool_output]\nlines = 0\n").is_err());
        assert!(with_config("[tool_output]\nlines = \"ten\"\n").is_err());
    }
}
