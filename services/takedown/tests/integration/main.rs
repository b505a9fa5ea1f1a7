//! One integration-test binary for the takedown crate (one link instead of one per
//! file): `smtp` sends notices to a real SMTP server (aiosmtpd on loopback) and reads back
//! what it stored; `notices` runs the notice service on the embedded store; `alerts`
//! sends a holder's alerts of new matches to the same server.

mod alerts;
mod notices;
mod smtp;
mod support;
