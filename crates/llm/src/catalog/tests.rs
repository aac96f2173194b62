use super::*;

#[test]
fn every_builtin_entry_is_consistent_and_reached_through_a_builtin_provider() {
    let providers = builtin_providers();
    let entries = builtin_models();
    assert!(entries.len() >= 10);
    for (i, entry) in entries.iter().enumerate() {
        entry.check().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            providers.iter().any(|p| p.name == entry.id.provider),
            "{}: no built-in provider",
            entry.id
        );
        assert!(
            entries[..i].iter().all(|e| e.id != entry.id),
            "{} twice",
            entry.id
        );
    }
    for family in ["anthropic", "openai", "gemini", "bedrock", "cohere"] {
        assert!(
            entries.iter().any(|e| e.id.provider == family),
            "no {family} model"
        );
    }
}

fn entry() -> ModelEntry {
    ModelEntry {
        id: "local:qwen".parse().unwrap(),
        context_window: 32768,
        max_output: 4096,
        input: vec![Modality::Text, Modality::Image],
        media: vec![(
            Modality::Image,
            MediaLimit {
                max_bytes: 1 << 20,
                max_count: 4,
            },
        )],
        prices: None,
    }
}

#[test]
fn inconsistent_entries_are_refused_with_the_fix() {
    type Edit = fn(&mut ModelEntry);
    let cases: &[(&str, Edit, &str)] = &[
        ("zero window", |e| e.context_window = 0, "context_window"),
        (
            "output past the window",
            |e| e.max_output = 40000,
            "max_output",
        ),
        (
            "no text",
            |e| {
                e.input.remove(0);
            },
            "\"text\"",
        ),
        (
            "a modality without a limit",
            |e| e.input.push(Modality::Pdf),
            "media.pdf",
        ),
        (
            "a limit without the modality",
            |e| {
                e.input.pop();
            },
            "input does not include",
        ),
        (
            "an empty limit",
            |e| e.media[0].1.max_count = 0,
            "at least one item",
        ),
        (
            "a negative price",
            |e| {
                e.prices = Some(Prices {
                    input: -1.0,
                    output: 0.0,
                    cache_read: 0.0,
                    cache_write: 0.0,
                })
            },
            "prices",
        ),
    ];
    entry().check().unwrap();
    for (name, edit, fragment) in cases {
        let mut e = entry();
        edit(&mut e);
        let err = e.check().expect_err(name).to_string();
        assert!(
            err.contains(fragment) && err.contains("local:qwen"),
            "{name}: {err}"
        );
    }
}

#[test]
fn modalities_parse_and_name_the_valid_ones() {
    for m in Modality::ALL {
        assert_eq!(m.as_str().parse::<Modality>(), Ok(m));
    }
    let e = "images".parse::<Modality>().unwrap_err().to_string();
    assert!(e.contains("image, pdf"), "{e}");
}
