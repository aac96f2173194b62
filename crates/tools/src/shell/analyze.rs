//! Script → simple commands (through every construct bash nests commands in), the files its
//! redirections write and read, and whether anything could not be resolved exactly.
//!
//! The walk follows the shell's own state where keys depend on it: the working directory
//! (`cd sub && echo x >> f` writes `sub/f`; a `cd` that may fail leaves both possibilities; a
//! subshell, a pipeline element or `$(…)` scopes it), and the dialect of the shell that runs
//! the line (under a non-bash `sh`, every construct whose meaning differs is unresolved).
//! Arithmetic ([`super::arith`]), assignments to variables that change what commands do
//! ([`super::sensitive`]) and builtins that change how the shell reads later lines
//! ([`super::builtins`]) are unresolved unless shown inert.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, Command, CommandPrefixOrSuffixItem, CompoundCommand, IoRedirect};
use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTransformOp, TildeExpr, WordPiece, WordPieceWithSource,
};

use super::Dialect;
use super::arith;
use super::builtins;
use super::depth::{self, TooDeep};
use super::sensitive;

/// More simple commands than this in one script is unresolved (a key list nobody can review).
pub const MAX_COMMANDS: usize = 64;
/// Nesting of `$(…)`, `sh -c`, `eval` deeper than this is unresolved.
const MAX_DEPTH: usize = 8;
/// More possible working directories than this at one point is an unknown one.
const MAX_CWDS: usize = 8;

/// One word of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellWord {
    /// The word as bash would pass it, when that is knowable without running anything.
    pub literal: Option<String>,
    /// The word as written.
    pub raw: String,
    /// The word expands to exactly one argument: nothing in it expands unquoted (no field
    /// splitting, no globbing), so `"$x"` is one field and `$x` may be none or many.
    pub one_field: bool,
}

impl ShellWord {
    /// The decoded text when literal, else the text as written.
    pub fn shown(&self) -> &str {
        self.literal.as_deref().unwrap_or(&self.raw)
    }
}

/// One simple command (`FOO=1 git log -3`), possibly found inside another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// `NAME=value` prefixes, as written.
    pub assignments: Vec<String>,
    /// Verb first. Never empty.
    pub words: Vec<ShellWord>,
    /// The directories the shell may be in when the command runs (root-relative, absolute or
    /// under `$HOME`, as `cd` named them); `None` when unknown. Set when it is recorded.
    pub dirs: Option<Vec<Location>>,
}

/// Where a command's standard input comes from, as far as the script says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// The call's own stdin (or whatever the enclosing command was given).
    Inherited,
    /// A pipe from another command (`… | sh`, `>(sh)`): its bytes are not knowable statically.
    Pipe,
    /// A heredoc or here-string: its text when literal, `None` when it expands at run time.
    Text(Option<String>),
    /// A file or another descriptor (`sh < script.sh`, `<&3`).
    File,
}

/// A file a redirection opens, as the shell would name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// Relative to the project root (the working directory a line starts in), or absolute.
    Path(String),
    /// Relative to `$HOME` (`~/.ssh/id_rsa` → `.ssh/id_rsa`; `~` → empty).
    Home(String),
}

impl Location {
    /// `dir/target` as the shell resolves a relative name against its working directory.
    fn join(dir: &Location, target: &str) -> Location {
        if target.starts_with('/') {
            return Location::Path(target.to_owned());
        }
        let under = |base: &str| {
            if base.is_empty() || base == "." {
                target.to_owned()
            } else if target.is_empty() || target == "." {
                base.to_owned()
            } else {
                format!("{}/{target}", base.trim_end_matches('/'))
            }
        };
        match dir {
            Location::Path(p) => Location::Path(under(p)),
            Location::Home(p) => Location::Home(under(p)),
        }
    }

    /// The path as written in tests and messages (`~/` for the home directory).
    pub fn shown(&self) -> String {
        match self {
            Location::Path(p) => p.clone(),
            Location::Home(p) if p.is_empty() => "~".to_owned(),
            Location::Home(p) => format!("~/{p}"),
        }
    }
}

/// What a script would run, write and read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    pub commands: Vec<SimpleCommand>,
    /// Files redirections write to, resolved against the working directory at that point
    /// (`cd out && echo x > f` → `out/f`), one entry per possible directory.
    pub writes: Vec<Location>,
    /// Files input redirections read (`< f`, `<> f`, `$(< f)`), resolved the same way.
    pub reads: Vec<Location>,
    /// Something could not be resolved literally (see the module docs).
    pub unresolved: bool,
    /// A `cd` to a bare name (`cd sub`, not `cd ./sub`): with `CDPATH` set it may go elsewhere.
    pub cd_by_name: bool,
    /// The shell the analysis was made for (`None` until [`analyze_parsed`] ran).
    dialect: Option<Dialect>,
}

impl Analysis {
    /// Mark unresolved what the script's text shows and its tree does not
    /// ([`text_unresolved`]), for the shell this analysis was made for.
    pub fn check_text(&mut self, script: &str) {
        if text_unresolved(script, self.dialect.unwrap_or(Dialect::Sh)) {
            self.unresolved = true;
        }
    }
}

/// The working directories the shell may be in at one point of a script: `None` when unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cwds(Option<Vec<Location>>);

impl Cwds {
    fn root() -> Self {
        Cwds(Some(vec![Location::Path(String::new())]))
    }

    pub(crate) fn unknown() -> Self {
        Cwds(None)
    }

    pub(crate) fn union(&self, other: &Cwds) -> Cwds {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => {
                let mut v = a.clone();
                for x in b {
                    if !v.contains(x) {
                        v.push(x.clone());
                    }
                }
                if v.len() > MAX_CWDS {
                    Cwds(None)
                } else {
                    Cwds(Some(v))
                }
            }
            _ => Cwds(None),
        }
    }

    fn moved_to(&self, target: &Location) -> Cwds {
        match (&self.0, target) {
            (Some(dirs), Location::Path(p)) => {
                Cwds(Some(dirs.iter().map(|d| Location::join(d, p)).collect()))
            }
            (Some(_), Location::Home(p)) => Cwds(Some(vec![Location::Home(p.clone())])),
            (None, Location::Path(p)) if p.starts_with('/') => {
                Cwds(Some(vec![Location::Path(p.clone())]))
            }
            (None, Location::Home(p)) => Cwds(Some(vec![Location::Home(p.clone())])),
            (None, _) => Cwds(None),
        }
    }
}

/// The directories after a command, by whether it succeeded: `cd x && …` runs `…` in `x`,
/// `cd x || …` runs it where the failed `cd` left the shell.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) ok: Cwds,
    pub(crate) failed: Cwds,
}

impl Outcome {
    pub(crate) fn same(c: &Cwds) -> Self {
        Outcome {
            ok: c.clone(),
            failed: c.clone(),
        }
    }

    fn after(&self) -> Cwds {
        self.ok.union(&self.failed)
    }
}

/// Analyze a whole script, as `dialect` would run it.
/// The parse and the walk run on a thread with [`crate::stack::PARSER_STACK_BYTES`] of stack.
pub fn analyze(script: &str, dialect: Dialect) -> Analysis {
    let read = || {
        let mut a = analyze_parsed(parse(script).as_ref(), dialect);
        a.check_text(script);
        a
    };
    crate::stack::on_parser_stack("bash", read).unwrap_or_else(|_| Analysis {
        unresolved: true,
        dialect: Some(dialect),
        ..Analysis::default()
    })
}

/// Analyze a script already parsed with [`parse`] (`None`: it did not parse), so a caller that
/// also needs the syntax tree parses it once. The caller then gives it the script's text
/// ([`Analysis::check_text`]), which the tree does not keep.
pub fn analyze_parsed(program: Option<&ast::Program>, dialect: Dialect) -> Analysis {
    let mut a = Analysis {
        dialect: Some(dialect),
        ..Analysis::default()
    };
    let mut w = Walker::new(dialect, &mut a);
    match program {
        Some(program) => {
            w.program(program, &Cwds::root());
        }
        None => w.a.unresolved = true,
    }
    w.finish();
    if a.commands.len() > MAX_COMMANDS {
        a.unresolved = true;
    }
    a
}

/// Parser options matching `bash -c`: extended globs are off until `shopt -s extglob`, which
/// is itself unresolved.
fn options() -> ParserOptions {
    ParserOptions {
        enable_extended_globbing: false,
        ..ParserOptions::default()
    }
}

/// Why a script yields no syntax tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseRefusal {
    /// Not bash syntax (or the parser panicked, which is the parser's bug and must not become
    /// ours).
    Syntax,
    /// Nested past a limit of [`super::depth`]: no parser was run on it.
    TooDeep(TooDeep),
}

/// Parse a script; `None` when it does not parse or nests too deeply to be parsed.
pub fn parse(script: &str) -> Option<ast::Program> {
    parse_checked(script).ok()
}

/// Parse a script after bounding its nesting ([`super::depth`]), so no input can exhaust the
/// parser's stack. The caller must run this on a thread with
/// [`crate::stack::PARSER_STACK_BYTES`] of stack (or a script it knows to be small).
pub fn parse_checked(script: &str) -> Result<ast::Program, ParseRefusal> {
    depth::check_text(script).map_err(ParseRefusal::TooDeep)?;
    std::panic::catch_unwind(|| {
        let options = options();
        let tokens =
            brush_parser::uncached_tokenize_str(script, &options.tokenizer_options()).ok()?;
        if let Err(deep) = depth::check_tokens(&tokens) {
            return Some(Err(ParseRefusal::TooDeep(deep)));
        }
        brush_parser::parse_tokens(&tokens, &options).ok().map(Ok)
    })
    .ok()
    .flatten()
    .unwrap_or(Err(ParseRefusal::Syntax))
}

/// Decode one word as bash would, without keeping what it runs (the search gate's view).
pub(crate) fn decode(raw: &str) -> ShellWord {
    let mut scratch = Analysis::default();
    Walker::new(Dialect::Bash, &mut scratch).word(raw)
}

/// Whether the text of a script holds what the parser's tree does not show: a named descriptor
/// (`{fd}>f`, where bash passes no `{fd}` argument), and under a non-bash `sh` the spellings of
/// bash-only syntax, which such a shell reads as something else (`|&`, `&>`, `$'…'`, `[[`,
/// `((`, `function`, …). Quoted occurrences count too: this errs towards unresolved.
pub fn text_unresolved(script: &str, dialect: Dialect) -> bool {
    let b = script.as_bytes();
    let named_fd = b.iter().enumerate().any(|(i, &c)| {
        c == b'{' && {
            let rest = &b[i + 1..];
            let n = rest
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            n > 0 && rest.get(n) == Some(&b'}') && matches!(rest.get(n + 1), Some(b'<' | b'>'))
        }
    });
    if named_fd {
        return true;
    }
    if dialect == Dialect::Bash {
        return false;
    }
    const BASH_ONLY: &[&str] = &[
        "|&", "&>", "<<<", "<(", ">(", "$'", "$\"", "[[", "]]", "((", "))", ";&", "$[", "+=",
    ];
    const BASH_WORDS: &[&str] = &["coproc", "select", "function", "time", "declare", "typeset"];
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    BASH_ONLY.iter().any(|t| script.contains(t))
        || BASH_WORDS.iter().any(|w| {
            script.match_indices(w).any(|(i, _)| {
                let before = i.checked_sub(1).map(|j| b[j]);
                let after = b.get(i + w.len()).copied();
                !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
            })
        })
}

/// The walk over one script and everything nested in it.
pub(crate) struct Walker<'a> {
    pub(crate) dialect: Dialect,
    pub(crate) a: &'a mut Analysis,
    depth: usize,
    /// Inside a function body: its paths resolve where it is called, not where it is defined.
    in_function: usize,
    /// A relative path was named inside a function body.
    relative_in_function: bool,
    /// A `cd`, `pushd` or `popd` appears anywhere.
    cwd_changed: bool,
    /// Names of the functions the script defines.
    functions: Vec<String>,
    /// Verbs run with an assignment that changes commands as a prefix (`PATH=. f`).
    sensitive_prefixed: Vec<String>,
    /// Where the command being walked runs (for the `$(…)` in its words).
    here: Cwds,
}

impl<'a> Walker<'a> {
    fn new(dialect: Dialect, a: &'a mut Analysis) -> Self {
        Walker {
            dialect,
            a,
            depth: 0,
            in_function: 0,
            relative_in_function: false,
            cwd_changed: false,
            functions: Vec::new(),
            sensitive_prefixed: Vec::new(),
            here: Cwds::root(),
        }
    }

    pub(crate) fn unresolved(&mut self) {
        self.a.unresolved = true;
    }

    fn sh_only(&mut self) {
        if self.dialect == Dialect::Sh {
            self.unresolved();
        }
    }

    /// What can only be judged once the whole script is read.
    fn finish(&mut self) {
        // A function's relative paths resolve wherever it is called from.
        if self.relative_in_function && self.cwd_changed {
            self.unresolved();
        }
        // A function named like a builtin whose meaning the walk assumes.
        if self
            .functions
            .iter()
            .any(|f| matches!(f.as_str(), "cd" | "pushd" | "popd" | "command" | "builtin"))
        {
            self.unresolved();
        }
        // A function body runs with its caller's prefix assignments (`PATH=. f`).
        if self
            .sensitive_prefixed
            .iter()
            .any(|v| self.functions.contains(v))
        {
            self.unresolved();
        }
    }

    fn program(&mut self, program: &ast::Program, cwds: &Cwds) -> Cwds {
        if self.depth > MAX_DEPTH || self.a.commands.len() > MAX_COMMANDS {
            self.unresolved();
            return Cwds::unknown();
        }
        let mut cwds = cwds.clone();
        for cc in &program.complete_commands {
            cwds = self.list(cc, &Stdin::Inherited, &cwds);
        }
        cwds
    }

    /// Walk a script a command runs: `same_shell` for `eval` (its `cd` stays), else a new
    /// shell (`sh -c`), which starts where this one is and keeps its `cd` to itself.
    pub(crate) fn nested(
        &mut self,
        script: &str,
        same_shell: bool,
        cwds: &Cwds,
        dialect: Dialect,
    ) -> Cwds {
        if self.depth >= MAX_DEPTH || self.a.commands.len() > MAX_COMMANDS {
            self.unresolved();
            return Cwds::unknown();
        }
        if text_unresolved(script, dialect) {
            self.unresolved();
        }
        let Some(program) = parse(script) else {
            self.unresolved();
            return cwds.clone();
        };
        self.depth += 1;
        let here = self.here.clone();
        let outer = std::mem::replace(&mut self.dialect, dialect);
        let after = self.program(&program, cwds);
        self.dialect = outer;
        self.here = here;
        self.depth -= 1;
        if same_shell { after } else { cwds.clone() }
    }

    fn list(&mut self, list: &ast::CompoundList, stdin: &Stdin, cwds: &Cwds) -> Cwds {
        let mut cwds = cwds.clone();
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            let after = self.and_or(and_or, stdin, &cwds);
            // A command started with `&` runs in a subshell of its own.
            if !matches!(sep, ast::SeparatorOperator::Async) {
                cwds = after;
            }
        }
        cwds
    }

    fn and_or(&mut self, ao: &ast::AndOrList, stdin: &Stdin, cwds: &Cwds) -> Cwds {
        let mut o = self.pipeline(&ao.first, stdin, cwds);
        for next in &ao.additional {
            o = match next {
                ast::AndOr::And(p) => {
                    let r = self.pipeline(p, stdin, &o.ok);
                    Outcome {
                        ok: r.ok,
                        failed: o.failed.union(&r.failed),
                    }
                }
                ast::AndOr::Or(p) => {
                    let r = self.pipeline(p, stdin, &o.failed);
                    Outcome {
                        ok: o.ok.union(&r.ok),
                        failed: r.failed,
                    }
                }
            };
        }
        o.after()
    }

    /// The first command of a pipeline reads the list's stdin; every other one reads a pipe.
    /// Each command of a pipeline of several runs in a subshell.
    fn pipeline(&mut self, p: &ast::Pipeline, stdin: &Stdin, cwds: &Cwds) -> Outcome {
        if p.timed.is_some() {
            self.sh_only();
        }
        if let [only] = p.seq.as_slice() {
            let o = self.command(only, stdin, cwds);
            return if p.bang {
                Outcome {
                    ok: o.failed,
                    failed: o.ok,
                }
            } else {
                o
            };
        }
        for (i, c) in p.seq.iter().enumerate() {
            self.command(c, if i == 0 { stdin } else { &Stdin::Pipe }, cwds);
        }
        Outcome::same(cwds)
    }

    fn redirects(&mut self, list: Option<&ast::RedirectList>, cwds: &Cwds) -> Option<Stdin> {
        let mut own = None;
        for r in list.iter().flat_map(|r| &r.0) {
            own = self.redirect(r, cwds).or(own);
        }
        own
    }

    fn command(&mut self, c: &Command, stdin: &Stdin, cwds: &Cwds) -> Outcome {
        self.here = cwds.clone();
        match c {
            Command::Simple(s) => self.simple(s, stdin, cwds),
            Command::Compound(cc, redirects) => {
                let own = self.redirects(redirects.as_ref(), cwds);
                let after = self.compound(cc, own.as_ref().unwrap_or(stdin), cwds);
                Outcome::same(&after)
            }
            Command::Function(f) => {
                // The body runs when the function is called, with the caller's stdin and
                // working directory.
                self.functions.push(f.fname.value.clone());
                self.in_function += 1;
                let own = self.redirects(f.body.1.as_ref(), cwds);
                let after =
                    self.compound(&f.body.0, own.as_ref().unwrap_or(&Stdin::Inherited), cwds);
                self.in_function -= 1;
                if after != *cwds {
                    // Calling it moves the caller: where is not knowable here.
                    self.unresolved();
                }
                Outcome::same(cwds)
            }
            Command::ExtendedTest(t, redirects) => {
                self.sh_only();
                self.test(&t.expr);
                self.redirects(redirects.as_ref(), cwds);
                Outcome::same(cwds)
            }
        }
    }

    /// `[[ … ]]`: `-v` names a variable (whose subscript is arithmetic) and `-eq`-style
    /// operands are arithmetic.
    fn test(&mut self, e: &ast::ExtendedTestExpr) {
        use ast::BinaryPredicate as B;
        use ast::ExtendedTestExpr as T;
        use ast::UnaryPredicate as U;
        match e {
            T::And(l, r) | T::Or(l, r) => {
                self.test(l);
                self.test(r);
            }
            T::Not(x) | T::Parenthesized(x) => self.test(x),
            T::UnaryTest(pred, w) => {
                let d = self.word(&w.value);
                if matches!(
                    pred,
                    U::ShellVariableIsSetAndAssigned | U::ShellVariableIsSetAndNameRef
                ) && !d.literal.as_deref().is_some_and(sensitive::is_inert_name)
                {
                    self.unresolved();
                }
            }
            T::BinaryTest(pred, l, r) => {
                let arithmetic = matches!(
                    pred,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                );
                for w in [l, r] {
                    let d = self.word(&w.value);
                    if arithmetic && !d.literal.as_deref().is_some_and(arith::is_literal) {
                        self.unresolved();
                    }
                }
            }
        }
    }

    /// A loop body may run many times: one that moves the shell is unresolved.
    fn loop_body(&mut self, body: &ast::CompoundList, stdin: &Stdin, cwds: &Cwds) -> Cwds {
        let after = self.list(body, stdin, cwds);
        if after != *cwds {
            self.unresolved();
            return Cwds::unknown();
        }
        after
    }

    fn arithmetic(&mut self, expr: &str) {
        if !arith::is_literal(expr) {
            self.unresolved();
        }
    }

    fn compound(&mut self, c: &CompoundCommand, stdin: &Stdin, cwds: &Cwds) -> Cwds {
        match c {
            CompoundCommand::Arithmetic(x) => {
                // dash runs `((touch x))` as two nested subshells.
                self.sh_only();
                self.arithmetic(&x.expr.value);
                cwds.clone()
            }
            CompoundCommand::ArithmeticForClause(x) => {
                self.sh_only();
                for e in [&x.initializer, &x.condition, &x.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.loop_body(&x.body.list, stdin, cwds)
            }
            CompoundCommand::BraceGroup(b) => self.list(&b.list, stdin, cwds),
            CompoundCommand::Subshell(s) => {
                self.list(&s.list, stdin, cwds);
                cwds.clone()
            }
            CompoundCommand::ForClause(f) => {
                if sensitive::changes_commands(&f.variable_name) {
                    self.unresolved();
                }
                for w in f.values.iter().flatten() {
                    self.word(&w.value);
                }
                self.loop_body(&f.body.list, stdin, cwds)
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value);
                let mut after = cwds.clone();
                for item in &c.cases {
                    if !matches!(item.post_action, ast::CaseItemPostAction::ExitCase) {
                        self.sh_only();
                    }
                    for p in &item.patterns {
                        self.word(&p.value);
                    }
                    if let Some(cmd) = &item.cmd {
                        let r = self.list(cmd, stdin, cwds);
                        after = after.union(&r);
                    }
                }
                after
            }
            CompoundCommand::IfClause(i) => {
                let c = self.list(&i.condition, stdin, cwds);
                let mut after = self.list(&i.then, stdin, &c);
                let mut last = c;
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        last = self.list(cond, stdin, &last);
                    }
                    let r = self.list(&e.body, stdin, &last);
                    after = after.union(&r);
                }
                if i.elses
                    .as_ref()
                    .is_none_or(|e| e.iter().all(|e| e.condition.is_some()))
                {
                    after = after.union(&last);
                }
                after
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                let c = self.loop_body(&w.0, stdin, cwds);
                self.loop_body(&w.1.list, stdin, &c)
            }
            CompoundCommand::Coprocess(c) => {
                self.sh_only();
                self.command(&c.body, &Stdin::Pipe, cwds);
                cwds.clone()
            }
        }
    }

    /// Record a file a redirection opens, once per directory the shell may be in.
    fn file(&mut self, target: Option<Location>, cwds: &Cwds, write: bool) {
        let Some(target) = target else {
            self.unresolved();
            return;
        };
        let found = match &target {
            Location::Path(p) if !p.starts_with('/') => {
                if self.in_function > 0 {
                    self.relative_in_function = true;
                }
                match &cwds.0 {
                    Some(dirs) => dirs.iter().map(|d| Location::join(d, p)).collect(),
                    None => {
                        self.unresolved();
                        return;
                    }
                }
            }
            _ => vec![target],
        };
        let list = if write {
            &mut self.a.writes
        } else {
            &mut self.a.reads
        };
        for f in found {
            if !list.contains(&f) {
                list.push(f);
            }
        }
    }

    /// The file a redirection target names: a literal path, or `~/…` with a literal rest.
    fn target(&mut self, raw: &str) -> Option<Location> {
        let d = self.word(raw);
        if let Some(t) = d.literal {
            return Some(Location::Path(t));
        }
        let pieces = brush_parser::word::parse(raw, &options()).ok()?;
        let (first, rest) = pieces.split_first()?;
        if !matches!(first.piece, WordPiece::TildeExpansion(TildeExpr::Home)) {
            return None;
        }
        let mut scratch = Analysis::default();
        let rest = Walker::new(self.dialect, &mut scratch).pieces_literal(rest)?;
        match rest.strip_prefix('/') {
            Some(r) => Some(Location::Home(r.to_owned())),
            None if rest.is_empty() => Some(Location::Home(String::new())),
            None => None,
        }
    }

    /// Walk a redirection; `Some` when it gives the command a new standard input.
    fn redirect(&mut self, r: &IoRedirect, cwds: &Cwds) -> Option<Stdin> {
        let is_stdin = |fd: &Option<i32>| matches!(fd, None | Some(0));
        match r {
            IoRedirect::File(fd, kind, target) => {
                use ast::IoFileRedirectKind as K;
                use ast::IoFileRedirectTarget as T;
                if fd.is_some_and(|n| n > 9) {
                    // dash reads `10>f` as the argument `10` and `>f`.
                    self.sh_only();
                }
                let writes = matches!(
                    kind,
                    K::Write | K::Append | K::Clobber | K::ReadAndWrite | K::DuplicateOutput
                );
                let reads = matches!(kind, K::Read | K::ReadAndWrite | K::DuplicateInput);
                match target {
                    T::Filename(w) => {
                        let t = self.target(&w.value);
                        if writes {
                            self.file(t.clone(), cwds, true);
                        }
                        if reads {
                            self.file(t, cwds, false);
                        }
                    }
                    T::Duplicate(w) => {
                        let d = self.word(&w.value);
                        // `>&2`, `>&-`, `<&3-` duplicate descriptors; anything else names a file
                        // (bash only: dash refuses it).
                        let fd_like = d.literal.as_deref().is_some_and(|t| {
                            let t = t.strip_suffix('-').unwrap_or(t);
                            t.chars().all(|c| c.is_ascii_digit())
                        });
                        if !fd_like {
                            self.sh_only();
                            let t = self.target(&w.value);
                            if writes {
                                self.file(t.clone(), cwds, true);
                            }
                            if reads {
                                self.file(t, cwds, false);
                            }
                        }
                    }
                    T::Fd(_) => {}
                    T::ProcessSubstitution(kind, s) => {
                        self.sh_only();
                        self.list(&s.list, &substituted(kind), cwds);
                    }
                }
                (reads && is_stdin(fd)).then_some(Stdin::File)
            }
            IoRedirect::HereDocument(fd, doc) => {
                let text = if doc.requires_expansion {
                    match brush_parser::word::parse_heredoc(&doc.doc.value, &options()) {
                        Ok(pieces) => self.literal_with_escapes(&pieces, &["$", "`", "\\"]),
                        Err(_) => {
                            self.unresolved();
                            None
                        }
                    }
                } else {
                    Some(doc.doc.value.clone())
                };
                is_stdin(fd).then_some(Stdin::Text(text))
            }
            IoRedirect::HereString(fd, w) => {
                self.sh_only();
                let d = self.word(&w.value);
                // A here-string is followed by a newline.
                is_stdin(fd).then(|| Stdin::Text(d.literal.map(|t| t + "\n")))
            }
            IoRedirect::OutputAndError(w, _) => {
                self.sh_only();
                let t = self.target(&w.value);
                self.file(t, cwds, true);
                None
            }
        }
    }

    /// Walk an assignment (`x=v`, `a[i]=v`, `a=(…)`, `x+=v`); returns the variable's name.
    fn assignment(&mut self, asg: &ast::Assignment) -> String {
        if asg.append {
            self.sh_only();
        }
        let name = match &asg.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                self.sh_only();
                self.arithmetic(index);
                n.clone()
            }
        };
        match &asg.value {
            ast::AssignmentValue::Scalar(w) => {
                self.word(&w.value);
            }
            ast::AssignmentValue::Array(items) => {
                self.sh_only();
                for (key, value) in items {
                    if let Some(k) = key {
                        self.arithmetic(&k.value);
                    }
                    self.word(&value.value);
                }
            }
        }
        name
    }

    fn simple(&mut self, s: &ast::SimpleCommand, stdin: &Stdin, cwds: &Cwds) -> Outcome {
        let mut assignments = Vec::new();
        let mut names = Vec::new();
        let mut words = Vec::new();
        // The last redirection of fd 0 wins, as in bash.
        let mut own = None;
        for item in s.prefix.iter().flat_map(|p| &p.0) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(asg, w) => {
                    names.push(self.assignment(asg));
                    assignments.push(w.value.clone());
                }
                other => own = self.suffix_item(other, &mut words, cwds).or(own),
            }
        }
        if let Some(v) = &s.word_or_name {
            words.push(self.word(&v.value));
        }
        for item in s.suffix.iter().flat_map(|p| &p.0) {
            own = self.suffix_item(item, &mut words, cwds).or(own);
        }
        let sensitive = names.iter().any(|n| sensitive::changes_commands(n));
        if words.is_empty() {
            // A bare assignment changes the shell for every later command.
            if sensitive {
                self.unresolved();
            }
            return Outcome::same(cwds);
        }
        if sensitive && let Some(v) = &words[0].literal {
            self.sensitive_prefixed.push(v.clone());
            // Special builtins keep prefix assignments (POSIX), and these run code of
            // their own under them.
            if builtins::runs_code_with_prefix(v) {
                self.unresolved();
            }
        }
        // `./tool` runs the file in the current directory: after a `cd`, a key naming it as
        // written would name another file (`cd .git/hooks && ./pre-commit`).
        if let Some(v) = &words[0].literal
            && v.contains('/')
            && !v.starts_with('/')
            && *cwds != Cwds::root()
        {
            self.unresolved();
        }
        let command = SimpleCommand {
            assignments,
            words,
            dirs: None,
        };
        self.record(command, own.as_ref().unwrap_or(stdin), cwds, true)
    }

    /// Record a command (and what it runs in turn); `in_shell` when the shell itself runs it
    /// (a builtin can act on the shell), not a program a wrapper started.
    pub(crate) fn record(
        &mut self,
        mut c: SimpleCommand,
        stdin: &Stdin,
        cwds: &Cwds,
        in_shell: bool,
    ) -> Outcome {
        c.dirs = cwds.0.clone();
        let mut outcome = Outcome::same(cwds);
        if in_shell {
            if builtins::unresolved(&c, self.dialect) {
                self.unresolved();
            }
            if let Some(cd) = builtins::directory_change(&c) {
                self.cwd_changed = true;
                if cd.by_name {
                    self.a.cd_by_name = true;
                }
                outcome.ok = match cd.target {
                    Some(t) => cwds.moved_to(&t),
                    None => Cwds::unknown(),
                };
            }
        }
        if let Some(after) = super::keys::unwrap_inner(self, &c, stdin, cwds) {
            // What it ran may have moved the shell, and may have failed after doing so.
            outcome.ok = outcome.ok.union(&after);
            outcome.failed = outcome.failed.union(&after);
        }
        self.a.commands.push(c);
        outcome
    }

    /// A word or redirection of a simple command; `Some` when it redirects stdin.
    fn suffix_item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        words: &mut Vec<ShellWord>,
        cwds: &Cwds,
    ) -> Option<Stdin> {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => return self.redirect(r, cwds),
            // After the verb (`make CC=gcc`, `declare x=$(…)`) an assignment is an argument.
            CommandPrefixOrSuffixItem::Word(w)
            | CommandPrefixOrSuffixItem::AssignmentWord(_, w) => words.push(self.word(&w.value)),
            CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
                self.sh_only();
                self.list(&sub.list, &substituted(kind), cwds);
                words.push(ShellWord {
                    literal: None,
                    raw: "<(…)".to_owned(),
                    one_field: true,
                });
            }
        }
        None
    }

    /// Decode one word, walking any command substitution inside it.
    pub(crate) fn word(&mut self, raw: &str) -> ShellWord {
        let (literal, one_field) = match brush_parser::word::parse(raw, &options()) {
            Ok(pieces) => {
                let one_field = pieces.iter().all(|p| quoted_or_inert(&p.piece));
                (self.pieces_literal(&pieces), one_field)
            }
            Err(_) => {
                self.unresolved();
                (None, false)
            }
        };
        ShellWord {
            literal,
            raw: raw.to_owned(),
            one_field,
        }
    }

    /// The literal text of word pieces, `None` if any piece expands at run time. Command
    /// substitutions (also inside parameter expansions) are walked as scripts of their own
    /// either way.
    fn pieces_literal(&mut self, pieces: &[WordPieceWithSource]) -> Option<String> {
        let mut out = Some(String::new());
        // An unquoted `[` starts a glob bracket that a `]` in any later piece may close.
        let mut open_bracket = false;
        let push = |out: &mut Option<String>, s: &str| {
            if let Some(o) = out {
                o.push_str(s);
            }
        };
        for p in pieces {
            if open_bracket && !matches!(p.piece, WordPiece::Text(_)) {
                // Conservatively: a bracket left open may be closed by what follows.
                out = None;
            }
            match &p.piece {
                WordPiece::Text(t) => {
                    let brace =
                        t.contains('{') && t.contains('}') && (t.contains(',') || t.contains(".."));
                    if brace {
                        self.sh_only();
                    }
                    // Unquoted glob and brace characters expand against the file system.
                    if is_glob(t) || brace || (open_bracket && t.contains(']')) {
                        out = None;
                    }
                    open_bracket |= t.contains('[');
                    push(&mut out, t);
                }
                WordPiece::SingleQuotedText(t) => push(&mut out, t),
                WordPiece::AnsiCQuotedText(t) => {
                    self.sh_only();
                    push(&mut out, &ansi_c(t));
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    if matches!(p.piece, WordPiece::GettextDoubleQuotedSequence(_)) {
                        self.sh_only();
                    }
                    match self.literal_with_escapes(inner, &["$", "`", "\"", "\\"]) {
                        Some(s) => push(&mut out, &s),
                        None => out = None,
                    }
                }
                WordPiece::EscapeSequence(e) => {
                    let c = &e[e.char_indices().nth(1).map_or(e.len(), |(i, _)| i)..];
                    // A backslash-newline is a line continuation: it disappears.
                    if c != "\n" {
                        push(&mut out, c);
                    }
                }
                WordPiece::CommandSubstitution(s) => {
                    self.substitution(s);
                    out = None;
                }
                WordPiece::BackquotedCommandSubstitution(s) => {
                    self.substitution(&unescape_backquoted(s));
                    out = None;
                }
                WordPiece::TildeExpansion(t) => {
                    if !matches!(t, TildeExpr::Home | TildeExpr::UserHome(_)) {
                        self.sh_only();
                    }
                    out = None;
                }
                WordPiece::ParameterExpansion(e) => {
                    self.parameter_expr(e);
                    out = None;
                }
                WordPiece::ArithmeticExpression(e) => {
                    self.arithmetic(&e.value);
                    out = None;
                }
            }
        }
        out
    }

    /// `$(…)` runs in a subshell where this shell is: its `cd` stays inside.
    fn substitution(&mut self, script: &str) {
        let cwds = self.here.clone();
        self.nested(script, false, &cwds, self.dialect);
    }

    /// `${…}`: its operands are words (walked for substitutions), its offsets and subscripts
    /// arithmetic; under a non-bash `sh` only the POSIX forms with plain operands are read.
    fn parameter_expr(&mut self, e: &ParameterExpr) {
        use ParameterExpr as P;
        let (parameter, indirect, operands, posix): (Option<&Parameter>, bool, Vec<&str>, bool) =
            match e {
                P::Parameter {
                    parameter,
                    indirect,
                } => (Some(parameter), *indirect, vec![], true),
                P::UseDefaultValues {
                    parameter,
                    indirect,
                    default_value: v,
                    ..
                }
                | P::IndicateErrorIfNullOrUnset {
                    parameter,
                    indirect,
                    error_message: v,
                    ..
                }
                | P::UseAlternativeValue {
                    parameter,
                    indirect,
                    alternative_value: v,
                    ..
                } => (
                    Some(parameter),
                    *indirect,
                    v.iter().map(String::as_str).collect(),
                    true,
                ),
                P::AssignDefaultValues {
                    parameter,
                    indirect,
                    default_value: v,
                    ..
                } => {
                    // `${PATH:=.}` assigns.
                    if let Parameter::Named(n) = parameter
                        && sensitive::changes_commands(n)
                    {
                        self.unresolved();
                    }
                    (
                        Some(parameter),
                        *indirect,
                        v.iter().map(String::as_str).collect(),
                        true,
                    )
                }
                P::ParameterLength {
                    parameter,
                    indirect,
                } => (Some(parameter), *indirect, vec![], true),
                P::RemoveSmallestSuffixPattern {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::RemoveLargestSuffixPattern {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::RemoveSmallestPrefixPattern {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::RemoveLargestPrefixPattern {
                    parameter,
                    indirect,
                    pattern,
                } => (
                    Some(parameter),
                    *indirect,
                    pattern.iter().map(String::as_str).collect(),
                    true,
                ),
                P::UppercaseFirstChar {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::UppercasePattern {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::LowercaseFirstChar {
                    parameter,
                    indirect,
                    pattern,
                }
                | P::LowercasePattern {
                    parameter,
                    indirect,
                    pattern,
                } => (
                    Some(parameter),
                    *indirect,
                    pattern.iter().map(String::as_str).collect(),
                    false,
                ),
                P::Substring {
                    parameter,
                    indirect,
                    offset,
                    length,
                } => {
                    self.arithmetic(&offset.value);
                    if let Some(l) = length {
                        self.arithmetic(&l.value);
                    }
                    (Some(parameter), *indirect, vec![], false)
                }
                P::Transform {
                    parameter,
                    indirect,
                    op,
                } => {
                    // `${x@P}` expands the value as a prompt, which runs `$(…)` in it.
                    if matches!(op, ParameterTransformOp::PromptExpand) {
                        self.unresolved();
                    }
                    (Some(parameter), *indirect, vec![], false)
                }
                P::ReplaceSubstring {
                    parameter,
                    indirect,
                    pattern,
                    replacement,
                    ..
                } => {
                    let mut ops = vec![pattern.as_str()];
                    ops.extend(replacement.as_deref());
                    (Some(parameter), *indirect, ops, false)
                }
                P::VariableNames { .. } | P::MemberKeys { .. } => (None, false, vec![], false),
            };
        if !posix {
            self.sh_only();
        }
        // `${!x}` reads the variable named by x's value, subscript (arithmetic) included.
        if indirect {
            self.unresolved();
        }
        match parameter {
            Some(Parameter::NamedWithIndex { index, .. }) => {
                self.sh_only();
                self.arithmetic(index);
            }
            Some(Parameter::NamedWithAllIndices { .. }) => self.sh_only(),
            _ => {}
        }
        for op in operands {
            if self.dialect == Dialect::Sh && op.contains(['\'', '"', '\\', '`']) {
                self.unresolved();
            }
            self.word(op);
            // Inside double quotes a `'` in an operand quotes nothing (`"${x:-'$(cmd)'}"` runs
            // cmd): walk it as if unquoted as well.
            if op.contains('\'') {
                self.word(&op.replace('\'', ""));
            }
        }
    }

    /// The text of pieces where globs do not expand and a backslash is removed only before one
    /// of `escapable` or a newline; `None` if any piece expands at run time. Command
    /// substitutions are walked either way.
    fn literal_with_escapes(
        &mut self,
        pieces: &[WordPieceWithSource],
        escapable: &[&str],
    ) -> Option<String> {
        let mut out = Some(String::new());
        for p in pieces {
            let piece = match &p.piece {
                WordPiece::Text(t) => Some(t.clone()),
                WordPiece::EscapeSequence(e) => {
                    let c = &e[1.min(e.len())..];
                    Some(if escapable.contains(&c) {
                        c.to_owned()
                    } else if c == "\n" {
                        String::new()
                    } else {
                        e.clone()
                    })
                }
                _ => self.pieces_literal(std::slice::from_ref(p)),
            };
            match (piece, &mut out) {
                (Some(t), Some(o)) => o.push_str(&t),
                (None, _) => out = None,
                (Some(_), None) => {}
            }
        }
        out
    }
}

/// Whether unquoted text is a glob pattern: `*`, `?`, or a `[` closed by a later `]` (a lone
/// `[`, as in `[ -f x ]`, matches only itself).
fn is_glob(t: &str) -> bool {
    t.contains(['*', '?']) || t.find('[').is_some_and(|i| t[i + 1..].contains(']'))
}

/// Whether a piece expands to exactly its own field: quoted, or plain text without globs.
fn quoted_or_inert(p: &WordPiece) -> bool {
    match p {
        WordPiece::Text(t) => !is_glob(t) && !t.contains('{'),
        WordPiece::SingleQuotedText(_)
        | WordPiece::AnsiCQuotedText(_)
        | WordPiece::DoubleQuotedSequence(_)
        | WordPiece::GettextDoubleQuotedSequence(_)
        | WordPiece::EscapeSequence(_) => true,
        _ => false,
    }
}

/// Commands in `>(…)` read what the outer command writes; those in `<(…)` read the inherited
/// stdin.
fn substituted(kind: &ast::ProcessSubstitutionKind) -> Stdin {
    match kind {
        ast::ProcessSubstitutionKind::Write => Stdin::Pipe,
        ast::ProcessSubstitutionKind::Read => Stdin::Inherited,
    }
}

/// Inside backquotes, `\\`, `` \` `` and `\$` lose their backslash.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('\\' | '`' | '$')) {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decode the body of `$'…'` as bash does.
pub(crate) fn ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let hex = |chars: &[char], max: usize| {
        let digits: String = chars
            .iter()
            .take(max)
            .take_while(|c| c.is_ascii_hexdigit())
            .collect();
        let n = digits.len();
        (u32::from_str_radix(&digits, 16).ok(), n)
    };
    while i < b.len() {
        if b[i] != '\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(c),
            'c' if i < b.len() => {
                out.push(char::from((b[i] as u8) & 0x1f));
                i += 1;
            }
            'x' | 'u' | 'U' => {
                let max = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                match hex(&b[i..], max) {
                    (Some(v), n) if n > 0 => {
                        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                        i += n;
                    }
                    _ => {
                        out.push('\\');
                        out.push(c);
                    }
                }
            }
            '0'..='7' => {
                let mut v = c.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 && i < b.len() && b[i].is_digit(8) {
                    v = v * 8 + b[i].to_digit(8).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                out.push(char::from_u32(v & 0xff).unwrap_or('\u{fffd}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}
