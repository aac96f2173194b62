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

    /// A small deterministic generator (xorshift64*), so a failure names its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Tokens of JSON and of near-JSON (bad escapes, lone surrogates, leading zeros, bare
    /// words, raw control characters), so generated documents land on both sides of the
    /// grammar.
    const ATOMS: &[&str] = &[
        "0",
        "-0",
        "7",
        "-12.5e3",
        "1E-3",
        "01",
        "1.",
        "-",
        "1e999",
        "true",
        "false",
        "null",
        "nul",
        "tru",
        "\"\"",
        "\"path\"",
        "\"a b\"",
        "\"\\u00e9\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "\"\\ude00\"",
        "\"\\x\"",
        "\"\\n\\t\\\\\\\"\"",
        "\"\t\"",
        "\"é中😀\"",
        "\"unterminated",
    ];
    const JUNK: &[&str] = &[
        "{", "}", "[", "]", ":", ",", " ", "\n", "x", "\"", "\\", "\u{feff}",
    ];

    fn value(rng: &mut Rng, depth: usize, out: &mut String) {
        match rng.below(if depth > 4 { 1 } else { 4 }) {
            0 => out.push_str(ATOMS[rng.below(ATOMS.len())]),
            1 => {
                out.push('[');
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    value(rng, depth + 1, out);
                }
                out.push(']');
            }
            _ => object(rng, depth + 1, out),
        }
    }

    fn object(rng: &mut Rng, depth: usize, out: &mut String) {
        out.push('{');
        for i in 0..rng.below(4) {
            if i > 0 {
                out.push_str([",", ", ", ",\n  "][rng.below(3)]);
            }
            out.push_str(["\"a\"", "\"path\"", "\"a\"", "\"k\\u0041\""][rng.below(4)]);
            out.push_str([":", " : "][rng.below(2)]);
            value(rng, depth, out);
        }
        out.push('}');
    }

    /// Generated documents, some mutated, each cut at random places: streamed arguments are
    /// always exactly what parsing the joined text gives.
    #[test]
    fn generated_documents_stream_to_what_their_joined_text_parses_to() {
        // The fuzz targets' knobs: `TACKLE_FUZZ_SEED`, `TACKLE_FUZZ_EXECS`.
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        let seed = env("TACKLE_FUZZ_SEED").unwrap_or(0x7ac1_e5ee_d000_0001);
        let cases = env("TACKLE_FUZZ_EXECS").unwrap_or(4000);
        let mut rng = Rng(seed | 1);
        let (mut valid, mut invalid) = (0u64, 0u64);
        for case in 0..cases {
            let mut text = String::new();
            object(&mut rng, 0, &mut text);
            for _ in 0..rng.below(3) {
                let chars: Vec<(usize, char)> = text.char_indices().collect();
                let (at, c) = chars[rng.below(chars.len())];
                let junk = JUNK[rng.below(JUNK.len())];
                match rng.below(3) {
                    0 => text.insert_str(at, junk),
                    1 => text.replace_range(at..at + c.len_utf8(), junk),
                    _ => text.replace_range(at..at + c.len_utf8(), ""),
                }
            }
            let mut cuts: Vec<usize> = (0..rng.below(6))
                .map(|_| rng.below(text.len() + 1))
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut fragments = Vec::new();
            let mut from = 0;
            for at in cuts.into_iter().chain([text.len()]) {
                fragments.push(&text[from..at]);
                from = at;
            }
            let want = ToolArguments::parse(&text);
            match want {
                ToolArguments::Valid { .. } => valid += 1,
                ToolArguments::Invalid { .. } => invalid += 1,
            }
            assert_eq!(
                streamed(&fragments),
                want,
                "seed {seed} case {case}: {text:?} cut as {fragments:?}"
            );
        }
        // Both sides of the grammar are exercised.
        assert!(
            valid > 400 && invalid > 400,
            "{valid} valid, {invalid} invalid"
        );
    }
}
