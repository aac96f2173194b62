//! Script → simple commands (through every construct bash nests commands in) and redirection
//! targets, with words decoded.

use brush_parser::ParserOptions;
use brush_parser::ast::{self, Command, CommandPrefixOrSuffixItem, CompoundCommand, IoRedirect};
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::Dialect;

/// More simple commands than this in one script is unresolved (a key list nobody can review).
pub const MAX_COMMANDS: usize = 64;
/// Nesting of `$(…)`, `sh -c`, `eval` deeper than this is unresolved.
const MAX_DEPTH: usize = 8;

/// One word of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellWord {
    /// The word as bash would pass it, when that is knowable without running anything.
    pub literal: Option<String>,
    /// The word as written.
    pub raw: String,
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

/// What a script would run and write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    pub commands: Vec<SimpleCommand>,
    /// Redirection targets written to, decoded (`> out.txt` → `out.txt`).
    pub writes: Vec<String>,
    /// Something could not be resolved literally (see the module docs).
    pub unresolved: bool,
}

/// Analyze a whole script, as `dialect` would run it.
pub fn analyze(script: &str, dialect: Dialect) -> Analysis {
    analyze_parsed(parse(script).as_ref(), dialect)
}

/// Analyze a script already parsed with [`parse`] (`None`: it did not parse), so a caller that
/// also needs the syntax tree parses it once.
pub fn analyze_parsed(program: Option<&ast::Program>, _dialect: Dialect) -> Analysis {
    let mut a = Analysis::default();
    match program {
        Some(program) => walk_program(program, 0, &mut a),
        None => a.unresolved = true,
    }
    if a.commands.len() > MAX_COMMANDS {
        a.unresolved = true;
    }
    a
}

fn options() -> ParserOptions {
    ParserOptions::default()
}

/// Parse a script; `None` on a parse error (or a parser panic, which is the parser's bug and
/// must not become ours).
pub fn parse(script: &str) -> Option<ast::Program> {
    std::panic::catch_unwind(|| {
        let mut parser =
            brush_parser::Parser::new(std::io::BufReader::new(script.as_bytes()), &options());
        parser.parse_program().ok()
    })
    .ok()
    .flatten()
}

fn walk_script(script: &str, depth: usize, a: &mut Analysis) {
    if depth > MAX_DEPTH || a.commands.len() > MAX_COMMANDS {
        a.unresolved = true;
        return;
    }
    match parse(script) {
        Some(program) => walk_program(&program, depth, a),
        None => a.unresolved = true,
    }
}

fn walk_program(program: &ast::Program, depth: usize, a: &mut Analysis) {
    if depth > MAX_DEPTH || a.commands.len() > MAX_COMMANDS {
        a.unresolved = true;
        return;
    }
    for cc in &program.complete_commands {
        walk_list(cc, &Stdin::Inherited, depth, a);
    }
}

fn walk_list(list: &ast::CompoundList, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    for ast::CompoundListItem(and_or, _) in &list.0 {
        walk_pipeline(&and_or.first, stdin, depth, a);
        for next in &and_or.additional {
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
            walk_pipeline(p, stdin, depth, a);
        }
    }
}

/// The first command of a pipeline reads the list's stdin; every other one reads a pipe.
fn walk_pipeline(p: &ast::Pipeline, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    for (i, c) in p.seq.iter().enumerate() {
        walk_command(c, if i == 0 { stdin } else { &Stdin::Pipe }, depth, a);
    }
}

fn walk_command(c: &Command, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    match c {
        Command::Simple(s) => walk_simple(s, stdin, depth, a),
        Command::Compound(cc, redirects) => {
            let mut own = None;
            for r in redirects.iter().flat_map(|r| &r.0) {
                own = walk_redirect(r, depth, a).or(own);
            }
            walk_compound(cc, own.as_ref().unwrap_or(stdin), depth, a);
        }
        Command::Function(f) => {
            // The body runs when the function is called, with the caller's stdin.
            let mut own = None;
            for r in f.body.1.iter().flat_map(|r| &r.0) {
                own = walk_redirect(r, depth, a).or(own);
            }
            walk_compound(
                &f.body.0,
                own.as_ref().unwrap_or(&Stdin::Inherited),
                depth,
                a,
            );
        }
        Command::ExtendedTest(t, redirects) => {
            walk_test(&t.expr, depth, a);
            for r in redirects.iter().flat_map(|r| &r.0) {
                walk_redirect(r, depth, a);
            }
        }
    }
}

fn walk_test(e: &ast::ExtendedTestExpr, depth: usize, a: &mut Analysis) {
    use ast::ExtendedTestExpr as T;
    match e {
        T::And(l, r) | T::Or(l, r) => {
            walk_test(l, depth, a);
            walk_test(r, depth, a);
        }
        T::Not(x) | T::Parenthesized(x) => walk_test(x, depth, a),
        T::UnaryTest(_, w) => {
            word(&w.value, depth, a);
        }
        T::BinaryTest(_, l, r) => {
            word(&l.value, depth, a);
            word(&r.value, depth, a);
        }
    }
}

fn walk_compound(c: &CompoundCommand, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    match c {
        CompoundCommand::Arithmetic(x) => arithmetic(&x.expr.value, a),
        CompoundCommand::ArithmeticForClause(x) => {
            for e in [&x.initializer, &x.condition, &x.updater]
                .into_iter()
                .flatten()
            {
                arithmetic(&e.value, a);
            }
            walk_list(&x.body.list, stdin, depth, a);
        }
        CompoundCommand::BraceGroup(b) => walk_list(&b.list, stdin, depth, a),
        CompoundCommand::Subshell(s) => walk_list(&s.list, stdin, depth, a),
        CompoundCommand::ForClause(f) => {
            for w in f.values.iter().flatten() {
                word(&w.value, depth, a);
            }
            walk_list(&f.body.list, stdin, depth, a);
        }
        CompoundCommand::CaseClause(c) => {
            word(&c.value.value, depth, a);
            for item in &c.cases {
                for p in &item.patterns {
                    word(&p.value, depth, a);
                }
                if let Some(cmd) = &item.cmd {
                    walk_list(cmd, stdin, depth, a);
                }
            }
        }
        CompoundCommand::IfClause(i) => {
            walk_list(&i.condition, stdin, depth, a);
            walk_list(&i.then, stdin, depth, a);
            for e in i.elses.iter().flatten() {
                if let Some(c) = &e.condition {
                    walk_list(c, stdin, depth, a);
                }
                walk_list(&e.body, stdin, depth, a);
            }
        }
        CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
            walk_list(&w.0, stdin, depth, a);
            walk_list(&w.1.list, stdin, depth, a);
        }
        CompoundCommand::Coprocess(c) => walk_command(&c.body, &Stdin::Pipe, depth, a),
    }
}

/// Arithmetic can hide command substitutions (`$(( $(curl x) ))`); rather than parse them,
/// such an expression is unresolved.
fn arithmetic(expr: &str, a: &mut Analysis) {
    if expr.contains("$(") || expr.contains('`') {
        a.unresolved = true;
    }
}

/// Walk a redirection; `Some` when it gives the command a new standard input.
fn walk_redirect(r: &IoRedirect, depth: usize, a: &mut Analysis) -> Option<Stdin> {
    let is_stdin = |fd: &Option<i32>| matches!(fd, None | Some(0));
    match r {
        IoRedirect::File(fd, kind, target) => {
            use ast::IoFileRedirectKind as K;
            use ast::IoFileRedirectTarget as T;
            let writes = matches!(
                kind,
                K::Write | K::Append | K::Clobber | K::ReadAndWrite | K::DuplicateOutput
            );
            match target {
                T::Filename(w) => {
                    let d = word(&w.value, depth, a);
                    if writes {
                        write_target(d, a);
                    }
                }
                T::Duplicate(w) => {
                    let d = word(&w.value, depth, a);
                    // `>&2`, `>&-` duplicate descriptors; anything else names a file.
                    let fd_like = d
                        .literal
                        .as_deref()
                        .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()));
                    if writes && !fd_like {
                        write_target(d, a);
                    }
                }
                T::Fd(_) => {}
                T::ProcessSubstitution(kind, s) => walk_list(&s.list, &substituted(kind), depth, a),
            }
            let reads = matches!(kind, K::Read | K::ReadAndWrite | K::DuplicateInput);
            (reads && is_stdin(fd)).then_some(Stdin::File)
        }
        IoRedirect::HereDocument(fd, doc) => {
            let text = if doc.requires_expansion {
                match brush_parser::word::parse_heredoc(&doc.doc.value, &options()) {
                    Ok(pieces) => heredoc_literal(&pieces, depth, a),
                    Err(_) => {
                        a.unresolved = true;
                        None
                    }
                }
            } else {
                Some(doc.doc.value.clone())
            };
            is_stdin(fd).then_some(Stdin::Text(text))
        }
        IoRedirect::HereString(fd, w) => {
            let d = word(&w.value, depth, a);
            // A here-string is followed by a newline.
            is_stdin(fd).then(|| Stdin::Text(d.literal.map(|t| t + "\n")))
        }
        IoRedirect::OutputAndError(w, _) => {
            let d = word(&w.value, depth, a);
            write_target(d, a);
            None
        }
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

/// The text of an expanding heredoc body, `None` if any piece expands at run time. Globs do
/// not expand in a heredoc, and a backslash is removed only before `$`, `` ` ``, `\` and a
/// newline. Command substitutions are walked either way.
fn heredoc_literal(
    pieces: &[WordPieceWithSource],
    depth: usize,
    a: &mut Analysis,
) -> Option<String> {
    literal_with_escapes(pieces, &["$", "`", "\\"], depth, a)
}

/// The text of pieces where globs do not expand and a backslash is removed only before one of
/// `escapable` or a newline; `None` if any piece expands at run time. Command substitutions
/// are walked either way.
fn literal_with_escapes(
    pieces: &[WordPieceWithSource],
    escapable: &[&str],
    depth: usize,
    a: &mut Analysis,
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
            _ => pieces_literal(std::slice::from_ref(p), depth, a),
        };
        match (piece, &mut out) {
            (Some(t), Some(o)) => o.push_str(&t),
            (None, _) => out = None,
            (Some(_), None) => {}
        }
    }
    out
}

fn write_target(w: ShellWord, a: &mut Analysis) {
    match w.literal {
        Some(path) => a.writes.push(path),
        None => a.unresolved = true,
    }
}

fn walk_simple(s: &ast::SimpleCommand, stdin: &Stdin, depth: usize, a: &mut Analysis) {
    let mut assignments = Vec::new();
    let mut words = Vec::new();
    // The last redirection of fd 0 wins, as in bash.
    let mut own = None;
    for item in s.prefix.iter().flat_map(|p| &p.0) {
        match item {
            CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                word(&w.value, depth, a);
                assignments.push(w.value.clone());
            }
            other => own = suffix_item(other, &mut words, depth, a).or(own),
        }
    }
    if let Some(v) = &s.word_or_name {
        words.push(word(&v.value, depth, a));
    }
    for item in s.suffix.iter().flat_map(|p| &p.0) {
        own = suffix_item(item, &mut words, depth, a).or(own);
    }
    if words.is_empty() {
        return;
    }
    let command = SimpleCommand { assignments, words };
    crate::shell::keys::unwrap_inner(&command, own.as_ref().unwrap_or(stdin), depth, a);
    a.commands.push(command);
}

/// A word or redirection of a simple command; `Some` when it redirects stdin.
fn suffix_item(
    item: &CommandPrefixOrSuffixItem,
    words: &mut Vec<ShellWord>,
    depth: usize,
    a: &mut Analysis,
) -> Option<Stdin> {
    match item {
        CommandPrefixOrSuffixItem::IoRedirect(r) => return walk_redirect(r, depth, a),
        // After the verb (`make CC=gcc`, `declare x=$(…)`) an assignment is an argument.
        CommandPrefixOrSuffixItem::Word(w) | CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
            words.push(word(&w.value, depth, a))
        }
        CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub) => {
            walk_list(&sub.list, &substituted(kind), depth, a);
            words.push(ShellWord {
                literal: None,
                raw: "<(…)".to_owned(),
            });
        }
    }
    None
}

/// Recurse into a script run by a wrapper (`sh -c`, `eval`).
pub(crate) fn walk_nested(script: &str, depth: usize, a: &mut Analysis) {
    walk_script(script, depth + 1, a);
}

/// Decode one word, walking any command substitution inside it.
pub(crate) fn word(raw: &str, depth: usize, a: &mut Analysis) -> ShellWord {
    let literal = match brush_parser::word::parse(raw, &options()) {
        Ok(pieces) => pieces_literal(&pieces, depth, a),
        Err(_) => {
            a.unresolved = true;
            None
        }
    };
    ShellWord {
        literal,
        raw: raw.to_owned(),
    }
}

/// The literal text of word pieces, `None` if any piece expands at run time. Command
/// substitutions are walked as scripts of their own either way.
fn pieces_literal(
    pieces: &[WordPieceWithSource],
    depth: usize,
    a: &mut Analysis,
) -> Option<String> {
    let mut out = Some(String::new());
    let push = |out: &mut Option<String>, s: &str| {
        if let Some(o) = out {
            o.push_str(s);
        }
    };
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) => {
                // Unquoted glob and brace characters expand against the file system.
                if t.contains(['*', '?', '['])
                    || (t.contains('{') && t.contains('}') && (t.contains(',') || t.contains("..")))
                {
                    out = None;
                }
                push(&mut out, t);
            }
            WordPiece::SingleQuotedText(t) => push(&mut out, t),
            WordPiece::AnsiCQuotedText(t) => push(&mut out, &ansi_c(t)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                match pieces_literal_quoted(inner, depth, a) {
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
                walk_nested(s, depth, a);
                out = None;
            }
            WordPiece::BackquotedCommandSubstitution(s) => {
                walk_nested(&unescape_backquoted(s), depth, a);
                out = None;
            }
            WordPiece::TildeExpansion(_) | WordPiece::ParameterExpansion(_) => out = None,
            WordPiece::ArithmeticExpression(e) => {
                arithmetic(&e.value, a);
                out = None;
            }
        }
    }
    out
}

/// Inside double quotes globs do not expand, and escapes keep their backslash unless they
/// escape `$`, `` ` ``, `"`, `\` or a newline.
fn pieces_literal_quoted(
    pieces: &[WordPieceWithSource],
    depth: usize,
    a: &mut Analysis,
) -> Option<String> {
    literal_with_escapes(pieces, &["$", "`", "\"", "\\"], depth, a)
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
