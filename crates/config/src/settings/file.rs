//! One configuration file: its TOML shape, parsed strictly, with the line of every value.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tackle_fs::{OwnBytes, OwnFile, OwnFileError, Root};
use toml::Spanned;

use super::models_file::{ModelSection, ModelTables, ProviderTables};

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    File { path: PathBuf, line: usize },
    Flag { flag: &'static str },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Flag { flag } => f.write_str(flag),
        }
    }
}

/// A value and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Sourced<T> {
    pub fn new(value: T, origin: Origin) -> Self {
        Self { value, origin }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    pub permissions: Option<PermissionsSection>,
    pub path_scope: Option<PathScopeSection>,
    pub url_scope: Option<UrlScopeSection>,
    pub tools: Option<ToolsSection>,
    pub tool_output: Option<ToolOutputSection>,
    pub fetch: Option<FetchSection>,
    pub alert: Option<AlertSection>,
    pub safety: Option<SafetySection>,
    pub bash: Option<BashSection>,
    pub checkpoint: Option<CheckpointSection>,
    pub posture: Option<PostureSection>,
    pub watchdog: Option<WatchdogSection>,
    pub model: Option<ModelSection>,
    pub delegation: Option<DelegationSection>,
    pub messaging: Option<MessagingSection>,
    /// User config only (a project file with it is refused).
    pub providers: Option<ProviderTables>,
    /// User config only (a project file with it is refused).
    pub models: Option<ModelTables>,
    /// User config only (a project file with it is refused).
    pub store: Option<StoreSection>,
    /// User config only (a project file with it is refused).
    pub artifacts: Option<ArtifactsSection>,
}

/// `[store]`: where session logs are durable (user config only).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `files` (the default) or `postgres`.
    pub backend: Option<Spanned<String>>,
    /// The environment variable holding the database URL (default `TACKLE_DATABASE_URL`).
    pub database_url_env: Option<Spanned<String>>,
    /// Pooled database connections (default 8).
    pub pool_size: Option<Spanned<usize>>,
    /// How long a daemon's claim on a session lasts unless renewed (default 30 seconds).
    pub lease_seconds: Option<Spanned<f64>>,
}

/// `[artifacts]`: where tool output is durable (user config only).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactsSection {
    /// `files` (the default) or `s3`.
    pub backend: Option<Spanned<String>>,
    /// The S3 API's URL for a store other than AWS.
    pub endpoint: Option<Spanned<String>>,
    pub bucket: Option<Spanned<String>>,
    /// Default `us-east-1`.
    pub region: Option<Spanned<String>>,
    /// Keys start with it (default none).
    pub prefix: Option<Spanned<String>>,
}

/// `[fetch]`: how fetch_url reaches the network beyond the URL scope.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchSection {
    /// Exact hosts (`host` or `host:port`) allowed to resolve to loopback or private ranges.
    pub allow_private_hosts: Option<Vec<Spanned<String>>>,
}

/// `[alert]`: webhook targets the alert tool may post to, by name.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertSection {
    pub targets: Option<std::collections::BTreeMap<String, AlertTargetSection>>,
}

/// `[alert.targets.<name>]`: the environment variables holding the webhook URL and an optional
/// bearer token (secrets stay out of config files).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertTargetSection {
    pub url_env: Spanned<String>,
    pub token_env: Option<Spanned<String>>,
}

/// `[safety]`: gates that hold in every permission mode.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetySection {
    /// `enforce` (default), `warn` or `allow`.
    pub bash_search_gate: Option<Spanned<String>>,
}

/// `[bash]`: what commands inherit.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashSection {
    /// Environment variable name patterns withheld from commands, added to the built-in list.
    pub env_deny: Option<Vec<Spanned<String>>>,
    /// Exact variable names passed through even when a deny pattern matches.
    pub env_pass: Option<Vec<Spanned<String>>>,
    /// Keep a shell started ahead of the next command (default true).
    pub prestart: Option<Spanned<bool>>,
}

/// `[permissions]`
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    pub mode: Option<Spanned<String>>,
    /// `"off"` (default), `"advisory"` or `"required"`: record_plan, and the plan gate.
    pub plan_mode: Option<Spanned<String>>,
    pub allow: Option<Vec<Spanned<String>>>,
    pub ask: Option<Vec<Spanned<String>>>,
    pub deny: Option<Vec<Spanned<String>>>,
}

/// `[path_scope]`: root-relative patterns every file tool is confined to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathScopeSection {
    pub allow: Option<Vec<Spanned<String>>>,
    pub deny: Option<Vec<Spanned<String>>>,
}

/// `[url_scope]`: URL patterns fetch_url may reach (empty: fetch_url is not offered).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlScopeSection {
    pub allow: Option<Vec<Spanned<String>>>,
}

/// `[tools]`: tools removed from (or put back into) the catalog.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSection {
    /// `"auto"` (compact below a 16k-token window), `"full"` or `"compact"`: the tool
    /// descriptions (and system prompt) a model is sent; names and schemas are the same.
    pub descriptions: Option<Spanned<String>>,
    pub disable: Option<Vec<Spanned<String>>>,
    pub enable: Option<Vec<Spanned<String>>>,
    pub wait_and_verify: Option<WaitAndVerifySection>,
    pub sciontool_status: Option<SciontoolStatusSection>,
    pub call_peer: Option<CallPeerSection>,
}

/// `[tools.call_peer]`: the model may hand a prompt to a peer daemon the hub registers (only
/// under `tackle daemon` with a hub).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallPeerSection {
    pub enabled: Option<Spanned<bool>>,
    /// One deadline from the peer's session creation to the end of its turn, in seconds.
    pub deadline_seconds: Option<Spanned<f64>>,
    /// The most bytes of the peer's answer read; the rest is cut and the result says so.
    pub max_response_bytes: Option<Spanned<u64>>,
}

/// `[tools.sciontool_status]` (user config only: it names a program tackle runs).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SciontoolStatusSection {
    /// The program and the arguments before the event's two (default
    /// `["sciontool", "status"]`); the tool is offered only when the program is found.
    pub command: Option<Spanned<Vec<String>>>,
}

/// `[tools.wait_and_verify]`: the ceilings no wait may pass, and third-party tools the operator
/// vouches for as pollable.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitAndVerifySection {
    /// The longest wall clock one wait may ask for, in seconds.
    pub max_timeout_seconds: Option<Spanned<f64>>,
    /// The most polls one wait may ask for.
    pub max_attempts: Option<Spanned<u32>>,
    /// Tools (model-facing names, `mcp__<server>__<tool>`) that may be polled although they do
    /// not declare themselves read-only.
    pub poll_allow: Option<Vec<Spanned<String>>>,
}

/// `[checkpoint]`: who declares a task boundary.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointSection {
    /// `"model"` (default: the model may call mark_task_done) or `"operator"` (the tool is
    /// withheld; the user's `/done` still works).
    pub mode: Option<Spanned<String>>,
}

/// `[posture]`: how the agent's tools are held to their labels.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostureSection {
    /// `"standard"` (default: the configured catalog behind the gate) or `"sealed"` (seed 004's
    /// eleven tools; content nobody vouched for reaches the model only as references).
    pub mode: Option<Spanned<String>>,
}

/// `[watchdog]`: the loop's detectors of calls that change nothing.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchdogSection {
    /// `"off"`, `"warn"` or `"enforce"` (default).
    pub mode: Option<Spanned<String>>,
    /// Identical calls in a row reported to the model (default 3; 0 turns it off).
    pub repeat_limit: Option<Spanned<u32>>,
}

/// `[delegation]`: how far a tree of delegated children may grow.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegationSection {
    /// The deepest a child may be (default 2; 0 turns delegation off).
    pub max_depth: Option<Spanned<u32>>,
    /// The most children running at once in one tree (default 4, at least 1).
    pub max_running: Option<Spanned<u32>>,
}

/// `[messaging]`: what send_message accepts between the sessions of one tree.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagingSection {
    /// False: every send fails with `send_message:disabled` (default true).
    pub enabled: Option<Spanned<bool>>,
    /// The largest body in bytes (default 65536).
    pub max_body_bytes: Option<Spanned<usize>>,
    /// Messages accepted and not yet read, per recipient (default 32).
    pub max_pending_per_session: Option<Spanned<usize>>,
    /// The longest chain of messages each sent while handling the last (default 8; <= 0 off).
    pub max_hops: Option<Spanned<i64>>,
    /// Unread messages from one sender to one recipient (default 4; 0 off).
    pub max_inflight_per_pair: Option<Spanned<usize>>,
}

/// `[tool_output]`: per-stream preview limits, digests and the media size limit.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOutputSection {
    pub lines: Option<Spanned<usize>>,
    pub bytes: Option<Spanned<usize>>,
    /// Structural digests of large survey results (and `retrieve_raw`); default on.
    pub digests: Option<Spanned<bool>>,
    /// Largest media file read_file returns as an attachment.
    pub media_max_bytes: Option<Spanned<u64>>,
}

/// A parsed file and enough of its text to turn spans into line numbers.
pub struct LoadedFile {
    pub path: PathBuf,
    text: String,
    pub settings: SettingsFile,
}

impl LoadedFile {
    /// Read and parse the user's own file at `path` (links followed, but only a regular file of
    /// at most [`OwnFile::SETTINGS`]'s cap is read, without blocking); `Ok(None)` when it does not
    /// exist. Errors name the file, the line, and for a misspelt key the nearest valid one.
    pub fn load(path: &Path) -> crate::Result<Option<LoadedFile>> {
        let shown = path.display().to_string();
        Self::parse(path, OwnFile::SETTINGS.read_at(path), &shown)
    }

    /// Read and parse the project's file `rel` (`.agents/config.toml`) through the root handle:
    /// a link out of the project, a FIFO, a device or a file over the cap is an error naming it.
    /// `root_path` is the root as the caller names it, for the origins of values.
    pub fn load_in(root: &Root, root_path: &Path, rel: &str) -> crate::Result<Option<LoadedFile>> {
        Self::parse(
            &root_path.join(rel),
            OwnFile::SETTINGS.read_in(root, rel),
            rel,
        )
    }

    fn parse(
        path: &Path,
        read: Result<Option<OwnBytes>, OwnFileError>,
        shown: &str,
    ) -> crate::Result<Option<LoadedFile>> {
        let Some(bytes) = read.map_err(|e| crate::config_error!("{e}"))? else {
            return Ok(None);
        };
        let text = bytes
            .into_text(OwnFile::SETTINGS, shown)
            .map_err(|e| crate::config_error!("{e}"))?;
        let settings: SettingsFile = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| line_of(&text, s.start));
            let at = line.map(|l| format!(":{l}")).unwrap_or_default();
            crate::config_error!("{}{at}: {}", path.display(), explain(e.message()))
        })?;
        Ok(Some(LoadedFile {
            path: path.to_path_buf(),
            text,
            settings,
        }))
    }

    /// The same file with other settings (the part of a project file that applies while the
    /// folder is not trusted); origins still point into this file's text.
    pub fn with_settings(&self, settings: SettingsFile) -> LoadedFile {
        LoadedFile {
            path: self.path.clone(),
            text: self.text.clone(),
            settings,
        }
    }

    pub fn origin<T>(&self, spanned: &Spanned<T>) -> Origin {
        Origin::File {
            path: self.path.clone(),
            line: line_of(&self.text, spanned.span().start),
        }
    }

    pub fn sourced<T: Clone>(&self, spanned: &Spanned<T>) -> Sourced<T> {
        Sourced::new(spanned.get_ref().clone(), self.origin(spanned))
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Rewrite serde's "unknown field `x`, expected one of `a`, `b`" into a suggestion of the
/// nearest valid key.
fn explain(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.trim_end().to_owned();
    };
    let Some((typo, expected)) = rest.split_once('`') else {
        return message.trim_end().to_owned();
    };
    let valid: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    match nearest(typo, &valid) {
        Some(best) => format!(
            "unknown key `{typo}`; did you mean `{best}`? (valid: {})",
            valid.join(", ")
        ),
        None => format!("unknown key `{typo}` (valid: {})", valid.join(", ")),
    }
}

/// The candidate closest to `word`, if any is reasonably close.
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> crate::Result<Option<LoadedFile>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        LoadedFile::load(&path)
    }

    #[test]
    fn typos_name_the_nearest_key_and_the_line() {
        let cases = [
            (
                "[tool_ouput]\nlines = 3\n",
                "`tool_ouput`",
                "`tool_output`",
                ":1",
            ),
            (
                "[permissions]\nmode = \"ask\"\nalow = [\"read:**\"]\n",
                "`alow`",
                "`allow`",
                ":3",
            ),
            (
                "[path_scope]\ndeny = []\nallwo = []\n",
                "`allwo`",
                "`allow`",
                ":3",
            ),
            (
                "[tools]\ndisabel = [\"stat\"]\n",
                "`disabel`",
                "`disable`",
                ":2",
            ),
            (
                "[fetch]\nallow_private_host = []\n",
                "`allow_private_host`",
                "`allow_private_hosts`",
                ":2",
            ),
            (
                "[alert.targets.oncall]\nurl_env = \"X\"\ntoken_evn = \"Y\"\n",
                "`token_evn`",
                "`token_env`",
                ":3",
            ),
            ("[alert]\ntarget = {}\n", "`target`", "`targets`", ":2"),
            ("[fecth]\n", "`fecth`", "`fetch`", ":1"),
        ];
        for (text, typo, fix, line) in cases {
            let err = load(text).err().unwrap().to_string();
            assert!(
                err.contains(typo) && err.contains(fix) && err.contains(line),
                "{text:?}: {err}"
            );
        }
        let err = load("[tool_output]\nlines = \"ten\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(":2"), "{err}");
    }

    #[test]
    fn values_carry_their_line() {
        let f = load("[permissions]\n\nallow = [\n  \"read:**\",\n  \"write:src/**\",\n]\n")
            .unwrap()
            .unwrap();
        let allow = f
            .settings
            .permissions
            .as_ref()
            .unwrap()
            .allow
            .as_ref()
            .unwrap();
        let lines: Vec<usize> = allow
            .iter()
            .map(|s| match f.origin(s) {
                Origin::File { line, .. } => line,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(lines, vec![4, 5]);
    }

    #[test]
    fn missing_file_is_none() {
        assert!(
            LoadedFile::load(Path::new("/nonexistent/tackle/config.toml"))
                .unwrap()
                .is_none()
        );
    }
}
