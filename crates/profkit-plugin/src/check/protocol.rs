//! The line protocol from the checker child to its parent.

use super::Check;

/// What the child tells the parent, one per line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// A call into the plugin begins.
    Begin {
        /// The call.
        call: String,
        /// The session it belongs to, if any.
        session: Option<u32>,
    },
    /// The call that began last returned.
    End,
    /// A check is decided.
    Check {
        /// The result.
        check: Check,
    },
    /// Everything ran.
    Done,
}

impl Message {
    /// The line the child sends for this message (without the newline): the run's `secret`, a
    /// space, and the message as JSON.
    pub fn to_line(&self, secret: &str) -> String {
        let json = serde_json::to_string(self).unwrap_or_else(|_| "{\"type\":\"end\"}".into());
        format!("{secret} {json}")
    }

    /// The message in `line`, if the line is one: it must start with the run's `secret` (the
    /// whole line, not a part of it, so that nothing a plugin prints around it counts).
    pub fn from_line(line: &str, secret: &str) -> Option<Message> {
        if secret.is_empty() {
            return None;
        }
        let json = line.strip_prefix(secret)?.strip_prefix(' ')?;
        serde_json::from_str(json).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckId;

    #[test]
    fn messages_need_the_run_secret() {
        let message = Message::Check {
            check: Check::fail(CheckId::SmallBuffer, "why"),
        };
        let line = message.to_line("s3cret");
        assert_eq!(Message::from_line(&line, "s3cret"), Some(message));
        // Another run's secret, noise before the secret, or no secret: not a message.
        assert_eq!(Message::from_line(&line, "other"), None);
        assert_eq!(
            Message::from_line(&format!("chatter{line}"), "s3cret"),
            None
        );
        assert_eq!(Message::from_line(&line, ""), None);
        assert_eq!(Message::from_line("just output", "s3cret"), None);
        assert!(Message::Done.to_line("x").contains("\"type\":\"done\""));
    }
}
