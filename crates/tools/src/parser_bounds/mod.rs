//! Every parser tackle runs on file or model input, with its depth bound, its size or memory
//! bound, and where each is enforced: the table [`PARSERS`] (issue 37).
//!
//! Owns: the list, nothing else. The bounds themselves live beside each parser; a row names
//! the constant or the library default that holds, and the test that builds nesting of depth
//! 10, 1,000 and 100,000 programmatically for that parser and shows a result or a clean error,
//! never an abort. Those tests run the parse in-process on an ordinary test thread (2 MiB of
//! stack: an overflow kills the test binary) or through the CLI harness checking the exit
//! status. `tests.rs` checks that every row's test exists, so a row cannot point at nothing.
//!
//! Key decision: one of three ways per parser, named in its row. A parser that does not
//! recurse (tree-sitter's parse, html5ever, the media walks, the TOML parser's recursion
//! guard) needs only a size bound; a recursive one is either bounded from the outside before
//! it runs (the shell's and jq's counts, serde_json's 128 levels) and run on the known stack of
//! [`crate::stack`], or replaced by a walk with its own heap stack (the outline's walk,
//! `argument_depth`). What each tool's engine can do beyond its description is in
//! `docs/tool-engines.md`.

/// One parser: what it reads and what bounds it.
#[derive(Clone, Copy, Debug)]
pub struct ParserBound {
    /// The engine (crate) and what it parses.
    pub parser: &'static str,
    /// Where its input comes from.
    pub input: &'static str,
    /// How deep its input may nest, and what happens past that.
    pub depth: &'static str,
    /// What bounds its size, time or memory.
    pub size: &'static str,
    /// The file (relative to the workspace root) where the bound is enforced.
    pub enforced: &'static str,
    /// The generated-nesting test: `<file relative to the workspace root>::<fn name>`.
    pub test: &'static str,
}

/// Every parser tackle runs on file or model input.
pub const PARSERS: &[ParserBound] = &[
    ParserBound {
        parser: "tree-sitter (rust, go, python, javascript, typescript, tsx, java, c, cpp, ruby, \
                 bash grammars)",
        input: "view_file_outline: a file of the project",
        depth: "the parse is iterative (tree-sitter keeps its stack on the heap); the outline's \
                walks (declarations, first syntax error) keep theirs on the heap too; \
                declarations nested deeper than MAX_OUTLINE_DEPTH (64) are left out with a note",
        size: "OUTLINE_MAX_BYTES (16 MiB) refused; a parse past PARSE_BUDGET (20 s) is \
               abandoned through the progress callback; at most MAX_DECLARATIONS (20,000) shown",
        enforced: "crates/tools/src/outline/mod.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::outline_of_every_language_at_every_depth",
    },
    ParserBound {
        parser: "brush-parser (bash)",
        input: "bash: the model's command line (also the search gate and denylist)",
        depth: "shell::depth bounds compound nesting (MAX_NESTING 64), expansions \
                (MAX_EXPANSIONS 1024) and openers in one word (MAX_WORD_OPENERS 256) before the \
                parser runs; past them the line is unresolved (asks); parsed on the 64 MiB stack \
                of crate::stack",
        size: "the call's arguments (stored past 64 KiB, never parsed past the bounds above); \
               the analysis keeps at most MAX_COMMANDS (64) commands",
        enforced: "crates/tools/src/shell/depth.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::shell_lines_at_every_depth",
    },
    ParserBound {
        parser: "jaq-json (JSON reader) and jaq (jq lexer, parser, compiler, evaluator)",
        input: "json_query: inline data, a project file, the filter; wait_and_verify's expect_jq \
                over the polled tool's output",
        depth: "inline data: MAX_JSON_DEPTH (512) counted before parsing; filter: \
                MAX_FILTER_BRACKETS (512); evaluation: MAX_EVAL_STACK_BYTES, measured; all on \
                the 64 MiB stack. Not bounded yet (reported, json_query/mod.rs): a file's JSON, \
                `fromjson`'s string and values a filter builds deep (3,000,000 levels \
                overflow)",
        size: "MAX_FILTER_BYTES (16 KiB), QUERY_MAX_INPUT_BYTES (64 MiB) for a file, \
               QUERY_MAX_STEPS, QUERY_MAX_OUTPUT_BYTES, QUERY_DEADLINE (5 s)",
        enforced: "crates/tools/src/json_query/nesting.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::jq_filters_and_inline_data_at_every_depth",
    },
    ParserBound {
        parser: "html5ever + html2text (HTML to text)",
        input: "fetch_url: the body of a fetched text/html page",
        depth: "html5ever's tokenizer and tree builder and html2text's tree passes are \
                iterative; a page nesting elements deeper than MAX_HTML_DEPTH (512) is shown as \
                its source, because html2text's render tree is dropped recursively",
        size: "BODY_CAP (16 MiB) read at most; MAX_HTML_ELEMENTS (100,000) rendered, the rest \
               left out with a note (a 16 MiB page of spans took 2.6 GB and 34 s before, 250 MB \
               and 3 s after, debug build); rendered off the async threads",
        enforced: "crates/tools/src/html_text.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::html_pages_at_every_depth",
    },
    ParserBound {
        parser: "media validators (PNG, JPEG, GIF, WebP, PDF, MP3, WAV, Ogg, FLAC, ISO media, \
                 EBML, AVI, FLV, MPEG-PS/TS, ASF)",
        input: "read_file and read_many_files: a file whose first bytes carry a media signature",
        depth: "each walks the top level of its container in a loop and never descends, so \
                nesting is never followed",
        size: "the media cap (DEFAULT_MEDIA_MAX_BYTES, 20 MiB, or [tools.read_file]); sniffing \
               reads SNIFF_BYTES",
        enforced: "crates/tools/src/media/mod.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::media_containers_at_every_depth",
    },
    ParserBound {
        parser: "record_plan's YAML header (a line scanner; values through serde_json)",
        input: "a plan file in .agents/plans/ (the repository's or the model's)",
        depth: "line by line, no nesting; a quoted value is a serde_json string (128 levels)",
        size: "READ_LIMIT (1 MiB) when the book reads a plan; MAX_PLAN_BYTES (64 KiB) written",
        enforced: "crates/tools/src/record_plan/header.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::plan_headers_at_every_depth",
    },
    ParserBound {
        parser: "regex-syntax via grep-regex",
        input: "grep: the model's pattern",
        depth: "regex-syntax's parser is iterative and refuses nesting past its nest_limit (250)",
        size: "REGEX_SIZE_LIMIT (10 MiB compiled) and REGEX_DFA_SIZE_LIMIT (10 MiB lazy-DFA \
               cache per searching thread); grep-regex's defaults were 100 MiB and 1000 MiB",
        enforced: "crates/tools/src/grep.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::regex_and_glob_patterns_at_every_depth",
    },
    ParserBound {
        parser: "globset (glob patterns) and ignore (gitignore lines)",
        input: "glob and grep's include patterns, read_many_files' patterns; the repository's \
                .gitignore and .ignore files; permission rule patterns of settings files \
                (tackle-gate, braces literal)",
        depth: "globset refuses alternates nested past its limit (TooManyNestedAlternates); the \
                translation goes through regex-syntax's nest_limit",
        size: "MAX_GLOB_PATTERN_BYTES (4 KiB) per pattern; ignore files: regular files of at \
               most 1 MiB (ignore_files.rs)",
        enforced: "crates/tools/src/walk.rs, crates/tools/src/ignore_files.rs",
        test: "crates/tools/src/parser_bounds/tests.rs::regex_and_glob_patterns_at_every_depth",
    },
    ParserBound {
        parser: "serde_json (tool arguments)",
        input: "a call's arguments: `tackle call`, the agent's model turns, MCP tools/call",
        depth: "serde_json refuses text past 128 levels; a Value built without text is bounded \
                by argument_depth (MAX_ARGUMENT_DEPTH 128) without recursion before the event \
                is written",
        size: "arguments past ARGUMENTS_INLINE_LIMIT (64 KiB) go to the store; the transport's \
               line or body limit first",
        enforced: "crates/runtime/src/argument_depth.rs",
        test: "crates/runtime/src/argument_depth.rs::deep_arguments_become_the_marker",
    },
    ParserBound {
        parser: "serde_json (MCP messages, rmcp)",
        input: "tackle serve: every line or HTTP body a client sends; MCP client: servers' \
                replies",
        depth: "serde_json's 128 levels; a request it cannot decode is answered with its id",
        size: "line_transport's bounded lines and the HTTP body limit",
        enforced: "crates/mcp/src/server/line_transport.rs, crates/mcp/src/screen/",
        test: "crates/cli/tests/parser_nesting.rs::serve_answers_deeply_nested_requests",
    },
    ParserBound {
        parser: "serde_json (mcp.json, trust.json, the OAuth token store, event logs)",
        input: "files of the user and of the repository (.agents/mcp.json), tackle's own files",
        depth: "serde_json's 128 levels: a deeper file is a parse error naming the file",
        size: "config file size caps (owned with how config files are opened)",
        enforced: "serde_json's default recursion limit (never disabled in the workspace)",
        test: "crates/cli/tests/parser_nesting.rs::deep_project_files_are_clean_errors",
    },
    ParserBound {
        parser: "saphyr-parser (YAML frontmatter of agent type files and skills' SKILL.md; \
                 tackle-config, which this crate cannot reach, so its test lives there)",
        input: "the repository's .agents/agents/*.md, .claude/agents/*.md, \
                .agents/skills/*/SKILL.md and .claude/skills/*/SKILL.md; the user's \
                $XDG_CONFIG_HOME/tackle/agents/*.md, $XDG_CONFIG_HOME/tackle/skills/*/SKILL.md \
                and ~/.agents/skills/*/SKILL.md",
        depth: "brackets counted before the parser runs (MAX_NESTING 32); lists and mappings \
                past MAX_NESTING refused on the parser's events, built with a heap stack from \
                its event iterator (its `load` recurses and is not used); saphyr's scanner \
                refuses flow nesting past 255; an alias is refused where it appears, never \
                expanded",
        size: "OwnFile::AGENT_TYPE and OwnFile::SKILL (256 KiB) a file, at most 200 files or \
               skill folders a directory; MAX_FRONTMATTER_BYTES (64 KiB) before the parser runs",
        enforced: "crates/config/src/frontmatter/mod.rs, \
                   crates/config/src/frontmatter/yaml.rs",
        test: "crates/config/src/agent_types/tests/bounds.rs::frontmatter_at_every_depth",
    },
    ParserBound {
        parser: "toml (settings files, with their [models.*] and [providers.*] tables)",
        input: "~/.config/tackle/config.toml, the repository's .agents/config.toml",
        depth: "toml's RecursionGuard (80 levels of arrays, inline tables and dotted keys)",
        size: "config file size caps (owned with how config files are opened)",
        enforced: "the toml crate's default features (no `unbounded`)",
        test: "crates/cli/tests/parser_nesting.rs::deep_project_files_are_clean_errors",
    },
];

#[cfg(test)]
mod tests;
