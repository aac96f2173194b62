//! `glob`: file paths by name pattern (seed 003, "Search").
//!
//! A pattern without `/` matches file names at any depth (`*.rs`, like `filepath.Match` on the
//! basename); one with `/` matches the path below `path` (`src/**/*.rs`). The walk is the
//! shared one in [`crate::walk`]: parallel, hidden and vendored directories and `.gitignore`d
//! files skipped. Results are regular files, sorted bytewise, at most [`MAX_GLOB_RESULTS`]; the
//! result says how many were found in all and whether it was cut (`truncated`).

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::Concurrency;
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, SurveyListing, Tool, ToolCompletion, ToolError,
};

use crate::survey_walk::SurveyWalk;
use crate::walk::{FileVisitor, Found, NamePattern, WalkCounts};

/// The most paths a result lists; the total is still counted and reported.
pub const MAX_GLOB_RESULTS: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// A glob. Without `/` it matches file names at any depth (`*.rs`, `Cargo.toml`); with `/` it matches the path below `path` (`src/**/*.rs`).
    pub pattern: String,
    /// Directory to search, relative to the project root. Default `.`.
    pub path: Option<String>,
}

pub struct GlobPlan {
    pattern: NamePattern,
    pattern_text: String,
    walk: SurveyWalk,
}

/// The `glob` built-in.
pub struct Glob;

impl Tool for Glob {
    type Args = GlobArgs;
    type Plan = GlobPlan;

    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Find files by name. `*.rs` matches file names at any depth; a pattern with `/` such \
             as `src/**/*.rs` matches paths below `path`. Skips hidden and vendored directories \
             and files ignored by .gitignore. Returns sorted paths relative to the project \
             root, at most 1000 (the result says when there were more: narrow the pattern or \
             path). Use this instead of `find` or `fd` in bash, and use grep to search file \
             contents.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    /// A survey: large results are shown as a digest, with retrieve_raw for the whole.
    fn survey(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: GlobArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<GlobPlan>, ToolError> {
        let pattern = NamePattern::new("glob", &args.pattern)?;
        let walk = SurveyWalk::prepare("glob", cx.root, args.path.as_deref())?;
        Ok(Prepared::new(
            walk.routing(),
            GlobPlan {
                pattern,
                pattern_text: args.pattern,
                walk,
            },
        ))
    }

    async fn execute(
        &self,
        plan: GlobPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        // A survey runs where the call runs (see `tackle_tool::run_blocking`): no hop to the
        // blocking pool and back on its critical path.
        tackle_tool::run_tool_blocking("glob", move || {
            let (found, total, counts) = run(&cx, &plan)?;
            Ok(render(&plan, found, total, &counts))
        })
        .await?
    }
}

/// The first [`MAX_GLOB_RESULTS`] matching paths in bytewise order, the total found, and what
/// the walk left out.
fn run(
    cx: &ExecuteContext,
    plan: &GlobPlan,
) -> Result<(Vec<String>, usize, WalkCounts), ToolError> {
    struct Collect<'a> {
        pattern: &'a NamePattern,
        start: &'a str,
        out: Vec<String>,
    }
    impl FileVisitor for Collect<'_> {
        type Output = Vec<String>;
        fn visit(&mut self, found: Found<'_>) {
            if self.pattern.matches(self.start, found.rel) {
                self.out.push(found.rel.to_owned());
            }
        }
        fn finish(self) -> Vec<String> {
            self.out
        }
    }
    let start = plan.walk.start_rel();
    let walked = plan.walk.run("glob", cx, |_| Collect {
        pattern: &plan.pattern,
        start,
        out: Vec::new(),
    })?;
    let mut all: Vec<String> = walked.parts.into_iter().flatten().collect();
    let total = all.len();
    // Only the first MAX_GLOB_RESULTS in order are shown and retained: they are picked out
    // (linear) and sorted alone, not the whole find (19,000 paths on a large tree).
    if total > MAX_GLOB_RESULTS {
        all.select_nth_unstable(MAX_GLOB_RESULTS);
        all.truncate(MAX_GLOB_RESULTS);
    }
    all.sort_unstable();
    Ok((all, total, walked.counts))
}

fn render(
    plan: &GlobPlan,
    mut found: Vec<String>,
    total: usize,
    counts: &WalkCounts,
) -> ToolCompletion {
    let truncated = total > MAX_GLOB_RESULTS;
    found.truncate(MAX_GLOB_RESULTS);
    let path = plan.walk.start_rel();
    let mut text = String::with_capacity(found.iter().map(|p| p.len() + 1).sum::<usize>() + 128);
    // The note comes first, so a preview cut short still shows it.
    if truncated {
        text.push_str(&format!(
            "[truncated: showing the first {MAX_GLOB_RESULTS} of {total} files; narrow the \
             pattern or path]\n"
        ));
    }
    text.push_str(&counts.notes());
    for p in &found {
        text.push_str(p);
        text.push('\n');
    }
    if total == 0 {
        text.push_str(&format!(
            "[no files match `{}` under {path}]\n",
            plan.pattern_text
        ));
    }
    let listing = SurveyListing::Paths(found);
    ToolCompletion::single(text)
        .with_metadata(json!({
            "pattern": plan.pattern_text,
            "path": path,
            "files": null,
            "total": total,
            "truncated": truncated,
            "excluded_by_scope": counts.excluded_by_scope,
            "skipped_ignore_files": counts.skipped_json(),
        }))
        .with_survey(listing)
}
