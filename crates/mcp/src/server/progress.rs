//! Tool progress → `notifications/progress`, for calls whose request carried a progress token.
//!
//! The runtime's observer is synchronous and shared by every call; each registered call gets a
//! channel and a forwarding task, so notifications keep their order and the result is sent
//! only after the last of them ([`ProgressHub::finish`]).

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tackle_protocol::CallId;
use tackle_runtime::ProgressObserver;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

struct Forwarder {
    tx: mpsc::UnboundedSender<String>,
    task: JoinHandle<()>,
}

#[derive(Default)]
pub(crate) struct ProgressHub {
    calls: Mutex<HashMap<CallId, Forwarder>>,
}

impl ProgressHub {
    pub(crate) fn register(&self, call: CallId, peer: Peer<RoleServer>, token: ProgressToken) {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let task = tokio::spawn(async move {
            let mut step = 0u64;
            while let Some(message) = rx.recv().await {
                step += 1;
                let mut param = ProgressNotificationParam::new(token.clone(), step as f64);
                param.message = Some(message);
                // A client that went away cannot be told; the call goes on regardless.
                let _ = peer.notify_progress(param).await;
            }
        });
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        calls.insert(call, Forwarder { tx, task });
    }

    /// Stop forwarding for `call` and wait until everything already reported has been sent.
    pub(crate) async fn finish(&self, call: &CallId) {
        let forwarder = {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            calls.remove(call)
        };
        if let Some(Forwarder { tx, task }) = forwarder {
            drop(tx);
            let _ = task.await;
        }
    }
}

impl ProgressObserver for ProgressHub {
    fn on_progress(&self, call: &CallId, message: Option<&str>, display: Option<&str>) {
        let Some(text) = message.or(display) else {
            return;
        };
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = calls.get(call) {
            let _ = f.tx.send(text.to_owned());
        }
    }
}
