//! Secrets stay secret (issue 13 §6), end to end: what `env` prints through bash, and what an
//! MCP stdio child sees, with provider keys, the alert target's webhook URL and token, and the
//! HTTP server's own `--token-env` token in tackle's environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use harness::Project;
use serde_json::json;

fn env_through_bash(p: &Project, vars: &[(&str, &str)]) -> harness::Output {
    let mut cmd = p.tackle([
        "--allow",
        "tool.bash.cmd:*",
        "call",
        "bash",
        r#"{"command":"env"}"#,
    ]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.run()
}

/// The issue's list, and variables tackle's own configuration names as secrets, are not
/// printed by `env`, even when `env_pass` names the configured ones.
#[test]
fn env_in_bash_prints_no_secret() {
    let p = Project::new();
    p.user_config(
        "[alert.targets.oncall]\nurl_env = \"ONCALL_HOOK_ADDRESS\"\ntoken_env = \"ONCALL_BEARER\"\n\
         [providers.local]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"LOCAL_MODEL_PASS\"\n\
         [bash]\nenv_pass = [\"ONCALL_HOOK_ADDRESS\", \"ONCALL_BEARER\", \"PASSED_THROUGH_TOKEN\", \"LOCAL_MODEL_PASS\"]\n",
    );
    let secrets = [
        ("PGPASSWORD", "pg-secret-value"),
        ("SECRET_KEY", "django-secret-value"),
        ("MYSQL_PWD", "mysql-secret-value"),
        ("OPENAI_KEY", "openai-secret-value"),
        ("AWS_ACCESS_KEY", "aws-secret-value"),
        ("CI_JOB_JWT", "jwt-secret-value"),
        ("DOCKER_AUTH_CONFIG", "docker-secret-value"),
        ("ANTHROPIC_API_KEY", "anthropic-secret-value"),
        (
            "ONCALL_HOOK_ADDRESS",
            "https://hooks.example/secret-webhook-path",
        ),
        ("ONCALL_BEARER", "oncall-bearer-value"),
        ("LOCAL_MODEL_PASS", "local-model-key-value"),
    ];
    let mut vars = secrets.to_vec();
    vars.push(("PASSED_THROUGH_TOKEN", "passed-on-purpose"));
    vars.push(("PLAIN_SETTING", "plain-value"));
    let out = env_through_bash(&p, &vars);
    out.success()
        .stdout_contains("PLAIN_SETTING=plain-value")
        .stdout_contains("PASSED_THROUGH_TOKEN=passed-on-purpose");
    for (name, value) in secrets {
        if out.stdout.contains(value) {
            out.fail(&format!("{name} reached the command"));
        }
    }
    let v = p.tackle(["config", "--json"]).run().json();
    let withheld: Vec<&str> = v["bash"]["env_withheld"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(
        withheld,
        ["ONCALL_HOOK_ADDRESS", "ONCALL_BEARER", "LOCAL_MODEL_PASS"],
        "{v:#}"
    );
}

/// An MCP stdio child gets the filtered environment plus exactly its entry's `env`.
#[test]
fn an_mcp_child_sees_the_filtered_environment_plus_its_entry() {
    let p = Project::new();
    let marker = p.outside("child-env");
    p.write(
        ".agents/mcp.json",
        json!({"servers": {"probe": {
            "command": "sh",
            "args": ["-c", format!("env > {}", marker.display())],
            "env": {"LISTED": "listed-value", "GIVEN_TOKEN": "${PROBE_SOURCE_PAT}"},
        }}})
        .to_string(),
    );
    p.trust();
    p.tackle(["tools", "--json"])
        .env("OPENAI_API_KEY", "sk-child-must-not-see")
        .env("PGPASSWORD", "pg-child-must-not-see")
        .env("PROBE_SOURCE_PAT", "pat-for-this-server")
        .env("PLAIN_SETTING", "plain-value")
        .run()
        .success();
    let seen = std::fs::read_to_string(&marker).unwrap();
    for want in [
        "LISTED=listed-value",
        "GIVEN_TOKEN=pat-for-this-server",
        "PLAIN_SETTING=plain-value",
    ] {
        assert!(seen.lines().any(|l| l == want), "{want} missing:\n{seen}");
    }
    for secret in [
        "sk-child-must-not-see",
        "pg-child-must-not-see",
        "PROBE_SOURCE_PAT=",
    ] {
        assert!(
            !seen.contains(secret),
            "{secret} reached the child:\n{seen}"
        );
    }
}

/// A request to `tackle serve --http` with the bearer token; the response body as text.
fn post(addr: SocketAddr, token: &str, session: Option<&str>, body: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let session = session
        .map(|id| format!("mcp-session-id: {id}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {token}\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2025-06-18\r\n{session}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_owned(), body.to_owned())
}

/// The server's own token reaches neither a bash command nor an MCP child.
#[test]
fn the_serve_token_is_withheld_from_commands_and_mcp_children() {
    let p = Project::new();
    let marker = p.outside("child-env");
    p.write(
        ".agents/mcp.json",
        json!({"servers": {"probe": {
            "command": "sh", "args": ["-c", format!("env > {}", marker.display())],
        }}})
        .to_string(),
    );
    p.trust();
    let token = "serve-token-0123456789abcdefghijklmnopqrstuvwxyz";
    let mut child = p
        .tackle([
            "--allow",
            "tool.bash.cmd:*",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--token-env",
            "TACKLE_TEST_SERVE_BEARER",
        ])
        .env("TACKLE_TEST_SERVE_BEARER", token)
        .spawn();
    let addr: SocketAddr = child.http_address();
    // The catalog (and so the probe server) was built before the server listened.
    let seen = std::fs::read_to_string(&marker).unwrap();
    assert!(
        !seen.contains(token),
        "the token reached the MCP child:\n{seen}"
    );
    assert!(
        seen.contains("PATH="),
        "the child got an environment:\n{seen}"
    );

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "secrets-test", "version": "0"}}});
    let (head, body) = post(addr, token, None, &init.to_string());
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    let session = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_owned())
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(addr, token, session.as_deref(), &initialized.to_string());
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "env"}}});
    let (head, body) = post(addr, token, session.as_deref(), &call.to_string());
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert!(body.contains("PATH="), "bash ran env:\n{body}");
    assert!(
        !body.contains(token),
        "the token reached the command:\n{body}"
    );
}
