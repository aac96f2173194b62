//! `tackle mcp login|logout`: OAuth for an HTTP server, run by a person.
//!
//! Key decision: login applies to the entry that would start (the user's, or a trusted
//! project's), so an untrusted repository cannot have a person authorize a server it names;
//! the tokens are bound to that entry's name and URL by the client's store. The authorization
//! URL goes to stderr (stdout stays the report, so `--json` is parseable) and to `$BROWSER`
//! when set, else `xdg-open` when present; the browser is never waited for.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, anyhow};
use serde_json::json;
use tackle_mcp::client::ServerConfig;
use tackle_mcp::client::oauth;

use super::scope;
use crate::commands::Failure;
use crate::exit;

/// What `login` was told.
pub struct LoginArgs {
    pub timeout: Duration,
    /// Start a browser on the URL.
    pub browser: bool,
    pub json: bool,
}

pub fn login(
    config: &crate::config::Config,
    user: &[ServerConfig],
    project: &[ServerConfig],
    name: &str,
    args: LoginArgs,
) -> Result<u8, Failure> {
    let applies = config.trust.applies();
    let startable = scope::startable(user, project, applies);
    let Some(server) = startable.into_iter().find(|s| s.name == name) else {
        let why = if project.iter().any(|s| s.name == name) {
            "it is a project server and this folder's servers are not trusted; run `tackle trust` first"
        } else {
            "`tackle mcp list` shows the configured ones"
        };
        return Err(Failure::Usage(anyhow!(
            "no MCP server named `{name}` to log in to; {why}"
        )));
    };
    let tokens = super::tokens();
    let browser = args.browser;
    let show_url = move |url: &str| {
        eprintln!("tackle: to authorize tackle with MCP server `{name}`, open:\n  {url}");
        if browser {
            open_browser(url);
        }
    };
    let outcome = tackle_mcp::client::client_runtime()
        .block_on(oauth::login(&server, &tokens, args.timeout, show_url))
        .map_err(|e| Failure::Engine(anyhow!("login to MCP server `{name}` failed: {e}")))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = json!({
            "server": name,
            "url": server.endpoint(),
            "logged_in": true,
            "client_id": outcome.client_id,
            "registered": outcome.client_source == oauth::ClientSource::Registered,
            "client_source": outcome.client_source.as_str(),
            "issuer": outcome.issuer,
            "scopes": outcome.scopes,
            "metadata_discovered": outcome.discovered,
            "token_file": outcome.path,
        });
        serde_json::to_writer_pretty(&mut out, &report).context("writing the report")?;
        writeln!(out).context("writing the report")?;
    } else {
        let scopes = if outcome.scopes.is_empty() {
            String::new()
        } else {
            format!(", scopes {}", outcome.scopes.join(" "))
        };
        writeln!(
            out,
            "logged in to MCP server `{name}` ({}) as client {}{}{scopes}; tokens kept in {}",
            server.endpoint(),
            outcome.client_id,
            match outcome.client_source {
                oauth::ClientSource::Registered => " (registered now)",
                oauth::ClientSource::MetadataDocument => " (its client ID metadata document)",
                oauth::ClientSource::Configured => "",
            },
            outcome.path.display()
        )
        .context("writing the report")?;
    }
    Ok(exit::OK)
}

pub fn logout(name: &str, json: bool) -> Result<u8, Failure> {
    tackle_mcp::client::config::check_name(name).map_err(|e| Failure::Usage(anyhow!("{e}")))?;
    let removed = super::tokens()
        .remove_server(name)
        .map_err(|e| Failure::Engine(anyhow!("{e}")))?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &json!({"server": name, "removed": removed}))
            .context("writing the report")?;
        writeln!(out).context("writing the report")?;
    } else if removed == 0 {
        writeln!(
            out,
            "no stored login for MCP server `{name}`; nothing to remove"
        )
        .context("writing the report")?;
    } else {
        writeln!(
            out,
            "logged out of MCP server `{name}`: removed {removed} stored login(s)"
        )
        .context("writing the report")?;
    }
    Ok(exit::OK)
}

/// Hand `url` to `$BROWSER`, else `xdg-open` when it is on PATH; a failure to start one is
/// reported and the printed URL still works. The browser runs on its own; a thread reaps it.
fn open_browser(url: &str) {
    let command = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => browser_command(&b, url),
        _ => match find_on_path("xdg-open") {
            Some(p) => vec![p, url.to_owned()],
            None => return,
        },
    };
    let Some((program, args)) = command.split_first() else {
        return;
    };
    let started = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
        Err(e) => eprintln!(
            "tackle: could not start the browser `{program}`: {e}; open the URL above yourself"
        ),
    }
}

/// `$BROWSER` as the convention reads it: the first of its `:`-separated commands, split on
/// whitespace (no shell), with `%s` replaced by the URL or the URL appended.
fn browser_command(browser: &str, url: &str) -> Vec<String> {
    let first = browser.split(':').next().unwrap_or_default();
    let mut words: Vec<String> = first.split_whitespace().map(str::to_owned).collect();
    if words.iter().any(|w| w.contains("%s")) {
        for w in &mut words {
            *w = w.replace("%s", url);
        }
    } else {
        words.push(url.to_owned());
    }
    words
}

fn find_on_path(program: &str) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::browser_command;

    #[test]
    fn browser_follows_the_convention() {
        let url = "http://127.0.0.1:1/a?b=c";
        for (browser, want) in [
            ("firefox", vec!["firefox", url]),
            ("firefox --new-window", vec!["firefox", "--new-window", url]),
            ("open-it %s --now", vec!["open-it", url, "--now"]),
            ("/usr/bin/w3m:lynx", vec!["/usr/bin/w3m", url]),
        ] {
            assert_eq!(browser_command(browser, url), want, "{browser}");
        }
    }
}
