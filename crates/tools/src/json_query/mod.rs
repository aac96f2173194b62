//! `json_query`: a jq filter (run by jaq) over a JSON file or inline JSON (seed 003, "Data +
//! network").
//!
//! What the engine can do beyond the tool's description: nothing but pure computation on the
//! document it is given, within the budgets below. It offers only [`engine::OFFERED`]'s
//! builtins: no environment (`env`, `$ENV`), no further input (`input`, `inputs`,
//! `input_filename`), no end of the process (`halt`, `halt_error`), no log or stderr (`debug`,
//! `stderr`), no time zone (`localtime`, `strflocaltime`), no modules; naming one is refused
//! with an error that says why ([`engine::refusal`]), in json_query and in wait_and_verify's
//! `expect_jq` alike. It reads the clock (`now`). Its values hold at most
//! [`QUERY_MAX_MEMORY_BYTES`] ([`memory`], `guards.rs`).
//!
//! Runaway filters are bounded four ways: a deadline, a budget of generator steps, a memory
//! budget, and an output budget. The filter runs on a thread of its own; generators that can run forever (`range`,
//! `repeat`, `recurse`, `while`, `until`) are redefined to pass through a native check that
//! stops them once the deadline or step budget is spent, and outputs are counted as they are
//! produced. The caller waits at most the deadline, so `[range(1e9)]` or `repeat(1)` come back
//! promptly as `timeout` / `resource_limit`.
//!
//! No input can exhaust the stack ([`nesting`]): JSON and filter text are bounded before the
//! recursive parsers read them (`invalid_arguments`), both are parsed on a thread with
//! [`crate::stack::PARSER_STACK_BYTES`] of stack, and every definition's body — the user's
//! and the standard library's — first passes a native check of how much of that stack is in
//! use, so a runaway recursion (`def f: 1 + f; f`, `def f: 1, f; [f]`) stops as
//! `resource_limit` and its thread ends with it. Names starting with `__tackle` are reserved
//! for those checks: a filter cannot redefine them.

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

#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod builtins_tests;
pub mod engine;
mod guards;
pub mod memory;
pub mod nesting;

use nesting::OverLimit;

/// How long a filter may run.
pub const QUERY_DEADLINE: Duration = Duration::from_secs(5);
/// How many items the instrumented generators may produce in one call.
pub const QUERY_MAX_STEPS: u64 = 1_000_000;
/// How many times a filter may call definitions (its own and the library's: `select`, `map`),
/// which bounds what a recursion that does not deepen the stack (`def f: 1, f; [f]`) can build.
pub const QUERY_MAX_CALLS: u64 = 10_000_000;
/// How much output (JSON text) a filter may produce.
pub const QUERY_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The stack of the thread a filter runs on. Definitions stop at
/// [`nesting::MAX_EVAL_STACK_BYTES`] of it; the rest is for jaq's own recursion over deep
/// values (dropping, comparing, merging them), which no check reaches: the memory budget
/// bounds their depth (each level takes at least two allocations, about 56 bytes, so about
/// 1.2 million levels), and dropping one million levels took over 64 MiB in a debug build.
/// Only what a filter recurses into is touched; the rest stays reserved address space.
pub const FILTER_STACK_BYTES: usize = 1024 * 1024 * 1024;
/// How many bytes the values a filter builds may hold at once (its input not counted).
pub const QUERY_MAX_MEMORY_BYTES: usize = 64 * 1024 * 1024;
/// Largest JSON file json_query loads.
pub const QUERY_MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

pub const INVALID_FILTER: ErrorCode = ErrorCode::new("invalid_filter");
pub const INVALID_JSON: ErrorCode = ErrorCode::new("invalid_json");
pub const FILTER_ERROR: ErrorCode = ErrorCode::new("filter_error");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonQueryArgs {
    /// The jq expression, e.g. `.dependencies | keys`.
    pub expression: String,
    /// A JSON file relative to the project root. Pass exactly one of `path` and `data`.
    pub path: Option<String>,
    /// Inline JSON text to run the expression on. Pass exactly one of `path` and `data`.
    pub data: Option<String>,
}

pub enum JsonQueryPlan {
    File { filter: String, rel: RelPath },
    Inline { filter: String, json: String },
}

/// The `json_query` built-in.
pub struct JsonQuery;

impl Tool for JsonQuery {
    type Args = JsonQueryArgs;
    type Plan = JsonQueryPlan;

    fn name(&self) -> &str {
        "json_query"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Run a jq expression over a JSON file (`path`) or inline JSON text (`data`) and return each \
             output as one line of compact JSON. Use this instead of reading a large JSON file \
             whole or piping it through jq in bash: extract just the fields you need \
             (`.scripts`, `.[] | select(.name == \"x\")`, `keys`). Expressions are bounded: one \
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
        crate::stack::on_parser_stack("json_query", || compile(&args.expression).map(drop))??;
        match (args.path, args.data) {
            (Some(path), None) => {
                let resolved = resolve_real("json_query", cx.root, &path)?;
                let routing = Routing {
                    resources: resolved.resources(Action::Read),
                };
                let rel = resolved.rel;
                Ok(Prepared::new(
                    routing,
                    JsonQueryPlan::File {
                        filter: args.expression,
                        rel,
                    },
                ))
            }
            (None, Some(json)) => {
                if let Err(OverLimit(why)) = nesting::check_json(json.as_bytes()) {
                    return Err(ToolError::new(
                        ErrorCode::INVALID_ARGUMENTS,
                        format!("json_query: the inline data {why}; pass a shallower document"),
                    )
                    .with_metadata(json!({ "path": "$.data" })));
                }
                Ok(Prepared::new(
                    Routing::default(),
                    JsonQueryPlan::Inline {
                        filter: args.expression,
                        json,
                    },
                ))
            }
            (p, _) => Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "json_query: {}; pass `path` for a JSON file or `data` for inline JSON",
                    if p.is_some() {
                        "both path and data were given"
                    } else {
                        "neither path nor data was given"
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
                let scope = cx.read_scope.clone();
                let bytes = tackle_tool::run_tool_blocking("json_query", move || {
                    read_json_file(&root, &rel).map_err(|e| {
                        crate::nearest::hint_not_found(e, &root, scope.as_ref(), rel.as_str())
                    })
                })
                .await??;
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
    // The same bound as inline data: a file is the repository's input, and jaq's parser
    // recurses once per level.
    if let Err(OverLimit(why)) = nesting::check_json(&bytes) {
        return Err(ToolError::new(
            ErrorCode::INVALID_ARGUMENTS,
            format!("json_query: {shown} {why}; query a shallower document"),
        ));
    }
    Ok((shown, bytes))
}

/// Generators redefined to pass through the step check (shadowing the core definitions).
const BOUNDED_DEFS: &str = "\
def repeat(f): def rec: __tackle_step | f, rec; rec;
def recurse(f): def rec: __tackle_step | ., (f | rec); rec;
def while(cond; update): def rec: __tackle_step | if cond then ., (update | rec) else empty end; rec;
def until(cond; update): def rec: __tackle_step | if cond then . else update | rec end; rec;
";

/// `..`, which jaq runs natively (unbounded over a value whose sharing makes it huge), as a
/// definition: each value it visits is a definition call, checked like any other. First in
/// the prelude, as jaq's own definitions use `..` (`paths`, `walk`).
const RECURSE_DEF: &str = "def __tackle_recurse: def rec: ., (.[]? | rec); rec;";
const RECURSE: &str = "__tackle_recurse";

thread_local! {
    /// The running filter's deadline and remaining steps (one filter per thread).
    static BUDGET: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
    static EXCEEDED: Cell<Option<Exceeded>> = const { Cell::new(None) };
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Exceeded {
    Deadline,
    Steps,
    /// Definitions were called more than [`QUERY_MAX_CALLS`] times.
    Calls,
    /// A definition was called with more than [`nesting::MAX_EVAL_STACK_BYTES`] of stack in use.
    Stack,
    /// The filter's values would hold more than [`QUERY_MAX_MEMORY_BYTES`].
    Memory,
}

/// Record that a budget is spent: every later check fails, and the call ends with its error.
fn exceed(why: Exceeded) {
    EXCEEDED.with(|e| {
        if e.get().is_none() {
            e.set(Some(why));
        }
    });
}

/// Spend one step; `Err` once the budget or the deadline is gone.
fn step() -> Result<(), Exceeded> {
    BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some((deadline, left)) => {
            let why = if left == 0 {
                Some(Exceeded::Steps)
            } else if memory::over() {
                Some(Exceeded::Memory)
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

/// The check every definition's body starts with: fail once the thread's stack is too deep,
/// once any budget is spent, or (every 1,024 calls) once the deadline has passed.
fn depth_check() -> Result<(), Exceeded> {
    if let Some(why) = EXCEEDED.with(Cell::get) {
        return Err(why);
    }
    let why = if nesting::stack_in_use() > nesting::MAX_EVAL_STACK_BYTES {
        Some(Exceeded::Stack)
    } else if memory::over() {
        Some(Exceeded::Memory)
    } else {
        let calls = CALLS.with(|c| {
            c.set(c.get().wrapping_add(1));
            c.get()
        });
        if calls > QUERY_MAX_CALLS {
            Some(Exceeded::Calls)
        } else {
            let late = calls.is_multiple_of(1024)
                && BUDGET.with(|b| {
                    b.get()
                        .is_some_and(|(deadline, _)| Instant::now() > deadline)
                });
            late.then_some(Exceeded::Deadline)
        }
    };
    match why {
        Some(why) => {
            EXCEEDED.with(|e| e.set(Some(why)));
            Err(why)
        }
        None => Ok(()),
    }
}

thread_local! {
    /// Definition calls so far on this thread (for the deadline check in [`depth_check`]).
    static CALLS: Cell<u64> = const { Cell::new(0) };
    /// Checks so far of [`deadline_check`].
    static TICKS: Cell<u64> = const { Cell::new(0) };
}

/// For checks that run per item (an array's elements): every 1,024th looks at the clock,
/// and fails once the deadline has passed or any budget is spent.
fn deadline_check() -> Result<(), Exceeded> {
    if let Some(why) = EXCEEDED.with(Cell::get) {
        return Err(why);
    }
    let n = TICKS.with(|t| {
        t.set(t.get().wrapping_add(1));
        t.get()
    });
    let late = n.is_multiple_of(1024)
        && BUDGET.with(|b| {
            b.get()
                .is_some_and(|(deadline, _)| Instant::now() > deadline)
        });
    if late {
        exceed(Exceeded::Deadline);
        return Err(Exceeded::Deadline);
    }
    Ok(())
}

/// The name of the check ([`depth_check`]) at the head of every definition body.
const DEPTH_CHECK: &str = "__tackle_depth";

type D = data::JustLut<Val>;

fn step_error<'a>() -> jaq_core::Exn<'a, Val> {
    jaq_core::Error::str("json_query: resource budget exhausted").into()
}

fn bounded_funs() -> Vec<Fun<D>> {
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
    // An identity for paths and updates too, so `path(f)` and `f |= g` work through any
    // definition.
    let depth: Fun<D> = (
        DEPTH_CHECK,
        v(0),
        jaq_core::Native::new(|cv| {
            Box::new(std::iter::once(match depth_check() {
                Ok(()) => Ok(cv.1),
                Err(_) => Err(step_error()),
            }))
        })
        .with_paths(|cv| {
            Box::new(std::iter::once(match depth_check() {
                Ok(()) => Ok(cv.1),
                Err(_) => Err(step_error()),
            }))
        })
        .with_update(|cv, f| match depth_check() {
            Ok(()) => f(cv.1),
            Err(_) => Box::new(std::iter::once(Err(step_error()))),
        }),
    );
    engine::natives([tick, range, depth])
}

/// Every builtin the engine offers a filter, by name and arity: its natives and definitions,
/// tackle's own helpers (`__tackle…`, which a filter cannot name) left out.
pub fn offered_builtins() -> Vec<(String, usize)> {
    let natives = bounded_funs().into_iter().map(|(n, a, _)| (n, a.len()));
    let defs = engine::definitions(|_| None)
        .into_iter()
        .map(|d| (d.name, d.args.len()));
    let mut all: Vec<(String, usize)> = natives
        .chain(defs)
        .filter(|(n, _)| !n.starts_with("__tackle"))
        .map(|(n, a)| (n.to_owned(), a))
        .collect();
    all.sort();
    all.dedup();
    all
}

type Compiled = jaq_core::Filter<D>;

/// Compile a filter with every definition instrumented ([`instrument`]). Recursive: run on a
/// thread with [`crate::stack::PARSER_STACK_BYTES`] of stack.
fn compile(filter: &str) -> Result<Compiled, ToolError> {
    if let Err(OverLimit(why)) = nesting::check_filter(filter) {
        return Err(ToolError::new(
            ErrorCode::INVALID_ARGUMENTS,
            format!("json_query: the expression {why}; pass a shorter, shallower expression"),
        )
        .with_metadata(json!({ "path": "$.expression" })));
    }
    if filter.contains("__tackle") {
        return Err(ToolError::new(
            INVALID_FILTER,
            "json_query: names starting with `__tackle` are reserved; rename them",
        ));
    }
    let bounded = jaq_core::load::parse(BOUNDED_DEFS, |p| p.defs()).unwrap_or_default();
    let recurse = jaq_core::load::parse(RECURSE_DEF, |p| p.defs()).unwrap_or_default();
    // Each definition replaces the core one in place: later core definitions build on it.
    let mut defs: Vec<_> = recurse
        .into_iter()
        .chain(engine::definitions(|d| {
            bounded
                .iter()
                .find(|b| b.name == d.name && b.args.len() == d.args.len())
                .cloned()
        }))
        .map(instrument_def)
        .collect();
    // The filter becomes the body of a definition after the prelude, so it is instrumented
    // like one. If it does not parse as a term, the loader below reports why.
    let main = jaq_core::load::parse(filter, |p| p.term());
    let code = match main {
        Some(term) => {
            defs.push(jaq_core::load::parse::Def {
                name: MAIN,
                args: Vec::new(),
                body: instrument(term),
            });
            MAIN
        }
        None => return Err(unparsed(filter)),
    };
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let program = File { code, path: () };
    let modules = loader.load(&arena, program).map_err(|errs| {
        ToolError::new(
            INVALID_FILTER,
            format!(
                "json_query: the expression does not parse ({}); check the jq syntax",
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
            let refused = errs
                .iter()
                .flat_map(|(_, es)| es.iter())
                .find_map(|(name, _)| engine::refusal(name));
            if let Some(why) = refused {
                return ToolError::new(INVALID_FILTER, why);
            }
            ToolError::new(
                INVALID_FILTER,
                format!(
                    "json_query: the expression does not compile: undefined {}; check the names \
                     and arities of the filters it uses",
                    names.join(", ")
                ),
            )
        })
}

/// The refusal of a filter that does not parse as one term: the loader's own errors.
fn unparsed(filter: &str) -> ToolError {
    let arena = Arena::default();
    let program = File {
        code: filter,
        path: (),
    };
    let why = match Loader::new(jaq_core::defs()).load(&arena, program) {
        Err(errs) => describe_errors(&errs),
        // It parses only as a module (`include`, `import`): nothing to include from here.
        Ok(_) => "modules (import, include) are not supported".to_owned(),
    };
    ToolError::new(
        INVALID_FILTER,
        format!("json_query: the expression does not parse ({why}); check the jq syntax"),
    )
}

/// The name the filter is compiled under: a definition, so [`instrument`] covers it.
const MAIN: &str = "__tackle_main";

type Term<'s> = jaq_core::load::parse::Term<&'s str>;
type Def<'s> = jaq_core::load::parse::Def<&'s str, Term<'s>>;

fn instrument_def<'s>(def: Def<'s>) -> Def<'s> {
    Def {
        name: def.name,
        args: def.args,
        body: instrument(def.body),
    }
}

/// `body` with every definition in it instrumented, and when `body` is a definition's, with
/// [`DEPTH_CHECK`] piped in front: `__tackle_depth | body` (`|` binds loosest, so this is
/// `body` after a check that passes its input through). The match is exhaustive, so a new
/// kind of term in jaq is a compile error here rather than a definition left unchecked.
fn instrument<'s>(term: Term<'s>) -> Term<'s> {
    let checked = instrument_inner(term);
    Term::BinOp(
        Box::new(Term::Call(DEPTH_CHECK, Vec::new())),
        jaq_core::load::parse::BinaryOp::Pipe(None),
        Box::new(checked),
    )
}

fn instrument_inner<'s>(term: Term<'s>) -> Term<'s> {
    use jaq_core::load::lex::StrPart;
    use jaq_core::load::parse::{BinaryOp, Pattern};
    use jaq_core::path::{Part, Path};
    let go = |t: Box<Term<'s>>| Box::new(instrument_inner(*t));
    fn pattern(p: Pattern<&str>) -> Pattern<&str> {
        match p {
            Pattern::Var(v) => Pattern::Var(v),
            Pattern::Arr(ps) => Pattern::Arr(ps.into_iter().map(pattern).collect()),
            Pattern::Obj(kvs) => Pattern::Obj(
                kvs.into_iter()
                    .map(|(k, v)| (instrument_inner(k), pattern(v)))
                    .collect(),
            ),
        }
    }
    match term {
        Term::Recurse => Term::Call(RECURSE, Vec::new()),
        t @ (Term::Id | Term::Num(_) | Term::Break(_) | Term::Var(_)) => t,
        Term::Str(fmt, parts) => Term::Str(
            fmt,
            parts
                .into_iter()
                .map(|part| match part {
                    StrPart::Term(t) => StrPart::Term(then(instrument_inner(t), guards::TEXT)),
                    StrPart::Str(s) => StrPart::Str(s),
                    StrPart::Char(c) => StrPart::Char(c),
                })
                .collect(),
        ),
        Term::Arr(t) => Term::Arr(t.map(|t| Box::new(then(instrument_inner(*t), guards::ELEM)))),
        Term::Obj(kvs) => Term::Obj(
            kvs.into_iter()
                .map(|(k, v)| (instrument_inner(k), v.map(instrument_inner)))
                .collect(),
        ),
        Term::Neg(t) => Term::Neg(go(t)),
        Term::BinOp(l, op, r) => {
            let op = match op {
                BinaryOp::Pipe(p) => BinaryOp::Pipe(p.map(pattern)),
                BinaryOp::Math(m) => match checked_math(m) {
                    Some(check) => {
                        return Term::Call(check, vec![instrument_inner(*l), instrument_inner(*r)]);
                    }
                    None => BinaryOp::Math(m),
                },
                // `l op= r` is `r as $x | l |= . op $x`.
                BinaryOp::UpdateMath(m) => match checked_math(m) {
                    Some(check) => {
                        let x = Term::Var(UPDATE_VAR);
                        let f = Term::Call(check, vec![Term::Id, x]);
                        let update = Term::BinOp(go(l), BinaryOp::Update, Box::new(f));
                        return Term::BinOp(
                            go(r),
                            BinaryOp::Pipe(Some(Pattern::Var(UPDATE_VAR))),
                            Box::new(update),
                        );
                    }
                    None => BinaryOp::UpdateMath(m),
                },
                other => other,
            };
            Term::BinOp(go(l), op, go(r))
        }
        Term::Label(l, t) => Term::Label(l, go(t)),
        Term::Fold(name, xs, p, args) => Term::Fold(
            name,
            go(xs),
            pattern(p),
            args.into_iter().map(instrument_inner).collect(),
        ),
        Term::TryCatch(t, c) => Term::TryCatch(go(t), c.map(go)),
        Term::IfThenElse(branches, otherwise) => Term::IfThenElse(
            branches
                .into_iter()
                .map(|(c, t)| (instrument_inner(c), instrument_inner(t)))
                .collect(),
            otherwise.map(go),
        ),
        Term::Def(defs, rest) => {
            Term::Def(defs.into_iter().map(instrument_def).collect(), go(rest))
        }
        Term::Call(name, args) => {
            Term::Call(name, args.into_iter().map(instrument_inner).collect())
        }
        Term::Path(t, Path(parts)) => Term::Path(
            go(t),
            Path(
                parts
                    .into_iter()
                    .map(|(part, opt)| {
                        let part = match part {
                            Part::Index(i) => Part::Index(instrument_inner(i)),
                            Part::Range(from, to) => {
                                Part::Range(from.map(instrument_inner), to.map(instrument_inner))
                            }
                        };
                        (part, opt)
                    })
                    .collect(),
            ),
        ),
    }
}

/// The variable `l op= r` binds `r` to when rewritten (names with `__tackle` are reserved).
const UPDATE_VAR: &str = "$__tackle_update";

/// The checking native an arithmetic operator is rewritten to ([`guards`]), if it has one.
fn checked_math(m: jaq_core::ops::Math) -> Option<&'static str> {
    use jaq_core::ops::Math;
    match m {
        Math::Add => Some(guards::ADD),
        Math::Mul => Some(guards::MUL),
        Math::Div => Some(guards::DIV),
        Math::Sub | Math::Rem => None,
    }
}

/// `t | check`, for a native check that passes its input through.
fn then<'s>(t: Term<'s>, check: &'s str) -> Term<'s> {
    use jaq_core::load::parse::BinaryOp;
    Term::BinOp(
        Box::new(t),
        BinaryOp::Pipe(None),
        Box::new(Term::Call(check, Vec::new())),
    )
}

fn describe_errors<T: std::fmt::Debug>(errs: &T) -> String {
    let s = format!("{errs:?}");
    s.chars().take(300).collect()
}

/// Run `filter` over `input` on a thread of its own, waiting at most `deadline`.
/// Check that `filter` compiles, with every bound json_query applies (the filter's length and
/// nesting, reserved names); for tools that take a jq filter of their own (wait_and_verify's
/// `expect_jq`), refused before anything runs.
pub fn check_filter(filter: &str) -> Result<(), ToolError> {
    crate::stack::on_parser_stack("json_query", || compile(filter).map(drop))?
}

/// Run `filter` over the JSON text `input` under json_query's bounds ([`QUERY_DEADLINE`],
/// steps, output, stack); each output as compact JSON text, in order.
pub async fn query_outputs(filter: String, input: Vec<u8>) -> Result<Vec<String>, ToolError> {
    let done = run_bounded(filter, input, None, QUERY_DEADLINE).await?;
    if done.metadata["outputs"].as_u64() == Some(0) {
        return Ok(Vec::new());
    }
    match done.output {
        tackle_tool::CompletionOutput::Single(text) => {
            Ok(text.lines().map(str::to_owned).collect())
        }
        _ => Ok(Vec::new()),
    }
}

async fn run_bounded(
    filter: String,
    input: Vec<u8>,
    shown: Option<String>,
    deadline: Duration,
) -> Result<ToolCompletion, ToolError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("json_query".into())
        .stack_size(FILTER_STACK_BYTES)
        .spawn(move || {
            nesting::mark_stack_base();
            // jaq panics on some inputs (`-9223372036854775808 | length` overflowed in a
            // debug build); that is the engine failing on this filter, not a crashed call.
            let run = std::panic::AssertUnwindSafe(|| {
                run_filter(&filter, &input, shown.as_deref(), deadline)
            });
            let result = std::panic::catch_unwind(run).unwrap_or_else(|_| {
                Err(ToolError::new(
                    FILTER_ERROR,
                    "json_query: the jq engine failed on this filter and input; try an \
                     equivalent filter",
                ))
            });
            let _ = tx.send(result);
        })
        .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("json_query: {e}")))?;
    match tokio::time::timeout(deadline + Duration::from_millis(250), rx).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(ToolError::new(
            ErrorCode::INTERNAL,
            "json_query: the expression thread stopped without a result",
        )),
        Err(_) => Err(timeout_error(deadline)),
    }
}

fn timeout_error(deadline: Duration) -> ToolError {
    ToolError::new(
        ErrorCode::TIMEOUT,
        format!(
            "json_query: the expression ran longer than {} s and was stopped; it probably generates \
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
    CALLS.with(|c| c.set(0));
    TICKS.with(|t| t.set(0));
    // What the filter's values hold is counted from here: the input parsed above is not.
    let _meter = memory::Meter::open(QUERY_MAX_MEMORY_BYTES);
    let ctx = Ctx::<D>::new(&compiled.lut, Vars::new([]));
    let mut text = String::new();
    let mut outputs = 0u64;
    let started = Instant::now();
    let too_much = |outputs: u64| {
        ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the expression produced over {QUERY_MAX_OUTPUT_BYTES} bytes of \
                 output ({outputs} outputs so far) and was stopped; select fewer fields or \
                 bound it with limit(n; f)"
            ),
        )
        .with_metadata(json!({ "outputs": outputs }))
    };
    for item in compiled.id.run((ctx, value)) {
        if let Some(why) = EXCEEDED.with(Cell::get) {
            return Err(exceeded_error(why, deadline));
        }
        match item {
            Ok(v) => {
                // Counted before it is written: shared values can be far larger as text.
                let room = (QUERY_MAX_OUTPUT_BYTES + 1).saturating_sub(text.len());
                if let Err(why) = guards::writable(&v, room) {
                    if why.contains("deep") {
                        return Err(ToolError::new(
                            ErrorCode::RESOURCE_LIMIT,
                            format!("json_query: {why}; output a shallower part of it"),
                        ));
                    }
                    return Err(too_much(outputs));
                }
                text.push_str(&v.to_string());
                text.push('\n');
                outputs += 1;
            }
            Err(e) => {
                if let Some(why) = EXCEEDED.with(Cell::get) {
                    return Err(exceeded_error(why, deadline));
                }
                let e = match e.get_err() {
                    Ok(e) => bounded_text(&e, 400),
                    // `halt` is not offered; should an exception of it arise all the same, it
                    // fails this call and ends nothing else.
                    Err(_) => "the filter tried to halt".to_owned(),
                };
                return Err(ToolError::new(
                    FILTER_ERROR,
                    format!("json_query: the expression failed after {outputs} outputs: {e}"),
                ));
            }
        }
        if text.len() > QUERY_MAX_OUTPUT_BYTES {
            return Err(too_much(outputs));
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

/// `x` as text, cut at about `cap` bytes: an error can carry a value far larger as text.
fn bounded_text(x: &impl std::fmt::Display, cap: usize) -> String {
    struct Capped(String, usize);
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            if self.0.len() + s.len() > self.1 {
                let mut end = self.1.saturating_sub(self.0.len()).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                self.0.push_str(&s[..end]);
                return Err(std::fmt::Error);
            }
            self.0.push_str(s);
            Ok(())
        }
    }
    let mut out = Capped(String::new(), cap);
    if std::fmt::write(&mut out, format_args!("{x}")).is_err() {
        out.0.push_str("...");
    }
    out.0
}

fn exceeded_error(why: Exceeded, deadline: Duration) -> ToolError {
    match why {
        Exceeded::Memory => ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the expression's values would hold over {} MiB and it was stopped; \
                 select fewer or smaller values, or bound it with limit(n; f)",
                QUERY_MAX_MEMORY_BYTES >> 20
            ),
        ),
        Exceeded::Deadline => timeout_error(deadline),
        Exceeded::Steps => ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the expression generated over {QUERY_MAX_STEPS} values and was stopped; \
                 bound it with limit(n; f) or first(f), or use a smaller range"
            ),
        ),
        Exceeded::Calls => ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the expression called definitions over {QUERY_MAX_CALLS} times and was \
                 stopped; give its recursive definitions a base case, or select less"
            ),
        ),
        Exceeded::Stack => ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "json_query: the expression recursed deeper than {} MiB of stack and was stopped; \
                 give its recursive definitions a base case, or use recurse, limit(n; f) or \
                 reduce instead",
                nesting::MAX_EVAL_STACK_BYTES >> 20
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the filter thread, as execute runs it.
    fn run(filter: &str, json: &str) -> Result<String, ToolError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let run = run_bounded(
            filter.to_owned(),
            json.as_bytes().to_vec(),
            None,
            Duration::from_secs(5),
        );
        let c = rt.block_on(run)?;
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

    /// The crashers of the report and their kin: each ends as a result with a stable code.
    #[test]
    fn no_input_can_exhaust_the_stack() {
        let deep_json = "[".repeat(2000) + &"]".repeat(2000);
        let rows: &[(&str, String, &str, ErrorCode)] = &[
            (
                "deep json",
                ".".into(),
                &deep_json,
                ErrorCode::INVALID_ARGUMENTS,
            ),
            (
                "parens",
                "(".repeat(800) + "." + &")".repeat(800),
                "0",
                ErrorCode::INVALID_ARGUMENTS,
            ),
            (
                "1 + f",
                "def f: 1 + f; f".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            // Does not deepen the stack: stopped by the call budget or, in a slow build, at
            // the deadline, which the check in every definition also enforces.
            ("1, f", "def f: 1, f; [f]".into(), "0", ErrorCode::TIMEOUT),
            (
                "[f]",
                "def f: [f]; f".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            (
                "f | f",
                "def f: f | f; f".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            (
                "nested def",
                "def f: def g: f; g; f".into(),
                "0",
                ErrorCode::TIMEOUT,
            ),
            (
                "in a string",
                "\"\\(def f: 1 + f; f)\"".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            (
                "in an object key",
                "{(def f: 1 + f; f): 1}".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            (
                "caught",
                "def f: try (1 + f) catch f; f".into(),
                "0",
                ErrorCode::RESOURCE_LIMIT,
            ),
            (
                "long",
                " ".repeat(nesting::MAX_FILTER_BYTES + 1),
                "0",
                ErrorCode::INVALID_ARGUMENTS,
            ),
            (
                "reserved",
                "def __tackle_depth: .; 1".into(),
                "0",
                INVALID_FILTER,
            ),
            (
                "reserved step",
                "def __tackle_step: .; [repeat(1)]".into(),
                "0",
                INVALID_FILTER,
            ),
        ];
        for (name, filter, json, code) in rows {
            let tool = JsonQuery;
            // Inline JSON is checked in prepare; the filter both there and in execute.
            let got = match nesting::check_json(json.as_bytes()) {
                Err(_) => ErrorCode::INVALID_ARGUMENTS,
                Ok(()) => run(filter, json).map(|_| ()).unwrap_err().code,
            };
            let stopped = [ErrorCode::TIMEOUT, ErrorCode::RESOURCE_LIMIT];
            if *code == ErrorCode::TIMEOUT {
                assert!(stopped.contains(&got), "{name}: {got:?}");
            } else {
                assert_eq!(got, *code, "{name}");
            }
            let _ = tool;
        }
    }

    /// Definitions still work for paths and updates through the check in front of them.
    #[test]
    fn instrumented_definitions_keep_their_meaning() {
        let doc = r#"{"a": {"b": 1}, "c": [1, 2]}"#;
        let cases = [
            ("[paths]", r#"[["a"],["a","b"],["c"],["c",0],["c",1]]"#),
            ("def g: .a; g |= 5", r#"{"a":5,"c":[1,2]}"#),
            ("path(def g: .a.b; g)", r#"["a","b"]"#),
            (
                "def fac: if . <= 1 then 1 else . * (. - 1 | fac) end; 10 | fac",
                "3628800",
            ),
            ("[.. | numbers]", "[1,1,2]"),
            (
                "walk(if type == \"number\" then . + 1 else . end) | .c",
                "[2,3]",
            ),
            ("to_entries | map(.key)", r#"["a","c"]"#),
        ];
        for (filter, want) in cases {
            assert_eq!(run(filter, doc).unwrap(), format!("{want}\n"), "{filter}");
        }
    }

    /// Found by the fuzz harness: jaq's `length` overflowed on the smallest integer (a panic
    /// in a debug build). Whatever the engine does, the call ends in a result.
    #[test]
    fn an_engine_panic_is_a_filter_error() {
        match run("length", "-9223372036854775808") {
            Ok(_) => {}
            Err(e) => assert_eq!(e.code, FILTER_ERROR, "{e}"),
        }
    }
}
