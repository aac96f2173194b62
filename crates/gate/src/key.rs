//! What the gate knows about the shape of permission keys: actions, path resources, defaults.

use crate::Effect;

/// The key a bash call yields when its script cannot be parsed into simple commands.
pub const UNPARSEABLE_BASH: &str = "tool.bash.cmd:?";

/// Resources of `read:`/`write:` keys that are not paths in the project tree.
const NON_PATH_RESOURCES: &[&str] = &["artifact://", "goal:"];

/// The action of a key: the text before its first `:`, or `tool` for a `tool.<name>` key that
/// has none. A key with neither has itself as its action.
pub fn action(key: &str) -> &str {
    match key.split_once(':') {
        Some((action, _)) => action,
        None if key.starts_with("tool.") => "tool",
        None => key,
    }
}

/// The resource of a key (the text after the first `:`), if it has one.
pub(crate) fn resource(key: &str) -> Option<&str> {
    key.split_once(':').map(|(_, resource)| resource)
}

fn is_path_action(action: &str) -> bool {
    action == "read" || action == "write"
}

fn is_path_resource(resource: &str) -> bool {
    !NON_PATH_RESOURCES.iter().any(|p| resource.starts_with(p))
}

/// `(action, path)` when the key is a `read:`/`write:` key on a file path (not an artifact or
/// the goal): the keys the path scope applies to.
pub(crate) fn path_key(key: &str) -> Option<(&str, &str)> {
    let (action, resource) = key.split_once(':')?;
    (is_path_action(action) && is_path_resource(resource)).then_some((action, resource))
}

/// `(action, path part)` when a pattern is a path pattern (see [`crate::Pattern`]).
pub(crate) fn split_path_pattern(pattern: &str) -> Option<(&str, &str)> {
    let (action, resource) = pattern.split_once(':')?;
    (is_path_action(action) && is_path_resource(resource)).then_some((action, resource))
}

/// The resource path patterns are matched against: that of every `read:` and `write:` key
/// (so `read:**` covers artifact and goal reads too), `None` for other keys.
pub(crate) fn path_pattern_resource(key: &str) -> Option<&str> {
    match key.split_once(':') {
        Some((action, resource)) if is_path_action(action) => Some(resource),
        _ => None,
    }
}

/// The effect of a key no rule matches (DESIGN.md §4). Path scope and URL scope are checked
/// before this, so a `read:` key reaching here is inside the path scope.
///
/// A third-party MCP tool (`tool.mcp.<server>.<tool>`) defaults to ask, not allow: what it does
/// is unknown to tackle (it may run commands or reach the network, which ask or deny here), so
/// it runs only once a rule or an approval says so.
pub(crate) fn default_effect(key: &str) -> Effect {
    if key.starts_with(MCP_TOOL_PREFIX) && !key.contains(':') {
        return Effect::Ask;
    }
    default_for_action(action(key))
}

/// The prefix of every MCP tool's key.
pub(crate) const MCP_TOOL_PREFIX: &str = "tool.mcp.";

/// The default effect of an action (see [`default_effect`]).
pub(crate) fn default_for_action(action: &str) -> Effect {
    match action {
        "tool" => Effect::Allow,
        // Reads inside the path scope, artifact reads (ids grant by possession) and goal reads.
        "read" => Effect::Allow,
        // Loading a skill the run listed: instructions, like AGENTS.md, that change nothing.
        "skill" => Effect::Allow,
        "fetch" | "message" => Effect::Deny,
        // write, tool.bash.cmd, call_peer, and anything the gate does not know yet.
        _ => Effect::Ask,
    }
}

/// How a default is named in messages: "default for writes".
pub(crate) fn action_noun(action: &str) -> String {
    match action {
        "tool" => "tools".to_owned(),
        "read" => "reads".to_owned(),
        "write" => "writes".to_owned(),
        "tool.bash.cmd" => "shell commands".to_owned(),
        "fetch" => "fetches".to_owned(),
        "message" => "messages".to_owned(),
        "call_peer" => "peer calls".to_owned(),
        other => format!("{other} keys"),
    }
}

/// A rule pattern that would allow this key and its neighbours, for "allow it with" hints:
/// the directory of a path, the verb of a command, the origin of a URL.
pub(crate) fn suggested_allow(key: &str) -> String {
    if let Some((action, path)) = path_key(key) {
        return match path.rsplit_once('/') {
            Some((dir, _)) if !dir.is_empty() => format!("{action}:{dir}/**"),
            _ => key.to_owned(),
        };
    }
    if let Some(command) = key.strip_prefix("tool.bash.cmd:") {
        return match command.split_once(' ') {
            Some((verb, _)) => format!("tool.bash.cmd:{verb} *"),
            None => key.to_owned(),
        };
    }
    if let Some(url) = key.strip_prefix("fetch:")
        && let Some((scheme, rest)) = url.split_once("://")
    {
        let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        return format!("fetch:{scheme}://{host}/*");
    }
    key.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions() {
        let cases: &[(&str, &str)] = &[
            ("tool.bash", "tool"),
            ("tool.mcp.github.create_issue", "tool"),
            ("tool.bash.cmd:git log", "tool.bash.cmd"),
            ("tool.bash.cmd:?", "tool.bash.cmd"),
            ("read:src/a.rs", "read"),
            ("read:artifact://abc", "read"),
            ("write:goal:current", "write"),
            ("fetch:https://x/y", "fetch"),
            ("message:parent", "message"),
            ("call_peer:reviewer", "call_peer"),
        ];
        for &(key, want) in cases {
            assert_eq!(action(key), want, "{key}");
        }
    }

    #[test]
    fn defaults_per_action() {
        let cases: &[(&str, Effect)] = &[
            ("tool.bash", Effect::Allow),
            // Third-party MCP tools ask: tackle cannot know what they do.
            ("tool.mcp.github.create_issue", Effect::Ask),
            ("tool.mcpish", Effect::Allow),
            ("read:src/a.rs", Effect::Allow),
            ("read:artifact://0123", Effect::Allow),
            ("read:goal:current", Effect::Allow),
            ("write:src/a.rs", Effect::Ask),
            ("write:goal:current", Effect::Ask),
            ("tool.bash.cmd:ls", Effect::Ask),
            ("tool.bash.cmd:?", Effect::Ask),
            ("call_peer:reviewer", Effect::Ask),
            ("fetch:https://docs.rs/", Effect::Deny),
            ("message:parent", Effect::Deny),
            ("message:*", Effect::Deny),
            ("skill:commit-style", Effect::Allow),
            ("launch:rockets", Effect::Ask),
        ];
        for &(key, want) in cases {
            assert_eq!(default_effect(key), want, "{key}");
        }
    }

    #[test]
    fn suggestions() {
        let cases: &[(&str, &str)] = &[
            ("write:src/main.rs", "write:src/**"),
            ("write:Cargo.toml", "write:Cargo.toml"),
            ("tool.bash.cmd:cargo test -p x", "tool.bash.cmd:cargo *"),
            ("tool.bash.cmd:ls", "tool.bash.cmd:ls"),
            (
                "fetch:https://docs.rs/globset?x=1",
                "fetch:https://docs.rs/*",
            ),
            ("message:parent", "message:parent"),
        ];
        for &(key, want) in cases {
            assert_eq!(suggested_allow(key), want, "{key}");
        }
    }
}
