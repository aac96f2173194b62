//! `tackle mcp list|get|add|remove`: the MCP servers tackle connects to, in the user's own
//! `mcp.json` and the project's `.agents/mcp.json`.
//!
//! Owns: which scope an entry lives in and which entries start ([`scope`]), editing a file
//! ([`edit`]), and what is shown of each entry ([`status`]). The file format and starting a
//! server are the MCP client's ([`tackle_mcp::client`]).
//!
//! Key decision: adding to the project scope never trusts the folder. The entry is written,
//! and unless folder trust already covers it the command says the server will not start until
//! `tackle trust` (which shows it, and any secret it moves, before recording anything).

pub mod edit;
pub mod login;
pub use tackle_config::mcp_scope as scope;
pub mod status;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use serde_json::{Map, Value, json};

use crate::args::{McpCommand, McpTransport};
use crate::commands::Failure;
use crate::exit;
use crate::settings::Flags;
use scope::Scope;

/// Run one `tackle mcp` command.
pub fn run(root: Option<&Path>, flags: &Flags, command: McpCommand) -> Result<u8, Failure> {
    match command {
        McpCommand::List { json } => list(root, flags, json),
        McpCommand::Get { name, scope, json } => get(root, flags, &name, scope, json),
        McpCommand::Add {
            scope,
            transport,
            env,
            header_env,
            client_id,
            client_metadata_url,
            client_secret_env,
            read_only,
            name,
            url,
            command,
        } => {
            let entry = entry(EntryArgs {
                transport,
                env,
                header_env,
                client_id,
                client_metadata_url,
                client_secret_env,
                read_only,
                url,
                command,
            })
            .map_err(Failure::Usage)?;
            add(root, flags, scope, &name, entry)
        }
        McpCommand::Remove { name, scope } => remove(root, scope, &name),
        McpCommand::Login {
            name,
            timeout,
            no_browser,
            json,
        } => {
            let (config, user, project) = declared(root, flags)?;
            login::login(
                &config,
                &user,
                &project,
                &name,
                login::LoginArgs {
                    timeout: std::time::Duration::from_secs(timeout),
                    browser: !no_browser,
                    json,
                },
            )
        }
        McpCommand::Logout { name, json } => login::logout(&name, json),
    }
}

pub use tackle_config::mcp_scope::tokens;

/// What `add` was told about the server, before it becomes a file entry.
struct EntryArgs {
    transport: McpTransport,
    env: Vec<String>,
    header_env: Vec<String>,
    client_id: Option<String>,
    client_metadata_url: Option<String>,
    client_secret_env: Option<String>,
    read_only: bool,
    url: Option<String>,
    command: Vec<String>,
}

/// An environment variable name: a letter or `_`, then letters, digits and `_`.
fn is_var_name(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An HTTP header name (RFC 9110 token characters).
fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `KEY=VALUE` split at the first `=`.
fn pair<'a>(flag: &str, text: &'a str, shape: &str) -> anyhow::Result<(&'a str, &'a str)> {
    text.split_once('=')
        .ok_or_else(|| anyhow!("{flag} `{text}` is not {shape}; write it as {shape}"))
}

/// The file entry `add` writes.
fn entry(args: EntryArgs) -> anyhow::Result<Map<String, Value>> {
    let mut entry = Map::new();
    match args.transport {
        McpTransport::Stdio => {
            if args.client_id.is_some() || args.client_metadata_url.is_some() {
                anyhow::bail!(
                    "--client-id and --client-metadata-url apply to HTTP servers (OAuth); add --transport http <name> <url>"
                );
            }
            if !args.header_env.is_empty() {
                anyhow::bail!(
                    "--header-env applies to HTTP servers; add --transport http, or pass a stdio server's secret with --env KEY='${{VAR}}'"
                );
            }
            let mut env = Map::new();
            for text in &args.env {
                let (key, value) = pair("--env", text, "KEY=VALUE")?;
                if !is_var_name(key) {
                    anyhow::bail!(
                        "--env: `{key}` is not a variable name; use letters, digits and `_`, not starting with a digit"
                    );
                }
                env.insert(key.to_owned(), json!(value));
            }
            if let Some(url) = &args.url {
                anyhow::bail!(
                    "`{url}` comes before `--`: a stdio server's command goes after it (`tackle mcp add <name> -- <command> [args...]`); for an HTTP server add --transport http"
                );
            }
            let (command, rest) = args.command.split_first().ok_or_else(|| {
                anyhow!("no command given; write `tackle mcp add <name> -- <command> [args...]`")
            })?;
            entry.insert("command".into(), json!(command));
            if !rest.is_empty() {
                entry.insert("args".into(), json!(rest));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
        }
        McpTransport::Http => {
            if !args.env.is_empty() {
                anyhow::bail!(
                    "--env applies to stdio servers; an HTTP server's secrets travel as headers: --header-env HEADER=VAR"
                );
            }
            let Some(url) = &args.url else {
                anyhow::bail!("no URL given; write `tackle mcp add --transport http <name> <url>`");
            };
            if !args.command.is_empty() {
                anyhow::bail!(
                    "an HTTP server takes a URL, not a command after `--`; drop --transport http to add a stdio server"
                );
            }
            tackle_mcp::client::config::check_url(url).map_err(|e| anyhow!("{e}"))?;
            let mut headers = Map::new();
            for text in &args.header_env {
                let (header, var) = pair("--header-env", text, "HEADER=VAR")?;
                if !is_header_name(header) {
                    anyhow::bail!("--header-env: `{header}` is not an HTTP header name");
                }
                if !is_var_name(var) {
                    anyhow::bail!(
                        "--header-env {header}: `{var}` is not an environment variable name; the header's value is read from that variable, so name it (e.g. Authorization=API_TOKEN)"
                    );
                }
                headers.insert(header.to_owned(), json!(var));
            }
            entry.insert("url".into(), json!(url));
            if !headers.is_empty() {
                entry.insert("headers_env".into(), Value::Object(headers));
            }
            let mut oauth = Map::new();
            if let Some(url) = &args.client_metadata_url {
                oauth.insert("client_metadata_url".into(), json!(url));
            }
            if let Some(client_id) = &args.client_id {
                oauth.insert("client_id".into(), json!(client_id));
                if let Some(var) = &args.client_secret_env {
                    if !is_var_name(var) {
                        anyhow::bail!(
                            "--client-secret-env: `{var}` is not an environment variable name; name the variable that holds the secret"
                        );
                    }
                    oauth.insert("client_secret_env".into(), json!(var));
                }
            }
            if !oauth.is_empty() {
                entry.insert("oauth".into(), Value::Object(oauth));
            }
        }
    }
    if args.read_only {
        entry.insert("read_only".into(), json!(true));
    }
    Ok(entry)
}

/// The project root for a project-scope edit: `--root`, else the nearest marked ancestor.
fn project_root(root: Option<&Path>) -> Result<PathBuf, Failure> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    Ok(crate::root::find(root, &cwd)?)
}

/// The file of `scope`; a project `.agents` that is a link is refused (it could aim the edit
/// anywhere).
fn scope_file(root: Option<&Path>, scope: Scope) -> Result<PathBuf, Failure> {
    match scope {
        Scope::User => scope::user_path().ok_or_else(|| {
            Failure::Engine(anyhow!(
                "no user config directory: set XDG_CONFIG_HOME or HOME, or use --scope project"
            ))
        }),
        Scope::Project => {
            let root = project_root(root)?;
            let agents = root.join(".agents");
            if std::fs::symlink_metadata(&agents).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Failure::Engine(anyhow!(
                    "{} is a symbolic link; tackle writes project servers only into a real .agents directory",
                    agents.display()
                )));
            }
            Ok(scope::project_path(&root))
        }
    }
}

fn add(
    root: Option<&Path>,
    flags: &Flags,
    scope: Scope,
    name: &str,
    entry: Map<String, Value>,
) -> Result<u8, Failure> {
    tackle_mcp::client::config::check_name(name).map_err(|e| Failure::Usage(anyhow!("{e}")))?;
    // The entry alone, through the loader: what it would refuse is a bad command line.
    let alone = json!({ "servers": { name: entry.clone() } }).to_string();
    tackle_mcp::client::config::parse(&alone).map_err(|e| Failure::Usage(anyhow!("{e}")))?;
    let path = scope_file(root, scope)?;
    if edit::contains(&path, name)? {
        return Err(Failure::Usage(edit::duplicate(&path, scope, name)));
    }
    edit::add(&path, scope, name, entry)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "added MCP server `{name}` to the {} scope ({})",
        scope.as_str(),
        path.display()
    )
    .context("writing the report")?;
    if scope == Scope::Project {
        let root = project_root(root)?;
        let config = crate::config::load_with(
            &root,
            flags,
            crate::trust::TrustStore::user().as_ref(),
            &crate::trust::prompt::NeverAsk,
        )?;
        if !config.trust.applies() {
            writeln!(
                out,
                "it will not start until you trust this folder with it: run `tackle trust` (adding a server does not trust the folder)"
            )
            .context("writing the report")?;
        }
    }
    Ok(exit::OK)
}

fn remove(root: Option<&Path>, scope: Option<Scope>, name: &str) -> Result<u8, Failure> {
    let scope = match scope {
        Some(s) => s,
        None => {
            let mut found = Vec::new();
            for s in [Scope::User, Scope::Project] {
                // Outside a project there is only the user scope to look in.
                let Ok(path) = scope_file(root, s) else {
                    continue;
                };
                if edit::contains(&path, name)? {
                    found.push(s);
                }
            }
            match found.as_slice() {
                [one] => *one,
                [] => {
                    return Err(Failure::Usage(anyhow!(
                        "no MCP server named `{name}` in the user or project scope; `tackle mcp list` shows the configured ones"
                    )));
                }
                _ => {
                    return Err(Failure::Usage(anyhow!(
                        "`{name}` is declared in both the user and the project scope; say which with --scope user or --scope project"
                    )));
                }
            }
        }
    };
    let path = scope_file(root, scope)?;
    if !edit::remove(&path, scope, name)? {
        return Err(Failure::Usage(anyhow!(
            "no MCP server named `{name}` in the {} scope ({}); `tackle mcp list` shows where each server is",
            scope.as_str(),
            path.display()
        )));
    }
    writeln!(
        std::io::stdout().lock(),
        "removed MCP server `{name}` from the {} scope ({})",
        scope.as_str(),
        path.display()
    )
    .context("writing the report")?;
    Ok(exit::OK)
}

/// The configuration (never asking to trust) and both scopes' entries.
fn declared(
    root: Option<&Path>,
    flags: &Flags,
) -> Result<
    (
        crate::config::Config,
        Vec<tackle_mcp::client::ServerConfig>,
        Vec<tackle_mcp::client::ServerConfig>,
    ),
    Failure,
> {
    // Like every command outside a project, fall back to the working directory (user scope
    // only then). The rows say what trust leaves out, so the start-up notice is not printed.
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let root = match crate::root::find(root, &cwd) {
        Ok(root) => root,
        Err(_) if root.is_none() => cwd,
        Err(e) => return Err(e.into()),
    };
    let config = crate::config::load_with(
        &root,
        flags,
        crate::trust::TrustStore::user().as_ref(),
        &crate::trust::prompt::NeverAsk,
    )?;
    let user = scope::load_user()?;
    let project = tackle_mcp::client::config::load(&config.root).map_err(|e| anyhow!("{e}"))?;
    Ok((config, user, project))
}

fn list(root: Option<&Path>, flags: &Flags, json: bool) -> Result<u8, Failure> {
    let (config, user, project) = declared(root, flags)?;
    let rows = status::rows(&config, &user, &project, None);
    let mut out = std::io::stdout().lock();
    if json {
        let rows: Vec<Value> = rows.iter().map(status::Row::json).collect();
        serde_json::to_writer_pretty(&mut out, &rows).context("writing the list")?;
        writeln!(out).context("writing the list")?;
    } else if rows.is_empty() {
        writeln!(
            out,
            "no MCP servers configured; add one with `tackle mcp add <name> -- <command> [args...]`"
        )
        .context("writing the list")?;
    } else {
        for row in &rows {
            writeln!(out, "{}", row.line()).context("writing the list")?;
        }
    }
    Ok(exit::OK)
}

fn get(
    root: Option<&Path>,
    flags: &Flags,
    name: &str,
    scope: Option<Scope>,
    json: bool,
) -> Result<u8, Failure> {
    let (config, user, project) = declared(root, flags)?;
    let applies = config.trust.applies();
    // Without --scope, the entry that applies: the project's while it is trusted, else the user's.
    let in_project = project.iter().any(|s| s.name == name);
    let in_user = user.iter().any(|s| s.name == name);
    let chosen = match scope {
        Some(s) => s,
        None if in_project && (applies || !in_user) => Scope::Project,
        None => Scope::User,
    };
    let (user, project): (&[_], &[_]) = match chosen {
        Scope::User => (&user, &[]),
        Scope::Project => (&[], &project),
    };
    let rows = status::rows(&config, user, project, Some(name));
    let Some(row) = rows.into_iter().next() else {
        return Err(Failure::Usage(anyhow!(
            "no MCP server named `{name}`{}; `tackle mcp list` shows the configured ones",
            scope.map_or(String::new(), |s| format!(" in the {} scope", s.as_str()))
        )));
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &row.json()).context("writing the server")?;
        writeln!(out).context("writing the server")?;
    } else {
        write!(out, "{}", row.details()).context("writing the server")?;
    }
    Ok(exit::OK)
}
