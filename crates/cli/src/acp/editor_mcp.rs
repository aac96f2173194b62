//! The MCP servers an editor passes with a session (`mcpServers`, stdio ones, read by
//! [`super::wire`]): they join the session's catalog under the rule of a project's own
//! `.agents/mcp.json`, only where the user trusted the folder and nothing widened since.

use tackle_config::Config;

/// Adds the editor's MCP servers to `config`'s where the user trusted the folder (`tackle
/// trust`, and nothing widened since); says what was done with them.
pub fn take(config: &mut Config, servers: Vec<tackle_mcp::client::ServerConfig>) -> Vec<String> {
    if servers.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    if !config.trust.trusted_by_user() {
        return vec![format!(
            "the editor's MCP servers ({}) are not started: they run only in a folder you trusted, as the project's own do; run `tackle trust` in {}",
            names.join(", "),
            config.root.display()
        )];
    }
    let mut notes = Vec::new();
    let mut started = Vec::new();
    for server in servers {
        if config.mcp_servers.iter().any(|s| s.name == server.name) {
            notes.push(format!(
                "the editor's MCP server {} is not started: tackle's configuration has a server of that name",
                server.name
            ));
        } else {
            started.push(server.name.clone());
            config.mcp_servers.push(server);
        }
    }
    if !started.is_empty() {
        notes.push(format!(
            "the editor's MCP servers join this session: {} (their tools are mcp__<server>__<tool>)",
            started.join(", ")
        ));
    }
    notes
}
