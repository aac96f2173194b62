//! Bearer access tokens that expire (Vertex AI's Google tokens, Azure's Microsoft Entra ID
//! tokens): from an environment variable, or printed by a command the user's configuration
//! names (`gcloud auth print-access-token`, `az account get-access-token ...`).
//!
//! The command runs without a shell (its first word is the program, the rest its arguments),
//! with no stdin, its stderr discarded and its stdout trimmed; it runs at the first turn and
//! again when a turn is refused with 401 ([`Tokens::send`]), since tokens expire within the
//! hour. A failure is a `configuration` error naming the command and its exit, never its
//! output, which may hold a token.

use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;

use crate::credentials::ApiKey;
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::transport::TurnStream;

/// What the errors of one provider's tokens suggest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenHelp {
    /// A command that prints a token (`["gcloud", "auth", "print-access-token"]`).
    pub example: &'static [&'static str],
    /// How a person logs in again when the command fails (`gcloud auth login`).
    pub login: &'static str,
}

/// The most of a token command's output that is read.
const MAX_TOKEN_OUTPUT: u64 = 64 << 10;
/// How long a token command may run.
const TOKEN_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A bearer token fetched per turn, and what its errors suggest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BearerToken {
    pub source: TokenSource,
    pub help: TokenHelp,
}

/// Where an access token comes from.
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
    help: TokenHelp,
    current: Mutex<Option<ApiKey>>,
}

impl Tokens {
    /// A variable is read now, so a missing one is reported before any turn; a command waits
    /// for the first turn.
    pub fn new(source: TokenSource, help: TokenHelp, ctx: &ErrorContext) -> Result<Self, LlmError> {
        let current = match &source {
            TokenSource::Env(name) => Some(from_env(name, help, ctx)?),
            TokenSource::Command(argv) if argv.first().is_none_or(|p| p.is_empty()) => {
                let example: Vec<String> = help.example.iter().map(|w| format!("{w:?}")).collect();
                return Err(ctx.error(
                    ErrorKind::Configuration,
                    format!(
                        "token_command is empty; name a program and its arguments, e.g. [{}]",
                        example.join(", ")
                    ),
                ));
            }
            TokenSource::Command(_) => None,
        };
        Ok(Self {
            source,
            help,
            current: Mutex::new(current),
        })
    }

    /// Sends a turn with the token, and once more with a fresh one when it is refused with
    /// 401 and the source can give another.
    pub async fn send<'a>(
        &self,
        ctx: &ErrorContext,
        send: impl Fn(ApiKey) -> BoxFuture<'a, Result<TurnStream, LlmError>>,
    ) -> Result<TurnStream, LlmError> {
        let token = self.get(ctx).await?;
        match send(token.clone()).await {
            Err(e) if e.status == Some(401) => match self.refresh(&token, ctx).await? {
                Some(fresh) => send(fresh).await,
                None => Err(e),
            },
            other => other,
        }
    }

    /// The token to send.
    async fn get(&self, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
        let mut current = self.current.lock().await;
        if let Some(token) = current.as_ref() {
            return Ok(token.clone());
        }
        let token = self.fetch(ctx).await?;
        *current = Some(token.clone());
        Ok(token)
    }

    /// A fresh token after `rejected` was refused; `None` when the source cannot give another.
    async fn refresh(
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
            TokenSource::Env(name) => from_env(name, self.help, ctx),
            TokenSource::Command(argv) => run(argv, self.help, ctx).await,
        }
    }
}

fn from_env(name: &str, help: TokenHelp, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(ApiKey::from_secret(value.trim().to_owned())),
        _ => Err(ctx.error(
            ErrorKind::Configuration,
            format!(
                "the access token variable {name} is not set or empty; export a token ({}) or set token_command",
                help.example.join(" ")
            ),
        )),
    }
}

async fn run(argv: &[String], help: TokenHelp, ctx: &ErrorContext) -> Result<ApiKey, LlmError> {
    let shown = argv.join(" ");
    let failed = |why: String| {
        ctx.error(
            ErrorKind::Configuration,
            format!(
                "the token command `{shown}` {why}; run it yourself to see why (a lapsed login is renewed with `{}`)",
                help.login
            ),
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
