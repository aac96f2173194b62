//! What a failed AWS credential lookup says: which source failed, for which profile, and what
//! to do about it ("run `aws sso login --profile dev`"), read from the profile itself.
//!
//! Nothing here quotes a value that could be a secret: the profile is described by its key
//! names and by names and ARNs, aws-config's error chain is quoted without a process's output
//! (a `credential_process` failure names its exit, never its stderr or what it printed).

use std::error::Error;

use aws_credential_types::provider::error::CredentialsError;
use aws_runtime::env_config::section::EnvConfigSections;
use aws_types::os_shim_internal::{Env, Fs};

use super::auth::{AwsChain, BEARER_TOKEN_ENV};
use super::chain::Source;
use crate::error::{ErrorContext, ErrorKind, LlmError};

/// How many `source_profile` links are followed to the profile that holds the credentials.
const MAX_SOURCE_LINKS: usize = 16;

/// Where the selected profile's credentials come from in the end.
#[derive(Debug, PartialEq, Eq)]
enum Root {
    /// SSO (`sso_session` or `sso_start_url`) in this profile.
    Sso(String),
    /// `credential_process` in this profile.
    Process(String),
    /// `role_arn` with `web_identity_token_file` in this profile.
    WebIdentity(String),
    /// `aws_access_key_id` in this profile.
    Keys(String),
    /// `credential_source` (`Environment`, `Ec2InstanceMetadata`, `EcsContainer`) in this profile.
    CredentialSource(String, String),
    /// The profile is not in the files, or has none of the above.
    Missing(String),
    Unreadable,
}

/// The selected profile: its name, the role it assumes, and where its credentials start.
#[derive(Debug)]
struct Profile {
    name: String,
    role: Option<String>,
    root: Root,
}

async fn describe(chain: &AwsChain) -> Profile {
    let loaded = aws_config::profile::load(
        &Fs::real(),
        &Env::real(),
        &chain.files(),
        chain.profile.clone().map(Into::into),
    )
    .await;
    let Ok(profiles) = loaded else {
        return Profile {
            name: chain.profile.clone().unwrap_or_else(|| "default".into()),
            role: None,
            root: Root::Unreadable,
        };
    };
    let name = profiles.selected_profile().to_owned();
    let role = profiles
        .get_profile(&name)
        .and_then(|p| p.get("role_arn"))
        .map(str::to_owned);
    Profile {
        root: root(&profiles, &name),
        name,
        role,
    }
}

fn root(profiles: &EnvConfigSections, selected: &str) -> Root {
    let mut name = selected.to_owned();
    for _ in 0..MAX_SOURCE_LINKS {
        let Some(profile) = profiles.get_profile(&name) else {
            return Root::Missing(name);
        };
        let has = |key: &str| profile.get(key).is_some();
        if has("role_arn") {
            if has("web_identity_token_file") {
                return Root::WebIdentity(name);
            }
            if let Some(source) = profile.get("source_profile") {
                if source != name {
                    name = source.to_owned();
                    continue;
                }
            } else if let Some(source) = profile.get("credential_source") {
                return Root::CredentialSource(name, source.to_owned());
            }
        }
        return if has("sso_session") || has("sso_start_url") {
            Root::Sso(name)
        } else if has("credential_process") {
            Root::Process(name)
        } else if has("aws_access_key_id") {
            Root::Keys(name)
        } else {
            Root::Missing(name)
        };
    }
    Root::Missing(name)
}

/// What to do when the credentials of `profile` could not be had.
fn fixes(profile: &Profile) -> String {
    let mut fixes = vec![match &profile.root {
        Root::Sso(p) => format!("run `aws sso login --profile {p}`"),
        Root::Process(p) => {
            format!("run the credential_process of profile `{p}` yourself to see why")
        }
        Root::WebIdentity(p) => format!(
            "check that the web_identity_token_file of profile `{p}` holds a current token its role trusts"
        ),
        Root::Keys(p) => {
            format!("check aws_access_key_id and aws_secret_access_key of profile `{p}`")
        }
        Root::CredentialSource(p, source) => {
            format!("check that credential_source {source} of profile `{p}` has credentials here")
        }
        Root::Missing(p) => format!("add profile `{p}` to the shared files (aws configure)"),
        Root::Unreadable => "check that the shared config and credentials files parse".into(),
    }];
    if let Some(role) = &profile.role {
        fixes.push(format!("check that those credentials may assume {role}"));
    }
    fixes.join(", then ")
}

/// A source that has credentials configured failed to produce them.
pub(crate) async fn failed(
    ctx: &ErrorContext,
    chain: &AwsChain,
    source: Source,
    error: &CredentialsError,
) -> LlmError {
    let detail = quoted(error);
    let message = match source {
        Source::Environment => format!(
            "the environment's aws keys are not usable ({detail}); export both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither"
        ),
        Source::Profile => {
            let profile = describe(chain).await;
            format!(
                "no aws credentials for profile `{}` ({detail}); {}",
                profile.name,
                fixes(&profile)
            )
        }
        Source::WebIdentity => format!(
            "no aws credentials from web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN: {detail}); check that the token file holds a current token the role trusts"
        ),
        Source::Container => format!(
            "no aws credentials from the container credentials endpoint ({detail}); check AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI"
        ),
        Source::Instance => format!(
            "no aws credentials from the instance metadata service ({detail}); check the instance's role, or set AWS_EC2_METADATA_DISABLED=true off EC2"
        ),
    };
    ctx.error(ErrorKind::Configuration, message)
}

/// No source of the chain has credentials.
pub(crate) async fn none(ctx: &ErrorContext, chain: &AwsChain) -> LlmError {
    let profile = describe(chain).await;
    let why = match &profile.root {
        Root::Missing(p) if *p == profile.name => {
            format!("no profile `{p}` with credentials in the shared files")
        }
        Root::Unreadable => "the shared files could not be read".into(),
        _ => format!("profile `{}` gave none", profile.name),
    };
    ctx.error(
        ErrorKind::Configuration,
        format!(
            "no aws credentials ({why}); export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and \
             AWS_SESSION_TOKEN), give profile `{}` keys, a role, sso or a credential_process in \
             the shared files (aws configure, aws configure sso), or set {BEARER_TOKEN_ENV} to a \
             bedrock api key",
            profile.name
        ),
    )
}

/// aws-config's error and its sources, each once, without what an external process wrote.
fn quoted(error: &CredentialsError) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&dyn Error> = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    let text = parts.join(": ");
    // A process's stderr, and a response that did not parse, may hold anything it printed.
    let cut = ["Stderr:", "could not parse response:"]
        .iter()
        .filter_map(|marker| text.find(marker).map(|at| at + marker.len()))
        .min();
    match cut {
        Some(at) => format!("{} <not shown>", text[..at].trim_end()),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(dir: &std::path::Path, config: &str, profile: &str) -> AwsChain {
        let config_file = dir.join("config");
        std::fs::write(&config_file, config).unwrap();
        let credentials_file = dir.join("credentials");
        std::fs::write(&credentials_file, "").unwrap();
        AwsChain {
            environment: false,
            metadata_endpoints: false,
            profile: Some(profile.into()),
            config_file: Some(config_file),
            credentials_file: Some(credentials_file),
        }
    }

    #[tokio::test]
    async fn the_fix_follows_the_source_profiles_to_where_the_credentials_start() {
        let dir = tempfile::tempdir().unwrap();
        let config = "[profile sso]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = r\n\
            [sso-session corp]\nsso_start_url = https://x.awsapps.com/start\nsso_region = us-east-1\n\
            [profile admin]\nrole_arn = arn:aws:iam::1:role/admin\nsource_profile = sso\n\
            [profile proc]\ncredential_process = /bin/creds\n\
            [profile ec2]\nrole_arn = arn:aws:iam::1:role/x\ncredential_source = Ec2InstanceMetadata\n";
        let cases = [
            ("sso", "run `aws sso login --profile sso`"),
            (
                "admin",
                "run `aws sso login --profile sso`, then check that those credentials may assume arn:aws:iam::1:role/admin",
            ),
            ("proc", "run the credential_process of profile `proc`"),
            (
                "ec2",
                "credential_source Ec2InstanceMetadata of profile `ec2`",
            ),
            ("absent", "add profile `absent`"),
        ];
        for (profile, want) in cases {
            let described = describe(&chain(dir.path(), config, profile)).await;
            assert!(fixes(&described).contains(want), "{profile}: {described:?}");
        }
    }

    #[test]
    fn a_process_output_is_never_quoted() {
        let e = CredentialsError::provider_error(
            "Error retrieving credentials: external process exited with code exit status: 3. Stderr: SECRET-LINE",
        );
        let text = quoted(&e);
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(!text.contains("SECRET"), "{text}");
    }
}
