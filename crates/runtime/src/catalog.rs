//! The catalog: which tools a session offers, and exactly what a model receives for them.

use std::collections::BTreeMap;
use std::sync::Arc;

use tackle_protocol::ToolSpec;
use tackle_tool::DynTool;

/// Why a set of tools cannot form a catalog. These are programming errors in a tool, caught
/// when the catalog is built rather than when a model first calls the tool.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("tool name `{name}` is invalid; names match ^[A-Za-z0-9_-]{{1,64}}$")]
    BadName { name: String },
    #[error("tool `{name}` is registered twice")]
    Duplicate { name: String },
    #[error("tool `{name}`: {source}")]
    Schema {
        name: String,
        source: tackle_tool::SchemaError,
    },
}

struct Entry {
    tool: Arc<dyn DynTool>,
    spec: ToolSpec,
}

/// The registered tools in registration order, with their specs computed once.
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: BTreeMap<String, usize>,
}

impl Catalog {
    pub fn new(tools: Vec<Arc<dyn DynTool>>) -> Result<Self, CatalogError> {
        let mut entries = Vec::with_capacity(tools.len());
        let mut by_name = BTreeMap::new();
        for tool in tools {
            let name = tool.name().to_owned();
            if !valid_tool_name(&name) {
                return Err(CatalogError::BadName { name });
            }
            let input_schema = tool.input_schema().map_err(|source| CatalogError::Schema {
                name: name.clone(),
                source,
            })?;
            if by_name.insert(name.clone(), entries.len()).is_some() {
                return Err(CatalogError::Duplicate { name });
            }
            let spec = ToolSpec {
                name,
                description: tool.description().into_owned(),
                input_schema,
            };
            entries.push(Entry { tool, spec });
        }
        Ok(Self { entries, by_name })
    }

    /// The catalog exactly as a model receives it, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|e| e.spec.clone()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.by_name.get(name).map(|&i| &self.entries[i].tool)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// Registered names closest to `name`, best first (for `unknown_tool`).
    pub fn closest(&self, name: &str, n: usize) -> Vec<String> {
        let lower = name.to_ascii_lowercase();
        let mut scored: Vec<(f64, &str)> = self
            .names()
            .map(|cand| {
                let mut score = strsim::jaro_winkler(&lower, &cand.to_ascii_lowercase());
                if cand.contains(lower.as_str()) || lower.contains(cand) {
                    score += 0.2;
                }
                (score, cand)
            })
            .filter(|(score, _)| *score >= 0.6)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(n)
            .map(|(_, c)| c.to_owned())
            .collect()
    }
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
