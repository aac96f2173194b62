//! `view_file_outline`: a file's declaration skeleton with start lines, parsed by tree-sitter
//! (seed 003, "view_file_outline").
//!
//! Owns the per-language tables of which nodes are declarations ([`languages`]) and the walk
//! that prints them. Every result says `analysis: "parsed"`; a file with syntax errors gets the
//! first error's location and `analysis: "partial"`, because tree-sitter recovers and the
//! outline of the rest is still useful, but it must not pass for a clean parse. An extension
//! with no grammar is refused, naming the ones that work: no guessing.
//!
//! Bounds: tree-sitter's parse is iterative (its own heap stack, no recursion in C), so only
//! time and memory are at stake there: a file over [`OUTLINE_MAX_BYTES`] is refused and a parse
//! past [`PARSE_BUDGET`] is abandoned through tree-sitter's progress callback. Every walk over
//! the tree here (declarations, the first syntax error) keeps its own stack on the heap, so no
//! nesting can overflow the thread's: 5,000 nested `mod a {` or a JS array 100,000 deep with a
//! syntax error once ended the process. What is shown is bounded too: declarations nested
//! deeper than [`MAX_OUTLINE_DEPTH`] and those past the first [`MAX_DECLARATIONS`] are left out
//! with a note saying so, since indentation alone made a deep outline grow with the square of
//! its depth.
//!
//! Key decision: bodies are cut on the syntax tree, not on text. A signature is the source from
//! the declaration's start to its body node's start, so no statement of a body can appear;
//! containers (structs, classes, traits, impls, interfaces) show their members the same way.
//! Rejected: line scanning with keywords, which misses multi-line signatures and leaks bodies.

mod languages;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tackle_fs::{FsError, ReadOptions, ReadTarget, RelPath};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};
use tree_sitter::{Node, ParseOptions, ParseState, Parser};

pub use languages::{LANGS, Lang, Role, all_extensions, for_extension};

use crate::{fs_error, open_root, resolve_real};

pub const UNSUPPORTED_LANGUAGE: ErrorCode = ErrorCode::new("unsupported_language");
/// Largest file view_file_outline parses.
pub const OUTLINE_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Longest signature line shown; longer ones are cut with `…`.
const MAX_SIGNATURE_CHARS: usize = 240;
/// Deepest declaration nesting shown (0 is the top level); deeper members are left out.
pub const MAX_OUTLINE_DEPTH: usize = 64;
/// Most declarations one outline lists; the rest are left out.
pub const MAX_DECLARATIONS: usize = 20_000;
/// Longest a parse may run before it is abandoned.
pub const PARSE_BUDGET: Duration = Duration::from_secs(20);

/// One declaration in the outline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Declaration {
    /// 1-based line the declaration starts on.
    pub line: usize,
    pub kind: &'static str,
    pub name: Option<String>,
    /// Nesting depth (0: top level, 1: a member of a container, ...).
    pub depth: usize,
    pub signature: String,
}

/// A parsed outline.
#[derive(Clone, Debug, PartialEq)]
pub struct Outline {
    pub language: &'static str,
    pub declarations: Vec<Declaration>,
    /// The first syntax error (1-based line and column), if the file did not parse cleanly.
    pub error: Option<(usize, usize)>,
    /// Some declaration nested deeper than [`MAX_OUTLINE_DEPTH`] was left out.
    pub too_deep: bool,
    /// The line of the first declaration left out past [`MAX_DECLARATIONS`].
    pub cut_at_line: Option<usize>,
}

impl Outline {
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some((line, col)) = self.error {
            let _ = writeln!(
                out,
                "[syntax error at line {line}, column {col}: this outline is best effort and may \
                 miss or misplace declarations]"
            );
        }
        for d in &self.declarations {
            let _ = writeln!(
                out,
                "{:>5}  {}{}",
                d.line,
                "    ".repeat(d.depth),
                d.signature
            );
        }
        if self.declarations.is_empty() {
            out.push_str("[no declarations found]\n");
        }
        if self.too_deep {
            let _ = writeln!(
                out,
                "[outline: nesting deeper than {MAX_OUTLINE_DEPTH} levels is not shown; read \
                 those parts with read_file]"
            );
        }
        if let Some(line) = self.cut_at_line {
            let _ = writeln!(
                out,
                "[outline: only the first {MAX_DECLARATIONS} declarations are shown; the rest \
                 start at line {line}: read from there with read_file]"
            );
        }
        out
    }
}

/// Why no outline was made.
#[derive(Debug, thiserror::Error)]
pub enum OutlineError {
    #[error("loading the {language} grammar: {message}")]
    Grammar {
        language: &'static str,
        message: String,
    },
    #[error(
        "parsing took longer than {} s and was abandoned; search the file with grep or read it \
         in parts with read_file instead",
        .0.as_secs()
    )]
    OverBudget(Duration),
    #[error("the parser gave up")]
    GaveUp,
}

/// Parse `source` as `lang` and outline it.
pub fn outline(lang: &'static Lang, source: &str) -> Result<Outline, OutlineError> {
    outline_within(lang, source, PARSE_BUDGET)
}

/// [`outline`] with a parse abandoned after `budget`.
pub fn outline_within(
    lang: &'static Lang,
    source: &str,
    budget: Duration,
) -> Result<Outline, OutlineError> {
    let mut parser = Parser::new();
    parser
        .set_language(&(lang.language)())
        .map_err(|e| OutlineError::Grammar {
            language: lang.name,
            message: e.to_string(),
        })?;
    let started = Instant::now();
    let mut over_budget = false;
    let mut progress = |_: &ParseState| {
        if started.elapsed() > budget {
            over_budget = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = source.as_bytes();
    let tree = parser
        .parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        )
        .ok_or(if over_budget {
            OutlineError::OverBudget(budget)
        } else {
            OutlineError::GaveUp
        })?;
    let root = tree.root_node();
    let mut walk = Walk {
        lang,
        src: bytes,
        out: Vec::new(),
        too_deep: false,
        cut_at_line: None,
    };
    walk.run(root);
    let error = root.has_error().then(|| first_error(root)).flatten();
    Ok(Outline {
        language: lang.name,
        declarations: walk.out,
        error,
        too_deep: walk.too_deep,
        cut_at_line: walk.cut_at_line,
    })
}

/// The first error or missing node in document order, found with a stack on the heap.
fn first_error(root: Node<'_>) -> Option<(usize, usize)> {
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let p = node.start_position();
            return Some((p.row + 1, p.column + 1));
        }
        let start = stack.len();
        stack.extend(node.children(&mut cursor).filter(|c| c.has_error()));
        stack[start..].reverse();
    }
    None
}

struct Walk<'a> {
    lang: &'static Lang,
    src: &'a [u8],
    out: Vec<Declaration>,
    too_deep: bool,
    cut_at_line: Option<usize>,
}

/// A node waiting to be visited: its depth and whether it sits among a container's members.
type Pending<'t> = (Node<'t>, usize, bool);

impl<'a> Walk<'a> {
    fn text(&self, from: usize, to: usize) -> &'a str {
        std::str::from_utf8(&self.src[from..to.min(self.src.len())]).unwrap_or("")
    }

    fn role(&self, kind: &str) -> Option<(&'static str, Role)> {
        self.lang
            .nodes
            .iter()
            .find(|(k, _, _)| *k == kind)
            .map(|&(_, label, role)| (label, role))
    }

    /// Visit `root`'s children in document order, with the pending nodes on the heap.
    fn run<'t>(&mut self, root: Node<'t>) {
        let mut pending: Vec<Pending<'t>> = Vec::new();
        push_children(&mut pending, root, 0, false);
        while let Some((node, depth, in_container)) = pending.pop() {
            if self.cut_at_line.is_some() {
                break;
            }
            self.visit(&mut pending, node, depth, in_container);
        }
    }

    fn visit<'t>(
        &mut self,
        pending: &mut Vec<Pending<'t>>,
        node: Node<'t>,
        depth: usize,
        in_container: bool,
    ) {
        let kind = node.kind();
        let Some((label, role)) = self.role(kind) else {
            // Member lists are looked through; anything else (statements, expressions) is not
            // a declaration and its insides are never shown.
            if in_container && languages::BODY_KINDS.contains(&kind) {
                push_children(pending, node, depth, in_container);
            }
            return;
        };
        if self.lang.name == "python"
            && kind == "expression_statement"
            && node.named_child(0).map(|c| c.kind()) != Some("assignment")
        {
            return;
        }
        let label = if in_container && label == "function" {
            "method"
        } else {
            label
        };
        match role {
            Role::Transparent => push_children(pending, node, depth, in_container),
            Role::Line => self.push(node, label, depth, self.first_line(node)),
            Role::Signature => {
                let sig = match body_of(node) {
                    Some(body) => self.up_to_body(node, body),
                    None => self.first_line(node),
                };
                self.push(node, label, depth, sig);
            }
            Role::Container => match body_of(node) {
                Some(body) => {
                    let sig = self.up_to_body(node, body);
                    self.push(node, label, depth, sig);
                    if depth + 1 < MAX_OUTLINE_DEPTH {
                        push_children(pending, body, depth + 1, true);
                    } else if body.named_child_count() > 0 {
                        self.too_deep = true;
                    }
                }
                None => self.push(node, label, depth, self.first_line(node)),
            },
        }
    }

    fn push(&mut self, node: Node<'_>, kind: &'static str, depth: usize, signature: String) {
        if self.out.len() == MAX_DECLARATIONS {
            self.cut_at_line = Some(node.start_position().row + 1);
            return;
        }
        let name = self.name_of(node, 0);
        let signature = if node.kind() == "type_spec" {
            // Go: `type` belongs to the enclosing type_declaration.
            format!("type {signature}")
        } else {
            signature
        };
        self.out.push(Declaration {
            line: node.start_position().row + 1,
            kind,
            name,
            depth,
            signature: cut(&signature),
        });
    }

    /// The `name` field, else the name inside the `declarator` (C, C++, Java fields).
    fn name_of(&self, node: Node<'_>, depth: usize) -> Option<String> {
        if let Some(n) = node.child_by_field_name("name") {
            return Some(self.text(n.start_byte(), n.end_byte()).to_owned());
        }
        let d = node.child_by_field_name("declarator")?;
        if d.kind().ends_with("identifier") {
            return Some(self.text(d.start_byte(), d.end_byte()).to_owned());
        }
        if depth < 4 {
            self.name_of(d, depth + 1)
        } else {
            None
        }
    }

    /// The node's first line; at most a few times what [`cut`] keeps is looked at, so a
    /// declaration megabytes long on one line costs no more than a short one.
    fn first_line(&self, node: Node<'_>) -> String {
        let end = node
            .end_byte()
            .min(node.start_byte() + 4 * MAX_SIGNATURE_CHARS + 4)
            .min(self.src.len());
        let bytes = &self.src[node.start_byte().min(end)..end];
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            // Cut inside a character: keep the whole ones.
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
        };
        let line = text.lines().next().unwrap_or("").trim_end();
        line.to_owned()
    }

    /// The declaration's text up to its body, whitespace collapsed; an opening `{` that starts
    /// the body's member list is kept out.
    fn up_to_body(&self, node: Node<'_>, body: Node<'_>) -> String {
        let mut end = body.start_byte();
        // Keep a leading keyword of the body node (`interface`, `struct`) that precedes its
        // members: everything before the first `{` or first named child.
        let members_start = body
            .named_child(0)
            .map_or(body.end_byte(), |c| c.start_byte());
        let head = self.text(body.start_byte(), members_start);
        if let Some(brace) = head.find('{') {
            end = body.start_byte() + brace;
        } else if !head.trim().is_empty() {
            end = members_start;
        }
        let text = self.text(node.start_byte(), end);
        let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
        collapsed
            .trim_end_matches(['{', ':', '='])
            .trim_end()
            .to_owned()
    }
}

/// Queue `node`'s named children so that they are popped in document order.
fn push_children<'t>(pending: &mut Vec<Pending<'t>>, node: Node<'t>, depth: usize, member: bool) {
    let start = pending.len();
    let mut cursor = node.walk();
    pending.extend(
        node.named_children(&mut cursor)
            .map(|child| (child, depth, member)),
    );
    pending[start..].reverse();
}

/// A declaration's body: its `body` field, or a child (or grandchild) that is a member list.
fn body_of<'t>(node: Node<'t>) -> Option<Node<'t>> {
    if let Some(b) = node.child_by_field_name("body") {
        return Some(b);
    }
    let mut cursor = node.walk();
    let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
    if let Some(b) = kids
        .iter()
        .find(|c| languages::BODY_KINDS.contains(&c.kind()))
    {
        return Some(*b);
    }
    kids.iter().find_map(|k| {
        let mut c = k.walk();
        let inner: Vec<Node<'t>> = k.named_children(&mut c).collect();
        inner
            .into_iter()
            .find(|g| languages::BODY_KINDS.contains(&g.kind()))
    })
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_SIGNATURE_CHARS {
        return s.to_owned();
    }
    let head: String = s.chars().take(MAX_SIGNATURE_CHARS).collect();
    format!("{head}…")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewFileOutlineArgs {
    /// Source file relative to the project root.
    pub path: String,
}

pub struct OutlinePlan {
    rel: RelPath,
    lang: &'static Lang,
}

pub struct ViewFileOutline;

impl Tool for ViewFileOutline {
    type Args = ViewFileOutlineArgs;
    type Plan = OutlinePlan;

    fn name(&self) -> &str {
        "view_file_outline"
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Show a source file's declarations (types, functions and method signatures) with their line numbers, without the bodies.",
        )
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Show a source file's declaration skeleton without the bodies: imports, types \
             (structs, classes, enums, traits, interfaces) with their members, top-level consts, \
             and function and method signatures, each prefixed with the line it starts on. \
             Prefer it over reading a long file whole when the question is what is in the file; \
             then read just the part you need with read_file, passing that line as offset. \
             Parsed with tree-sitter for Rust, Go, Python, JavaScript, TypeScript/TSX, Java, C, \
             C++, Ruby and Bash; other files are refused.",
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
        args: ViewFileOutlineArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<OutlinePlan>, ToolError> {
        let resolved = resolve_real("view_file_outline", cx.root, &args.path)?;
        let rel = resolved.rel.clone();
        let ext = rel
            .as_str()
            .rsplit_once('.')
            .map(|(_, e)| e)
            .filter(|e| !e.contains('/'))
            .unwrap_or("");
        let Some(lang) = for_extension(ext) else {
            return Err(ToolError::new(
                UNSUPPORTED_LANGUAGE,
                format!(
                    "view_file_outline: no grammar for `{}`; outlines are parsed for these \
                     extensions: {}. Read the file with read_file or search it with grep instead",
                    rel.as_str(),
                    all_extensions().join(", ")
                ),
            )
            .with_metadata(json!({ "supported": all_extensions() })));
        };
        let routing = Routing {
            resources: resolved.resources(Action::Read),
        };
        Ok(Prepared::new(routing, OutlinePlan { rel, lang }))
    }

    async fn execute(
        &self,
        plan: OutlinePlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        tackle_tool::run_tool_blocking("view_file_outline", move || {
            outline_file(&cx.root, &plan).map_err(|e| {
                crate::nearest::hint_not_found(
                    e,
                    &cx.root,
                    cx.read_scope.as_ref(),
                    plan.rel.as_str(),
                )
            })
        })
        .await?
    }
}

fn outline_file(root: &std::path::Path, plan: &OutlinePlan) -> Result<ToolCompletion, ToolError> {
    use std::io::Read;
    let shown = plan.rel.as_str();
    let target = open_root("view_file_outline", root)?
        .open_read(&plan.rel, ReadOptions::default())
        .map_err(|e| match e {
            FsError::NotFound { .. } => ToolError::new(
                ErrorCode::NOT_FOUND,
                format!(
                    "view_file_outline: {shown} does not exist; use glob or list_dir to find it"
                ),
            ),
            other => fs_error("view_file_outline", other),
        })?;
    let ReadTarget::File { file, meta } = target else {
        return Err(ToolError::new(
            crate::read_file::NOT_A_REGULAR_FILE,
            format!("view_file_outline: {shown} is a directory; pass a source file"),
        ));
    };
    if meta.len() > OUTLINE_MAX_BYTES {
        return Err(ToolError::new(
            ErrorCode::RESOURCE_LIMIT,
            format!(
                "view_file_outline: {shown} is {} bytes, over the {OUTLINE_MAX_BYTES} byte \
                 limit; search it with grep instead",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&file)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(&format!("view_file_outline: {shown}"), &e))?;
    let source = String::from_utf8_lossy(&bytes);
    let o = outline(plan.lang, &source).map_err(|e| {
        let code = match e {
            OutlineError::OverBudget(_) => ErrorCode::RESOURCE_LIMIT,
            _ => ErrorCode::INTERNAL,
        };
        ToolError::new(code, format!("view_file_outline: {e}"))
    })?;
    let analysis = if o.error.is_some() {
        "partial"
    } else {
        "parsed"
    };
    Ok(ToolCompletion::single(o.render()).with_metadata(json!({
        "path": shown,
        "language": o.language,
        "analysis": analysis,
        "syntax_error": o.error.map(|(line, column)| json!({ "line": line, "column": column })),
        "declarations": o.declarations,
        "deeper_not_shown": o.too_deep,
        "declarations_cut_at_line": o.cut_at_line,
    })))
}
