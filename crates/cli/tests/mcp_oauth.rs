//! `tackle mcp login|logout` and OAuth on connect, end to end: a loopback authorization server
//! and the MCP server it protects (`fixtures/oauth_server.py`, in the MCP Python SDK venv), a
//! stand-in browser (`fixtures/oauth_browser.py`, started through `$BROWSER`) that follows the
//! authorization redirect to tackle's callback, and the real binary in between.
//!
//! The fixture logs every request it receives (with its Authorization header), so the tests
//! assert on what reached which URL; they wait on its "listening" line, never on a sleep.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
mod mcp_venv;
mod oauth_fixture;

use harness::{Output, Project};
use oauth_fixture::{
    AuthFixture, access_token, assert_secret_absent, fixture, mode, refresh_token, token_dir,
    token_file,
};
use serde_json::{Value, json};

const ALLOW: [&str; 2] = ["--allow", "tool.mcp.docs.*"];

/// `tackle mcp add --transport http docs <url>` in the user scope.
fn add(p: &Project, url: &str, extra: &[&str]) {
    p.tackle(["mcp", "add", "--transport", "http", "docs", url])
        .args(extra)
        .run()
        .success();
}

/// `tackle mcp login docs --json` with the stand-in browser.
fn login(p: &Project, env: &[(&str, &str)]) -> Output {
    let mut cmd = p.tackle(["mcp", "login", "docs", "--json", "--timeout", "30"]);
    cmd.env("BROWSER", fixture("oauth_browser.py"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.run()
}

fn call_echo(p: &Project, text: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = p.tackle(ALLOW);
    cmd.args([
        "call",
        "mcp__docs__echo",
        &json!({ "text": text }).to_string(),
        "--json",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.run()
}

#[test]
fn each_discovery_variant_logs_in_and_the_token_reaches_only_its_server() {
    // (variant, the metadata document that must have been read, metadata published?)
    let cases: &[(&str, Option<&str>, bool)] = &[
        (
            "header",
            Some("/.well-known/oauth-protected-resource/mcp"),
            true,
        ),
        (
            "path",
            Some("/.well-known/oauth-authorization-server/as"),
            true,
        ),
        ("root", Some("/.well-known/openid-configuration/as"), true),
        ("legacy", None, false),
    ];
    for (variant, document, discovered) in cases {
        let p = Project::new();
        let f = AuthFixture::start(&p, &["--variant", variant]);
        add(&p, &f.url, &[]);
        let before = p.tackle(["mcp", "list", "--json"]).run();
        before.success();
        assert_eq!(before.json()[0]["state"], "needs_login", "{variant}");
        assert!(
            before.json()[0]["hint"]
                .as_str()
                .unwrap()
                .contains("tackle mcp login docs"),
            "{variant}: {}",
            before.stdout
        );

        let out = login(&p, &[]);
        out.success();
        let report = out.json();
        assert_eq!(report["logged_in"], true, "{variant}");
        assert_eq!(report["registered"], true, "{variant}");
        assert_eq!(report["metadata_discovered"], *discovered, "{variant}");
        assert_eq!(report["scopes"], json!(["files:read"]), "{variant}");
        assert!(
            out.stderr.contains("/authorize?"),
            "{variant}: {}",
            out.stderr
        );
        if let Some(doc) = document {
            assert!(
                !f.requests_to(doc).is_empty(),
                "{variant}: {doc} was not read"
            );
        }
        // The authorization request and the code exchange both named the resource.
        let authorize: Vec<Value> = f
            .requests()
            .into_iter()
            .filter(|r| r["path"].as_str().unwrap().ends_with("/authorize"))
            .collect();
        assert_eq!(authorize.len(), 1, "{variant}");
        assert_eq!(authorize[0]["resource"], f.url.as_str(), "{variant}");

        let (path, record) = token_file(&p);
        assert_eq!(mode(&path), 0o600, "{variant}");
        assert_eq!(mode(&token_dir(&p)), 0o700, "{variant}");
        assert_eq!(record["url"], f.url.as_str(), "{variant}");
        let token = access_token(&record);

        let called = call_echo(&p, "through oauth", &[]);
        called.success();
        assert_eq!(called.text(), "through oauth", "{variant}");
        let bearers: Vec<Value> = f
            .requests_to("/mcp")
            .into_iter()
            .filter(|r| !r["authorization"].is_null())
            .collect();
        assert!(!bearers.is_empty(), "{variant}");
        assert!(
            bearers
                .iter()
                .all(|r| r["authorization"] == format!("Bearer {token}").as_str()),
            "{variant}: {bearers:?}"
        );
        let listed = p.tackle(["mcp", "list"]).run();
        listed.success().stdout_contains("connected (1 tool)");
        let got = p.tackle(["mcp", "get", "docs", "--json"]).run();
        got.success();
        assert_eq!(
            got.json()["login"]["scopes"],
            json!(["files:read"]),
            "{variant}"
        );
        let shown = p.tackle(["mcp", "get", "docs"]).run();
        shown
            .success()
            .stdout_contains("login: stored for this URL (client dyn-");
        let outputs = [&out, &called, &listed, &got, &shown];
        assert_secret_absent(&token, &outputs, &p);
        assert_secret_absent(&refresh_token(&record), &outputs, &p);
    }
}

#[test]
fn a_token_is_never_sent_to_another_url_under_the_same_name() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &[]);
    add(&p, &f.url, &[]);
    login(&p, &[]).success();
    // A trusted project names the server the user logged into, but points it elsewhere (the
    // same origin, even): its entry replaces the user's, and gets no token.
    p.write(
        ".agents/mcp.json",
        json!({ "servers": { "docs": { "url": f.other_url() } } }).to_string(),
    );
    p.trust();
    let listed = p.tackle(["mcp", "list", "--json"]).run();
    listed.success();
    let project_row = listed
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scope"] == "project")
        .cloned()
        .unwrap();
    assert_eq!(project_row["state"], "needs_login", "{}", listed.stdout);
    // The catalog starts it too (and leaves its tools out: it needs a login of its own).
    let called = call_echo(&p, "x", &[]);
    assert_ne!(called.code, Some(0), "{called:?}");
    called.stderr_contains("run `tackle mcp login docs`");
    let other = f.requests_to("/other/mcp");
    assert!(!other.is_empty(), "the project's server was never asked");
    assert!(
        other.iter().all(|r| r["authorization"].is_null()),
        "a token went to another URL: {other:?}"
    );
}

#[test]
fn an_expired_token_is_refreshed_and_saved_back() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &["--first-token-expired"]);
    add(&p, &f.url, &[]);
    login(&p, &[]).success();
    let (_, first) = token_file(&p);
    let called = call_echo(&p, "after refresh", &[]);
    called.success();
    assert_eq!(called.text(), "after refresh");
    let refreshes: Vec<Value> = f
        .requests()
        .into_iter()
        .filter(|r| r["grant_type"] == "refresh_token")
        .collect();
    assert_eq!(refreshes.len(), 1, "{refreshes:?}");
    assert_eq!(refreshes[0]["resource"], f.url.as_str());
    let (path, second) = token_file(&p);
    assert_ne!(access_token(&first), access_token(&second));
    assert_ne!(refresh_token(&first), refresh_token(&second));
    assert_eq!(mode(&path), 0o600);
    // The expired token was never offered to the server.
    let stale = format!("Bearer {}", access_token(&first));
    assert!(
        f.requests_to("/mcp")
            .iter()
            .all(|r| r["authorization"] != stale.as_str())
    );
    // And the fresh one is used without another refresh.
    call_echo(&p, "again", &[]).success();
    let refreshed_again = f
        .requests()
        .iter()
        .filter(|r| r["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshed_again, 1);
}

#[test]
fn a_revoked_token_is_refreshed_once_then_the_server_needs_login() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &[]);
    add(&p, &f.url, &[]);
    login(&p, &[]).success();
    f.revoke_all();
    let called = call_echo(&p, "x", &[]);
    assert_ne!(called.code, Some(0), "{called:?}");
    let shown = format!("{}{}", called.stdout, called.stderr);
    assert!(shown.contains("tackle mcp login docs"), "{shown}");
    let refreshes = f
        .requests()
        .iter()
        .filter(|r| r["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 1, "one refresh attempt, no more");
    let listed = p.tackle(["mcp", "list"]).run();
    listed.success().stdout_contains(
        "needs login: the server asks for authorization; run `tackle mcp login docs`",
    );
    // Never a browser flow from a call or a listing: only the login ever reached /authorize.
    let authorizations = f
        .requests()
        .iter()
        .filter(|r| r["path"] == "/authorize")
        .count();
    assert_eq!(authorizations, 1);
    // Logging in again mends it.
    login(&p, &[]).success();
    call_echo(&p, "mended", &[]).success();
}

#[test]
fn a_server_asking_for_more_scope_is_granted_it_by_the_next_login() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &["--step-up", "files:write"]);
    add(&p, &f.url, &[]);
    login(&p, &[]).success();
    let called = call_echo(&p, "x", &[]);
    assert_ne!(called.code, Some(0), "{called:?}");
    let shown = format!("{}{}", called.stdout, called.stderr);
    assert!(
        shown.contains("asks for scope `files:read files:write`")
            && shown.contains("run `tackle mcp login docs`"),
        "{shown}"
    );
    let again = login(&p, &[]);
    again.success();
    assert_eq!(again.json()["scopes"], json!(["files:read", "files:write"]));
    let asked: Vec<Value> = f
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/authorize")
        .map(|r| r["scope"].clone())
        .collect();
    assert_eq!(
        asked,
        [json!("files:read"), json!("files:read files:write")]
    );
    let called = call_echo(&p, "written", &[]);
    called.success();
    assert_eq!(called.text(), "written");
}

#[test]
fn logout_deletes_the_tokens_and_says_whether_there_were_any() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &[]);
    add(&p, &f.url, &[]);
    login(&p, &[]).success();
    p.tackle(["mcp", "logout", "docs"])
        .run()
        .success()
        .stdout_contains("logged out of MCP server `docs`: removed 1 stored login(s)");
    assert_eq!(std::fs::read_dir(token_dir(&p)).unwrap().count(), 0);
    p.tackle(["mcp", "get", "docs"])
        .run()
        .success()
        .stdout_contains("login: none stored");
    let again = p.tackle(["mcp", "logout", "docs", "--json"]).run();
    again.success();
    assert_eq!(again.json(), json!({"server": "docs", "removed": 0}));
    let called = call_echo(&p, "x", &[]);
    assert!(
        format!("{}{}", called.stdout, called.stderr).contains("tackle mcp login docs"),
        "{called:?}"
    );
}

#[test]
fn a_callback_with_a_forged_state_is_refused_and_nothing_is_stored() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &[]);
    add(&p, &f.url, &[]);
    let out = login(&p, &[("OAUTH_BROWSER_FORGE_STATE", "1")]);
    assert_ne!(out.code, Some(0), "{out:?}");
    out.stderr_contains("a state that does not belong to this login");
    assert!(
        f.requests().iter().all(|r| r["grant_type"].is_null()),
        "the code was exchanged"
    );
    assert!(
        std::fs::read_dir(token_dir(&p)).map_or(true, |mut d| d.next().is_none()),
        "a token file was written"
    );
}

#[test]
fn a_preregistered_client_authenticates_with_the_secret_from_its_variable() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &["--preregistered", "--first-token-expired"]);
    add(
        &p,
        &f.url,
        &[
            "--client-id",
            "tackle-test",
            "--client-secret-env",
            "DOCS_SECRET",
        ],
    );
    let secret = [("DOCS_SECRET", "s3cret")];
    let out = login(&p, &secret);
    out.success();
    assert_eq!(out.json()["registered"], false);
    assert_eq!(out.json()["client_id"], "tackle-test");
    // The refresh (the first token is expired) authenticates too, with the variable's value.
    call_echo(&p, "confidential", &secret).success();
    let tokens: Vec<Value> = f
        .requests()
        .into_iter()
        .filter(|r| !r["grant_type"].is_null())
        .collect();
    assert_eq!(tokens.len(), 2, "{tokens:?}");
    assert!(
        tokens.iter().all(|r| r["client_authenticated"] == true),
        "{tokens:?}"
    );
    assert!(f.requests().iter().all(|r| r["path"] != "/register"));
    let (_, record) = token_file(&p);
    assert!(
        !record.to_string().contains("s3cret"),
        "the secret was copied into the token file"
    );
    let shown = p.tackle(["mcp", "get", "docs"]).run();
    shown
        .success()
        .stdout_contains("oauth client_id: tackle-test")
        .stdout_contains("oauth client secret: from $DOCS_SECRET");
    assert!(!shown.stdout.contains("s3cret"));
}

#[test]
fn a_client_metadata_document_is_the_client_id_where_the_server_takes_one() {
    let document = "https://tackle.example/oauth/client.json";
    // (fixture flags, how the client is chosen)
    let cases: &[(&[&str], &str)] = &[
        (&["--cimd"], "metadata_document"),
        // An authorization server that takes no such documents: dynamic registration.
        (&[], "registered"),
    ];
    for (flags, source) in cases {
        let p = Project::new();
        let f = AuthFixture::start(&p, flags);
        add(&p, &f.url, &["--client-metadata-url", document]);
        let out = login(&p, &[]);
        out.success();
        assert_eq!(out.json()["client_source"], *source, "{flags:?}");
        let registrations = f
            .requests()
            .iter()
            .filter(|r| r["path"] == "/register")
            .count();
        let authorize = f.requests_to("/authorize");
        if *source == "metadata_document" {
            assert_eq!(registrations, 0, "{flags:?}");
            assert_eq!(authorize[0]["client_id"], document, "{flags:?}");
        } else {
            assert_eq!(registrations, 1, "{flags:?}");
        }
        call_echo(&p, "ok", &[]).success();
    }
}

#[test]
fn logins_that_cannot_start_are_refused_naming_the_fix() {
    // (mcp.json of the user scope, the project's mcp.json, what the refusal says)
    let cases: &[(Value, Option<Value>, &str)] = &[
        (
            json!({"servers": {"docs": {"command": "x"}}}),
            None,
            "is a stdio server",
        ),
        (
            json!({"servers": {"docs": {"url": "http://docs.example/mcp"}}}),
            None,
            "plain http to a non-loopback host",
        ),
        (
            json!({"servers": {"docs": {"url": "https://docs.example/mcp", "headers_env": {"Authorization": "T"}}}}),
            None,
            "sends its own Authorization header",
        ),
        (json!({"servers": {}}), None, "no MCP server named `docs`"),
        (
            json!({"servers": {}}),
            Some(json!({"servers": {"docs": {"url": "https://docs.example/mcp"}}})),
            "run `tackle trust` first",
        ),
    ];
    for (user, project, want) in cases {
        let p = Project::new();
        std::fs::create_dir_all(p.xdg().join("tackle")).unwrap();
        std::fs::write(p.xdg().join("tackle/mcp.json"), user.to_string()).unwrap();
        if let Some(project) = project {
            p.write(".agents/mcp.json", project.to_string());
        }
        let out = p.tackle(["mcp", "login", "docs", "--no-browser"]).run();
        assert_ne!(out.code, Some(0), "{want}: {out:?}");
        assert!(out.stderr.contains(want), "{want}: {}", out.stderr);
        assert!(!token_dir(&p).exists(), "{want}");
    }
}

#[test]
fn a_login_nobody_completes_times_out() {
    let p = Project::new();
    let f = AuthFixture::start(&p, &[]);
    add(&p, &f.url, &[]);
    let out = p
        .tackle(["mcp", "login", "docs", "--timeout", "1", "--no-browser"])
        .run();
    assert_ne!(out.code, Some(0), "{out:?}");
    out.stderr_contains("no authorization arrived within 1 s");
    out.stderr_contains("/authorize?");
}
