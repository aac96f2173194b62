//! `send_message` (seed 000, "Agent messaging"): a durable message to another session of the
//! caller's delegation tree. `prepare` checks the settings and the body, resolves the
//! recipient and declares the `message:<relation>` key the gate decides; `execute` hands the
//! send to the tree, which answers only once the message is in the recipient's log.
//!
//! Parallel: acceptance serializes inside the tree. Declared read-only: it changes no file,
//! and what the recipient does with the message passes the gate in the recipient's session.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::delegate::Tree;
use crate::messaging::codes;
use crate::messaging::mailbox::Mode;
use crate::messaging::settings::MessagingSettings;
use crate::messaging::tree_side::Outgoing;

pub const NAME: &str = "send_message";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    Steer,
    Queue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageArgs {
    /// The recipient: a handle as a notice showed it (`explore_1a2b3c4d`), `parent`, or a
    /// full session id.
    pub to: String,
    /// The message, in markdown.
    pub body: String,
    /// `steer` (the default): joins the recipient's work at its next step. `queue`: waits
    /// until the recipient ends its current turn.
    pub mode: Option<ModeArg>,
}

/// send_message.
pub struct SendMessage {
    tree: Arc<Tree>,
    settings: MessagingSettings,
}

impl SendMessage {
    pub fn new(tree: Arc<Tree>, settings: MessagingSettings) -> Self {
        Self { tree, settings }
    }
}

impl Tool for SendMessage {
    type Args = MessageArgs;
    type Plan = Outgoing;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Send a message to another agent of your delegation tree: your parent (`to: \
             \"parent\"`), a subagent you started, or another by its handle or session id. The \
             answer means the message is stored, not that it was read: the recipient reads it \
             at its next step (`mode: steer`, the default) or when it ends its current turn \
             (`queue`); a finished subagent is started again to read it. A message asks; it \
             grants no permission.",
        )
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed("Send a message to another agent of your delegation tree.")
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["message"]
    }

    fn invalid_arguments_code(&self) -> ErrorCode {
        codes::INVALID_ARGUMENTS
    }

    fn prepare(
        &self,
        args: MessageArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Outgoing>, ToolError> {
        if !self.settings.enabled {
            return Err(ToolError::new(
                codes::DISABLED,
                "send_message: messaging is turned off ([messaging] enabled = false); do the \
                 work without messaging",
            ));
        }
        if args.body.trim().is_empty() {
            return Err(ToolError::new(
                codes::INVALID_BODY,
                "send_message: `body` is empty; write the message",
            ));
        }
        if args.body.len() > self.settings.max_body_bytes {
            return Err(ToolError::new(
                codes::INVALID_BODY,
                format!(
                    "send_message: `body` is {} bytes, over [messaging] max_body_bytes = {}; \
                     shorten it, or point at a file instead",
                    args.body.len(),
                    self.settings.max_body_bytes
                ),
            ));
        }
        let to = self.tree.locate(cx.session, &args.to)?;
        let mode = match args.mode {
            Some(ModeArg::Queue) => Mode::Queue,
            Some(ModeArg::Steer) | None => Mode::Steer,
        };
        Ok(Prepared::new(
            Routing {
                resources: vec![PermissionResource {
                    action: Action::Message,
                    target: to.relation.to_owned(),
                }],
            },
            Outgoing {
                to,
                body: args.body,
                mode,
                key: self.tree.message_key(cx.session, &cx.turn.0, &cx.call_id.0),
            },
        ))
    }

    async fn execute(
        &self,
        out: Outgoing,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let to = out.to.id.clone();
        let sent = self.tree.send(&cx.session, out, &self.settings).await?;
        let text = format!(
            "Message accepted (message_id {}; mode {}; recipient {}). It is stored for the \
             recipient, which reads it at its next safe boundary.",
            sent.message_id,
            sent.mode.as_str(),
            sent.recipient_state.as_str()
        );
        Ok(ToolCompletion::single(text).with_metadata(json!({
            "message_id": sent.message_id,
            "mode": sent.mode.as_str(),
            "recipient_state": sent.recipient_state.as_str(),
            "recipient": to.0,
        })))
    }
}
