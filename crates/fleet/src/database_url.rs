//! `DatabaseUrl`: the PostgreSQL URL, password included, read from the environment only and
//! never shown whole.
//!
//! **Key decision:** the secret lives in a type whose `Debug` and `Display` print the redacted
//! form, so no `{:?}` of a settings struct, no error and no log line can leak it by accident.
//! Rejected: a plain `String` field redacted where it is printed, which every new print site
//! would have to remember.

use std::fmt;

use crate::FleetError;

/// What stands in for a password in every printed form.
const REDACTED: &str = "***";

/// A PostgreSQL connection string: a `postgres://` URL or a `key=value` conninfo string.
#[derive(Clone)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    /// Reads the URL from the environment variable `var`; unset or empty is
    /// [`FleetError::DatabaseUrlMissing`].
    pub fn from_env(var: &str) -> Result<Self, FleetError> {
        match std::env::var(var) {
            Ok(url) if !url.trim().is_empty() => Ok(Self(url)),
            _ => Err(FleetError::DatabaseUrlMissing {
                var: var.to_owned(),
            }),
        }
    }

    /// Wraps a URL the caller already holds (tests, a URL derived from another).
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL with any password replaced by `***`: the only form ever printed.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }

    /// Parses the URL for the driver. A parse error names the redacted URL only (the
    /// driver's own message never echoes the input).
    pub(crate) fn config(&self) -> Result<tokio_postgres::Config, FleetError> {
        self.0
            .parse::<tokio_postgres::Config>()
            .map_err(|e| FleetError::DatabaseUrlInvalid {
                url: self.redacted(),
                reason: e.to_string(),
            })
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DatabaseUrl")
            .field(&self.redacted())
            .finish()
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Replaces the password of a URL's user info and every `password=` parameter (URL query or
/// conninfo pair) with [`REDACTED`].
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            // The user info ends at the last '@' before the query: a password with an
            // unescaped '/' or '@' is still hidden whole (at worst a path is hidden too).
            let query = rest.find(['?', '#']).unwrap_or(rest.len());
            let (before_query, tail) = rest.split_at(query);
            let shown = match before_query.rsplit_once('@') {
                Some((userinfo, hosts)) => match userinfo.split_once(':') {
                    Some((user, _password)) => format!("{user}:{REDACTED}@{hosts}"),
                    None => format!("{userinfo}@{hosts}"),
                },
                None => before_query.to_owned(),
            };
            format!("{scheme}://{shown}{}", redact_params(tail, '&'))
        }
        None => redact_params(url, ' '),
    }
}

/// Redacts `password=<value>` wherever a parameter starts (after `sep`, `?` or the start).
fn redact_params(text: &str, sep: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_param(rest, "password=") {
        let value_start = at + "password=".len();
        out.push_str(&rest[..value_start]);
        out.push_str(REDACTED);
        let value = &rest[value_start..];
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // conninfo quoting (libpq): 'a b' with \' and \\ escaped
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => {
                        end = i + 1;
                        break;
                    }
                    _ => {}
                }
            }
            1 + end
        } else {
            value
                .find(|c: char| c == sep || c == '&' || c == '#' || c.is_whitespace())
                .unwrap_or(value.len())
        };
        rest = &value[value_len.min(value.len())..];
    }
    out.push_str(rest);
    out
}

/// The byte offset of `name` where it starts a parameter, case-insensitively.
fn find_param(text: &str, name: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        let starts_param =
            at == 0 || matches!(lower.as_bytes()[at - 1], b'?' | b'&' | b' ' | b'\t' | b'\n');
        if starts_param {
            return Some(at);
        }
        from = at + name.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t-Pa55";

    #[test]
    fn a_password_is_never_printed_in_any_form() {
        let cases = [
            (
                format!("postgres://alice:{SECRET}@db.example:5432/tackle"),
                "postgres://alice:***@db.example:5432/tackle",
            ),
            (
                format!("postgresql://alice:{SECRET}@h1:5432,h2:5433/tackle?sslmode=require"),
                "postgresql://alice:***@h1:5432,h2:5433/tackle?sslmode=require",
            ),
            (
                format!("postgres://alice@db/tackle?sslmode=require&password={SECRET}&x=1"),
                "postgres://alice@db/tackle?sslmode=require&password=***&x=1",
            ),
            (
                format!("postgres://db/tackle?PASSWORD={SECRET}"),
                "postgres://db/tackle?PASSWORD=***",
            ),
            (
                format!("host=db user=alice password={SECRET} dbname=tackle"),
                "host=db user=alice password=*** dbname=tackle",
            ),
            (
                format!("host=db password='{SECRET} with \\' quote' dbname=tackle"),
                "host=db password=*** dbname=tackle",
            ),
            // A password holding '@' and '/' unescaped: hidden whole.
            (
                format!("postgres://alice:{SECRET}@x/y@db:5432/tackle"),
                "postgres://alice:***@db:5432/tackle",
            ),
            (
                "postgres://alice@db/tackle".to_owned(),
                "postgres://alice@db/tackle",
            ),
        ];
        for (url, want) in cases {
            let url = DatabaseUrl::new(url);
            assert_eq!(url.redacted(), want);
            for shown in [
                format!("{url}"),
                format!("{url:?}"),
                format!("{:?}", Some(url.clone())),
            ] {
                assert!(!shown.contains(SECRET), "{shown}");
                assert!(!shown.contains("Pa55"), "{shown}");
            }
        }
    }

    #[test]
    fn an_invalid_url_is_refused_without_its_password() {
        let url = DatabaseUrl::new(format!("postgres://alice:{SECRET}@db:notaport/tackle"));
        let err = url.config().unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(shown.contains("alice:***@db"), "{shown}");
        assert!(!shown.contains(SECRET), "{shown}");
    }

    #[test]
    fn a_missing_variable_names_it() {
        let err = DatabaseUrl::from_env("TACKLE_FLEET_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(
            err.to_string()
                .contains("TACKLE_FLEET_TEST_SURELY_UNSET_VARIABLE is not set"),
            "{err}"
        );
    }
}
