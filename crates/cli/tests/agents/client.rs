//! How each agent is run offline against the mock model with `tackle serve` as its MCP server:
//! its configuration files, flags and environment, all under a temporary home beside the
//! project (never the developer's own), with telemetry, update checks and every other network
//! path off. `HTTP(S)_PROXY` points at a closed loopback port (and `NO_PROXY` exempts loopback),
//! so a request meant for the network fails instead of leaving the machine.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)] // test helper: a failure should panic loudly

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::{Output, Project, TestCommand};
use crate::installed::Installed;
use crate::mock_model::{MockModel, WireFormat};

/// Who answers for a call tackle's gate asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    /// `tackle serve`'s default: tackle asks through MCP elicitation where the client can.
    Elicit,
    /// `tackle serve --approvals client`: the client's own confirmation stands, and its
    /// settings confirm tackle's `read_file` and `edit_file`.
    Client,
    /// As [`Approvals::Client`], but the client's settings confirm only `read_file`: its own
    /// flow refuses the edit before tackle sees it.
    ClientRefusesEdits,
}

impl Approvals {
    fn client_confirms(self) -> bool {
        self != Self::Elicit
    }
}

/// The four agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeCode,
    Codex,
    GeminiCli,
    Opencode,
}

/// A client's run is bounded: a hang fails with the client's output instead of stalling the
/// suite. opencode takes about 20 s on a loaded two-core machine, the others a few seconds.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(240);

/// The task given to every client; the mock model ignores it.
const TASK: &str = "Use the tackle tools as instructed.";

impl Client {
    pub fn wire_format(self) -> WireFormat {
        match self {
            Self::ClaudeCode => WireFormat::AnthropicMessages,
            Self::Codex => WireFormat::OpenAiResponses,
            Self::GeminiCli => WireFormat::GeminiGenerateContent,
            Self::Opencode => WireFormat::ChatCompletions,
        }
    }

    /// Runs the client once in `project` against `model`, to completion. Its home, XDG dirs and
    /// config files live in `<temp>/agent-home`, outside the project root.
    ///
    /// `approvals` chooses who answers for a call tackle's gate asks about: with
    /// [`Approvals::Client`] tackle runs `serve --approvals client` and the client is set up to
    /// confirm tackle's calls itself (its own approval flow, answered ahead by its settings).
    pub fn run(
        self,
        agents: &Installed,
        project: &Project,
        model: &MockModel,
        approvals: Approvals,
    ) -> Output {
        let home = project.outside("agent-home");
        for dir in ["config", "data", "cache", "state", "tmp"] {
            std::fs::create_dir_all(home.join(".xdg").join(dir)).unwrap();
        }
        let tackle = PathBuf::from(env!("CARGO_BIN_EXE_tackle"));
        let root = project.path().to_str().unwrap().to_owned();
        let mut serve_args = vec!["--root", root.as_str(), "serve"];
        if approvals.client_confirms() {
            serve_args.extend(["--approvals", "client"]);
        }
        let program = agents.bin(match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini",
            Self::Opencode => "opencode",
        });
        let mut cmd = TestCommand::external(&program, project.path());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".xdg/config"))
            .env("XDG_DATA_HOME", home.join(".xdg/data"))
            .env("XDG_CACHE_HOME", home.join(".xdg/cache"))
            .env("XDG_STATE_HOME", home.join(".xdg/state"))
            .env("TMPDIR", home.join(".xdg/tmp"))
            .env("LANG", "C.UTF-8")
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .env("HTTPS_PROXY", "http://127.0.0.1:9")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env("npm_config_offline", "true")
            .timeout(CLIENT_TIMEOUT);
        match self {
            Self::ClaudeCode => claude_code(&mut cmd, &home, &tackle, &serve_args, model),
            Self::Codex => codex(&mut cmd, &home, &tackle, &serve_args, model),
            Self::GeminiCli => gemini_cli(&mut cmd, &home, &tackle, &serve_args, model, approvals),
            Self::Opencode => opencode(&mut cmd, &home, &tackle, &serve_args, model, approvals),
        }
        cmd.run()
    }
}

fn write_json(path: &Path, value: &serde_json::Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// Claude Code: `ANTHROPIC_BASE_URL` to the mock, tackle from `--mcp-config` only, the tackle
/// tools the script calls allowed up front. An `Elicitation` hook answers tackle's approval
/// form with `once`, standing in for the person at the prompt (`-p` has none, and without the
/// hook dismisses every form); it keeps what it was shown in `<home>/elicitation.json`.
fn claude_code(
    cmd: &mut TestCommand,
    home: &Path,
    tackle: &Path,
    serve_args: &[&str],
    model: &MockModel,
) {
    let mcp = home.join("mcp.json");
    write_json(
        &mcp,
        &serde_json::json!({"mcpServers": {"tackle": {"command": tackle, "args": serve_args}}}),
    );
    let hook = home.join("elicitation-hook.sh");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat > '{}'\nprintf '%s' '{}'\n",
            home.join("elicitation.json").display(),
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "Elicitation",
                "action": "accept", "content": {"decision": "once"}}})
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = home.join("claude-settings.json");
    write_json(
        &settings,
        &serde_json::json!({"hooks": {"Elicitation": [{"matcher": "tackle",
            "hooks": [{"type": "command", "command": hook}]}]}}),
    );
    cmd.env("ANTHROPIC_BASE_URL", model.url())
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        // Otherwise MCP tools hide behind a tool-search tool and are not offered directly.
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("MCP_CONNECTION_NONBLOCKING", "0")
        .env("CLAUDE_CODE_MAX_RETRIES", "1")
        .env("CLAUDE_CODE_TMPDIR", home.join(".xdg/tmp"))
        .arg("-p")
        .arg(TASK)
        .arg("--settings")
        .arg(&settings)
        .arg("--mcp-config")
        .arg(&mcp)
        .args(["--strict-mcp-config", "--allowedTools"])
        .arg("mcp__tackle__read_file,mcp__tackle__edit_file")
        .args([
            "--permission-mode",
            "dontAsk",
            "--no-session-persistence",
            "--output-format",
            "json",
        ]);
}

/// Codex: a `responses` provider at the mock, tackle as `mcp_servers.tackle`. Codex runs its
/// own approval check before an MCP call: `default_tools_approval_mode = "approve"` lets
/// tackle's tools through it, so tackle's gate is the one that asks.
fn codex(
    cmd: &mut TestCommand,
    home: &Path,
    tackle: &Path,
    serve_args: &[&str],
    model: &MockModel,
) {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let toml_str = |s: &str| serde_json::Value::from(s).to_string();
    let args: Vec<String> = serve_args.iter().map(|a| toml_str(a)).collect();
    cmd.env("CODEX_HOME", &codex_home)
        .env("MOCK_KEY", "dummy")
        .args([
            "exec",
            "--skip-git-repo-check",
            "--ephemeral",
            "--json",
            "-m",
            "mock-model",
            "-c",
            "model_provider=mock",
            "-c",
        ])
        .arg(format!(
            "model_providers.mock={{name=\"mock\",base_url={},env_key=\"MOCK_KEY\",wire_api=\"responses\"}}",
            toml_str(&format!("{}/v1", model.url()))
        ))
        .arg("-c")
        .arg(format!(
            "mcp_servers.tackle.command={}",
            toml_str(tackle.to_str().unwrap())
        ))
        .arg("-c")
        .arg(format!("mcp_servers.tackle.args=[{}]", args.join(",")))
        .args([
            "-c",
            "mcp_servers.tackle.default_tools_approval_mode=\"approve\"",
            "-c",
            "approval_policy=never",
            "-c",
            "check_for_update_on_startup=false",
            "-c",
            "analytics.enabled=false",
            "-s",
            "read-only",
            TASK,
        ]);
}

/// Gemini CLI: `GOOGLE_GEMINI_BASE_URL` to the mock, tackle in `~/.gemini/settings.json`,
/// usage statistics and updates off. With tackle's elicitation the server is trusted, so Gemini
/// CLI does not ask before each call. With [`Approvals::Client`] it is not: Gemini CLI's policy
/// engine decides each call, and in `-p` mode (nobody to prompt, so `ask_user` is a deny) the
/// user's policy file answers ahead: tackle's `read_file` and `edit_file` are allowed.
fn gemini_cli(
    cmd: &mut TestCommand,
    home: &Path,
    tackle: &Path,
    serve_args: &[&str],
    model: &MockModel,
    approvals: Approvals,
) {
    std::fs::create_dir_all(home.join(".gemini/policies")).unwrap();
    let trusted = !approvals.client_confirms();
    let allowed: &[&str] = match approvals {
        Approvals::Elicit => &[],
        Approvals::Client => &["read_file", "edit_file"],
        Approvals::ClientRefusesEdits => &["read_file"],
    };
    let rules: Vec<String> = allowed
        .iter()
        .map(|tool| {
            format!(
                "[[rule]]\nmcpName = \"tackle\"\ntoolName = \"{tool}\"\ndecision = \"allow\"\npriority = 100\n"
            )
        })
        .collect();
    std::fs::write(home.join(".gemini/policies/tackle.toml"), rules.join("\n")).unwrap();
    write_json(
        &home.join(".gemini/settings.json"),
        &serde_json::json!({
            "mcpServers": {"tackle": {"command": tackle, "args": serve_args, "trust": trusted}},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "telemetry": {"enabled": false},
        }),
    );
    cmd.env("GEMINI_API_KEY", "dummy")
        .env("GOOGLE_GEMINI_BASE_URL", model.url())
        .args(["-m", "gemini-2.5-flash", "--skip-trust", "-p", TASK]);
}

/// opencode: an `@ai-sdk/openai-compatible` provider at the mock, tackle as a local MCP
/// server, from `OPENCODE_CONFIG`; the model list, updates, sharing, LSP downloads and default
/// plugins off. Its background `npm install` of its config dir fails against the closed
/// registry port, which it tolerates. With [`Approvals::Client`] opencode's `permission`
/// rules decide tackle's calls: every tool asks, and the user's rules allow tackle's
/// `read_file` and `edit_file`.
fn opencode(
    cmd: &mut TestCommand,
    home: &Path,
    tackle: &Path,
    serve_args: &[&str],
    model: &MockModel,
    approvals: Approvals,
) {
    let permission = match approvals {
        Approvals::Elicit => serde_json::json!({}),
        Approvals::Client => serde_json::json!({
            "*": "ask",
            "tackle_read_file": "allow",
            "tackle_edit_file": "allow",
        }),
        Approvals::ClientRefusesEdits => serde_json::json!({
            "*": "ask",
            "tackle_read_file": "allow",
        }),
    };
    let config = home.join("opencode.json");
    let mut command = vec![serde_json::json!(tackle)];
    command.extend(serve_args.iter().map(|a| serde_json::json!(a)));
    write_json(
        &config,
        &serde_json::json!({
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "mock",
                "options": {"baseURL": format!("{}/v1", model.url()), "apiKey": "dummy"},
                "models": {"mock-model": {"name": "mock-model"}},
            }},
            "mcp": {"tackle": {"type": "local", "command": command, "enabled": true}},
            "share": "disabled",
            "autoupdate": false,
            "permission": permission,
        }),
    );
    cmd.env("OPENCODE_CONFIG", &config)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "true")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "true")
        .env("OPENCODE_DISABLE_SHARE", "true")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "true")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "true")
        .env("OPENCODE_PURE", "1")
        .args(["run", "-m", "mock/mock-model", TASK]);
}
