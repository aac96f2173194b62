//! The id of a JSON-RPC message read from the start of its text alone, for messages that are
//! not decoded whole: one over the size limit, or one that is not valid JSON past its id.
//!
//! The scan walks the top-level object's members in order, skipping each value without
//! building it, and stops at the `id` member, at the first byte that is not well-formed, or
//! after [`SCAN_BYTES`]. An id is reported only when the members before it are shaped as
//! members (keys are closed strings, brackets balance, commas separate) and the id itself is a
//! complete string or number, so a reply never carries an id the sender did not write.
//! Rejected: a full parse of the prefix, which costs the depth and memory the limits exist to
//! bound.

use serde_json::Value;

/// How far into a message the id is looked for. Clients write `id` before `params` (the SDKs
/// all do), so this covers every message whose id comes before a large value.
pub const SCAN_BYTES: usize = 64 * 1024;

/// What the start of a message says about its id.
#[derive(Clone, Debug, PartialEq)]
pub enum PrefixId {
    /// A string or number id, as written.
    Found(Value),
    /// The message has an `id` member that is neither a string nor a number.
    NotAnId,
    /// No id in the scanned prefix (none at all, after the limit, or after malformed text).
    Unknown,
}

/// The id of the message that starts with `text` (see the module docs).
pub fn prefix_id(text: &[u8]) -> PrefixId {
    let text = &text[..text.len().min(SCAN_BYTES)];
    let mut s = Scanner { text, at: 0 };
    s.id().unwrap_or(PrefixId::Unknown)
}

struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    /// `None` when the text stops being well-formed (or ends) before an id is found.
    fn id(&mut self) -> Option<PrefixId> {
        self.ws();
        self.byte(b'{')?;
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.byte(b':')?;
            self.ws();
            if key == b"\"id\"" {
                return Some(self.id_value());
            }
            self.skip_value()?;
            self.ws();
            match self.next()? {
                b',' => continue,
                _ => return None,
            }
        }
    }

    fn id_value(&mut self) -> PrefixId {
        let text = self.text;
        let start = self.at;
        let token = match self.peek() {
            Some(b'"') => self.string(),
            Some(b'-' | b'0'..=b'9') => {
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.at += 1;
                }
                // A number must be followed by something that ends it, or it may be cut short.
                self.peek().map(|_| &text[start..self.at])
            }
            Some(_) => return PrefixId::NotAnId,
            None => None,
        };
        // The id must end its member: `1#3` is not the id 1.
        self.ws();
        if !matches!(self.peek(), Some(b',' | b'}')) {
            return PrefixId::Unknown;
        }
        match token.and_then(|t| serde_json::from_slice::<Value>(t).ok()) {
            Some(v @ (Value::String(_) | Value::Number(_))) => PrefixId::Found(v),
            _ => PrefixId::Unknown,
        }
    }

    /// Skips one value of any kind; nesting is counted, not recursed into.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.ws();
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b',' | b':' if depth > 0 => {
                    self.at += 1;
                    continue;
                }
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                    while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.'))
                    {
                        self.at += 1;
                    }
                }
                _ => return None,
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// A string token, quotes included; escapes are skipped, not decoded.
    fn string(&mut self) -> Option<&'a [u8]> {
        let text = self.text;
        let start = self.at;
        self.byte(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(&text[start..self.at]),
                b'\\' => {
                    self.next()?;
                }
                c if c < 0x20 => return None,
                _ => {}
            }
        }
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn byte(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One row per case: the start of a message and the id read from it.
    #[test]
    fn ids_are_read_only_from_well_formed_prefixes() {
        let found = |v: Value| PrefixId::Found(v);
        let table: &[(&str, PrefixId)] = &[
            (r#"{"id":7,"method":"x""#, found(json!(7))),
            (r#"{"id":7 }"#, found(json!(7))),
            (r#"  { "id" : "abc" , "params": [[[["#, found(json!("abc"))),
            (r#"{"jsonrpc":"2.0","id":-3,"#, found(json!(-3))),
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","id":9223372036854775808,"#,
                found(json!(9223372036854775808u64)),
            ),
            (r#"{"params":{"a":[1,{"id":5}]},"id":6,"#, found(json!(6))),
            (r#"{"params":"}\"{","id":"q\"x","#, found(json!("q\"x"))),
            (r#"{"jsonrpc":"2.0","id":1.5}"#, found(json!(1.5))),
            (r#"{"id":null,"#, PrefixId::NotAnId),
            (r#"{"id":{"a":1},"#, PrefixId::NotAnId),
            (r#"{"id":true,"#, PrefixId::NotAnId),
            // A number at the very end may be cut short: 12 of 123…
            (r#"{"id":12"#, PrefixId::Unknown),
            (r#"{"id":"unterminated"#, PrefixId::Unknown),
            (r#"{"method":"x","params":{"#, PrefixId::Unknown),
            (r#"[{"id":1}]"#, PrefixId::Unknown),
            (r#"{"a" 1, "id": 2}"#, PrefixId::Unknown),
            (r#"{"a":1 "id": 2}"#, PrefixId::Unknown),
            (r#"{"a":}, "id": 2}"#, PrefixId::Unknown),
            (r#"{"a":]], "id": 2}"#, PrefixId::Unknown),
            (r#"{"id":1-,"#, PrefixId::Unknown),
            (r#"{"id":1#3,"#, PrefixId::Unknown),
            (r#"{"id":"a" "b","#, PrefixId::Unknown),
            (r#"{"id":"a"}"#, found(json!("a"))),
            ("", PrefixId::Unknown),
            ("garbage", PrefixId::Unknown),
        ];
        for (text, want) in table {
            assert_eq!(&prefix_id(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn the_scan_stops_at_its_limit() {
        let mut text = br#"{"params":""#.to_vec();
        text.extend(std::iter::repeat_n(b'x', SCAN_BYTES));
        text.extend(br#"","id":1,"#);
        assert_eq!(prefix_id(&text), PrefixId::Unknown);
        let deep = format!(
            r#"{{"params":{}1{},"id":4,"#,
            "[".repeat(30_000),
            "]".repeat(30_000)
        );
        assert_eq!(prefix_id(deep.as_bytes()), PrefixId::Found(json!(4)));
    }
}
