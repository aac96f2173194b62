//! The one error type of configuration: a message that names the problem, where it is and how
//! to fix it, with the causes it was built from folded in (`outer: inner`).
//!
//! Front ends print it as is; nothing downstream matches on a configuration error's kind, so it
//! carries text, not variants.

use std::fmt;

/// A configuration that cannot be used, or a file or store that cannot be read.
pub struct ConfigError {
    message: String,
}

pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

impl ConfigError {
    pub fn msg(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.message, f)
    }
}

impl std::error::Error for ConfigError {}

macro_rules! from_error {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for ConfigError {
            fn from(e: $t) -> Self {
                Self::msg(e)
            }
        }
    )*};
}

from_error!(
    std::io::Error,
    serde_json::Error,
    toml::de::Error,
    tackle_runtime::RuntimeError,
);

/// `.context(..)` on results and options: the context leads, the cause follows after `: `.
pub trait Context<T> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T>;
    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, context: F) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T> {
        self.map_err(|e| ConfigError::msg(format!("{context}: {e}")))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, context: F) -> Result<T> {
        self.map_err(|e| ConfigError::msg(format!("{}: {e}", context())))
    }
}

impl<T> Context<T> for Option<T> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T> {
        self.ok_or_else(|| ConfigError::msg(context))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, context: F) -> Result<T> {
        self.ok_or_else(|| ConfigError::msg(context()))
    }
}

/// A [`ConfigError`] from a format string.
#[macro_export]
macro_rules! config_error {
    ($($arg:tt)*) => {
        $crate::ConfigError::msg(format!($($arg)*))
    };
}

/// Return early with a [`ConfigError`] from a format string.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::config_error!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_leads_and_the_cause_follows() {
        let e: Result<()> = Err(std::io::Error::other("no such file")).context("reading x.toml");
        assert_eq!(e.unwrap_err().to_string(), "reading x.toml: no such file");
        let none: Option<u8> = None;
        assert_eq!(
            none.context("no user config directory")
                .unwrap_err()
                .to_string(),
            "no user config directory"
        );
    }
}
