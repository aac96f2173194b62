//! The checks every adapter's mock-server tests share, parameterized by family: replay a
//! recorded stream split every way, fail a broken one with its class, keep the key out of
//! everything shown.

use tackle_llm::{ErrorKind, LlmError, Provider, TurnRequest, complete};
use tackle_protocol::AssistantTurn;
use tokio_util::sync::CancellationToken;

use super::{KEY_VALUE, MockServer, Scripted, expected_turn, fixture};

/// One family's test setup: its fixture directory, how a provider is built against the mock
/// server, and the request the replays answer.
pub struct Family<P> {
    /// Under `tests/fixtures/`: `anthropic`, `openai_chat`, `openai_responses`.
    pub dir: &'static str,
    pub provider: fn(&MockServer) -> P,
    pub request: fn() -> TurnRequest,
    /// The provider name and model every error must carry.
    pub provider_name: &'static str,
    /// The response header the family's request id comes in.
    pub request_id_header: &'static str,
}

impl<P: Provider + std::fmt::Debug> Family<P> {
    /// Serves `script`, runs one turn, and returns it with the number of requests made.
    pub async fn run(&self, script: Vec<Scripted>) -> (Result<AssistantTurn, LlmError>, usize) {
        let server = MockServer::start(script).await;
        let result = complete(
            &(self.provider)(&server),
            &(self.request)(),
            &CancellationToken::new(),
        )
        .await;
        (result, server.requests().len())
    }

    /// Each `<name>.sse` assembles into `<name>.turn.json`, whole, in 7-byte and 1-byte writes.
    pub async fn assert_recorded_streams(&self, names: &[&str]) {
        self.assert_recorded_bodies(names, |path| {
            Scripted::stream(fixture(&format!("{path}.sse")))
        })
        .await;
    }

    /// Each `<name>` served as `body("<dir>/<name>")` makes assembles into `<name>.turn.json`,
    /// whole, in 7-byte and 1-byte writes (for families whose bodies are not SSE files).
    pub async fn assert_recorded_bodies(&self, names: &[&str], body: fn(&str) -> Scripted) {
        for name in names {
            let want = expected_turn(&format!("{}/{name}.turn.json", self.dir));
            for chunk in [0, 7, 1] {
                let scripted = body(&format!("{}/{name}", self.dir)).chunked(chunk);
                let (got, requests) = self.run(vec![scripted]).await;
                let got = got.unwrap_or_else(|e| panic!("{name} (chunk {chunk}): {e}"));
                assert_eq!(got, want, "{name} (chunk {chunk})");
                assert_eq!(requests, 1, "{name}");
            }
        }
    }

    /// Each `<name>.sse` fails with its kind, stamped with provider, model and request id, and
    /// is never re-sent.
    pub async fn assert_broken_streams(&self, cases: &[(&str, ErrorKind)]) {
        self.assert_broken_bodies(cases, |path| {
            Scripted::stream(fixture(&format!("{path}.sse")))
        })
        .await;
    }

    /// As [`Self::assert_broken_streams`], each body made by `body("<dir>/<name>")`.
    pub async fn assert_broken_bodies(
        &self,
        cases: &[(&str, ErrorKind)],
        body: fn(&str) -> Scripted,
    ) {
        let model = (self.request)().model;
        for (name, kind) in cases {
            for chunk in [0, 3] {
                let (got, requests) = self
                    .run(vec![
                        body(&format!("{}/{name}", self.dir))
                            .chunked(chunk)
                            .header(self.request_id_header, "req_broken"),
                    ])
                    .await;
                let e = got.expect_err(name);
                assert_eq!(e.kind, *kind, "{name}: {e}");
                assert_eq!(e.request_id.as_deref(), Some("req_broken"), "{name}");
                assert_eq!(
                    (e.provider.as_str(), e.model.as_str()),
                    (self.provider_name, model.as_str()),
                    "{name}"
                );
                assert_eq!(requests, 1, "{name}: a stream that began is never re-sent");
            }
        }
    }

    /// An error body that echoes the key is answered with `kind`, and neither the error
    /// (shown or debugged) nor the provider's debug output contains the key or a fragment.
    pub async fn assert_key_never_leaks(&self, status: u16, echo: &str, kind: ErrorKind) {
        let server = MockServer::start(vec![Scripted::error(status, echo)]).await;
        let provider = (self.provider)(&server);
        let e = complete(&provider, &(self.request)(), &CancellationToken::new())
            .await
            .expect_err("echoed key");
        assert_eq!(e.kind, kind, "{e}");
        for shown in [e.to_string(), format!("{e:?}"), format!("{provider:?}")] {
            assert!(!shown.contains(KEY_VALUE), "key leaked: {shown}");
            assert!(
                !shown.contains("DO-NOT-LEAK"),
                "key fragment leaked: {shown}"
            );
        }
    }
}
