//! `fetch_url` through the runtime against loopback servers the tests start: content types,
//! the 16 MiB cap, timeouts, redirect chains with per-hop checks, error statuses, DNS rebinding
//! with a stub resolver, names that resolve to blocked ranges, and a corpus of encoded-address
//! forms that must all be refused. No test resolves a real name or leaves the machine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod loopback;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use loopback::{RecordingDialer, Reply, Server, StubResolver, redirect, reply};
use serde_json::json;
use tackle_gate::Pattern;
use tackle_net::{Dialer, DirectDialer, PrivateHost, Resolver};
use tackle_protocol::{ToolResult, Trust};
use tackle_tools::FetchUrl;
use tackle_tools::fetch_url::{BODY_CAP, FetchSettings};

/// A harness with one `fetch_url` built from these settings.
struct Fetch {
    scope: Vec<String>,
    private: Vec<String>,
    resolver: Arc<dyn Resolver>,
    dialer: Arc<dyn Dialer>,
    timeout: Duration,
}

impl Fetch {
    /// Scope: everything on `server`; `server`'s exact host:port may be loopback.
    fn on(server: &Server) -> Fetch {
        Fetch {
            scope: vec![format!("http://127.0.0.1:{}/*", server.port())],
            private: vec![format!("127.0.0.1:{}", server.port())],
            resolver: StubResolver::new(&[]),
            dialer: Arc::new(DirectDialer),
            timeout: Duration::from_secs(30),
        }
    }

    fn harness(self) -> Harness {
        let scope: Vec<Pattern> = self
            .scope
            .iter()
            .map(|p| Pattern::parse(p).unwrap())
            .collect();
        let settings = FetchSettings {
            allow_private_hosts: self
                .private
                .iter()
                .map(|h| PrivateHost::parse(h).unwrap())
                .collect(),
            timeout: self.timeout,
            resolver: self.resolver,
            dialer: self.dialer,
        };
        Harness::new(
            vec![Arc::new(FetchUrl::new(&scope, settings))],
            WIDE,
            LONG_TIMEOUT,
        )
    }
}

async fn fetch(h: &Harness, url: &str) -> ToolResult {
    fetch_args(h, json!({ "url": url })).await
}

async fn fetch_args(h: &Harness, args: serde_json::Value) -> ToolResult {
    h.run(vec![call("c1", "fetch_url", args)]).await.remove(0)
}

/// The whole output (the retained artifact, not the preview).
fn full_text(h: &Harness, r: &ToolResult) -> Vec<u8> {
    h.read_artifact(&r.retained_output[0].artifact)
}

fn content_server() -> Server {
    Server::start(|path| match path {
        "/page.html" => reply(
            200,
            Some("text/html; charset=utf-8"),
            "<html><head><title>T</title><script>var x = 1;</script></head><body><h1>Hello</h1><p>A <b>bold</b> word and a <a href=\"/next\">link</a>.</p></body></html>",
        ),
        "/page.xhtml" => reply(
            200,
            Some("application/xhtml+xml"),
            "<html><body><p>xhtml body</p></body></html>",
        ),
        "/plain.txt" => reply(200, Some("text/plain"), "line one\nline two\n"),
        "/data.json" => reply(200, Some("application/json"), "{\"a\": [1, 2]}"),
        "/problem" => reply(200, Some("application/problem+json"), "{\"title\": \"x\"}"),
        "/feed.xml" => reply(200, Some("application/atom+xml"), "<feed/>"),
        "/doc.xml" => reply(200, Some("application/xml"), "<doc/>"),
        "/app.js" => reply(200, Some("application/javascript"), "console.log(1)"),
        "/form" => reply(200, Some("application/x-www-form-urlencoded"), "a=1&b=2"),
        "/latin1" => reply(200, Some("text/plain"), b"caf\xe9".to_vec()),
        "/image.png" => reply(200, Some("image/png"), b"\x89PNG\r\n".to_vec()),
        "/archive" => reply(200, Some("application/zip"), b"PK\x03\x04".to_vec()),
        "/untyped" => reply(200, None, "no type"),
        "/badtype" => reply(200, Some("nonsense"), "bad type"),
        "/missing" => reply(404, Some("text/plain"), "no such page\n"),
        "/broken" => reply(500, Some("text/html"), "<h1>Internal error</h1>"),
        _ => reply(404, Some("text/plain"), "unrouted"),
    })
}

#[tokio::test]
async fn output_is_four_header_lines_a_blank_line_and_the_body() {
    let s = content_server();
    let h = Fetch::on(&s).harness();
    let r = fetch(&h, &s.url("/plain.txt")).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.text(),
        format!(
            "final_url: {}\nstatus_code: 200\ncontent_type: text/plain\ntruncated: false\n\nline one\nline two\n",
            s.url("/plain.txt")
        )
    );
    assert_eq!(
        r.metadata,
        json!({
            "url": s.url("/plain.txt"),
            "final_url": s.url("/plain.txt"),
            "status_code": 200,
            "content_type": "text/plain",
            "truncated": false,
        })
    );
    assert_eq!(r.label.trust, Trust::Untrusted);
}

#[tokio::test]
async fn content_types() {
    let s = content_server();
    let h = Fetch::on(&s).harness();
    // (path, raw, Ok(substring of the body) | Err(type named by unsupported_content_type))
    let cases: &[(&str, bool, Result<&str, &str>)] = &[
        ("/page.xhtml", false, Ok("xhtml body")),
        ("/plain.txt", false, Ok("line one\nline two\n")),
        ("/plain.txt", true, Ok("line one\nline two\n")),
        ("/data.json", false, Ok("{\"a\": [1, 2]}")),
        ("/problem", false, Ok("{\"title\": \"x\"}")),
        ("/feed.xml", false, Ok("<feed/>")),
        ("/doc.xml", false, Ok("<doc/>")),
        ("/app.js", false, Ok("console.log(1)")),
        ("/form", false, Ok("a=1&b=2")),
        ("/latin1", false, Ok("caf\u{fffd}")),
        ("/page.html", true, Ok("<h1>Hello</h1>")),
        ("/image.png", false, Err("image/png")),
        ("/image.png", true, Err("image/png")),
        ("/archive", false, Err("application/zip")),
        ("/untyped", false, Err("application/octet-stream")),
        ("/badtype", true, Err("application/octet-stream")),
    ];
    for &(path, raw, want) in cases {
        let r = fetch_args(&h, json!({ "url": s.url(path), "raw": raw })).await;
        match want {
            Ok(body) => {
                assert!(!r.is_error, "{path}: {r:?}");
                let text = r.text();
                let (_, got) = text.split_once("\n\n").unwrap();
                assert!(got.contains(body), "{path} raw={raw}: {got:?}");
            }
            Err(ty) => {
                assert_eq!(code(&r), Some("unsupported_content_type"), "{path}: {r:?}");
                assert!(r.text().contains(ty), "{path}: {}", r.text());
            }
        }
    }
}

#[tokio::test]
async fn html_is_rendered_to_text_unless_raw() {
    let s = content_server();
    let h = Fetch::on(&s).harness();
    let r = fetch(&h, &s.url("/page.html")).await;
    assert!(!r.is_error, "{r:?}");
    let text = r.text();
    let (head, body) = text.split_once("\n\n").unwrap();
    assert!(
        head.contains("content_type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(body.contains("Hello") && body.contains("bold"), "{body}");
    assert!(!body.contains("<p>") && !body.contains("var x"), "{body}");
    assert!(body.lines().all(|l| l.chars().count() <= 80), "{body}");
    let raw = fetch_args(&h, json!({ "url": s.url("/page.html"), "raw": true })).await;
    assert!(raw.text().contains("<b>bold</b>"), "{}", raw.text());
}

#[tokio::test]
async fn error_statuses_come_back_with_their_bodies() {
    let s = content_server();
    let h = Fetch::on(&s).harness();
    let r = fetch(&h, &s.url("/missing")).await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.text().contains("status_code: 404\n"), "{}", r.text());
    assert!(r.text().ends_with("\n\nno such page\n"), "{}", r.text());
    assert_eq!(r.metadata["status_code"], 404);
    let r = fetch(&h, &s.url("/broken")).await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.text().contains("status_code: 500\n") && r.text().contains("Internal error"));
}

#[tokio::test]
async fn bodies_are_cut_at_16_mib() {
    let over = BODY_CAP + 1024 * 1024;
    let s = Server::start(move |path| match path {
        "/huge" => reply(200, Some("text/plain"), vec![b'a'; over]),
        "/exact" => reply(200, Some("text/plain"), vec![b'b'; BODY_CAP]),
        _ => reply(404, None, ""),
    });
    let h = Fetch::on(&s).harness();
    for (path, truncated) in [("/huge", true), ("/exact", false)] {
        let r = fetch(&h, &s.url(path)).await;
        assert!(!r.is_error, "{path}: {:?}", r.code);
        assert_eq!(r.metadata["truncated"], truncated, "{path}");
        let full = full_text(&h, &r);
        let header = format!(
            "final_url: {}\nstatus_code: 200\ncontent_type: text/plain\ntruncated: {truncated}\n\n",
            s.url(path)
        );
        assert!(full.starts_with(header.as_bytes()), "{path}");
        assert_eq!(full.len() - header.len(), BODY_CAP, "{path}");
    }
}

#[tokio::test]
async fn timeouts() {
    let s = Server::start(|path| match path {
        "/hang" => Reply::Hang,
        "/hang-body" => Reply::HangBody,
        _ => reply(404, None, ""),
    });
    let mut f = Fetch::on(&s);
    f.timeout = Duration::from_millis(200);
    let h = f.harness();
    for path in ["/hang", "/hang-body"] {
        let r = fetch(&h, &s.url(path)).await;
        assert_eq!(code(&r), Some("timeout"), "{path}: {r:?}");
        assert!(r.text().contains(&s.url(path)), "{}", r.text());
    }
}

fn chain_server() -> Server {
    Server::start(|path| {
        if let Some(n) = path.strip_prefix("/chain/") {
            let n: u32 = n.parse().unwrap();
            return if n == 0 {
                reply(200, Some("text/plain"), "end of chain\n")
            } else {
                redirect(302, &format!("/chain/{}", n - 1))
            };
        }
        match path {
            "/to-outside-scope" => redirect(301, "/outside/secret"),
            "/outside/secret" => reply(200, Some("text/plain"), "must not be fetched"),
            "/to-metadata" => redirect(302, "http://169.254.169.254/latest/meta-data/"),
            "/to-localhost" => redirect(307, "/via-name"),
            "/to-mapped" => redirect(302, "http://[::ffff:10.0.0.1]/"),
            "/to-ftp" => redirect(302, "ftp://127.0.0.1/x"),
            "/to-userinfo" => redirect(302, "http://a@127.0.0.1/"),
            _ => reply(404, Some("text/plain"), "unrouted"),
        }
    })
}

#[tokio::test]
async fn redirect_chains() {
    let s = chain_server();
    let mut f = Fetch::on(&s);
    f.scope = vec![format!("http://127.0.0.1:{}/chain/*", s.port())];
    let h = f.harness();
    let ten = fetch(&h, &s.url("/chain/10")).await;
    assert!(!ten.is_error, "{ten:?}");
    assert_eq!(ten.metadata["final_url"], s.url("/chain/0"));
    assert_eq!(ten.metadata["url"], s.url("/chain/10"));
    assert!(
        ten.text()
            .starts_with(&format!("final_url: {}\n", s.url("/chain/0")))
    );
    let before = s.requests().len();
    let eleven = fetch(&h, &s.url("/chain/11")).await;
    assert_eq!(code(&eleven), Some("redirect_error"), "{eleven:?}");
    assert!(
        eleven.text().contains("more than 10 redirects"),
        "{}",
        eleven.text()
    );
    // The 11th redirect's target was not requested: 11 requests, /chain/11 down to /chain/1.
    assert_eq!(s.requests().len() - before, 11);
}

#[tokio::test]
async fn every_hop_is_checked() {
    let s = chain_server();
    let mut f = Fetch::on(&s);
    f.scope = vec![
        format!("http://127.0.0.1:{}/to-*", s.port()),
        "http://169.254.169.254/*".to_owned(),
        format!("http://localhost:{}/*", s.port()),
        "http://*:a00:1]/*".to_owned(), // `[` would open a glob class
    ];
    f.resolver = StubResolver::new(&[("localhost", &["127.0.0.1"])]);
    let h = f.harness();
    // (path, code, message fragment)
    let cases: &[(&str, &str, &str)] = &[
        (
            "/to-outside-scope",
            "permission_denied",
            "outside url_scope.allow",
        ),
        (
            "/to-metadata",
            "permission_denied",
            "169.254.169.254 is link-local (cloud metadata)",
        ),
        (
            "/to-mapped",
            "permission_denied",
            "embeds IPv4 10.0.0.1 (IPv4-mapped), which is private (RFC 1918)",
        ),
        ("/to-ftp", "redirect_error", "not http:// or https://"),
        ("/to-userinfo", "redirect_error", "user info"),
    ];
    for &(path, want, fragment) in cases {
        let r = fetch(&h, &s.url(path)).await;
        assert_eq!(code(&r), Some(want), "{path}: {r:?}");
        assert!(r.text().contains(fragment), "{path}: {}", r.text());
    }
    assert!(
        s.requests().iter().all(|r| r.path != "/outside/secret"),
        "a hop outside the scope was requested"
    );
    // A hop by name to loopback: `localhost:<port>` is not the allowlisted `127.0.0.1:<port>`.
    let loc = format!("http://localhost:{}/chain/0", s.port());
    let s2 = Server::start(move |_| redirect(302, &loc));
    let mut f = Fetch::on(&s2);
    f.scope = vec![
        "http://127.0.0.1:*".to_owned(),
        "http://localhost:*".to_owned(),
    ];
    f.resolver = StubResolver::new(&[("localhost", &["127.0.0.1"])]);
    let h = f.harness();
    let r = fetch(&h, &s2.url("/")).await;
    assert_eq!(code(&r), Some("permission_denied"), "{r:?}");
    assert!(
        r.text()
            .contains("localhost (resolved to 127.0.0.1) is loopback"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("(a redirect from"), "{}", r.text());
    assert_eq!(
        s.connections(),
        cases.len(),
        "the refused hop reached the first server"
    );
}

#[tokio::test]
async fn dns_rebinding_dials_the_checked_address() {
    let s = content_server();
    // First answer public, every later one loopback.
    let stub = StubResolver::new(&[
        ("rebind.test", &["93.184.216.34"]),
        ("rebind.test", &["127.0.0.1"]),
    ]);
    let dialer = RecordingDialer::new(s.addr);
    let mut f = Fetch::on(&s);
    f.scope = vec!["http://rebind.test:*".to_owned()];
    f.private = vec![];
    f.resolver = stub.clone();
    f.dialer = dialer.clone();
    let h = f.harness();
    let url = format!("http://rebind.test:{}/plain.txt", s.port());
    let r = fetch(&h, &url).await;
    assert!(!r.is_error, "{r:?}");
    // One resolution per hop, and the address dialed is the one that was checked.
    assert_eq!(stub.calls(), vec!["rebind.test"]);
    assert_eq!(
        dialer.dialed(),
        vec![format!("93.184.216.34:{}", s.port()).parse().unwrap()]
    );
    assert_eq!(
        s.requests()[0].header("host"),
        Some(format!("rebind.test:{}", s.port()).as_str())
    );
    // The rebound answer is checked on its own and refused before any dial.
    let r = fetch(&h, &url).await;
    assert_eq!(code(&r), Some("permission_denied"), "{r:?}");
    assert!(
        r.text()
            .contains("rebind.test (resolved to 127.0.0.1) is loopback"),
        "{}",
        r.text()
    );
    assert_eq!(dialer.dialed().len(), 1);
}

#[tokio::test]
async fn names_resolving_to_blocked_ranges_are_refused() {
    let s = content_server();
    let stub = StubResolver::new(&[
        ("metadata.test", &["169.254.169.254"]),
        ("imds6.test", &["fd00:ec2::254"]),
        ("internal.test", &["10.1.2.3"]),
        ("cgnat.test", &["100.64.1.1"]),
        ("mixed.test", &["93.184.216.34", "127.0.0.1"]),
        ("mapped.test", &["::ffff:192.168.0.1"]),
        ("nat64.test", &["64:ff9b::a9fe:a9fe"]),
        ("zero.test", &["0.0.0.0"]),
        ("ula.test", &["fd12::1"]),
    ]);
    let dialer = RecordingDialer::new(s.addr);
    let mut f = Fetch::on(&s);
    f.scope = vec!["http://*".to_owned()];
    f.resolver = stub;
    f.dialer = dialer.clone();
    let h = f.harness();
    let cases: &[(&str, &str)] = &[
        ("metadata.test", "link-local (cloud metadata)"),
        ("imds6.test", "cloud metadata, fd00:ec2::254"),
        ("internal.test", "private (RFC 1918)"),
        ("cgnat.test", "CGNAT"),
        ("mixed.test", "loopback"),
        ("mapped.test", "private (RFC 1918)"),
        ("nat64.test", "link-local (cloud metadata)"),
        ("zero.test", "0.0.0.0/8"),
        ("ula.test", "unique local"),
    ];
    for &(name, rule) in cases {
        let r = fetch(&h, &format!("http://{name}/")).await;
        assert_eq!(code(&r), Some("permission_denied"), "{name}: {r:?}");
        assert!(r.text().contains(rule), "{name}: {}", r.text());
        assert_eq!(r.metadata["reason"], "ssrf_guard", "{name}");
    }
    assert!(dialer.dialed().is_empty(), "{:?}", dialer.dialed());
    // A name the resolver cannot answer is a transport error, not a hang.
    let r = fetch(&h, "http://unknown.test/").await;
    assert_eq!(code(&r), Some("transport_error"), "{r:?}");
}

/// Encoded forms of loopback, private and metadata addresses. Each names the test server's
/// port where it can, so a guard that let one through would be caught by the server seeing a
/// connection. None is allowlisted: the exact allowlist entry is for a different host.
#[tokio::test]
async fn encoded_address_corpus_is_refused() {
    let s = content_server();
    let p = s.port();
    let mut f = Fetch::on(&s);
    f.scope = vec!["*".to_owned()];
    f.private = vec![format!("allowed.test:{p}")];
    f.resolver = StubResolver::new(&[
        ("localhost", &["127.0.0.1", "::1"]),
        ("localhost.", &["127.0.0.1"]),
        ("example.com", &["93.184.216.34"]),
    ]);
    let h = f.harness();
    let corpus: Vec<(String, &str)> = vec![
        (format!("http://2130706433:{p}/"), "loopback"),
        (format!("http://0177.0.0.1:{p}/"), "loopback"),
        (format!("http://0x7f.1:{p}/"), "loopback"),
        (format!("http://0x7f000001:{p}/"), "loopback"),
        (format!("http://127.1:{p}/"), "loopback"),
        (format!("http://127.0.1:{p}/"), "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{p}/"), "loopback"),
        (format!("http://[::ffff:7f00:1]:{p}/"), "loopback"),
        (format!("http://[::1]:{p}/"), "loopback"),
        (format!("http://[0:0:0:0:0:0:0:1]:{p}/"), "loopback"),
        ("http://[64:ff9b::a9fe:a9fe]/".to_owned(), "cloud metadata"),
        ("http://[64:ff9b::7f00:1]/".to_owned(), "loopback"),
        ("http://[2002:a9fe:a9fe::]/".to_owned(), "cloud metadata"),
        ("http://[2002:7f00:1::]/".to_owned(), "loopback"),
        // Teredo, client 127.0.0.1 (inverted in the last 32 bits).
        (
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/".to_owned(),
            "loopback",
        ),
        ("http://[::]/".to_owned(), "unspecified"),
        (format!("http://0.0.0.0:{p}/"), "0.0.0.0/8"),
        (format!("http://0:{p}/"), "0.0.0.0/8"),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "cloud metadata",
        ),
        ("http://0xa9fea9fe/".to_owned(), "cloud metadata"),
        ("http://2852039166/".to_owned(), "cloud metadata"),
        ("http://[fd00:ec2::254]/".to_owned(), "cloud metadata"),
        ("http://[fe80::1]/".to_owned(), "link-local"),
        ("http://10.0.0.1/".to_owned(), "RFC 1918"),
        ("http://192.168.0.1/".to_owned(), "RFC 1918"),
        ("http://172.16.0.1/".to_owned(), "RFC 1918"),
        ("http://100.64.0.1/".to_owned(), "CGNAT"),
        ("http://224.0.0.1/".to_owned(), "multicast"),
        ("http://240.0.0.1/".to_owned(), "reserved"),
        ("http://192.0.2.1/".to_owned(), "documentation"),
        ("http://[2001:db8::1]/".to_owned(), "documentation"),
        ("http://[::127.0.0.1]/".to_owned(), "2000::/3"),
        (format!("http://127.0.0.1#@example.com:{p}/"), "loopback"),
        (format!("http://127.0.0.1:{p}#@example.com/"), "loopback"),
        (format!("http://127.0.0.1:{p}\\@example.com/"), "loopback"),
        (format!("http://localhost:{p}/"), "loopback"),
        (format!("http://localhost.:{p}/"), "loopback"),
        (format!("http://LOCALHOST:{p}/"), "loopback"),
        (format!("https://127.0.0.1:{p}/"), "loopback"),
    ];
    for (url, rule) in &corpus {
        let r = fetch(&h, url).await;
        assert_eq!(code(&r), Some("permission_denied"), "{url}: {r:?}");
        assert!(r.text().contains(rule), "{url}: {}", r.text());
    }
    // Refused before the request is made: the scheme is checked on the text, user info is not
    // sent anywhere.
    let invalid = [
        format!("HTTP://127.0.0.1:{p}/"),
        format!("Http://127.0.0.1:{p}/"),
        format!("http://a@127.0.0.1:{p}/"),
        format!("http://example.com@127.0.0.1:{p}/"),
        format!("http://a:b@localhost:{p}/"),
        "file:///etc/passwd".to_owned(),
        "gopher://127.0.0.1/".to_owned(),
    ];
    for url in &invalid {
        let r = fetch(&h, url).await;
        assert_eq!(code(&r), Some("invalid_url"), "{url}: {r:?}");
    }
    assert_eq!(s.connections(), 0, "a refused URL reached the server");
}

#[tokio::test]
async fn allowlisted_host_reaches_loopback_only_on_its_port() {
    let s = content_server();
    let mut f = Fetch::on(&s);
    f.scope = vec!["http://*".to_owned()];
    f.private = vec![format!("localhost:{}", s.port())];
    f.resolver = StubResolver::new(&[("localhost", &["127.0.0.1"])]);
    let h = f.harness();
    let ok = fetch(&h, &format!("http://localhost:{}/plain.txt", s.port())).await;
    assert!(!ok.is_error, "{ok:?}");
    // The same server by IP literal is not the allowlisted host.
    let r = fetch(&h, &s.url("/plain.txt")).await;
    assert_eq!(code(&r), Some("permission_denied"), "{r:?}");
    assert!(r.text().contains("allow_private_hosts"), "{}", r.text());
}
