//! The bounds a frontmatter keeps before and while the YAML parser reads it, at every depth.

use tackle_agent::delegate::agent_type::Origin;

use super::nest;
use crate::agent_types::KIND;
use crate::agent_types::fields::parse;
use crate::frontmatter::yaml::parse_fields;
use crate::frontmatter::{MAX_FRONTMATTER_BYTES, MAX_NESTING, check_nesting};

/// The row of `tackle_tools::parser_bounds::PARSERS` for agent type frontmatter: flow and
/// block nesting 10, 1,000 and 100,000 deep, through the whole file's parse (where the size
/// cap or the bracket count refuses first) and through the bracket count and the event parser
/// on their own (where nothing else bounds the input), on this test's ordinary stack.
#[test]
fn frontmatter_at_every_depth() {
    for n in [10, 1_000, 100_000] {
        let flow = nest("[", "a", "]", n);
        let block = format!("\n  {}a", "- ".repeat(n));
        for (shape, value) in [("flow", &flow), ("block", &block)] {
            let text = format!("---\nname: x\ndescription: d\ntools: {value}\n---\n");
            let fault = parse(&text, Origin::BuiltIn).expect_err(shape);
            let words = if text.len() > MAX_FRONTMATTER_BYTES {
                "runs past 65536 bytes"
            } else if n > MAX_NESTING {
                "nest more than 32 deep"
            } else {
                "each entry of `tools` must be a tool name"
            };
            assert!(fault.message.contains(words), "{shape} {n}: {fault:?}");
            let yaml = format!("tools: {value}\n");
            let deep = n > MAX_NESTING;
            assert_eq!(
                check_nesting(&yaml, 2, KIND).is_err(),
                deep && shape == "flow",
                "{shape} {n}"
            );
            // Unbounded by the count, the parse still ends cleanly: the builder refuses the
            // 33rd open list, or saphyr's scanner, which reads ahead, its 256th bracket.
            match parse_fields(&yaml, 2, KIND) {
                Err(e) if deep => assert!(
                    e.message.contains("nest more than")
                        || e.message.contains("recursion limit exceeded"),
                    "{shape} {n}: {e:?}"
                ),
                Ok(_) if !deep => {}
                other => panic!("{shape} {n}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_frontmatter_past_its_cap_is_refused_before_it_is_parsed() {
    let long = format!(
        "---\nname: x\ndescription: d\n{}---\n",
        "# padding\n".repeat(MAX_FRONTMATTER_BYTES / 10 + 1)
    );
    let fault = parse(&long, Origin::BuiltIn).unwrap_err();
    assert!(fault.message.contains("runs past 65536 bytes"), "{fault:?}");
    // A long prompt is no frontmatter: it loads.
    let prompt = format!("---\nname: x\ndescription: d\n---\n{}", "p".repeat(200_000));
    assert_eq!(
        parse(&prompt, Origin::BuiltIn).unwrap().ty.prompt.len(),
        200_000
    );
}
