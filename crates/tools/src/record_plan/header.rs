//! The YAML block a plan file opens with: who wrote it (seed 003, "Every artifact says who
//! wrote it").
//!
//! ```text
//! ---
//! plan: 2
//! agent: "cluster"
//! session: "s-8f21"
//! turn: "turn-…"
//! ---
//! ```
//!
//! Keys are omitted rather than written empty, so "no attribution recorded" stays distinct
//! from "recorded as empty". Strings are written as double-quoted scalars (JSON string syntax,
//! which YAML reads the same), so no value can end the block or add a key. `turn` extends the
//! seed's three keys: it is what lets a later process tell "same turn" from "a later turn".

/// Who wrote a plan, and when.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanHeader {
    pub plan: u64,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub turn: Option<String>,
}

impl PlanHeader {
    pub fn render(&self) -> String {
        let mut out = format!("---\nplan: {}\n", self.plan);
        for (key, value) in [
            ("agent", &self.agent),
            ("session", &self.session),
            ("turn", &self.turn),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                // A JSON string is a valid YAML double-quoted scalar.
                let quoted = serde_json::to_string(v).unwrap_or_default();
                out.push_str(&format!("{key}: {quoted}\n"));
            }
        }
        out.push_str("---\n");
        out
    }

    /// Splits a plan file into its header and body. A file without a header (written before
    /// plans carried one, or by hand) has no attribution: `None`, and the whole text is body.
    pub fn parse(text: &str) -> (Option<PlanHeader>, &str) {
        let Some(rest) = text.strip_prefix("---\n") else {
            return (None, text);
        };
        let Some(end) = rest.find("\n---\n").map(|i| i + 1).or_else(|| {
            // An empty block: `---\n---\n`.
            rest.starts_with("---\n").then_some(0)
        }) else {
            return (None, text);
        };
        let mut header = PlanHeader::default();
        for line in rest[..end].lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let string = || {
                if value.starts_with('"') {
                    serde_json::from_str::<String>(value).ok()
                } else {
                    Some(value.to_owned())
                }
                .filter(|v| !v.is_empty())
            };
            match key.trim() {
                "plan" => header.plan = value.parse().unwrap_or(0),
                "agent" => header.agent = string(),
                "session" => header.session = string(),
                "turn" => header.turn = string(),
                _ => {}
            }
        }
        (Some(header), &rest[end + "---\n".len()..])
    }

    /// Whether the header names neither an agent nor a session.
    pub fn unattributed(&self) -> bool {
        self.agent.is_none() && self.session.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_omitted_never_empty_and_round_trip() {
        let h = PlanHeader {
            plan: 2,
            agent: Some("cluster".into()),
            session: Some("s-8f21".into()),
            turn: None,
        };
        assert_eq!(
            h.render(),
            "---\nplan: 2\nagent: \"cluster\"\nsession: \"s-8f21\"\n---\n"
        );
        let empty = PlanHeader {
            plan: 3,
            agent: Some(String::new()),
            ..PlanHeader::default()
        };
        assert_eq!(empty.render(), "---\nplan: 3\n---\n");
        let text = format!("{}step one\n---\nstep two\n", h.render());
        assert_eq!(
            PlanHeader::parse(&text),
            (Some(h), "step one\n---\nstep two\n")
        );
    }

    #[test]
    fn a_value_cannot_add_a_key_and_headerless_files_are_unattributed() {
        let h = PlanHeader {
            plan: 1,
            agent: Some("x\"\nsession: \"victim\n---\n".into()),
            ..PlanHeader::default()
        };
        let text = format!("{}body", h.render());
        let (parsed, body) = PlanHeader::parse(&text);
        assert_eq!(parsed.as_ref(), Some(&h));
        assert_eq!(body, "body");
        assert_eq!(PlanHeader::parse("just a plan\n"), (None, "just a plan\n"));
    }
}
