//! Keeps a credential out of error messages a provider echoes back.
//!
//! Vendors quote what they were sent when they reject it ("Incorrect API key provided: sk-…"),
//! sometimes masked, sometimes not. Every error leaving an adapter passes through here: the
//! exact key is replaced, and so is any word that looks like an API key (`sk-…`, `sk-ant-…`),
//! since even a masked one identifies the account. The request id, which comes from a response
//! header a proxy may have filled, is scrubbed the same way.

use futures::StreamExt;

use crate::credentials::ApiKey;
use crate::error::LlmError;
use crate::transport::TurnStream;

#[derive(Clone, Debug, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

const REDACTED: &str = "<redacted>";

impl Redactor {
    pub fn new(key: Option<&ApiKey>) -> Self {
        Self {
            secrets: key.map(|k| k.expose().to_owned()).into_iter().collect(),
        }
    }

    /// Also scrubs `secret` (an AWS secret key or session token); an empty one is ignored.
    pub fn with_secret(mut self, secret: &str) -> Self {
        if !secret.is_empty() {
            self.secrets.push(secret.to_owned());
        }
        self
    }

    pub fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in self.secrets.iter().filter(|s| !s.is_empty()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
        if text.contains("sk-") {
            text = text
                .split(' ')
                .map(|word| {
                    let bare = word.trim_matches(|c: char| {
                        !c.is_ascii_alphanumeric() && c != '-' && c != '_' && c != '*'
                    });
                    if bare.starts_with("sk-") && bare.len() > 8 {
                        word.replace(bare, REDACTED)
                    } else {
                        word.to_owned()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
        }
        text
    }

    pub fn error(&self, mut error: LlmError) -> LlmError {
        error.message = self.text(&error.message);
        error.request_id = error.request_id.map(|id| self.text(&id));
        error
    }

    pub fn stream(&self, stream: TurnStream) -> TurnStream {
        let redactor = self.clone();
        Box::pin(stream.map(move |item| item.map_err(|e| redactor.error(e))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_replaced_in_messages() {
        let key = ApiKey::for_test("local-secret-value");
        let r = Redactor::new(Some(&key));
        let cases = [
            (
                "bad key local-secret-value given",
                "bad key <redacted> given",
            ),
            (
                "Incorrect API key provided: sk-proj-abc***wxyz.",
                "Incorrect API key provided: <redacted>.",
            ),
            ("invalid x-api-key", "invalid x-api-key"),
            ("see sk-ant-api03-AAAA", "see <redacted>"),
        ];
        for (input, want) in cases {
            assert_eq!(r.text(input), want, "{input}");
        }
    }

    #[test]
    fn the_request_id_is_scrubbed_too() {
        let key = ApiKey::for_test("local-secret-value");
        let ctx = crate::error::ErrorContext {
            provider: "p".into(),
            model: "m".into(),
        };
        let mut e = ctx.error(crate::error::ErrorKind::Auth, "bad key");
        e.request_id = Some("req-local-secret-value".into());
        let e = Redactor::new(Some(&key)).error(e);
        assert_eq!(e.request_id.as_deref(), Some("req-<redacted>"));
    }
}
