//! What a host running a heartbeat loop logs, and in which words: one text
//! per occasion, so the native and the JS hosts say the same thing.

/// An occasion a heartbeat loop logs (a warning, except [`Notice::Lost`],
/// which the native host logs at debug level: the caller hears it anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Notice {
    /// A renewal raised: the first failure of an outage.
    RenewalFailed,
    /// The reconfirmation raised.
    ReconfirmFailed,
    /// The `on_reconfirm` receipt hook failed (raised or rejected).
    ReceiptFailed,
    /// The `on_reconfirm` receipt hook was still running when the budget the
    /// renewal left was spent.
    ReceiptOverran,
    /// The lease lapsed: the owned work is interrupted.
    Lapsed,
    /// The `on_lapse` hook failed (JS only: the native hook can not fail).
    LapseHookFailed,
    /// The fence was lost: the owned work is interrupted.
    Lost,
}

impl Notice {
    /// Every notice, for hosts that hand the texts on by name.
    pub const ALL: [Notice; 7] = [
        Notice::RenewalFailed,
        Notice::ReconfirmFailed,
        Notice::ReceiptFailed,
        Notice::ReceiptOverran,
        Notice::Lapsed,
        Notice::LapseHookFailed,
        Notice::Lost,
    ];

    /// The log message. The run id, owner and figures go beside it as
    /// structured fields, never into it.
    pub fn text(self) -> &'static str {
        match self {
            Notice::RenewalFailed => "run heartbeat write failed",
            Notice::ReconfirmFailed => "run lease reconfirm failed",
            Notice::ReceiptFailed => "run lease reconfirm receipt failed",
            Notice::ReceiptOverran => "run lease reconfirm receipt overran the lease budget",
            Notice::Lapsed => "run lease lapsed; interrupting owned work",
            Notice::LapseHookFailed => "run lease onLapse hook failed",
            Notice::Lost => "run lease lost; interrupting owned work",
        }
    }

    /// The name JS knows it by (`renewalFailed`, `lapseHookFailed`, …).
    pub fn js_name(self) -> &'static str {
        match self {
            Notice::RenewalFailed => "renewalFailed",
            Notice::ReconfirmFailed => "reconfirmFailed",
            Notice::ReceiptFailed => "receiptFailed",
            Notice::ReceiptOverran => "receiptOverran",
            Notice::Lapsed => "lapsed",
            Notice::LapseHookFailed => "lapseHookFailed",
            Notice::Lost => "lost",
        }
    }
}
