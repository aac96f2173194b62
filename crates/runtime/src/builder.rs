//! [`RuntimeBuilder`]: a [`Runtime`] assembled from its parts by name, for a program that
//! embeds the runtime, with every mistake in the assembly a [`RuntimeBuildError`] that says
//! what to change.
//!
//! It lives here rather than in the `tackle` facade because `Runtime::builder()` is an
//! associated function of [`Runtime`], and everything it assembles (catalog, gate, approver,
//! observers, configuration) is this crate's; the facade's built-in tool set arrives as plain
//! `Arc<dyn DynTool>` values through [`RuntimeBuilder::tools`].
//!
//! Key decision: the gate has no default. A runtime without one would either ask no one
//! (every call runs) or refuse everything, and neither is safe to pick silently; `build` names
//! the two setters instead. Rejected: [`AllowAll`] by default, which would make the shortest
//! embedding the one with no permission checks.

use std::sync::Arc;

use tackle_gate::Policy;
use tackle_tool::DynTool;

use crate::approval::Approver;
use crate::catalog::{Catalog, CatalogError};
use crate::config::RuntimeConfig;
use crate::dispatch::Runtime;
use crate::gate::GateHook;
use crate::policy_gate::PolicyGate;
use crate::progress::{EventObserver, ProgressObserver};

#[cfg(doc)]
use crate::gate::AllowAll;

/// Assembles a [`Runtime`]: `Runtime::builder().tools(…).tool(…).policy(…).build()?`.
///
/// Required: a gate, through [`RuntimeBuilder::policy`] or [`RuntimeBuilder::gate`]. The rest
/// has defaults: no tools, [`RuntimeConfig::default`], descriptions left as the tools wrote
/// them, the headless approver (an `ask` is refused), no observers.
#[must_use = "a builder does nothing until `build` is called"]
pub struct RuntimeBuilder {
    tools: Vec<Arc<dyn DynTool>>,
    known_builtins: &'static [&'static str],
    gate: Option<Arc<dyn GateHook>>,
    config: RuntimeConfig,
    approver: Option<Arc<dyn Approver>>,
    observer: Option<Arc<dyn ProgressObserver>>,
    event_observer: Option<Arc<dyn EventObserver>>,
}

/// Why [`RuntimeBuilder::build`] made no runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeBuildError {
    /// Neither `policy` nor `gate` was set.
    #[error(
        "the runtime has no gate; call .policy(policy) to check calls against rules, or \
         .gate(Arc::new(AllowAll)) to run every call unasked"
    )]
    MissingGate,
    /// Two tools share a name.
    #[error(
        "two tools are named `{name}`; leave the built-in out (Builtins::except) or rename \
         your own tool"
    )]
    DuplicateTool {
        /// The name both have.
        name: String,
    },
    /// A tool's name is not one a model may call.
    #[error(
        "tool name `{name}` is invalid; rename it to match ^[A-Za-z0-9_-]{{1,64}}$ (letters, \
         digits, `_` and `-`, at most 64)"
    )]
    BadToolName {
        /// The name as given.
        name: String,
    },
    /// A tool's argument schema cannot be parsed strictly.
    #[error("tool `{name}`: {source}")]
    Schema {
        /// The tool whose schema was refused.
        name: String,
        /// What is wrong with it, and the fix.
        source: tackle_tool::SchemaError,
    },
}

impl From<CatalogError> for RuntimeBuildError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::BadName { name } => Self::BadToolName { name },
            CatalogError::Duplicate { name } => Self::DuplicateTool { name },
            CatalogError::Schema { name, source } => Self::Schema { name, source },
        }
    }
}

impl Runtime {
    /// A [`RuntimeBuilder`] with no tools and no gate.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            tools: Vec::new(),
            known_builtins: &[],
            gate: None,
            config: RuntimeConfig::default(),
            approver: None,
            observer: None,
            event_observer: None,
        }
    }
}

impl RuntimeBuilder {
    /// Adds `tools` to the catalog, after those added before (catalog order is the order the
    /// model is shown them).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn DynTool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds one tool to the catalog.
    pub fn tool(mut self, tool: impl DynTool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// The built-in names whose absence the descriptions should follow (seed 003,
    /// "Descriptions follow the catalog"): a sentence naming one of them that is not in the
    /// catalog is dropped. Pass `BUILTIN_TOOL_NAMES` when the catalog holds built-ins.
    pub fn known_builtins(mut self, names: &'static [&'static str]) -> Self {
        self.known_builtins = names;
        self
    }

    /// Checks every call against `policy`'s rules, mode and scopes ([`PolicyGate`]). Replaces
    /// a gate set before.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.gate = Some(Arc::new(PolicyGate::new(policy)));
        self
    }

    /// Asks `gate` about every call. Replaces a policy or gate set before.
    pub fn gate(mut self, gate: Arc<dyn GateHook>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Output limits, timeouts, digests ([`RuntimeConfig::default`] unless set).
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// Who answers the gate's `ask`s (default: no one, so an ask is refused).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Told of every running call's progress.
    pub fn progress_observer(mut self, observer: Arc<dyn ProgressObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Told of every event once it is recorded.
    pub fn event_observer(mut self, observer: Arc<dyn EventObserver>) -> Self {
        self.event_observer = Some(observer);
        self
    }

    /// The runtime, or what to change: a missing gate, two tools of one name, a bad name or
    /// schema.
    pub fn build(self) -> Result<Runtime, RuntimeBuildError> {
        let gate = self.gate.ok_or(RuntimeBuildError::MissingGate)?;
        let catalog = Catalog::build(self.tools, self.known_builtins)?;
        let mut runtime = Runtime::new(catalog, gate, self.config);
        if let Some(approver) = self.approver {
            runtime = runtime.with_approver(approver);
        }
        if let Some(observer) = self.observer {
            runtime = runtime.with_observer(observer);
        }
        if let Some(observer) = self.event_observer {
            runtime = runtime.with_event_observer(observer);
        }
        Ok(runtime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::AllowAll;

    fn builtin(name: &str) -> Arc<dyn DynTool> {
        let tools = tackle_tools::builtin_tools(&tackle_tools::BuiltinConfig::default());
        tools
            .into_iter()
            .find(|t| t.name() == name)
            .unwrap_or_else(|| panic!("no built-in {name}"))
    }

    #[test]
    fn a_runtime_without_a_gate_names_both_setters() {
        let err = Runtime::builder()
            .tools([builtin("read_file")])
            .build()
            .err();
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains(".policy(") && text.contains(".gate("),
            "{text}"
        );
    }

    #[test]
    fn two_tools_of_one_name_are_a_typed_error_naming_it() {
        let err = Runtime::builder()
            .gate(Arc::new(AllowAll))
            .tools([builtin("read_file"), builtin("read_file")])
            .build()
            .err();
        let Some(RuntimeBuildError::DuplicateTool { name }) = &err else {
            panic!("expected a duplicate: {err:?}");
        };
        assert_eq!(name, "read_file");
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("rename"), "{text}");
    }

    #[test]
    fn the_built_runtime_holds_the_tools_in_order() {
        let yolo = Policy::new(
            Vec::new(),
            tackle_gate::Mode::Yolo,
            tackle_gate::PathScope::default(),
            tackle_gate::UrlScope::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let built = Runtime::builder()
            .tools([builtin("read_file")])
            .tools([builtin("grep")])
            .policy(yolo)
            .build();
        let Ok(runtime) = built else {
            panic!("refused");
        };
        let names: Vec<&str> = runtime.catalog().names().collect();
        assert_eq!(names, ["read_file", "grep"]);
    }
}
