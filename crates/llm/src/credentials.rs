//! API keys, read from the environment only and never shown.
//!
//! An [`ApiKey`] has no `Display`, its `Debug` prints a placeholder, and the header value built
//! from it is marked sensitive (so `http`'s own `Debug` hides it too). Errors about a key name
//! the variable it should come from, never a value.

use std::fmt;

use http::HeaderValue;

use crate::error::{ErrorContext, ErrorKind, LlmError};

/// Where a provider's key comes from: the name of an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySource {
    pub env: String,
}

impl KeySource {
    pub fn env(name: impl Into<String>) -> Self {
        Self { env: name.into() }
    }

    /// Reads the key now (once per provider, when it is built).
    pub fn load(&self, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
        match std::env::var(&self.env) {
            Ok(value) if !value.trim().is_empty() => Ok(ApiKey(value.trim().to_owned())),
            Ok(_) => Err(ctx.error(
                ErrorKind::Configuration,
                format!("the api key variable {} is empty; set it to the key", self.env),
            )),
            Err(_) => Err(ctx.error(
                ErrorKind::Configuration,
                format!(
                    "the api key variable {} is not set (or not unicode); export it with the provider's key",
                    self.env
                ),
            )),
        }
    }
}

/// A secret credential.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key as a header value (`prefix` is `"Bearer "` or empty), marked sensitive.
    pub(crate) fn header(&self, prefix: &str, ctx: &ErrorContext) -> Result<HeaderValue, LlmError> {
        let mut value = HeaderValue::try_from(format!("{prefix}{}", self.0)).map_err(|_| {
            ctx.error(
                ErrorKind::Configuration,
                "the api key contains characters a header cannot carry; check the variable's value",
            )
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// A secret obtained another way than from a variable (a Vertex access token printed by
    /// the configured command).
    pub(crate) fn from_secret(secret: String) -> Self {
        Self(secret)
    }

    /// The secret itself, for the redactor that scrubs it from echoed messages.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    #[cfg(test)]
    pub(crate) fn for_test(key: &str) -> Self {
        Self(key.to_owned())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_prints() {
        let ctx = ErrorContext {
            provider: "p".into(),
            model: "m".into(),
        };
        let key = ApiKey::for_test("sk-secret-123");
        assert!(!format!("{key:?}").contains("sk-secret"));
        let header = key.header("Bearer ", &ctx).unwrap();
        assert!(header.is_sensitive());
        assert!(!format!("{header:?}").contains("sk-secret"));
        let bad = ApiKey::for_test("sk-secret\n123")
            .header("", &ctx)
            .unwrap_err();
        assert!(!format!("{bad} {bad:?}").contains("sk-secret"));
    }

    #[test]
    fn a_missing_variable_is_named() {
        let ctx = ErrorContext {
            provider: "p".into(),
            model: "m".into(),
        };
        let e = KeySource::env("TACKLE_TEST_SURELY_UNSET_KEY")
            .load(&ctx)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(e.message.contains("TACKLE_TEST_SURELY_UNSET_KEY"), "{e}");
    }
}
