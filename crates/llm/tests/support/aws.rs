//! Loopback stand-ins for the AWS services the credential chain calls (STS and the SSO
//! portal), and what the Bedrock tests check on a signed request.

use std::path::{Path, PathBuf};

use super::{End, MockServer, Recorded, Scripted};
use tackle_llm::bedrock::{AwsChain, Bedrock, BedrockAuth, BedrockConfig};

/// Far enough ahead that no test's credentials expire while it runs.
pub const EXPIRATION: &str = "2099-01-01T00:00:00Z";

/// An STS response to `action` (`AssumeRole`, `AssumeRoleWithWebIdentity`) with credentials.
pub fn sts_credentials(action: &str, key_id: &str, secret: &str, token: &str) -> Scripted {
    let xml = format!(
        "<{action}Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><{action}Result>\
         <Credentials><AccessKeyId>{key_id}</AccessKeyId><SecretAccessKey>{secret}</SecretAccessKey>\
         <SessionToken>{token}</SessionToken><Expiration>{EXPIRATION}</Expiration></Credentials>\
         <AssumedRoleUser><AssumedRoleId>AROATEST:tackle</AssumedRoleId>\
         <Arn>arn:aws:sts::123456789012:assumed-role/test/tackle</Arn></AssumedRoleUser>\
         </{action}Result><ResponseMetadata><RequestId>sts-req-1</RequestId></ResponseMetadata>\
         </{action}Response>"
    );
    reply(200, "text/xml", &xml)
}

/// An STS error response.
pub fn sts_error(status: u16, code: &str, message: &str) -> Scripted {
    let xml = format!(
        "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender</Type>\
         <Code>{code}</Code><Message>{message}</Message></Error><RequestId>sts-req-2</RequestId></ErrorResponse>"
    );
    reply(status, "text/xml", &xml)
}

/// The SSO portal's GetRoleCredentials answer.
pub fn sso_credentials(key_id: &str, secret: &str, token: &str) -> Scripted {
    let json = format!(
        r#"{{"roleCredentials":{{"accessKeyId":"{key_id}","secretAccessKey":"{secret}","sessionToken":"{token}","expiration":4070908800000}}}}"#
    );
    reply(200, "application/json", &json)
}

fn reply(status: u16, content_type: &str, body: &str) -> Scripted {
    Scripted {
        status,
        headers: vec![("content-type".into(), content_type.into())],
        body: body.as_bytes().to_vec(),
        chunk: 0,
        end: End::Close,
    }
}

/// Writes the shared files into `dir` and returns the chain that reads them for `profile`,
/// without the environment's keys or the metadata endpoints.
pub fn chain(dir: &Path, config: &str, credentials: &str, profile: &str) -> AwsChain {
    let write = |name: &str, text: &str| -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write shared file");
        path
    };
    AwsChain {
        environment: false,
        metadata_endpoints: false,
        profile: Some(profile.into()),
        config_file: Some(write("config", config)),
        credentials_file: Some(write("credentials", credentials)),
    }
}

/// A Bedrock provider in us-east-1 at `bedrock`, signing with `chain`.
pub fn bedrock(bedrock: &MockServer, chain: AwsChain) -> Bedrock {
    let config = BedrockConfig {
        name: "bedrock".into(),
        region: Some("us-east-1".into()),
        base_url: Some(bedrock.url()),
        auth: BedrockAuth::Aws(chain),
    };
    Bedrock::new(config, super::test_transport()).expect("provider")
}

/// Asserts that `sent` was signed with access key `key_id` and carries `token`.
pub fn assert_signed_with(sent: &Recorded, key_id: &str, token: &str) {
    let auth = sent.header("authorization").expect("authorization");
    assert!(
        auth.starts_with(&format!("AWS4-HMAC-SHA256 Credential={key_id}/")),
        "{auth}"
    );
    assert_eq!(sent.header("x-amz-security-token"), Some(token));
}
