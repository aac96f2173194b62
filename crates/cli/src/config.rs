//! The validated configuration a command runs with: settings files and flags, layered, checked,
//! and turned into the runtime's types before any work starts.

use std::path::{Path, PathBuf};

use anyhow::bail;
use tackle_runtime::{PreviewLimits, RuntimeConfig};

use crate::settings::{Flags, LoadedFile, Settings, nearest};

/// The validated configuration a command runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub root: PathBuf,
    pub runtime: RuntimeConfig,
    /// The effective settings with the origin of every value (for `tackle config`).
    pub settings: Settings,
    /// The files that were read, lowest layer first.
    pub files: Vec<PathBuf>,
}

/// `$XDG_CONFIG_HOME/tackle/config.toml`, else `~/.config/tackle/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(x) if !x.is_empty() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("tackle").join("config.toml"))
}

pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(".agents").join("config.toml")
}

pub fn load(root: &Path, flags: &Flags) -> anyhow::Result<Config> {
    let PreviewLimits {
        max_lines,
        max_bytes,
    } = PreviewLimits::DEFAULT;
    let mut settings = Settings::defaults(max_lines, max_bytes);
    let mut files = Vec::new();
    for path in user_config_path()
        .into_iter()
        .chain([project_config_path(root)])
    {
        if let Some(file) = LoadedFile::load(&path)? {
            settings.apply_file(&file);
            files.push(path);
        }
    }
    settings.apply_flags(flags);
    for t in settings
        .disabled_tools
        .iter()
        .chain(&settings.enabled_tools)
    {
        if !tackle_tools::BUILTIN_TOOL_NAMES.contains(&t.value.as_str()) {
            let hint = match nearest(&t.value, tackle_tools::BUILTIN_TOOL_NAMES) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!(
                    "built-in tools are: {}",
                    tackle_tools::BUILTIN_TOOL_NAMES.join(", ")
                ),
            };
            bail!("unknown tool `{}` (from {}); {hint}", t.value, t.origin);
        }
    }
    let (lines, bytes) = (&settings.preview_lines, &settings.preview_bytes);
    if lines.value == 0 || bytes.value == 0 {
        bail!(
            "[tool_output] lines and bytes must be at least 1 (lines = {} from {}, bytes = {} from {})",
            lines.value,
            lines.origin,
            bytes.value,
            bytes.origin
        );
    }
    let runtime = RuntimeConfig {
        preview: PreviewLimits {
            max_lines: lines.value,
            max_bytes: bytes.value,
        },
        ..RuntimeConfig::default()
    };
    Ok(Config {
        root: root.to_path_buf(),
        runtime,
        settings,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> anyhow::Result<Config> {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".agents")).unwrap();
        std::fs::write(t.path().join(".agents/config.toml"), text).unwrap();
        load(t.path(), &Flags::default())
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

    #[test]
    fn misspelt_tool_names_fail_naming_the_nearest() {
        let e = with_config("[tools]\ndisable = [\"reed_file\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`reed_file`") && e.contains("`read_file`") && e.contains(":2"),
            "{e}"
        );
        let t = tempfile::tempdir().unwrap();
        let flags = Flags {
            enable_tools: vec!["bsh".into()],
            ..Flags::default()
        };
        let e = load(t.path(), &flags).unwrap_err().to_string();
        assert!(
            e.contains("`bsh`") && e.contains("`bash`") && e.contains("--enable-tools"),
            "{e}"
        );
        assert!(with_config("[tools]\ndisable = [\"grep\", \"stat\"]\n").is_ok());
    }
}
