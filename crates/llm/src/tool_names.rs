//! Tool names as the providers accept them (`^[A-Za-z0-9_-]{1,64}$`), mapped reversibly.
//!
//! Catalog names already follow the rule (built-ins are snake_case; MCP tools are prefixed and
//! sanitized where they are registered), so the map is the identity for them. A name that does
//! not fit is rewritten deterministically (other characters become `_`, and a name that is too
//! long or collides with another keeps a prefix plus 8 hex digits of its SHA-256), and the
//! model's calls are mapped back, so the runtime only ever sees catalog names.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

pub const MAX_TOOL_NAME: usize = 64;

/// Whether a name satisfies every family's tool-name rule.
pub fn is_wire_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The catalog ↔ wire name mapping of one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolNameMap {
    to_wire: HashMap<String, String>,
    to_catalog: HashMap<String, String>,
}

impl ToolNameMap {
    pub fn new<'a>(catalog_names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut map = Self::default();
        let names: Vec<&str> = catalog_names.into_iter().collect();
        // Names that already fit claim themselves first, so a rewrite never takes one.
        for name in names.iter().copied().filter(|n| is_wire_safe(n)) {
            map.insert(name, name.to_owned());
        }
        for name in names.iter().copied().filter(|n| !is_wire_safe(n)) {
            let mut wire: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if wire.is_empty() || wire.len() > MAX_TOOL_NAME || map.to_catalog.contains_key(&wire) {
                let digest = hex::encode(&Sha256::digest(name.as_bytes())[..4]);
                let keep = wire.len().min(MAX_TOOL_NAME - 9);
                wire = format!("{}_{digest}", &wire[..keep]);
            }
            map.insert(name, wire);
        }
        map
    }

    fn insert(&mut self, catalog: &str, wire: String) {
        self.to_catalog.insert(wire.clone(), catalog.to_owned());
        self.to_wire.insert(catalog.to_owned(), wire);
    }

    /// The name to send for a catalog name (the name itself when it is not in the map).
    pub fn wire<'a>(&'a self, catalog: &'a str) -> &'a str {
        self.to_wire.get(catalog).map_or(catalog, String::as_str)
    }

    /// The catalog name of a name the model used; an unknown name comes back unchanged, so
    /// the runtime answers it as an unknown tool.
    pub fn catalog(&self, wire: &str) -> String {
        self.to_catalog
            .get(wire)
            .cloned()
            .unwrap_or_else(|| wire.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_mapped_reversibly_and_fit_the_rule() {
        let long = "x".repeat(80);
        let catalog = [
            "read_file",
            "mcp.github.create_issue",
            "mcp_github_create_issue",
            "ünïcode tool",
            long.as_str(),
            "",
        ];
        let map = ToolNameMap::new(catalog);
        assert_eq!(map.wire("read_file"), "read_file");
        assert_eq!(
            map.wire("mcp_github_create_issue"),
            "mcp_github_create_issue"
        );
        let mut seen = std::collections::HashSet::new();
        for name in catalog {
            let wire = map.wire(name);
            assert!(is_wire_safe(wire), "{name:?} → {wire:?}");
            assert!(seen.insert(wire.to_owned()), "{wire} used twice");
            assert_eq!(map.catalog(wire), name);
        }
        assert_ne!(
            map.wire("mcp.github.create_issue"),
            "mcp_github_create_issue"
        );
        assert_eq!(map.catalog("not_offered"), "not_offered");
    }

    #[test]
    fn the_rule_as_a_table() {
        let cases = [
            ("a", true),
            ("read_file", true),
            ("a-b_C9", true),
            ("", false),
            ("a.b", false),
            ("a b", false),
            ("é", false),
        ];
        for (name, ok) in cases {
            assert_eq!(is_wire_safe(name), ok, "{name:?}");
        }
        assert!(is_wire_safe(&"a".repeat(64)));
        assert!(!is_wire_safe(&"a".repeat(65)));
    }
}
