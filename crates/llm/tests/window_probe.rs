//! Asking local servers for a model's window: each server's recorded answers
//! (`tests/fixtures/window_probe/<server>.json`: every route's status, headers and body, where it
//! comes from, and the cases with the window each must yield) served by a loopback server that
//! answers by path, then hostile servers: one that is not there, one that never finishes an
//! answer, one whose answer never ends, one that answers garbage, one that redirects elsewhere.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Deserialize;
use support::routes::{KeyGate, Reply, Route, RoutedServer};
use support::{KEY_VALUE, key_env};
use tackle_llm::catalog::{ProviderKind, ProviderSpec};
use tackle_llm::window_probe::{LearnedWindow, ProbeErrorKind, ProbeLimits, ProbeTarget, probe};

#[derive(Deserialize)]
struct Fixture {
    server: String,
    fallback: Recorded,
    routes: Vec<RecordedRoute>,
    #[serde(default)]
    key_gate: Option<RecordedGate>,
    cases: Vec<Case>,
}

#[derive(Deserialize, Clone)]
struct Recorded {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
    source: String,
}

#[derive(Deserialize, Clone)]
struct RecordedRoute {
    method: String,
    path: String,
    #[serde(flatten)]
    answer: Recorded,
}

#[derive(Deserialize)]
struct RecordedGate {
    header: String,
    refusal: Recorded,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    /// The provider kind configured for the server.
    kind: String,
    /// What the configured base URL adds to the server's address (`/v1`).
    base_path: String,
    model: String,
    /// The provider has a key (its variable set).
    #[serde(default)]
    key: Option<String>,
    /// The server wants the key on every path.
    #[serde(default)]
    gated: bool,
    #[serde(default)]
    r#override: Vec<RecordedRoute>,
    #[serde(default)]
    want: Option<LearnedWindow>,
    #[serde(default)]
    want_error: Option<String>,
}

fn reply(r: &Recorded) -> Reply {
    assert!(!r.source.trim().is_empty(), "an answer without its source");
    Reply::Answer {
        status: r.status,
        headers: r.headers.clone().into_iter().collect(),
        body: r.body.clone().into_bytes(),
    }
}

fn spec(kind: ProviderKind, base_url: String, with_key: bool) -> ProviderSpec {
    ProviderSpec {
        name: "local".into(),
        kind,
        base_url: Some(base_url),
        api_key_env: with_key.then(|| key_env().env),
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    }
}

fn limits() -> ProbeLimits {
    ProbeLimits {
        timeout: Duration::from_millis(500),
        max_body: 1 << 20,
    }
}

#[tokio::test]
async fn every_recorded_server_yields_its_window() {
    let dir = support::fixture_path("window_probe");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut servers = Vec::new();
    let mut failures = Vec::new();
    for path in files {
        let fixture: Fixture = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        servers.push(fixture.server.clone());
        for case in &fixture.cases {
            let label = format!("{} / {}", fixture.server, case.name);
            let mut routes: Vec<Route> = fixture
                .routes
                .iter()
                .filter(|r| {
                    !case
                        .r#override
                        .iter()
                        .any(|o| o.method == r.method && o.path == r.path)
                })
                .chain(&case.r#override)
                .map(|r| Route::new(&r.method, &r.path, reply(&r.answer)))
                .collect();
            routes.sort_by(|a, b| a.path.cmp(&b.path));
            let gate = case.gated.then(|| {
                let g = fixture
                    .key_gate
                    .as_ref()
                    .expect("a gated case needs key_gate");
                KeyGate {
                    header: g.header.clone(),
                    // The recorded server's key is the test's own.
                    value: format!("Bearer {KEY_VALUE}"),
                    refusal: reply(&g.refusal),
                }
            });
            let server = RoutedServer::start_gated(routes, reply(&fixture.fallback), gate);
            let kind: ProviderKind = case.kind.parse().unwrap();
            let base = format!("{}{}", server.url(), case.base_path);
            let target = ProbeTarget::for_provider(&spec(kind, base, case.key.is_some()))
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            let got = probe(&target, &case.model, &limits()).await;
            match (&got, &case.want, &case.want_error) {
                (Ok(learned), Some(want), None) if learned == want => {}
                (Err(e), None, Some(kind)) if e.kind.as_str() == kind => {
                    assert!(e.message.contains(&target.shown()), "{label}: {e}");
                }
                _ => failures.push(format!(
                    "{label}: got {got:?}, wanted {:?} / {:?}",
                    case.want, case.want_error
                )),
            }
            for seen in server.requests() {
                let carried = seen.header("authorization") == Some(&*format!("Bearer {KEY_VALUE}"));
                if carried != case.key.is_some() {
                    failures.push(format!(
                        "{label}: {} {} carried the key: {carried}",
                        seen.method, seen.path
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    servers.sort();
    assert_eq!(servers, ["llama.cpp", "lm-studio", "ollama", "vllm"]);
}

fn target_at(url: String) -> ProbeTarget {
    ProbeTarget::for_provider(&spec(ProviderKind::OpenAiChat, format!("{url}/v1"), true)).unwrap()
}

#[tokio::test]
async fn nothing_listening_ends_the_probe_at_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = probe(
        &target_at(format!("http://127.0.0.1:{port}")),
        "m",
        &limits(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind, ProbeErrorKind::Unreachable, "{e}");
    assert!(e.message.contains("could not reach"), "{e}");
    assert!(e.message.contains("base_url"), "{e}");
}

#[tokio::test]
async fn an_answer_that_never_finishes_ends_the_probe_at_its_timeout() {
    let server = RoutedServer::start(vec![], Reply::Stall);
    let started = Instant::now();
    let e = probe(&target_at(server.url()), "m", &limits())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ProbeErrorKind::Unreachable, "{e}");
    assert!(
        e.message
            .contains("did not answer GET /props within 500 ms"),
        "{e}"
    );
    // One question's timeout, not one per question.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_answer_that_never_ends_is_read_only_to_the_limit() {
    let server = RoutedServer::start(
        vec![Route::new("GET", "/props", Reply::Endless)],
        Reply::json(404, r#"{"error":"not found"}"#),
    );
    let e = probe(&target_at(server.url()), "m", &limits())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ProbeErrorKind::NoKnownServer, "{e}");
    assert!(
        e.message
            .contains("GET /props answered 200 with over 1048576 bytes"),
        "{e}"
    );
    assert!(e.message.contains("[models.\"local:m\"]"), "{e}");
}

#[tokio::test]
async fn garbage_and_hostile_json_are_no_window() {
    let deep = format!("{}{}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
    let server = RoutedServer::start(
        vec![
            Route::new(
                "GET",
                "/props",
                Reply::Raw(b"\x00\x01garbage\r\n\r\n".to_vec()),
            ),
            Route::new("GET", "/v1/models", Reply::json(200, &deep)),
            Route::new(
                "GET",
                "/api/v0/models",
                Reply::json(200, r#"{"data":[{"id":"m","max_context_length":-1}]}"#),
            ),
            Route::new(
                "POST",
                "/api/show",
                Reply::json(
                    200,
                    r#"{"model_info":{"general.architecture":"x","x.context_length":1e300}}"#,
                ),
            ),
        ],
        Reply::json(404, "{}"),
    );
    let got = probe(&target_at(server.url()), "m", &limits()).await;
    // Ollama's shape without a plausible size: its default, marked as such.
    let learned = got.unwrap();
    assert_eq!(learned.window, 4096, "{learned:?}");
    assert_eq!(learned.sizes.len(), 1, "{learned:?}");
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let elsewhere = RoutedServer::start(
        vec![Route::new(
            "GET",
            "/props",
            Reply::json(200, r#"{"default_generation_settings":{"n_ctx":999}}"#),
        )],
        Reply::json(404, "{}"),
    );
    let redirect = Reply::Answer {
        status: 302,
        headers: vec![("location".into(), format!("{}/props", elsewhere.url()))],
        body: Vec::new(),
    };
    let server = RoutedServer::start(vec![], redirect);
    let e = probe(&target_at(server.url()), "m", &limits())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ProbeErrorKind::NoKnownServer, "{e}");
    assert!(e.message.contains("GET /props answered 302"), "{e}");
    assert!(elsewhere.requests().is_empty(), "a redirect was followed");
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization").is_some())
    );
}
