use std::fmt;

/// What can go wrong with a notice template: compiling or rendering it, or an admin's
/// override that would produce an unusable notice. Every message is one line and names
/// the part (`zh-CN subject`, `en html`, ...), so the admin sees which edit was refused.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The template does not compile (a syntax error).
    #[error("{part} template does not compile: {message}")]
    Compile {
        /// The part, e.g. `zh-CN text`.
        part: String,
        /// minijinja's message, on one line.
        message: String,
    },
    /// The template compiled but failed while rendering (an undefined value, a bad
    /// filter argument, too much work).
    #[error("{part} template does not render: {message}")]
    Render {
        /// The part, e.g. `en html`.
        part: String,
        /// minijinja's message, on one line.
        message: String,
    },
    /// A subject must be one non-empty line (a line break would start a new mail header).
    #[error("{part} template: the subject must be one non-empty line ({why})")]
    Subject {
        /// The part, e.g. `en subject`.
        part: String,
        /// What is wrong with it.
        why: String,
    },
    /// An override left out something every notice must state (checked on the sample
    /// document: its values must all appear in the rendered notice).
    #[error("{part} template leaves out {what}, which every notice must state")]
    Missing {
        /// The part, e.g. `zh-CN text`.
        part: String,
        /// The element, e.g. `the rights holder's address`.
        what: String,
    },
    /// Not a language or part name this crate knows.
    #[error("unknown {kind} {value:?}")]
    Unknown {
        /// `language` or `template part`.
        kind: &'static str,
        /// What was given.
        value: String,
    },
}

/// What can go wrong building or sending a notice e-mail.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// An address (sender, reply-to or a recipient) does not parse.
    #[error("bad {field} address {address:?}: {reason}")]
    Address {
        /// `from`, `reply-to`, `to` or `cc`.
        field: &'static str,
        /// The address as given.
        address: String,
        /// Why it was refused.
        reason: String,
    },
    /// A notice with no recipient.
    #[error("the notice has no recipient")]
    NoRecipient,
    /// A header value (subject, Message-ID, reference) or an attachment is not usable.
    #[error("{0}")]
    Invalid(String),
    /// The message is over [`crate::mail::MAX_MESSAGE_BYTES`]; refused before connecting.
    #[error("the message is too large: {bytes} bytes of bodies and attachments, the limit is {limit}")]
    TooLarge {
        /// Bytes of text, html and attachments.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// lettre could not assemble the message.
    #[error("cannot build the message: {0}")]
    Build(String),
    /// The SMTP URL is not one lettre understands (the message never names credentials).
    #[error("bad SMTP URL {url}: {reason}")]
    Config {
        /// The URL with any password removed.
        url: String,
        /// Why.
        reason: String,
    },
    /// Connecting, the SMTP dialogue or the relay's refusal.
    #[error("sending through {url} failed: {reason}")]
    Smtp {
        /// The URL with any password removed.
        url: String,
        /// lettre's error, including the server's reply when there was one.
        reason: String,
        /// Whether the server refused for good (a 5xx reply), so retrying will not help.
        permanent: bool,
    },
    /// The whole send took longer than its bound.
    #[error("sending through {url} timed out after {secs} s")]
    Timeout {
        /// The URL with any password removed.
        url: String,
        /// The bound.
        secs: u64,
    },
}

/// One line of a (possibly multi-line) message.
pub(crate) fn one_line(message: impl fmt::Display) -> String {
    message.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What can go wrong drafting, sending or exporting a notice.
#[derive(Debug, thiserror::Error)]
pub enum NoticeError {
    /// The holder's profile lacks what a notice must state.
    #[error("{0}")]
    Incomplete(String),
    /// Nothing to put in the notice.
    #[error("nothing to notify: {0}")]
    NothingToNotice(String),
    /// Bad input from the caller.
    #[error("{0}")]
    Invalid(String),
    /// No such notice (or file).
    #[error("{0} not found")]
    NotFound(String),
    /// The notice's state does not allow it.
    #[error("{0}")]
    Conflict(String),
    /// A send whose outcome is unknown: the notice stays in `sending`.
    #[error("{0}")]
    Unknown(String),
    /// A stored value does not read.
    #[error("{0}")]
    Corrupt(String),
    /// A setting is wrong.
    #[error("{0}")]
    Config(String),
    /// The templates.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The message or the SMTP server.
    #[error(transparent)]
    Mail(#[from] MailError),
    /// The stores.
    #[error(transparent)]
    Store(#[from] zhiwen_store::StoreError),
    /// The evidence log.
    #[error(transparent)]
    Capture(#[from] zhiwen_capture::CaptureError),
}
