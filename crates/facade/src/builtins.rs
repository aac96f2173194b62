//! [`Builtins`]: the built-in tool set for an embedder, minus the tools it names.

use std::fmt;
use std::sync::Arc;

use tackle_tool::DynTool;
use tackle_tools::{BUILTIN_TOOL_NAMES, BuiltinConfig};

/// A name given to [`Builtins::except`] that is no built-in tool's, with the nearest names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownToolName {
    /// The name as given.
    pub name: String,
    /// Built-in names close to it, best first (empty when none is close).
    pub nearest: Vec<String>,
}

impl fmt::Display for UnknownToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a built-in tool", self.name)?;
        match self.nearest.as_slice() {
            [] => write!(f, "; the names are BUILTIN_TOOL_NAMES"),
            nearest => write!(f, "; did you mean `{}`?", nearest.join("`, `")),
        }
    }
}

impl std::error::Error for UnknownToolName {}

/// The built-in tools, built as the binary builds them: from a [`BuiltinConfig`] (its
/// defaults unless given one), in two passes so that no tool's description points the model
/// at a tool left out, plus the runtime's `retrieve_raw` (which undoes the digests that
/// [`crate::runtime::RuntimeConfig`] turns on by default; leave it out with digests off).
///
/// Some built-ins are built only when their settings ask for them: `fetch_url` needs a URL
/// scope, `alert` targets, `record_plan` a plan mode. Others of [`BUILTIN_TOOL_NAMES`] belong to
/// other crates (the agent loop's, the goal tools); naming them in [`Builtins::except`] is
/// allowed and changes nothing.
///
/// ```
/// let tools = tackle::tools::Builtins::new().except(&["bash", "bash_stdin"]).build()?;
/// assert!(tools.iter().all(|t| t.name() != "bash"));
/// assert!(tackle::tools::Builtins::new().except(&["bsah"]).build().is_err());
/// # Ok::<(), tackle::tools::UnknownToolName>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builtins {
    config: BuiltinConfig,
    except: Vec<String>,
}

impl Builtins {
    /// Every built-in the default configuration builds.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every built-in `config` builds. Its `registered` field is filled by [`Builtins::build`].
    pub fn with_config(config: BuiltinConfig) -> Self {
        Self {
            config,
            except: Vec::new(),
        }
    }

    /// Leaves out the tools named (added to any named before). An unknown name fails
    /// [`Builtins::build`].
    pub fn except(mut self, names: &[&str]) -> Self {
        self.except.extend(names.iter().map(|n| (*n).to_owned()));
        self
    }

    /// The tools, in catalog order; `Err` on the first name given to [`Builtins::except`]
    /// that no built-in has.
    pub fn build(self) -> Result<Vec<Arc<dyn DynTool>>, UnknownToolName> {
        if let Some(name) = self
            .except
            .iter()
            .find(|n| !BUILTIN_TOOL_NAMES.contains(&n.as_str()))
        {
            return Err(UnknownToolName {
                name: name.clone(),
                nearest: nearest(name),
            });
        }
        let kept = |t: &Arc<dyn DynTool>| !self.except.iter().any(|n| n == t.name());
        // First pass: which tools will be there; second: build them knowing it.
        let registered = all(&self.config)
            .iter()
            .filter(|t| kept(t))
            .map(|t| t.name().to_owned())
            .collect();
        let config = BuiltinConfig {
            registered,
            ..self.config.clone()
        };
        Ok(all(&config).into_iter().filter(|t| kept(t)).collect())
    }
}

/// Every built-in the default configuration builds ([`Builtins::new`]).
pub fn builtins() -> Vec<Arc<dyn DynTool>> {
    all(&BuiltinConfig::default())
}

/// Every built-in the default configuration builds but those named; an unknown name is an
/// error naming the nearest built-ins, so a typo fails loudly.
pub fn builtins_except(names: &[&str]) -> Result<Vec<Arc<dyn DynTool>>, UnknownToolName> {
    Builtins::new().except(names).build()
}

fn all(config: &BuiltinConfig) -> Vec<Arc<dyn DynTool>> {
    let mut tools = tackle_tools::builtin_tools(config);
    tools.push(Arc::new(tackle_runtime::RetrieveRaw));
    tools
}

/// Up to three built-in names within reach of `name`, best first.
fn nearest(name: &str) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = BUILTIN_TOOL_NAMES
        .iter()
        .map(|cand| (strsim::jaro_winkler(&lower, cand), *cand))
        .filter(|(score, _)| *score >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_names_the_tool_it_meant() {
        let err = builtins_except(&["bahs"]).err().map(|e| e.nearest);
        assert_eq!(
            err.as_ref().and_then(|n| n.first()).map(String::as_str),
            Some("bash")
        );
        let err = builtins_except(&["reed_file"]).err().map(|e| e.nearest);
        assert_eq!(
            err.as_ref().and_then(|n| n.first()).map(String::as_str),
            Some("read_file")
        );
    }

    #[test]
    fn named_tools_are_left_out_and_the_rest_kept() {
        let Ok(tools) = builtins_except(&["bash", "write_file", "ask_user"]) else {
            panic!("known names refused");
        };
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert!(!names.contains(&"bash") && !names.contains(&"write_file"));
        // bash_stdin is built only beside bash.
        assert!(!names.contains(&"bash_stdin"));
        assert!(names.contains(&"read_file") && names.contains(&"retrieve_raw"));
        assert_eq!(names.len(), builtins().len() - 3);
    }
}
