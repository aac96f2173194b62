//! Arithmetic is code: bash evaluates a name inside `(( ))`, `$(( ))`, `let`, a subscript, a
//! `${s:off}` offset or a `[[ x -eq y ]]` operand by expanding its value as arithmetic again,
//! so `x='a[$(touch p)]'; (( x ))` runs `touch`. Which values reach an expression is not
//! knowable without running the script.
//!
//! Key decision: an arithmetic text is resolved only when it is made of numeric literals and
//! operators; anything else (a name, an expansion, a quote) is unresolved. Rejected: tracking
//! which variables hold plain numbers, which a single `read`, `export` or inherited variable
//! defeats.

/// Characters of an arithmetic text that can name nothing and run nothing.
fn inert(c: char) -> bool {
    c.is_ascii_digit()
        || c.is_ascii_whitespace()
        || matches!(
            c,
            '+' | '-'
                | '*'
                | '/'
                | '%'
                | '('
                | ')'
                | '<'
                | '>'
                | '='
                | '!'
                | '&'
                | '|'
                | '^'
                | '~'
                | '?'
                | ':'
                | ','
        )
}

/// Whether evaluating `expr` as bash arithmetic reads no variable and runs nothing.
pub fn is_literal(expr: &str) -> bool {
    expr.chars().all(inert)
}

#[cfg(test)]
mod tests {
    use super::is_literal;

    #[test]
    fn only_numbers_and_operators_are_literal() {
        for (e, want) in [
            ("1 + 2", true),
            ("(3*4)%5", true),
            ("1<<2", true),
            ("", true),
            ("x", false),
            ("i++", false),
            ("$x", false),
            ("a[$(touch p)]", false),
            ("0x1f", false),
            ("'1'", false),
            ("$(touch x)", false),
            ("`touch x`", false),
        ] {
            assert_eq!(is_literal(e), want, "{e}");
        }
    }
}
