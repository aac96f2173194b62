//! How deeply a script nests, measured before any recursive parser sees it.
//!
//! brush-parser is recursive descent: its tokenizer recurses once per `$(`, `${`, `$[` or
//! `$((`, its grammar once per compound command (`{`, `(`, `if`, `while`, `case`, …) and its
//! word parser once per expansion inside a word — about 17 KiB of stack per level in a debug
//! build. A line nested 1,500 deep overflowed the stack and ended the whole process, before
//! the gate (so `--mode plan` did not help). This module bounds every one of those recursions
//! from the outside, in three passes that each only refuse:
//!
//! 1. **Expansions in the script** ([`MAX_EXPANSIONS`]): every `$(`, `${`, `$[` and backquote
//!    in the text, quoted or not, is counted and never uncounted. The tokenizer cannot nest
//!    deeper than that count, so it may then run.
//! 2. **Compound nesting** ([`MAX_NESTING`]), over brush's own tokens (so quoting is exactly
//!    brush's): every token that opens a compound command pushes, whatever its position
//!    (`echo if` pushes too: an overcount), and a closer pops only in command position and
//!    only the kind it closes. A closer the grammar does not read as one (`echo fi`) pops
//!    nothing; one it would reject (`{ fi; }`) ends the parse where it stands. So the depth
//!    counted is never below the grammar's.
//! 3. **Nesting inside one word** ([`MAX_WORD_OPENERS`]): in a token holding an expansion,
//!    every `$(`, `${`, `$[`, backquote, `(`, `{` and `[` is counted, again never uncounted.
//!
//! Key decision: refuse rather than guess. A normal script nests a handful of levels; one
//! that passes the limits is parsed on a thread with [`crate::stack::PARSER_STACK_BYTES`],
//! dozens of times what the limits allow. Rejected: a quote-aware scanner of our own, which
//! would have to agree with brush's quoting everywhere (every disagreement is a way under the
//! limit), and counting brackets without regard to quoting, which `( '))' (` fools.

use brush_parser::Token;

/// Deepest nesting of compound commands (`{ … }`, `( … )`, `if`, loops, `case`, `[[ … ]]`).
pub const MAX_NESTING: usize = 64;
/// Most `$(`, `${`, `$[` and backquotes one script may hold (they bound the tokenizer's
/// recursion).
pub const MAX_EXPANSIONS: usize = 1024;
/// Most expansion openers and brackets in one word that holds an expansion.
pub const MAX_WORD_OPENERS: usize = 256;

/// A script over one of the limits: what it exceeds, and by how much.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// Which limit, named for the message.
    pub what: &'static str,
    /// The count reached (counting stops just past the limit).
    pub found: usize,
    pub limit: usize,
}

impl TooDeep {
    /// The refusal the model sees: the limit and the way around it.
    pub fn message(&self, tool: &str) -> String {
        format!(
            "{tool}: the command has more than {} {}, which cannot be checked; write the \
             script to a file with write_file and run that, or split the line into simpler \
             commands",
            self.limit, self.what,
        )
    }
}

/// Pass 1: the text's expansion openers, quoted or not.
pub fn check_text(script: &str) -> Result<(), TooDeep> {
    let b = script.as_bytes();
    let mut found = 0usize;
    for (i, &c) in b.iter().enumerate() {
        let opener = c == b'`' || (c == b'$' && matches!(b.get(i + 1), Some(b'(' | b'{' | b'[')));
        if opener {
            found += 1;
            if found > MAX_EXPANSIONS {
                return Err(TooDeep {
                    what: "expansions (`$(`, `${`, `$[`, backquotes)",
                    found,
                    limit: MAX_EXPANSIONS,
                });
            }
        }
    }
    Ok(())
}

/// What a token opens or closes, as far as nesting goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Paren,
    Brace,
    If,
    Loop,
    Case,
    Test,
}

/// Passes 2 and 3, over the tokens brush's tokenizer made of the script.
pub fn check_tokens(tokens: &[Token]) -> Result<(), TooDeep> {
    let mut open: Vec<Block> = Vec::new();
    let mut command_position = true;
    for token in tokens {
        let text = token.to_str();
        let is_operator = matches!(token, Token::Operator(..));
        if !is_operator {
            check_word(text)?;
        }
        let push = match (is_operator, text) {
            (true, "(") => Some(Block::Paren),
            (false, "{") => Some(Block::Brace),
            (false, "if") => Some(Block::If),
            (false, "while" | "until" | "for" | "select") => Some(Block::Loop),
            (false, "case") => Some(Block::Case),
            (false, "[[") => Some(Block::Test),
            _ => None,
        };
        let pop = match (is_operator, text) {
            (true, ")") => Some(Block::Paren),
            (false, "}") if command_position => Some(Block::Brace),
            (false, "fi") if command_position => Some(Block::If),
            (false, "done") if command_position => Some(Block::Loop),
            (false, "esac") if command_position => Some(Block::Case),
            (false, "]]") => Some(Block::Test),
            _ => None,
        };
        if let Some(block) = push {
            open.push(block);
            if open.len() > MAX_NESTING {
                return Err(TooDeep {
                    what: "levels of nesting (`{`, `(`, `if`, loops, `case`, `[[`)",
                    found: open.len(),
                    limit: MAX_NESTING,
                });
            }
        } else if let Some(block) = pop
            && open.last() == Some(&block)
        {
            open.pop();
        }
        command_position = if is_operator {
            matches!(
                text,
                ";" | ";;" | ";&" | ";;&" | "&" | "&&" | "||" | "|" | "|&" | "(" | ")" | "\n"
            )
        } else {
            matches!(
                text,
                "{" | "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "!" | "time"
            )
        };
    }
    Ok(())
}

/// Pass 3 for one word.
fn check_word(text: &str) -> Result<(), TooDeep> {
    let b = text.as_bytes();
    let expands = b.iter().enumerate().any(|(i, &c)| {
        c == b'`' || (c == b'$' && matches!(b.get(i + 1), Some(b'(' | b'{' | b'[')))
    });
    if !expands {
        return Ok(());
    }
    let found = b
        .iter()
        .filter(|c| matches!(c, b'`' | b'(' | b'{' | b'['))
        .count();
    if found > MAX_WORD_OPENERS {
        return Err(TooDeep {
            what: "brackets and expansions in one word",
            found,
            limit: MAX_WORD_OPENERS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::analyze::{ParseRefusal, parse_checked};

    /// Whether the script is refused for its depth, read where bash's prepare reads it.
    fn deep(script: &str) -> bool {
        let read = || matches!(parse_checked(script), Err(ParseRefusal::TooDeep(_)));
        crate::stack::on_parser_stack("bash", read).unwrap()
    }

    /// One row per construct: the script nested just inside the limit is read (parsed or not),
    /// one level past it is refused before any parser runs.
    #[test]
    fn each_construct_is_refused_one_level_past_its_limit() {
        type Gen = fn(usize) -> String;
        let rows: &[(&str, Gen, usize)] = &[
            (
                "brace",
                |n| format!("{} true; {}", "{ ".repeat(n), "} ".repeat(n)),
                MAX_NESTING,
            ),
            (
                "if",
                |n| format!("{} true; {}", "if true; then ".repeat(n), "fi; ".repeat(n)),
                MAX_NESTING,
            ),
            (
                "subshell",
                |n| format!("{} true {}", "( ".repeat(n), ") ".repeat(n)),
                MAX_NESTING,
            ),
            (
                "while",
                |n| {
                    format!(
                        "{} true; {}",
                        "while true; do ".repeat(n),
                        "done; ".repeat(n)
                    )
                },
                MAX_NESTING,
            ),
            (
                "case",
                |n| {
                    format!(
                        "{} true {}",
                        "case x in x) ".repeat(n),
                        ";; esac ".repeat(n)
                    )
                },
                MAX_NESTING,
            ),
            (
                "test",
                |n| format!("[[ {} a {} ]]", "( ".repeat(n), ") ".repeat(n)),
                MAX_NESTING - 1,
            ),
            (
                "subst",
                |n| format!("echo {}x{}", "$(".repeat(n), ")".repeat(n)),
                MAX_WORD_OPENERS,
            ),
            (
                "param",
                |n| format!("echo {}x{}", "${a:-".repeat(n), "}".repeat(n)),
                MAX_WORD_OPENERS,
            ),
            (
                "arith",
                |n| format!("echo $(({}1{}))", "(".repeat(n), ")".repeat(n)),
                MAX_WORD_OPENERS - 2,
            ),
            (
                "quoted subst",
                |n| format!("echo {}x{}", "\"$(".repeat(n), ")\"".repeat(n)),
                MAX_WORD_OPENERS,
            ),
        ];
        for (name, make, inside) in rows {
            assert!(
                !deep(&make(*inside)),
                "{name}: {inside} levels must be read"
            );
            assert!(
                deep(&make(inside + 1 + inside / 8)),
                "{name}: must be refused"
            );
        }
    }

    /// The lines of the report, and their kin, on this thread's ordinary stack: each is
    /// refused before anything recursive reads it (nested past a limit, or unterminated).
    #[test]
    fn the_crashers_of_the_report_are_refused_before_parsing() {
        let rows: &[(&str, String, bool)] = &[
            (
                "braces",
                "{ ".repeat(1500) + "true; " + &"} ".repeat(1500),
                true,
            ),
            (
                "if",
                "if true; then ".repeat(1500) + "true; " + &"fi; ".repeat(1500),
                true,
            ),
            (
                "$(",
                format!("echo {}x{}", "$(".repeat(7500), ")".repeat(7500)),
                true,
            ),
            (
                "${",
                format!("echo {}x{}", "${a:-".repeat(5000), "}".repeat(5000)),
                true,
            ),
            (
                "$((",
                format!("echo $(({}1{}))", "(".repeat(5000), ")".repeat(5000)),
                true,
            ),
            (
                "backquotes",
                format!("echo {}", "`echo \\".repeat(5000)),
                true,
            ),
            (
                "unterminated $((",
                format!("echo $(({}1", "(".repeat(5000)),
                false,
            ),
            ("unterminated (", "( ".repeat(5000), true),
        ];
        for (name, script, too_deep) in rows {
            let got = parse_checked(script);
            if *too_deep {
                assert!(
                    matches!(got, Err(ParseRefusal::TooDeep(_))),
                    "{name}: {got:?}"
                );
            } else {
                assert!(got.is_err(), "{name}");
            }
        }
    }

    /// Closers the grammar does not read as closers must not lower the count.
    #[test]
    fn closers_that_close_nothing_do_not_lower_the_count() {
        let fake = [
            ("( ", "echo '))' ; "),
            ("{ ", "echo } ; "),
            ("if true; then ", "echo fi; "),
            ("case x in x) ", "echo esac; "),
            ("while true; do ", "echo \"done\" ; "),
            ("( ", "echo \\) ; "),
            ("( ", "# )\n"),
        ];
        for (open, closer) in fake {
            let script = format!("{open}{closer}").repeat(MAX_NESTING + 1);
            assert!(deep(&script), "{script:.60}");
        }
    }

    /// Normal scripts, including long ones with many sequential blocks and heredoc bodies full
    /// of brackets, never meet the limits.
    #[test]
    fn normal_scripts_are_far_from_the_limits() {
        let python = "def f(x):\n    return [(a, {b: c}) for a in (x)]\n".repeat(500);
        let scripts = [
            "if [ -f x ]; then echo \"$(date)\"; fi; ".repeat(200),
            "for f in *; do (cd \"$f\" && make); done\n".repeat(200),
            format!("cat > f.py <<'EOF'\n{python}EOF\n"),
            format!("cat > f.py <<EOF\n{python}EOF\n"),
            "echo \"${HOME}/$(basename \"$PWD\")\"\n".repeat(100),
        ];
        for script in scripts {
            assert!(!deep(&script), "{script:.60}");
        }
    }
}
