//! `grep`: lines matching a regular expression, across a tree or in one file (seed 003,
//! "Search").
//!
//! Built on ripgrep's own crates: `grep-regex` (Rust's `regex`, RE2 syntax: no backreferences or
//! look-around, linear time), `grep-searcher` (line-oriented search with binary detection) and
//! the shared parallel walk in [`crate::walk`] (`.gitignore`, hidden and vendored directories
//! skipped). Each walker thread keeps its own searcher and matcher, and matches are appended to
//! one byte buffer per matching file, so a match costs no allocation of its own.
//!
//! Files are opened through the root handle (`tackle_fs::Root`), never by absolute name. A file
//! that turns out to be binary (a NUL byte) stops being searched there, like ripgrep; matches
//! before the NUL are kept. Results are sorted by path and line so the output is
//! deterministic whatever order the threads finished in; at most [`MAX_GREP_MATCHES`] are shown
//! (`truncated` says when there were more) and lines are cut at [`MAX_MATCH_LINE_BYTES`].

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Read as _};
use std::sync::Arc;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::{ReadOptions, Root, WalkedFile};
use tackle_tool::protocol::Concurrency;
use tackle_tool::{
    ExecuteContext, LineMatch, PrepareContext, Prepared, SurveyListing, Tool, ToolCompletion,
    ToolError,
};

use crate::survey_walk::SurveyWalk;
use crate::walk::{FileVisitor, Found, INVALID_PATTERN, NamePattern, WalkCounts};

/// The most matching lines a result shows; all are counted.
pub const MAX_GREP_MATCHES: usize = 1000;
/// A matching line longer than this is cut, so one minified line cannot fill the result.
pub const MAX_MATCH_LINE_BYTES: usize = 500;
/// Largest compiled program a pattern may make: the regex crate's own default. grep-regex's
/// default (100 MiB) is made for ripgrep's command line, not for a model's pattern.
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;
/// Largest lazy-DFA cache of each searching thread (grep-regex's default is 1000 MiB, which
/// every walker thread could fill); past it the search continues on a slower engine.
pub const REGEX_DFA_SIZE_LIMIT: usize = 10 << 20;

/// The matcher grep searches with, within [`REGEX_SIZE_LIMIT`] and [`REGEX_DFA_SIZE_LIMIT`].
pub fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    literal: bool,
) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .case_insensitive(case_insensitive)
        .fixed_strings(literal)
        .line_terminator(Some(b'\n'))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build(pattern)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// A regular expression in RE2 syntax (Rust regex): no backreferences or look-around. Escape regex metacharacters, or pass literal: true.
    pub pattern: String,
    /// A directory to search recursively, or a single file. Relative to the project root; default `.`.
    pub path: Option<String>,
    /// Only search files matching this glob: `*.rs` matches names at any depth, `src/**/*.ts` matches paths below `path`.
    pub glob: Option<String>,
    /// Match without regard to case. Default false.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat the pattern as a literal string, not a regex. Default false.
    #[serde(default)]
    pub literal: bool,
}

pub struct GrepPlan {
    matcher: RegexMatcher,
    pattern: String,
    glob: Option<NamePattern>,
    walk: SurveyWalk,
}

/// The `grep` built-in.
pub struct Grep;

impl Tool for Grep {
    type Args = GrepArgs;
    type Plan = GrepPlan;

    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Search file contents with a regular expression. Use this instead of grep, rg, ag or \
             `find | xargs grep` in bash. Searches `path` recursively (a file searches just that \
             file), skipping hidden and vendored directories, .gitignored files and binary \
             files. Returns `path:line:text` for each matching line, sorted by path, at most 1000 \
             (the result says when there were more: narrow the pattern or the files searched). \
             RE2 syntax; pass `literal: true` to search for text containing regex characters \
             and `case_insensitive: true` to ignore case. To find files by name use glob. To \
             read around a match use read_file with an offset. When the search may match \
             hundreds of lines and you need a conclusion from them, call agentic_grep \
             instead.",
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
        args: GrepArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<GrepPlan>, ToolError> {
        let matcher =
            build_matcher(&args.pattern, args.case_insensitive, args.literal).map_err(|e| {
                ToolError::new(
                    INVALID_PATTERN,
                    format!(
                        "grep: invalid regular expression: {e}\nThe syntax is RE2 (no \
                         backreferences or look-around); escape metacharacters with `\\`, or \
                         pass literal: true to search for the text as written"
                    ),
                )
            })?;
        let glob = args
            .glob
            .as_deref()
            .map(|g| NamePattern::new("grep", g))
            .transpose()?;
        let walk = SurveyWalk::prepare("grep", cx.root, args.path.as_deref())?;
        Ok(Prepared::new(
            walk.routing(),
            GrepPlan {
                matcher,
                pattern: args.pattern,
                glob,
                walk,
            },
        ))
    }

    async fn execute(
        &self,
        plan: GrepPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        // A survey runs where the call runs (see `tackle_tool::run_blocking`): no hop to the
        // blocking pool and back on its critical path.
        tackle_tool::run_tool_blocking("grep", move || {
            let found = search(&cx, &plan)?;
            Ok(render(&plan, found))
        })
        .await?
    }
}

/// The matching lines of one file, in one buffer.
#[derive(Default)]
struct FileMatches {
    path: String,
    /// Every match's (cut) line text, back to back.
    text: Vec<u8>,
    /// (line number, end offset in `text`, whether the line was cut).
    lines: Vec<(u64, u32, bool)>,
}

impl FileMatches {
    fn line(&self, i: usize) -> (u64, &[u8], bool) {
        let start = if i == 0 {
            0
        } else {
            self.lines[i - 1].1 as usize
        };
        let (n, end, cut) = self.lines[i];
        (n, &self.text[start..end as usize], cut)
    }
}

/// Everything found by one search.
struct SearchOutcome {
    files: Vec<FileMatches>,
    total_matches: u64,
    files_searched: u64,
    binary_files: u64,
    unreadable: u64,
    counts: WalkCounts,
}

struct Worker<'a> {
    /// The root being walked: every file is opened through the handle the walk itself uses.
    root: Arc<Root>,
    searcher: Searcher,
    matcher: RegexMatcher,
    glob: Option<&'a NamePattern>,
    start: &'a str,
    current: FileMatches,
    /// A small file's whole content, the buffer reused from file to file.
    whole: Vec<u8>,
    /// A file of [`WHOLE_FILE_BYTES`] or more went through the searcher's line buffer.
    long_file_seen: bool,
    out: Vec<FileMatches>,
    searched: u64,
    binary: u64,
    unreadable: u64,
}

struct Collect<'a> {
    current: &'a mut FileMatches,
    binary: bool,
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let mut line = m.bytes();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        let cut = line.len() > MAX_MATCH_LINE_BYTES;
        if cut {
            let mut end = MAX_MATCH_LINE_BYTES;
            // Back off to a UTF-8 character boundary.
            while end > 0 && (line[end] & 0xC0) == 0x80 {
                end -= 1;
            }
            line = &line[..end];
        }
        self.current.text.extend_from_slice(line);
        self.current.lines.push((
            m.line_number().unwrap_or(0),
            self.current.text.len() as u32,
            cut,
        ));
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

impl FileVisitor for Worker<'_> {
    type Output = (Vec<FileMatches>, u64, u64, u64);

    fn visit(&mut self, found: Found<'_>) {
        if let Some(g) = self.glob
            && !g.matches(self.start, found.rel)
        {
            return;
        }
        // Opened through the root handle: beneath the root, no final link out, no FIFO.
        let WalkedFile { file, len } = match self
            .root
            .open_walked_file(found.real, ReadOptions::default())
        {
            Ok(opened) => opened,
            Err(_) => {
                self.unreadable += 1;
                return;
            }
        };
        self.searched += 1;
        let mut sink = Collect {
            current: &mut self.current,
            binary: false,
        };
        // A file shorter than the searcher's buffer is read whole and searched as a slice: one
        // read, no line-buffer refills. Both ways look at every byte of such a file for a NUL
        // before any match is reported, so a binary file reads the same. A longer file goes on
        // through the searcher's buffer from where the first read stopped.
        //
        // A short file is read up to the size `fstat` gave when it was opened, which spares the
        // read that would only find its end: it is searched as it was then. A size of zero says
        // nothing (files of some filesystems report none); such a file is read to its end.
        let head = match len {
            1.. if len < WHOLE_FILE_BYTES as u64 => len,
            _ => WHOLE_FILE_BYTES as u64,
        };
        self.whole.clear();
        // Room for the whole head up front, so no read is spent probing for the end.
        self.whole.reserve(head as usize);
        let ok = match (&file).take(head).read_to_end(&mut self.whole) {
            Ok(n) if n < WHOLE_FILE_BYTES => self
                .searcher
                .search_slice(&self.matcher, &self.whole, &mut sink)
                .is_ok(),
            Ok(_) => {
                self.long_file_seen = true;
                self.searcher
                    .search_reader(
                        &self.matcher,
                        io::Cursor::new(&self.whole).chain(&file),
                        &mut sink,
                    )
                    .is_ok()
            }
            Err(_) => false,
        };
        if sink.binary {
            self.binary += 1;
        }
        if !ok {
            self.unreadable += 1;
        }
        if !self.current.lines.is_empty() {
            let mut done = std::mem::take(&mut self.current);
            done.path = found.rel.to_owned();
            self.out.push(done);
        }
    }

    fn finish(self) -> Self::Output {
        // A long file may have grown the searcher's line buffer to its longest line, which
        // nothing shrinks: such a searcher is dropped, not kept for the thread's next search.
        if !self.long_file_seen {
            SPARE_SEARCHER.set(Some(self.searcher));
        }
        (self.out, self.searched, self.binary, self.unreadable)
    }
}

/// The size of the searcher's own read buffer (grep-searcher's default capacity): a file
/// shorter than this is searched in one piece either way.
const WHOLE_FILE_BYTES: usize = 64 << 10;

thread_local! {
    /// The searcher of this thread's last search, kept for the next: building one allocates and
    /// zeroes its buffers (about 72 KiB), which costs more than searching a small file.
    static SPARE_SEARCHER: std::cell::Cell<Option<Searcher>> = const { std::cell::Cell::new(None) };
}

/// This thread's spare searcher, or a new one. Every searcher is built with the same settings.
fn searcher() -> Searcher {
    SPARE_SEARCHER.take().unwrap_or_else(|| {
        SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .build()
    })
}

fn search(cx: &ExecuteContext, plan: &GrepPlan) -> Result<SearchOutcome, ToolError> {
    let start = plan.walk.start_rel();
    let walked = plan.walk.run("grep", cx, |root| Worker {
        root: Arc::clone(root),
        searcher: searcher(),
        matcher: plan.matcher.clone(),
        glob: plan.glob.as_ref(),
        start,
        current: FileMatches::default(),
        whole: Vec::new(),
        long_file_seen: false,
        out: Vec::new(),
        searched: 0,
        binary: 0,
        unreadable: 0,
    })?;
    let mut found = SearchOutcome {
        files: Vec::new(),
        total_matches: 0,
        files_searched: 0,
        binary_files: 0,
        unreadable: 0,
        counts: walked.counts,
    };
    for (files, searched, binary, unreadable) in walked.parts {
        found.files.extend(files);
        found.files_searched += searched;
        found.binary_files += binary;
        found.unreadable += unreadable;
    }
    found.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    found.total_matches = found.files.iter().map(|f| f.lines.len() as u64).sum();
    Ok(found)
}

fn render(plan: &GrepPlan, found: SearchOutcome) -> ToolCompletion {
    let mut text = String::new();
    let total = found.total_matches;
    let truncated = total > MAX_GREP_MATCHES as u64;
    // The note comes first, so a preview cut short still shows it.
    if truncated {
        let _ = writeln!(
            text,
            "[truncated: showing the first {MAX_GREP_MATCHES} of {total} matching lines in {} \
             files; narrow the pattern, path or glob]",
            found.files.len()
        );
    }
    let mut matches = Vec::new();
    let mut shown = 0usize;
    'files: for f in &found.files {
        for i in 0..f.lines.len() {
            if shown == MAX_GREP_MATCHES {
                break 'files;
            }
            let (line, bytes, cut) = f.line(i);
            let line_text = String::from_utf8_lossy(bytes);
            let marker = if cut { "… [line cut]" } else { "" };
            let _ = writeln!(text, "{}:{line}:{line_text}{marker}", f.path);
            matches.push(LineMatch {
                path: f.path.clone(),
                line,
                text: line_text.into_owned(),
            });
            shown += 1;
        }
    }
    text.push_str(&found.counts.notes());
    let path = plan.walk.start_rel();
    if total == 0 {
        let _ = writeln!(
            text,
            "[no matches for `{}` under {path} ({} files searched)]",
            plan.pattern, found.files_searched
        );
    }
    let listing = SurveyListing::Matches(matches);
    ToolCompletion::single(text)
        .with_metadata(json!({
            "pattern": plan.pattern,
            "path": path,
            "matches": null,
            "total_matches": total,
            "files_with_matches": found.files.len(),
            "files_searched": found.files_searched,
            "binary_files": found.binary_files,
            "unreadable_files": found.unreadable,
            "excluded_by_scope": found.counts.excluded_by_scope,
            "skipped_ignore_files": found.counts.skipped_json(),
            "truncated": truncated,
        }))
        .with_survey(listing)
}
