//! `json_query`: a jq filter (run by jaq) over a JSON file or inline JSON (seed 003, "Data +
//! network").
//!
//! Runaway filters are bounded three ways: a deadline, a budget of generator steps, and an output
//! budget. The filter runs on a thread of its own; generators that can run forever (`range`,
//! `repeat`, `recurse`, `while`, `until`) are redefined to pass through a native check that
//! stops them once the deadline or step budget is spent, and outputs are counted as they are
//! produced. The caller waits at most the deadline, so `[range(1e9)]` or `repeat(1)` come back
//! promptly as `timeout` / `resource_limit`.
//!
//! Known gap: a user-defined recursion (`def f: 1, f; [f]`) is not instrumented; the call still
//! returns `timeout` at the deadline, but its thread runs on until it finishes or exhausts memory.

use std::borrow::Cow;
use std::cell::Cell;
use std::time::{Duration, Instant};

use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::{Fun, v};
use jaq_core::{Compiler, Ctx, Vars, data};
use jaq_json::Val;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::{FsError, ReadOptions, ReadTarget, RelPath};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::{fs_error, open_root, resolve_real};

/// How long a filter may run.
pub const QUERY_DEADLINE: Duration = Duration::from_secs(5);
/// How many items the instrumented generators may produce in one call.
pub const QUERY_MAX_STEPS: u64 = 1_000_000;
/// How much output (JSON text) a filter may produce.
pub const QUERY_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Largest JSON file json_query loads.
pub const QUERY_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

pub const INVALID_FILTER: ErrorCode = ErrorCode::new("invalid_filter");
pub const INVALID_JSON: ErrorCode = ErrorCode::new("invalid_json");
pub const FILTER_ERROR: ErrorCode = ErrorCode::new("filter_error");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonQueryArgs {
    /// The jq filter, e.g. `.dependencies | keys`.
    pub filter: String,
    /// A JSON file relative to the project root. Pass exactly one of `path` and `json`.
    pub path: Option<String>,
    /// Inline JSON text to run the filter on. Pass exactly one of `path` and `json`.
    pub json: Option<String>,
}

pub enum JsonQueryPlan {
    File { filter: String, rel: RelPath },
    Inline { filter: String, json: String },
}

pub struct JsonQuery;

impl Tool for JsonQuery {
    type Args = JsonQueryArgs;
    type Plan = JsonQueryPlan;

    fn name(&self) -> &str {
        "json_query"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Run a jq filter over a JSON file (`path`) or inline JSON (`json`) and return each \
             output as one line of compact JSON. Use this instead of reading a large JSON file \
             whole or piping it through jq in bash: extract just the fields you need \
             (`.scripts`, `.[] | select(.name == \"x\")`, `keys`). Filters are bounded: one \
             that runs too long or produces too much output is stopped with a clear error.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: JsonQueryArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<JsonQueryPlan>, ToolError> {
        // Compile now, so a bad filter is refused before anything is read.
        compile(&args.filter)?;
        match (args.path, args.json) {
            (Some(path), None) => {
                let resolved = resolve_real("json_query", cx.root, &path)?;
                let routing = Routing {
                    resources: resolved.resources(Action::Read),
                };
                let rel = resolved.rel;
                Ok(Prepared::new(
                    routing,
                    JsonQueryPlan::File {
                        filter: args.filter,
                        rel,
                    },
                ))
            }
            (None, Some(json)) => Ok(Prepared::new(
                Routing::default(),
                JsonQueryPlan::Inline {
                    filter: args.filter,
                    json,
                },
            )),
            (p, _) => Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "json_query: {}; pass `path` for a JSON file or `json` for inline JSON",
                    if p.is_some() {
                        "both path and json were given"
                    } else {
                        "neither path nor json was given"
                    }
                ),
            )
            .with_metadata(json!({ "path": "$.path" }))),
        }
    }

    async fn execute(
        &self,
        plan: JsonQueryPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let (filter, input, shown) = match plan {
            JsonQueryPlan::Inline { filter, json } => (filter, json.into_bytes(), None),
            JsonQueryPlan::File { filter, rel } => {
                let root = cx.root.clone();
                let bytes = tokio::task::spawn_blocking(move || read_json_file(&root, &rel))
                    .await
                    .map_err(|e| {
                        ToolError::new(ErrorCode::INTERNAL, format!("json_query: {e}"))
                    })??;
                (filter, bytes.1, Some(bytes.0))
            }
        };
        run_bounded(filter, input, shown, QUERY_DEADLINE).await
    }
}

fn read_json_file(root: &std::path::Path, rel: &RelPath) -> Result<(String, Vec<u8>), ToolError> {
    use std::io::Read;
    let shown = rel.as_str().to_owned();
    let target = open_root("json_query", root)?
        .open_read(rel, ReadOptions::default())
        .map_err(|e| match e {
            FsError::NotFound { .. } => ToolError::new(
                ErrorCode::NOT_FOUND,
                format!("json_query: {shown} does not exist; use glob or list_dir to find it"),
            ),
            other => fs_error("json_query", other),
        })?;
    let ReadTarget::File { file, meta } = target else {
        return Err(ToolError::new(
            crate::read_file::NOT_A_REGULAR_FILE,
            format!("json_query: {shown} is a directory; pass a JSON file"),
        ));
    };
    if meta.len() > QUERY_MAX_INPUT_BYTES {
        return Err(ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: {shown} is {} bytes, over the {QUERY_MAX_INPUT_BYTES} byte limit",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&file)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(&format!("json_query: {shown}"), &e))?;
    Ok((shown, bytes))
}

/// Generators redefined to pass through the step check (shadowing the core definitions).
const BOUNDED_DEFS: &str = "\
def repeat(f): def rec: __tackle_step | f, rec; rec;
def recurse(f): def rec: __tackle_step | ., (f | rec); rec;
def while(cond; update): def rec: __tackle_step | if cond then ., (update | rec) else empty end; rec;
def until(cond; update): def rec: __tackle_step | if cond then . else update | rec end; rec;
";

thread_local! {
    /// The running filter's deadline and remaining steps (one filter per thread).
    static BUDGET: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
    static EXCEEDED: Cell<Option<Exceeded>> = const { Cell::new(None) };
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Exceeded {
    Deadline,
    Steps,
}

/// Spend one step; `Err` once the budget or the deadline is gone.
fn step() -> Result<(), Exceeded> {
    BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some((deadline, left)) => {
            let why = if left == 0 {
                Some(Exceeded::Steps)
            } else if left % 1024 == 0 && Instant::now() > deadline {
                Some(Exceeded::Deadline)
            } else {
                None
            };
            if let Some(why) = why {
                EXCEEDED.with(|e| e.set(Some(why)));
                return Err(why);
            }
            b.set(Some((deadline, left - 1)));
            Ok(())
        }
    })
}

type D = data::JustLut<Val>;

fn step_error<'a>() -> jaq_core::Exn<'a, Val> {
    jaq_core::Error::str("json_query: resource budget exhausted").into()
}

fn bounded_funs() -> impl Iterator<Item = Fun<D>> {
    let tick: Fun<D> = jaq_core::native::run::<D>(("__tackle_step", v(0), |cv| {
        Box::new(std::iter::once(match step() {
            Ok(()) => Ok(cv.1),
            Err(_) => Err(step_error()),
        }))
    }));
    let range: Fun<D> = jaq_core::native::run::<D>(("range", v(3), |mut cv| {
        let by = cv.0.pop_var();
        let to = cv.0.pop_var();
        let from = cv.0.pop_var();
        let up = by > Val::from(0usize);
        let mut x = from;
        let mut done = false;
        Box::new(std::iter::from_fn(move || {
            if done {
                return None;
            }
            if step().is_err() {
                done = true;
                return Some(Err(step_error()));
            }
            let more = if up { x < to } else { x > to };
            if !more {
                return None;
            }
            let y = x.clone();
            match x.clone() + by.clone() {
                Ok(next) => x = next,
                Err(e) => {
                    done = true;
                    return Some(Err(e.into()));
                }
            }
            Some(Ok(y))
        }))
    }));
    let core =
        jaq_core::funs::<D>().filter(|(name, arity, _)| !(*name == "range" && arity.len() == 3));
    core.chain(jaq_std::funs::<D>())
        .chain(jaq_json::funs::<D>())
        .chain([tick, range])
}

type Compiled = jaq_core::Filter<D>;

fn compile(filter: &str) -> Result<Compiled, ToolError> {
    let bounded = jaq_core::load::parse(BOUNDED_DEFS, |p| p.defs()).unwrap_or_default();
    // Each definition replaces the core one in place: later core definitions build on it.
    let defs = jaq_core::defs()
        .map(|d| {
            bounded
                .iter()
                .find(|b| b.name == d.name && b.args.len() == d.args.len())
                .cloned()
                .unwrap_or(d)
        })
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let program = File {
        code: filter,
        path: (),
    };
    let modules = loader.load(&arena, program).map_err(|errs| {
        ToolError::new(
            INVALID_FILTER,
            format!(
                "json_query: the filter does not parse ({}); check the jq syntax",
                describe_errors(&errs)
            ),
        )
    })?;
    Compiler::default()
        .with_funs(bounded_funs())
        .compile(modules)
        .map_err(|errs| {
            let names: Vec<String> = errs
                .iter()
                .flat_map(|(_, es)| es.iter().map(|(name, _)| format!("`{name}`")))
                .collect();
            ToolError::new(
                INVALID_FILTER,
                format!(
                    "json_query: the filter does not compile: undefined {}; check the names \
                     and arities of the filters it uses",
                    names.join(", ")
                ),
            )
        })
}

fn describe_errors<T: std::fmt::Debug>(errs: &T) -> String {
    let s = format!("{errs:?}");
    s.chars().take(300).collect()
}

/// Run `filter` over `input` on a thread of its own, waiting at most `deadline`.
async fn run_bounded(
    filter: String,
    input: Vec<u8>,
    shown: Option<String>,
    deadline: Duration,
) -> Result<ToolCompletion, ToolError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("json_query".into())
        .spawn(move || {
            let _ = tx.send(run_filter(&filter, &input, shown.as_deref(), deadline));
        })
        .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("json_query: {e}")))?;
    match tokio::time::timeout(deadline + Duration::from_millis(250), rx).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(ToolError::new(
            ErrorCode::INTERNAL,
            "json_query: the filter thread stopped without a result",
        )),
        Err(_) => Err(timeout_error(deadline)),
    }
}

fn timeout_error(deadline: Duration) -> ToolError {
    ToolError::new(
        ErrorCode::TIMEOUT,
        format!(
            "json_query: the filter ran longer than {} s and was stopped; it probably generates \
             without end (repeat, recurse, range with a huge bound). Bound it with limit(n; f) \
             or first(f), or select less",
            deadline.as_secs_f64()
        ),
    )
}

fn run_filter(
    filter: &str,
    input: &[u8],
    shown: Option<&str>,
    deadline: Duration,
) -> Result<ToolCompletion, ToolError> {
    let compiled = compile(filter)?;
    let value = jaq_json::read::parse_single(input).map_err(|e| {
        let what = shown.map_or_else(|| "the inline json".to_owned(), |s| s.to_owned());
        ToolError::new(
            INVALID_JSON,
            format!("json_query: {what} is not valid JSON: {e}; pass a JSON document"),
        )
    })?;
    BUDGET.with(|b| b.set(Some((Instant::now() + deadline, QUERY_MAX_STEPS))));
    EXCEEDED.with(|e| e.set(None));
    let ctx = Ctx::<D>::new(&compiled.lut, Vars::new([]));
    let mut text = String::new();
    let mut outputs = 0u64;
    let started = Instant::now();
    for item in compiled.id.run((ctx, value)).map(jaq_core::unwrap_valr) {
        if let Some(why) = EXCEEDED.with(Cell::get) {
            return Err(exceeded_error(why, deadline));
        }
        match item {
            Ok(v) => {
                text.push_str(&v.to_string());
                text.push('\n');
                outputs += 1;
            }
            Err(e) => {
                return Err(ToolError::new(
                    FILTER_ERROR,
                    format!("json_query: the filter failed after {outputs} outputs: {e}"),
                ));
            }
        }
        if text.len() > QUERY_MAX_OUTPUT_BYTES {
            return Err(ToolError::new(
                ErrorCode::RESOURCE_LIMIT,
                format!(
                    "json_query: the filter produced over {QUERY_MAX_OUTPUT_BYTES} bytes of \
                     output ({outputs} outputs so far) and was stopped; select fewer fields or \
                     bound it with limit(n; f)"
                ),
            )
            .with_metadata(json!({ "outputs": outputs })));
        }
        if started.elapsed() > deadline {
            return Err(timeout_error(deadline));
        }
    }
    if let Some(why) = EXCEEDED.with(Cell::get) {
        return Err(exceeded_error(why, deadline));
    }
    if outputs == 0 {
        text.push_str("[the filter produced no output]\n");
    }
    Ok(ToolCompletion::single(text).with_metadata(json!({
        "path": shown,
        "outputs": outputs,
    })))
}

fn exceeded_error(why: Exceeded, deadline: Duration) -> ToolError {
    match why {
        Exceeded::Deadline => timeout_error(deadline),
        Exceeded::Steps => ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the filter generated over {QUERY_MAX_STEPS} values and was stopped; \
                 bound it with limit(n; f) or first(f), or use a smaller range"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(filter: &str, json: &str) -> Result<String, ToolError> {
        let c = run_filter(filter, json.as_bytes(), None, Duration::from_secs(5))?;
        match c.output {
            tackle_tool::CompletionOutput::Single(s) => Ok(s),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn filters_produce_one_compact_line_per_output() {
        let doc = r#"{"a": [1, 2, 3], "b": {"c": "x"}}"#;
        let cases = [
            (".a[]", "1\n2\n3\n"),
            (".b", "{\"c\":\"x\"}\n"),
            ("keys", "[\"a\",\"b\"]\n"),
            (".a | map(. * 2)", "[2,4,6]\n"),
            ("[limit(3; repeat(1))]", "[1,1,1]\n"),
            ("[range(3)]", "[0,1,2]\n"),
            ("[range(5; 0; -2)]", "[5,3,1]\n"),
            ("empty", "[the filter produced no output]\n"),
        ];
        for (filter, want) in cases {
            assert_eq!(run(filter, doc).unwrap(), want, "{filter}");
        }
    }

    #[test]
    fn bad_input_gets_stable_codes() {
        let cases = [
            (".a |", "{}", INVALID_FILTER),
            ("nosuchfn(1)", "{}", INVALID_FILTER),
            (".", "{not json", INVALID_JSON),
            (".a + 1", r#"{"a": "s"}"#, FILTER_ERROR),
        ];
        for (filter, json, code) in cases {
            assert_eq!(run(filter, json).unwrap_err().code, code, "{filter}");
        }
    }

    #[test]
    fn runaway_filters_are_stopped() {
        for filter in [
            "[range(1e9)]",
            "repeat(1)",
            "[repeat(1)]",
            "[recurse(. + 1)]",
            "last(range(1e12))",
            "[1 | while(true; .)]",
        ] {
            let err = run(filter, "0").unwrap_err();
            assert!(
                err.code == ErrorCode::RESOURCE_LIMIT || err.code == ErrorCode::TIMEOUT,
                "{filter}: {err}"
            );
        }
    }
}
