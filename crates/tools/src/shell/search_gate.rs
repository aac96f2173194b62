//! The bash search gate (seed 003, "The bash search gate"): a command whose verb is a search
//! binary is refused with the name of the native tool to use instead.
//!
//! Looks through `;`, `&&`, `||`, subshells and blocks; does not gate a search that is part of
//! a pipeline (it filters a stream) nor `find` with an action predicate (a file operation).
//! Fails open on whatever it cannot resolve literally (`$TOOL -rn foo .`, `eval`, `sh -c`):
//! it is steering, not security.

use brush_parser::ast::{self, Command, CompoundCommand};

use super::analyze::{decode, parse};
use super::keys::basename;

/// `find` predicates that act on files rather than list them.
pub const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprintf", "-fprint", "-fprint0", "-fls",
];

/// A search-shaped command and the native tool that replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// The verb as the model wrote its file name (`grep`, `rg`, `find`).
    pub verb: String,
    /// `grep` or `glob`.
    pub tool: &'static str,
}

/// The native tool for a search verb.
pub fn tool_for(verb: &str) -> Option<&'static str> {
    match verb {
        "grep" | "egrep" | "fgrep" | "rgrep" | "rg" | "ag" | "ack" => Some("grep"),
        "find" | "fd" | "fdfind" => Some("glob"),
        _ => None,
    }
}

/// The first search-shaped command of `script`, if any.
pub fn find_search(script: &str) -> Option<SearchHit> {
    find_search_parsed(&parse(script)?)
}

/// [`find_search`] on a script already parsed.
pub fn find_search_parsed(program: &ast::Program) -> Option<SearchHit> {
    program.complete_commands.iter().find_map(list)
}

fn list(l: &ast::CompoundList) -> Option<SearchHit> {
    l.0.iter().find_map(|ast::CompoundListItem(and_or, _)| {
        std::iter::once(&and_or.first)
            .chain(and_or.additional.iter().map(|x| {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = x;
                p
            }))
            .find_map(pipeline)
    })
}

fn pipeline(p: &ast::Pipeline) -> Option<SearchHit> {
    // A search inside a pipeline filters a stream; the native tool does not.
    match p.seq.as_slice() {
        [only] => command(only),
        _ => None,
    }
}

fn command(c: &Command) -> Option<SearchHit> {
    match c {
        Command::Simple(s) => simple(s),
        Command::Compound(CompoundCommand::BraceGroup(b), _) => list(&b.list),
        Command::Compound(CompoundCommand::Subshell(s), _) => list(&s.list),
        Command::Compound(CompoundCommand::IfClause(i), _) => {
            list(&i.then).or_else(|| i.elses.iter().flatten().find_map(|e| list(&e.body)))
        }
        _ => None,
    }
}

fn simple(s: &ast::SimpleCommand) -> Option<SearchHit> {
    let verb = decode(&s.word_or_name.as_ref()?.value).literal?;
    // A bare name or an absolute path (`/usr/bin/grep`); `./grep` is the project's own program.
    if verb.contains('/') && !verb.starts_with('/') {
        return None;
    }
    let name = basename(&verb);
    let tool = tool_for(name)?;
    if name == "find" {
        let args = s.suffix.iter().flat_map(|x| &x.0).filter_map(|i| match i {
            ast::CommandPrefixOrSuffixItem::Word(w) => Some(w.value.as_str()),
            _ => None,
        });
        for a in args {
            let decoded = decode(a).literal;
            match decoded {
                Some(d) if FIND_ACTIONS.contains(&d.as_str()) => return None,
                // An argument we cannot read might be an action: fail open.
                None => return None,
                _ => {}
            }
        }
    }
    Some(SearchHit {
        verb: name.to_owned(),
        tool,
    })
}
