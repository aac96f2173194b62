//! One tool call's arguments while they stream: each fragment is read into the object being
//! built as it arrives and kept as it came (moved, not copied), so the call's end has nothing
//! left to parse, and arguments that turn out not to be a JSON object are still replayed
//! verbatim.

use serde_json::Value;
use tackle_protocol::ToolArguments;

use super::object_builder::ObjectBuilder;

#[derive(Debug)]
pub(crate) struct StreamedArguments {
    builder: ObjectBuilder,
    /// The fragments as they came; joined only when the builder gave up.
    fragments: Vec<String>,
}

impl StreamedArguments {
    pub fn new() -> Self {
        Self {
            builder: ObjectBuilder::new(),
            fragments: Vec::new(),
        }
    }

    pub fn push(&mut self, fragment: String) {
        if !self.builder.gave_up() {
            self.builder.feed(&fragment);
        }
        self.fragments.push(fragment);
    }

    /// The arguments, exactly what [`ToolArguments::parse`] makes of the joined text.
    pub fn finish(self) -> ToolArguments {
        match self.builder.finish() {
            Some(map) => ToolArguments::Valid {
                value: Value::Object(map),
            },
            // Empty text, a value that is not an object, or JSON the builder does not take:
            // `serde_json` reads it whole and says what it is.
            None => ToolArguments::parse(&self.fragments.concat()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(fragments: &[&str]) -> ToolArguments {
        let mut args = StreamedArguments::new();
        for f in fragments {
            args.push((*f).to_owned());
        }
        args.finish()
    }

    #[test]
    fn every_outcome_matches_parsing_the_joined_text() {
        let cases: &[&[&str]] = &[
            &[],
            &["  "],
            &["{\"path\":", "\"a.txt\"}"],
            &["{\"path\": \"unterminated"],
            &["null"],
            &["[1,", "2]"],
            &["\"text\""],
            &["{\"a\":1} ", "x"],
            &["{\"deep\":", &"[".repeat(100), &"]".repeat(100), "}"],
        ];
        for fragments in cases {
            let joined = fragments.concat();
            assert_eq!(
                streamed(fragments),
                ToolArguments::parse(&joined),
                "{joined:?}"
            );
        }
    }
}
