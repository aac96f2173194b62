//! Vertex AI access tokens: from an environment variable, or printed by a command the user's
//! configuration names (`gcloud auth print-access-token`).
//!
//! The command runs without a shell (its first word is the program, the rest its arguments),
//! with no stdin, its stderr discarded and its stdout trimmed; it runs at the first turn and
//! again when a turn is refused with 401, since tokens expire within the hour. A failure is a
//! `configuration` error naming the command, never its output, which may hold a token.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;

use crate::credentials::ApiKey;
use crate::error::{ErrorContext, ErrorKind, LlmError};

/// The most of a token command's output that is read.
const MAX_TOKEN_OUTPUT: u64 = 64 << 10;
/// How long a token command may run.
const TOKEN_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a Vertex access token comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable holding the token, read once.
    Env(String),
    /// A program and its arguments that print a token.
    Command(Vec<String>),
}

/// The token of one provider: loaded once, re-fetched after a 401 when a command makes it.
#[derive(Debug)]
pub(crate) struct Tokens {
    source: TokenSource,
    current: Mutex<Option<ApiKey>>,
}

impl Tokens {
    /// A variable is read now, so a missing one is reported before any turn; a command waits
    /// for the first turn.
    pub fn new(source: TokenSource, ctx: &ErrorContext) -> Result<Self, LlmError> {
        let current = match &source {
            TokenSource::Env(name) => Some(from_env(name, ctx)?),
            TokenSource::Command(argv) if argv.first().is_none_or(|p| p.is_empty()) => {
                return Err(ctx.error(
                    ErrorKind::Configuration,
                    "token_command is empty; name a program and its arguments, e.g. [\"gcloud\", \"auth\", \"print-access-token\"]",
                ));
            }
            TokenSource::Command(_) => None,
        };
        Ok(Self {
            source,
            current: Mutex::new(current),
        })
    }

    /// The token to send.
    pub async fn get(&self, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
        let mut current = self.current.lock().await;
        if let Some(token) = current.as_ref() {
            return Ok(token.clone());
        }
        let token = self.fetch(ctx).await?;
        *current = Some(token.clone());
        Ok(token)
    }

    /// A fresh token after `rejected` was refused; `None` when the source cannot give another.
    pub async fn refresh(
        &self,
        rejected: &ApiKey,
        ctx: &ErrorContext,
    ) -> Result<Option<ApiKey>, LlmError> {
        if matches!(self.source, TokenSource::Env(_)) {
            return Ok(None);
        }
        let mut current = self.current.lock().await;
        // Another turn may have fetched one since.
        if let Some(token) = current.as_ref().filter(|t| *t != rejected) {
            return Ok(Some(token.clone()));
        }
        let token = self.fetch(ctx).await?;
        *current = Some(token.clone());
        Ok(Some(token))
    }

    async fn fetch(&self, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
        match &self.source {
            TokenSource::Env(name) => from_env(name, ctx),
            TokenSource::Command(argv) => run(argv, ctx).await,
        }
    }
}

fn from_env(name: &str, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(ApiKey::from_secret(value.trim().to_owned())),
        _ => Err(ctx.error(
            ErrorKind::Configuration,
            format!(
                "the access token variable {name} is not set or empty; export a token (gcloud auth print-access-token) or set token_command"
            ),
        )),
    }
}

async fn run(argv: &[String], ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
    let shown = argv.join(" ");
    let failed = |why: String| {
        ctx.error(
            ErrorKind::Configuration,
            format!("the token command `{shown}` {why}; run it yourself to see why"),
        )
    };
    let mut child = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| failed(format!("could not start ({e})")))?;
    let mut output = Vec::new();
    let finished = async {
        if let Some(stdout) = child.stdout.take() {
            stdout
                .take(MAX_TOKEN_OUTPUT + 1)
                .read_to_end(&mut output)
                .await?;
        }
        child.wait().await
    };
    let status = tokio::time::timeout(TOKEN_COMMAND_TIMEOUT, finished)
        .await
        .map_err(|_| {
            failed(format!(
                "did not finish within {} s",
                TOKEN_COMMAND_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| failed(format!("could not be read ({e})")))?;
    if !status.success() {
        return Err(failed(format!("failed ({status})")));
    }
    if output.len() as u64 > MAX_TOKEN_OUTPUT {
        return Err(failed("printed more than a token".into()));
    }
    let text =
        String::from_utf8(output).map_err(|_| failed("printed text that is not utf-8".into()))?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(failed("did not print one token".into()));
    }
    Ok(ApiKey::from_secret(token.to_owned()))
}
