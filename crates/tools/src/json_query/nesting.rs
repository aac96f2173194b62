//! Bounds on json_query's input checked before any recursive parser reads it, and the depth
//! check every definition call passes through while a filter runs.
//!
//! jaq's lexer, parser, compiler and evaluator, and the JSON reader, all recurse: inline JSON
//! nested 2,000 deep, a filter of 800 nested parentheses and `def f: 1 + f; f` each overflowed
//! the stack and ended the process. Three bounds close that:
//!
//! - **JSON input** ([`MAX_JSON_DEPTH`]): arrays and objects are counted outside strings, with
//!   JSON's own string rules (a `"` opens and closes, a `\` escapes the next byte), which are
//!   exact for every prefix a JSON parser accepts.
//! - **Filter text** ([`MAX_FILTER_BYTES`], [`MAX_FILTER_BRACKETS`]): every `(`, `[` and `{`
//!   in the text is counted and never uncounted, quoted or not (a string's `\(` opens code),
//!   and the length bounds the recursion keywords and operators add (`if`, `-`, `as $x |`).
//! - **Recursion while running** ([`MAX_EVAL_STACK_BYTES`]): every definition's body, the
//!   user's and the standard library's, is rewritten to start with `__tackle_depth |`, a
//!   native filter that measures how much of the thread's stack is in use and fails with
//!   `resource_limit` well before its end. Every unbounded recursion in jq goes through a
//!   definition, so a runaway one stops instead of overflowing or running on.
//!
//! Key decision: measure the stack rather than count calls. A count would have to guess the
//! stack a call costs, which depends on the build and on the filter; the address of a local
//! against the thread's first frame is what overflow is about.

use std::cell::Cell;

/// Deepest array/object nesting of JSON input (serde_json's own default is 128).
pub const MAX_JSON_DEPTH: usize = 512;
/// Longest filter text.
pub const MAX_FILTER_BYTES: usize = 16 * 1024;
/// Most brackets (`(`, `[`, `{`) one filter may hold.
pub const MAX_FILTER_BRACKETS: usize = 512;
/// How much of its stack a filter's thread may use before a definition call fails.
pub const MAX_EVAL_STACK_BYTES: usize = crate::stack::PARSER_STACK_BYTES / 2;

/// A bound the input exceeds, phrased for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverLimit(pub String);

/// The nesting of JSON text, refused past [`MAX_JSON_DEPTH`].
pub fn check_json(text: &[u8]) -> Result<(), OverLimit> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &c in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(OverLimit(format!(
                        "nests arrays and objects more than {MAX_JSON_DEPTH} deep"
                    )));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The size and bracket count of a filter.
pub fn check_filter(filter: &str) -> Result<(), OverLimit> {
    if filter.len() > MAX_FILTER_BYTES {
        return Err(OverLimit(format!(
            "is {} bytes, over the {MAX_FILTER_BYTES} byte limit",
            filter.len()
        )));
    }
    let brackets = filter
        .bytes()
        .filter(|c| matches!(c, b'(' | b'[' | b'{'))
        .count();
    if brackets > MAX_FILTER_BRACKETS {
        return Err(OverLimit(format!(
            "has {brackets} brackets, over the limit of {MAX_FILTER_BRACKETS}"
        )));
    }
    Ok(())
}

thread_local! {
    /// The address of a local in the first frame of the thread a filter runs on.
    static STACK_BASE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Record where this thread's stack starts; call first thing on a filter's thread.
#[inline(never)]
pub fn mark_stack_base() {
    let here = 0u8;
    STACK_BASE.with(|b| b.set(Some(std::ptr::addr_of!(here) as usize)));
}

/// How many bytes of stack are in use below the marked base (0 if none was marked).
#[inline(never)]
pub fn stack_in_use() -> usize {
    let here = 0u8;
    let now = std::ptr::addr_of!(here) as usize;
    STACK_BASE.with(|b| b.get().map_or(0, |base| base.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_depth_is_counted_outside_strings_only() {
        let rows: &[(String, bool)] = &[
            (
                "[".repeat(MAX_JSON_DEPTH) + &"]".repeat(MAX_JSON_DEPTH),
                true,
            ),
            (
                "[".repeat(MAX_JSON_DEPTH + 1) + &"]".repeat(MAX_JSON_DEPTH + 1),
                false,
            ),
            ("[".repeat(2000) + &"]".repeat(2000), false),
            ("{\"a\":".repeat(MAX_JSON_DEPTH + 1), false),
            (format!("[\"{}\"]", "[".repeat(5000)), true),
            (format!("[\"\\\"{}\"]", "[".repeat(5000)), true),
            // Closers in strings do not lower the count.
            (format!("{}1", "[\"]]\",".repeat(MAX_JSON_DEPTH + 1)), false),
            (
                format!("{}1", "[\"\\\\\",".repeat(MAX_JSON_DEPTH + 1)),
                false,
            ),
        ];
        for (text, ok) in rows {
            assert_eq!(check_json(text.as_bytes()).is_ok(), *ok, "{text:.40}");
        }
    }

    #[test]
    fn filters_are_bounded_by_length_and_brackets() {
        assert!(check_filter(".a | keys").is_ok());
        assert!(check_filter(&"(".repeat(800)).is_err());
        assert!(check_filter(&format!("\"{}\"", "\\(".repeat(600))).is_err());
        assert!(check_filter(&" ".repeat(MAX_FILTER_BYTES + 1)).is_err());
    }

    #[test]
    fn stack_in_use_grows_with_recursion() {
        fn down(n: usize) -> usize {
            let pad = [0u8; 256];
            if n == 0 {
                stack_in_use() + usize::from(pad[0])
            } else {
                down(n - 1) + usize::from(std::hint::black_box(pad)[1])
            }
        }
        mark_stack_base();
        assert!(down(100) > down(10));
    }
}
