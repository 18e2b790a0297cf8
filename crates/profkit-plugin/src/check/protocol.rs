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

/// Marks protocol lines, so output the plugin itself prints to stdout does not confuse the parent.
const LINE_MARK: &str = "\u{1e}profkit-check ";

impl Message {
    /// The line the child prints for this message (without the newline).
    pub fn to_line(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_else(|_| "{\"type\":\"end\"}".into());
        format!("{LINE_MARK}{json}")
    }

    /// The message in a line of the child's output, if there is one.
    pub fn from_line(line: &str) -> Option<Message> {
        let at = line.find(LINE_MARK)?;
        serde_json::from_str(line.get(at + LINE_MARK.len()..)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckId;

    #[test]
    fn messages_round_trip_through_lines_with_noise() {
        let message = Message::Check {
            check: Check::fail(CheckId::SmallBuffer, "why"),
        };
        let line = format!("plugin chatter{}", message.to_line());
        assert_eq!(Message::from_line(&line), Some(message));
        assert_eq!(Message::from_line("just output"), None);
        assert!(Message::Done.to_line().contains("\"type\":\"done\""));
    }
}
