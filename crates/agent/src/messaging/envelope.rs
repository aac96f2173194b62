//! What a recipient's model reads for a message: a header naming the sender and the mode,
//! then the body. Hop counts stay out of it (they are the tree's, not the model's).

use crate::messaging::mailbox::Pending;

/// `[message from <sender>; mode <mode>]` and the body on the lines after it.
pub fn delivered(message: &Pending) -> String {
    format!(
        "[message from {}; mode {}]\n{}",
        message.sender,
        message.mode.as_str(),
        message.body
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messaging::mailbox::Mode;
    use tackle_protocol::SessionId;

    #[test]
    fn the_envelope_names_the_sender_and_mode_and_never_the_hop() {
        let m = Pending {
            id: "msg-1".into(),
            from: SessionId("s".into()),
            sender: "parent".into(),
            mode: Mode::Queue,
            body: "look at b.rs".into(),
            hop: 5,
        };
        assert_eq!(
            delivered(&m),
            "[message from parent; mode queue]\nlook at b.rs"
        );
    }
}
