//! [`FnTool`]: a tool from a typed async function.
//!
//! It implements the typed [`Tool`] trait like every built-in, so its arguments are parsed
//! strictly into `A` against the schema generated from `A`, its permission keys go to the
//! same gate, and its output is retained and its calls recorded by the same runtime layers.

use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use tackle_protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

type PermissionFn<A> = Box<dyn Fn(&A) -> Vec<PermissionResource> + Send + Sync>;

/// The function behind a [`FnTool`]: implemented for every
/// `Fn(A, ExecuteContext) -> impl Future<Output = Result<ToolCompletion, ToolError>>` that is
/// `Send + Sync + 'static` and whose future is `Send + 'static`. Not implemented by hand.
pub trait ToolFn<A>: Send + Sync + 'static {
    /// The future a call returns.
    type Future: Future<Output = Result<ToolCompletion, ToolError>> + Send + 'static;
    /// Runs one call.
    fn call(&self, args: A, cx: ExecuteContext) -> Self::Future;
}

impl<A, F, Fut> ToolFn<A> for F
where
    F: Fn(A, ExecuteContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolCompletion, ToolError>> + Send + 'static,
{
    type Future = Fut;
    fn call(&self, args: A, cx: ExecuteContext) -> Fut {
        self(args, cx)
    }
}

/// A tool whose calls run an async function of typed arguments.
///
/// `A`, the arguments, derives `serde::Deserialize` with `#[serde(deny_unknown_fields)]` and
/// `schemars::JsonSchema`; the catalog refuses a schema that admits unknown fields. Doc
/// comments on its fields become the schema's descriptions, which the model reads.
///
/// What it declares, and its defaults:
///
/// - [`FnTool::read_only`]: **`false` unless set.** A tool that is not read-only is treated as
///   one with effects: its calls are acknowledged only once their events are synced to disk,
///   the gate's `plan` mode denies it, and a poller may not call it repeatedly. Say
///   `.read_only(true)` for a function that changes nothing.
/// - [`FnTool::parallel`]: calls run one at a time unless set ([`Concurrency::Exclusive`]).
/// - [`FnTool::permission`]: the permission keys of a call beyond `tool.<name>` (none unless
///   set), asked of the gate before the call runs.
/// - [`FnTool::permission_actions`]: the actions those keys use (`read`, `fetch`, …), which the
///   catalog's readers see as a built-in's ([`Tool::permission_actions`]): whether any rule
///   could allow the tool (`Policy::advertises`), the MCP hints. None unless set; once set, a
///   key of another action is refused as `tool_protocol_violation` naming the action to add.
///
/// The function receives the [`ExecuteContext`]: the project root (`cx.root`), the session and
/// call ids, a cancellation token, and the output sink for streaming. It returns a
/// [`ToolCompletion`] (usually [`ToolCompletion::single`]) or a [`ToolError`], which the model
/// sees as an error result with its code.
///
/// The runtime gates the keys a tool declares; it does not confine what the function then
/// opens. A path from the model is the function's to check (the `custom_tool` example refuses
/// anything but plain components under the root), and the key it declares should name the
/// path it will actually open.
pub struct FnTool<A, F> {
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    read_only: bool,
    concurrency: Concurrency,
    permission: Option<PermissionFn<A>>,
    actions: &'static [&'static str],
    function: F,
    _args: PhantomData<fn() -> A>,
}

impl<A, F> FnTool<A, F>
where
    A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
    F: ToolFn<A>,
{
    /// A tool named `name` (`^[A-Za-z0-9_-]{1,64}$`, checked when the catalog is built) that the
    /// model is told about by `description`: what it does and when to prefer it.
    pub fn new<Fut>(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        function: F,
    ) -> Self
    where
        F: Fn(A, ExecuteContext) -> Fut,
        Fut: Future<Output = Result<ToolCompletion, ToolError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            description: description.into(),
            read_only: false,
            concurrency: Concurrency::Exclusive,
            permission: None,
            actions: &[],
            function,
            _args: PhantomData,
        }
    }

    /// Whether the tool never changes anything (default `false`; see [`FnTool`]).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Lets its calls run beside the other parallel calls of a batch.
    pub fn parallel(mut self) -> Self {
        self.concurrency = Concurrency::Parallel;
        self
    }

    /// The permission keys of a call, from its arguments: where it lands
    /// (`PermissionResource::read(path)` is the key `read:<path>`). The gate is asked about
    /// them and `tool.<name>` together, as for a built-in, so a rule over `read:` paths holds
    /// for this tool too; the `read:` keys are also recorded as the sources of what it returns.
    pub fn permission(
        mut self,
        keys: impl Fn(&A) -> Vec<PermissionResource> + Send + Sync + 'static,
    ) -> Self {
        self.permission = Some(Box::new(keys));
        self
    }

    /// The actions of the keys [`FnTool::permission`] returns (`&["read"]`, `&["fetch"]`,
    /// `&["tool.deploy.env"]`), declared as a built-in declares them: a policy under which no
    /// rule could allow any of them leaves the tool out of a catalog it filters, and the MCP
    /// server calls a `fetch` or `message` tool open-world. A call whose keys use an action
    /// not declared here is refused before the gate is asked.
    pub fn permission_actions(mut self, actions: &'static [&'static str]) -> Self {
        self.actions = actions;
        self
    }
}

impl<A, F> Tool for FnTool<A, F>
where
    A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
    F: ToolFn<A>,
{
    type Args = A;
    type Plan = A;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> Cow<'static, str> {
        self.description.clone()
    }

    fn concurrency(&self) -> Concurrency {
        self.concurrency
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        self.actions
    }

    fn prepare(&self, args: A, _: &PrepareContext<'_>) -> Result<Prepared<A>, ToolError> {
        let resources = match &self.permission {
            Some(keys) => keys(&args),
            None => Vec::new(),
        };
        if !self.actions.is_empty()
            && let Some(stray) = resources
                .iter()
                .find(|r| !self.actions.contains(&r.action.as_str()))
        {
            let action = stray.action.as_str();
            return Err(ToolError::new(
                ErrorCode::PROTOCOL,
                format!(
                    "{}: the key `{action}:{}` uses the action `{action}`, which its \
                     permission_actions {:?} do not declare; add `{action}` to them",
                    self.name, stray.target, self.actions
                ),
            ));
        }
        Ok(Prepared::new(Routing { resources }, args))
    }

    fn execute(
        &self,
        args: A,
        cx: ExecuteContext,
    ) -> impl Future<Output = Result<ToolCompletion, ToolError>> + Send {
        self.function.call(args, cx)
    }
}
