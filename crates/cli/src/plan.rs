//! `tackle plan revoke`: the command-line form of the seed's `/replan` (seed 003, "/replan
//! archives the operator's own plan").

use std::io::Write;

use anyhow::Context;
use serde_json::json;
use tackle_runtime::visible::visible;
use tackle_tool::protocol::SessionId;
use tackle_tools::record_plan::Revoked;

use crate::commands::Failure;
use crate::config::Config;
use crate::exit;

/// Archives the session's plan and prints what happened.
pub fn revoke(config: &Config, session: Option<String>, json: bool) -> Result<u8, Failure> {
    let session = session.map(SessionId);
    let revoked = config
        .plans
        .revoke(None, session.as_ref())
        .map_err(|e| anyhow::anyhow!("revoking the plan: {e}"))?;
    let text = describe(
        &revoked,
        session.as_ref(),
        "pass --session with its session to revoke it",
    );
    let mut out = std::io::stdout().lock();
    if json {
        let value = match &revoked {
            Revoked::Own { seqs } => json!({ "revoked": "own", "plans": seqs }),
            Revoked::Unattributed { seq } => json!({ "revoked": "unattributed", "plans": [seq] }),
            Revoked::NotYours {
                seq,
                agent,
                session,
            } => json!({
                "revoked": "none",
                "left_alone": { "plan": seq, "agent": agent, "session": session },
            }),
            Revoked::NothingOnFile => json!({ "revoked": "none", "plans": [] }),
        };
        let value = json!({
            "session": session.as_ref().map(|s| &s.0),
            "result": value,
            "message": text,
            "gate": "closed",
        });
        serde_json::to_writer_pretty(&mut out, &value).context("writing the result")?;
        writeln!(out).context("writing the result")?;
    } else {
        writeln!(out, "{text}").context("writing the result")?;
    }
    Ok(exit::OK)
}

/// What a revocation did, in a sentence. `other` says how another author's plan is revoked
/// where the text is shown.
pub(crate) fn describe(revoked: &Revoked, session: Option<&SessionId>, other: &str) -> String {
    let gate = match session {
        Some(s) => format!("session {} has no plan on file now", visible(&s.0)),
        None => "no session was named, so no session's gate changed".to_owned(),
    };
    let plans = |seqs: &[u64]| {
        seqs.iter()
            .map(|s| format!(".agents/plans/plan-{s}.md"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match revoked {
        Revoked::Own { seqs } => {
            format!("archived {} to .agents/plans/archive/; {gate}", plans(seqs))
        }
        Revoked::Unattributed { seq } => format!(
            "no plan names this session; archived the newest, {}, which names no author; {gate}",
            plans(&[*seq])
        ),
        Revoked::NotYours {
            seq,
            agent,
            session: owner,
        } => {
            // The header is the repository's text: shown only through `visible`.
            let mut whose = Vec::new();
            if let Some(a) = agent {
                whose.push(format!("agent {}", visible(a)));
            }
            if let Some(s) = owner {
                whose.push(format!("session {}", visible(s)));
            }
            format!(
                "no plan names this session; the newest, {}, belongs to {} and was left alone \
                 ({other}); {gate}",
                plans(&[*seq]),
                whose.join(", ")
            )
        }
        Revoked::NothingOnFile => format!("no plan is on file in .agents/plans/; {gate}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan file's header is the repository's text: no control or bidirectional character
    /// of it reaches the terminal raw.
    #[test]
    fn another_authors_name_is_shown_safely() {
        let revoked = Revoked::NotYours {
            seq: 3,
            agent: Some("evil\u{1b}[2J\u{202e}".into()),
            session: Some("s\nforged line".into()),
        };
        let text = describe(&revoked, Some(&SessionId("mine".into())), "hint");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\n'),
            "{text:?}"
        );
        assert!(text.contains(".agents/plans/plan-3.md"), "{text}");
    }
}
