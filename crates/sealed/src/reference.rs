//! `ref:N`, the only thing the planner holds of content it may not see.

use std::fmt;

/// A reference in the session's table, written `ref:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefId(pub u32);

impl RefId {
    /// Reads `ref:N` exactly (no spaces, no leading zeros but `ref:0` itself).
    pub fn parse(text: &str) -> Option<RefId> {
        let digits = text.strip_prefix("ref:")?;
        if digits.is_empty()
            || digits.len() > 9
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return None;
        }
        digits.parse().ok().map(RefId)
    }

    /// [`RefId::parse`], or an error the planner can act on.
    pub fn parse_arg(field: &str, text: &str) -> Result<RefId, String> {
        RefId::parse(text).ok_or_else(|| {
            format!(
                "{field}: `{}` is not a reference; write it as it was handed to you, e.g. ref:2",
                clip(text)
            )
        })
    }
}

impl fmt::Display for RefId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ref:{}", self.0)
    }
}

/// At most 40 characters of something the planner wrote, for a message.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_form_is_a_reference() {
        assert_eq!(RefId::parse("ref:0"), Some(RefId(0)));
        assert_eq!(RefId::parse("ref:12"), Some(RefId(12)));
        for bad in [
            "ref:",
            "ref:01",
            "ref: 1",
            "REF:1",
            "ref:1 ",
            "ref:-1",
            "ref:1a",
            "1",
            "ref:9999999999",
        ] {
            assert_eq!(RefId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(RefId(7).to_string(), "ref:7");
    }
}
