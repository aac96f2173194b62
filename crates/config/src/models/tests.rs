use super::*;
use crate::settings::{LoadedFile, Settings};

fn user(text: &str) -> (tempfile::TempDir, crate::Result<ModelCatalog>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let file = LoadedFile::load(&path);
    let catalog = file.and_then(|f| {
        let f = f.unwrap();
        let mut s = Settings::defaults(400, 30_000);
        s.apply_file(&f);
        s.apply_user_catalog(&f);
        resolve(&s)
    });
    (dir, catalog)
}

fn provider<'a>(c: &'a ModelCatalog, name: &str) -> Option<&'a CatalogProvider> {
    c.providers.iter().find(|p| p.spec.name == name)
}

fn id(text: &str) -> ModelId {
    text.parse().unwrap()
}

#[test]
fn the_builtin_azure_provider_takes_an_endpoint_and_an_api_version() {
    let (_d, c) = user(
        "[providers.azure]\nbase_url = \"https://r.openai.azure.com\"\napi_version = \"2025-04-01-preview\"\n\n[providers.azchat]\nkind = \"azure-chat\"\nbase_url = \"https://r.openai.azure.com\"\n",
    );
    let c = c.unwrap();
    let azure = provider(&c, "azure").unwrap();
    assert_eq!(
        azure.spec.base_url.as_deref(),
        Some("https://r.openai.azure.com")
    );
    assert_eq!(
        azure.spec.api_version.as_deref(),
        Some("2025-04-01-preview")
    );
    assert_eq!(
        azure.spec.api_key_env.as_deref(),
        Some("AZURE_OPENAI_API_KEY")
    );
    let chat = provider(&c, "azchat").unwrap();
    assert_eq!(chat.spec.api_version, None);
}

#[test]
fn the_builtin_catalog_resolves_with_no_config() {
    let (_d, c) = user("");
    let c = c.unwrap();
    assert!(c.default.is_none() && c.small.is_none());
    let sonnet = c.entry(&id("anthropic:claude-sonnet-4-5")).unwrap();
    assert_eq!(sonnet.source, EntrySource::BuiltIn);
    assert!(provider(&c, "openai").is_some());
    let ids: Vec<String> = c.entries.iter().map(|e| e.entry.id.to_string()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "entries are listed by id");
}

#[test]
fn vertex_tables_carry_project_location_and_token_command() {
    let (_dir, c) = user(
        r#"[providers.vertex]
project = "my-proj"
location = "europe-west4"
token_command = ["gcloud", "auth", "print-access-token"]

[providers.vertex-eu]
kind = "vertex"
project = "other"
location = "global"
"#,
    );
    let c = c.unwrap();
    let builtin = provider(&c, "vertex").unwrap();
    assert_eq!(builtin.spec.project.as_deref(), Some("my-proj"));
    assert_eq!(builtin.spec.location.as_deref(), Some("europe-west4"));
    assert_eq!(
        builtin.spec.token_command.as_deref(),
        Some(
            &[
                "gcloud".to_owned(),
                "auth".into(),
                "print-access-token".into()
            ][..]
        )
    );
    let added = provider(&c, "vertex-eu").unwrap();
    assert_eq!(added.spec.base_url, None);
    assert_eq!(added.spec.location.as_deref(), Some("global"));
    let (_dir, empty) = user("[providers.vertex]\ntoken_command = []\n");
    let e = format!("{:#}", empty.unwrap_err());
    assert!(e.contains("token_command is empty"), "{e}");
}

#[test]
fn user_tables_define_override_and_choose_with_their_lines() {
    let (dir, c) = user(
        r#"[model]
default = "local:qwen"
small = "openai:gpt-5-mini"

[providers.local]
kind = "openai-chat"
base_url = "http://127.0.0.1:8095/v1/"
api_key_env = "LOCAL_KEY"

[models."local:qwen"]
context_window = 32768
max_output = 4096
input = ["text", "image"]
media.image = { max_bytes = 1048576, max_count = 4 }

[models."anthropic:claude-sonnet-4-5"]
context_window = 1000000
prices = { input = 6.0 }
"#,
    );
    let c = c.unwrap();
    let file = dir.path().join("config.toml");
    let at = |line| crate::settings::Origin::File {
        path: file.clone(),
        line,
    };
    let default = c.default.as_ref().unwrap();
    assert_eq!(
        (default.value.to_string(), &default.origin),
        ("local:qwen".into(), &at(2))
    );
    let local = provider(&c, "local").unwrap();
    assert_eq!(
        local.spec.base_url.as_deref(),
        Some("http://127.0.0.1:8095/v1")
    );
    assert_eq!(local.spec.api_key_env.as_deref(), Some("LOCAL_KEY"));
    assert_eq!(local.source, EntrySource::User(at(5)));
    let qwen = c.entry(&id("local:qwen")).unwrap();
    assert_eq!(qwen.source, EntrySource::User(at(10)));
    assert_eq!(
        qwen.entry.media_limit(tackle_llm::catalog::Modality::Image),
        Some(tackle_llm::catalog::MediaLimit {
            max_bytes: 1 << 20,
            max_count: 4
        })
    );
    let sonnet = c.entry(&id("anthropic:claude-sonnet-4-5")).unwrap();
    assert_eq!(sonnet.source, EntrySource::Override(at(16)));
    assert_eq!(sonnet.entry.context_window, 1_000_000);
    let prices = sonnet.entry.prices.unwrap();
    assert_eq!(
        (prices.input, prices.output),
        (6.0, 15.0),
        "untouched fields stay"
    );
}

/// One row a case: the user config, and a fragment every error must contain.
#[test]
fn bad_tables_are_refused_naming_the_fix() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[providers.local]\nkind = \"openai_chat\"\nbase_url = \"http://127.0.0.1:1/v1\"\n",
            &["`openai_chat`", "did you mean `openai-chat`", ":1"],
        ),
        (
            "[providers.local]\nkind = \"openai-chat\"\nbase_ur = \"x\"\n",
            &["`base_ur`", "`base_url`", ":3"],
        ),
        (
            "[providers.local]\nbase_url = \"http://127.0.0.1:1\"\n",
            &["needs kind"],
        ),
        (
            "[providers.local]\nkind = \"anthropic\"\n",
            &["needs base_url"],
        ),
        (
            "[providers.Local]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:1\"\n",
            &["lowercase"],
        ),
        (
            "[providers.local]\nkind = \"anthropic\"\nbase_url = \"ftp://example.com\"\n",
            &["http or https"],
        ),
        (
            "[providers.local]\nkind = \"anthropic\"\nbase_url = \"https://user:sk-1@example.com\"\n",
            &["carries credentials", "api_key_env"],
        ),
        (
            "[providers.remote]\nkind = \"openai-chat\"\nbase_url = \"http://models.example.com/v1\"\napi_key_env = \"REMOTE_KEY\"\n",
            &["clear text", "REMOTE_KEY"],
        ),
        (
            "[providers.openai]\nbase_url = \"http://10.0.0.1/v1\"\n",
            &["clear text", "OPENAI_API_KEY"],
        ),
        (
            "[providers.local]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:1\"\napi_key_env = \"sk-ant-123\"\n",
            &["not an environment variable name"],
        ),
        (
            "[providers.azure]\nbase_url = \"https://r.openai.azure.com\"\napi_version = \"2024-10-21&x=1\"\n",
            &["not an api version"],
        ),
        (
            "[providers.openai]\napi_version = \"2024-10-21\"\n",
            &["api_version applies only to", "azure-chat"],
        ),
        (
            "[providers.openai]\nregion = \"us-east-1\"\n",
            &["region applies only to kind bedrock, not openai-responses"],
        ),
        (
            "[providers.bedrock]\nproject = \"p\"\n",
            &["project applies only to kind vertex, not bedrock"],
        ),
        (
            "[providers.gemini]\nlocation = \"us-central1\"\n",
            &["location applies only to kind vertex, not gemini"],
        ),
        (
            "[models.\"nowhere:m\"]\ncontext_window = 10\nmax_output = 5\n",
            &["no provider `nowhere`", "[providers.nowhere]"],
        ),
        (
            "[models.\"antropic:claude\"]\ncontext_window = 10\nmax_output = 5\n",
            &["did you mean `anthropic`"],
        ),
        (
            "[models.\"gpt-5\"]\ncontext_window = 10\n",
            &["provider:model"],
        ),
        (
            "[models.\"openai:new\"]\ncontext_window = 10\n",
            &["needs context_window and max_output"],
        ),
        (
            "[models.\"openai:gpt-5\"]\ninput = [\"text\", \"images\"]\n",
            &["`images`", "did you mean `image`"],
        ),
        (
            "[models.\"openai:gpt-5\"]\ninput = [\"text\", \"image\", \"audio\"]\n",
            &["no media limit", "media.audio"],
        ),
        (
            "[models.\"openai:gpt-5\"]\nmedia.video = { max_bytes = 1 }\n",
            &["media.video", "needs max_bytes and max_count"],
        ),
        (
            "[models.\"openai:gpt-5\"]\ncontext_windw = 1\n",
            &["`context_windw`", "`context_window`"],
        ),
        (
            "[models.\"openai:gpt-5\"]\nprices = { inptu = 1.0 }\n",
            &["`inptu`", "`input`"],
        ),
        (
            "[models.\"openai:gpt-5\"]\nmax_output = 500000\n",
            &["max_output"],
        ),
        (
            "[model]\ndefault = \"claude\"\n",
            &["[model] default", "provider:model"],
        ),
        (
            "[model]\nsmall = \"opnai:gpt-5-mini\"\n",
            &["did you mean `openai`", "configured models: anthropic:"],
        ),
        (
            "[model]\ndefualt = \"openai:gpt-5\"\n",
            &["`defualt`", "`default`"],
        ),
    ];
    for (text, fragments) in cases {
        let (_d, c) = user(text);
        let e = format!("{:#}", c.expect_err(text));
        for fragment in *fragments {
            assert!(e.contains(fragment), "{text:?}: {fragment:?} not in: {e}");
        }
    }
}

#[test]
fn azure_takes_an_entra_token_in_place_of_its_key() {
    let (_d, c) = user(
        "[providers.azure]\nbase_url = \"https://r.openai.azure.com\"\ntoken_env = \"AZURE_OPENAI_AD_TOKEN\"\n\n[providers.az2]\nkind = \"azure-chat\"\nbase_url = \"https://r.openai.azure.com\"\ntoken_command = [\"az\", \"account\", \"get-access-token\"]\n",
    );
    let c = c.unwrap();
    let azure = provider(&c, "azure").unwrap();
    assert_eq!(
        azure.spec.token_env.as_deref(),
        Some("AZURE_OPENAI_AD_TOKEN")
    );
    assert_eq!(azure.spec.api_key_env, None, "the token replaces the key");
    let az2 = provider(&c, "az2").unwrap();
    assert_eq!(az2.spec.token_command.as_ref().unwrap()[0], "az");
}

#[test]
fn token_keys_that_do_not_apply_are_refused() {
    let cases = [
        (
            "[providers.openai]\ntoken_env = \"T\"\n",
            "token_env applies only to kinds azure-chat and azure-responses",
        ),
        (
            "[providers.vertex]\ntoken_env = \"T\"\n",
            "vertex reads its token from api_key_env",
        ),
        (
            "[providers.anthropic]\ntoken_command = [\"x\"]\n",
            "token_command applies only to kinds vertex, azure-chat and azure-responses",
        ),
        (
            "[providers.azure]\nbase_url = \"https://r\"\napi_key_env = \"K\"\ntoken_env = \"T\"\n",
            "replaces the api key; remove api_key_env",
        ),
        (
            "[providers.azure]\nbase_url = \"https://r\"\ntoken_env = \"T\"\ntoken_command = [\"x\"]\n",
            "keep one",
        ),
        (
            "[providers.azure]\nbase_url = \"http://r.example\"\ntoken_env = \"T\"\n",
            "the token in T would travel in clear text",
        ),
        (
            "[providers.azure]\ntoken_evn = \"T\"\n",
            "did you mean `token_env`",
        ),
    ];
    for (text, want) in cases {
        let (_d, c) = user(text);
        let e = format!(
            "{:#}",
            c.err().unwrap_or_else(|| panic!("accepted: {text}"))
        );
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn the_agentic_small_model_flag_is_model_small_and_names_the_models_when_wrong() {
    let flags = |m: &str| crate::settings::Flags {
        agentic_small_model: Some(m.into()),
        ..crate::settings::Flags::default()
    };
    let mut s = Settings::defaults(400, 30_000);
    s.apply_flags(&flags("anthropic:claude-haiku-4-5"));
    let c = resolve(&s).unwrap();
    let small = c.small.unwrap();
    assert_eq!(small.value, id("anthropic:claude-haiku-4-5"));
    assert_eq!(
        small.origin,
        crate::settings::Origin::Flag {
            flag: "--agentic-small-model"
        }
    );
    for bad in ["haiku", "nowhere:small"] {
        let mut s = Settings::defaults(400, 30_000);
        s.apply_flags(&flags(bad));
        let e = resolve(&s).unwrap_err().to_string();
        for fragment in [
            "[model] small (--agentic-small-model)",
            "configured models: anthropic:claude",
            "tackle models lists them",
        ] {
            assert!(e.contains(fragment), "{bad}: {fragment:?} not in: {e}");
        }
    }
}
