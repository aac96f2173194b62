//! The AWS credential chain behind Bedrock's SigV4, each path against loopback stand-ins: a
//! profile assuming a role through STS, a `credential_process`, SSO (an `sso_session` and the
//! legacy keys) through the token cache and the SSO portal, and the errors of each. The STS
//! and SSO endpoints are the profiles' `endpoint_url`; the SSO token cache is under a `HOME`
//! this binary sets once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use support::aws::{
    EXPIRATION, assert_signed_with, bedrock, chain, sso_credentials, sts_credentials, sts_error,
};
use support::eventstream::eventstream_fixture;
use support::{MockServer, Scripted};
use tackle_llm::{ErrorKind, LlmError, Provider, TurnRequest, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

const BASE_SECRET: &str = "base-secret-DO-NOT-LEAK-71";
const ROLE_SECRET: &str = "role-secret-DO-NOT-LEAK-72";
const ROLE_TOKEN: &str = "role-token-DO-NOT-LEAK-73";
const SSO_ACCESS_TOKEN: &str = "sso-access-DO-NOT-LEAK-74";

/// The `HOME` whose `.aws/sso/cache` the SSO tests fill, set once before any provider exists.
fn home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".aws/sso/cache")).unwrap();
        // SAFETY: every test calls this first, before it builds a provider or reads the
        // environment, and `OnceLock` makes the others wait until the write is done.
        unsafe { std::env::set_var("HOME", dir.path()) };
        dir
    })
    .path()
}

/// A cached SSO token, as `aws sso login` leaves it, under the name the AWS CLI gives it (the
/// SHA-1 of the session name, or of the start URL for the legacy keys).
fn cache_token(sha1: &str, expires_at: &str) {
    let json = format!(
        r#"{{"accessToken":"{SSO_ACCESS_TOKEN}","expiresAt":"{expires_at}","region":"us-east-1","startUrl":"https://corp.awsapps.com/start"}}"#
    );
    std::fs::write(home().join(format!(".aws/sso/cache/{sha1}.json")), json).unwrap();
}

fn request() -> TurnRequest {
    TurnRequest::new(
        "us.anthropic.claude-x-v1:0",
        vec![Message::user_text("hi")],
        256,
    )
}

async fn turns(provider: &dyn Provider, n: usize) -> Result<(), LlmError> {
    for _ in 0..n {
        complete(provider, &request(), &CancellationToken::new()).await?;
    }
    Ok(())
}

fn ok_turns(n: usize) -> Vec<Scripted> {
    (0..n)
        .map(|_| eventstream_fixture("bedrock/text_and_tools"))
        .collect()
}

fn assert_no_secret(e: &LlmError) {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("DO-NOT-LEAK"), "secret leaked: {shown}");
}

#[tokio::test]
async fn a_role_is_assumed_with_the_source_profiles_keys_once_for_many_turns() {
    home();
    let dir = tempfile::tempdir().unwrap();
    let sts = MockServer::start(vec![sts_credentials(
        "AssumeRole",
        "ASIAROLE",
        ROLE_SECRET,
        ROLE_TOKEN,
    )])
    .await;
    let config = format!(
        "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = base\nendpoint_url = {}\n",
        sts.url()
    );
    let credentials =
        format!("[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = {BASE_SECRET}\n");
    let server = MockServer::start(ok_turns(2)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, &credentials, "admin"));
    turns(&provider, 2).await.expect("turns");

    let asked = sts.requests();
    assert_eq!(asked.len(), 1, "the assumed role's credentials are cached");
    let body = String::from_utf8_lossy(&asked[0].body).into_owned();
    assert!(body.contains("Action=AssumeRole"), "{body}");
    assert!(
        body.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fadmin"),
        "{body}"
    );
    let auth = asked[0].header("authorization").unwrap();
    assert!(auth.contains("Credential=AKIDBASE/"), "{auth}");
    assert!(auth.contains("/us-east-1/sts/aws4_request"), "{auth}");
    for sent in server.requests() {
        assert_signed_with(&sent, "ASIAROLE", ROLE_TOKEN);
    }
}

#[tokio::test]
async fn a_refused_role_names_the_profile_the_role_and_the_fix() {
    home();
    let dir = tempfile::tempdir().unwrap();
    let sts = MockServer::start(vec![sts_error(
        403,
        "AccessDenied",
        "User: arn:aws:iam::123456789012:user/base is not authorized to perform: sts:AssumeRole",
    )])
    .await;
    let config = format!(
        "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\nsource_profile = base\nendpoint_url = {}\n",
        sts.url()
    );
    let credentials =
        format!("[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = {BASE_SECRET}\n");
    let server = MockServer::start(ok_turns(1)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, &credentials, "admin"));
    let e = turns(&provider, 1).await.expect_err("refused");
    assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
    for want in [
        "profile `admin`",
        "not authorized",
        "may assume arn:aws:iam::123456789012:role/admin",
    ] {
        assert!(e.message.contains(want), "{want}: {e}");
    }
    assert_no_secret(&e);
    assert!(server.requests().is_empty(), "nothing is sent unsigned");
}

/// A script that prints process credentials, counting its runs beside it.
fn process_script(dir: &Path, body: &str) -> PathBuf {
    let script = dir.join("creds.sh");
    let count = dir.join("runs");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(cat '{0}' 2>/dev/null || echo 0)\necho $((n+1)) > '{0}'\n{body}\n",
            count.display()
        ),
    )
    .unwrap();
    script
}

#[tokio::test]
async fn a_credential_process_runs_once_for_many_turns() {
    home();
    let dir = tempfile::tempdir().unwrap();
    let json = format!(
        r#"{{"Version":1,"AccessKeyId":"ASIAPROC","SecretAccessKey":"{ROLE_SECRET}","SessionToken":"{ROLE_TOKEN}","Expiration":"{EXPIRATION}"}}"#
    );
    let script = process_script(dir.path(), &format!("echo '{json}'"));
    let config = format!(
        "[profile proc]\ncredential_process = /bin/sh {}\n",
        script.display()
    );
    let server = MockServer::start(ok_turns(2)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, "", "proc"));
    turns(&provider, 2).await.expect("turns");
    for sent in server.requests() {
        assert_signed_with(&sent, "ASIAPROC", ROLE_TOKEN);
    }
    let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
    assert_eq!(runs.trim(), "1");
}

#[tokio::test]
async fn a_failing_credential_process_names_its_exit_and_never_its_output() {
    home();
    let dir = tempfile::tempdir().unwrap();
    let script = process_script(
        dir.path(),
        "echo 'printed-DO-NOT-LEAK'\necho 'stderr-DO-NOT-LEAK' >&2\nexit 3",
    );
    let config = format!(
        "[profile proc]\ncredential_process = /bin/sh {}\n",
        script.display()
    );
    let server = MockServer::start(ok_turns(1)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, "", "proc"));
    let e = turns(&provider, 1).await.expect_err("fails");
    assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
    for want in [
        "profile `proc`",
        "3",
        "run the credential_process of profile `proc` yourself",
    ] {
        assert!(e.message.contains(want), "{want}: {e}");
    }
    assert_no_secret(&e);
}

#[tokio::test]
async fn an_sso_session_profile_gets_role_credentials_from_the_portal() {
    home();
    cache_token("6f41fd3fbc69a076873a4656707fd9925e5c1f07", EXPIRATION); // sha1("corp-sso")
    let dir = tempfile::tempdir().unwrap();
    let portal = MockServer::start(vec![sso_credentials("ASIASSO", ROLE_SECRET, ROLE_TOKEN)]).await;
    let config = format!(
        "[profile dev]\nsso_session = corp-sso\nsso_account_id = 123456789012\nsso_role_name = Developer\nendpoint_url = {}\n\n\
         [sso-session corp-sso]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n",
        portal.url()
    );
    let server = MockServer::start(ok_turns(2)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, "", "dev"));
    turns(&provider, 2).await.expect("turns");
    let asked = portal.requests();
    assert_eq!(asked.len(), 1, "the role credentials are cached");
    assert_eq!(asked[0].method, "GET");
    assert!(asked[0].path.starts_with("/federation/credentials?"));
    assert!(
        asked[0].path.contains("role_name=Developer"),
        "{}",
        asked[0].path
    );
    assert!(
        asked[0].path.contains("account_id=123456789012"),
        "{}",
        asked[0].path
    );
    assert_eq!(
        asked[0].header("x-amz-sso_bearer_token"),
        Some(SSO_ACCESS_TOKEN)
    );
    for sent in server.requests() {
        assert_signed_with(&sent, "ASIASSO", ROLE_TOKEN);
    }
}

#[tokio::test]
async fn a_legacy_sso_profile_reads_the_token_of_its_start_url() {
    home();
    // sha1("https://legacy.awsapps.com/start")
    cache_token("79e435d7a515078e81c9dffc35f38d5687ebd3a7", EXPIRATION);
    let dir = tempfile::tempdir().unwrap();
    let portal =
        MockServer::start(vec![sso_credentials("ASIALEGACY", ROLE_SECRET, ROLE_TOKEN)]).await;
    let config = format!(
        "[profile old]\nsso_start_url = https://legacy.awsapps.com/start\nsso_region = us-east-1\n\
         sso_account_id = 123456789012\nsso_role_name = ReadOnly\nendpoint_url = {}\n",
        portal.url()
    );
    let server = MockServer::start(ok_turns(1)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, "", "old"));
    turns(&provider, 1).await.expect("turn");
    assert!(portal.requests()[0].path.contains("role_name=ReadOnly"));
    assert_signed_with(&server.requests()[0], "ASIALEGACY", ROLE_TOKEN);
}

#[tokio::test]
async fn an_expired_sso_token_says_to_log_in_again() {
    home();
    cache_token(
        "4e6dc37d9c05fb359db667a57dfa2401ef0139da", // sha1("corp-expired")
        "2000-01-01T00:00:00Z",
    );
    let dir = tempfile::tempdir().unwrap();
    let portal = MockServer::start(vec![]).await;
    let config = format!(
        "[profile stale]\nsso_session = corp-expired\nsso_account_id = 123456789012\nsso_role_name = Developer\nendpoint_url = {}\n\n\
         [sso-session corp-expired]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n",
        portal.url()
    );
    let server = MockServer::start(ok_turns(1)).await;
    let provider = bedrock(&server, chain(dir.path(), &config, "", "stale"));
    let e = turns(&provider, 1).await.expect_err("expired");
    assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
    assert!(e.message.contains("expired"), "{e}");
    assert!(
        e.message.contains("run `aws sso login --profile stale`"),
        "{e}"
    );
    assert_no_secret(&e);
    assert!(portal.requests().is_empty() && server.requests().is_empty());
}
