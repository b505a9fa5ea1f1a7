//! Integration tests of the matcher on the embedded store and the embedded index, with
//! public-domain texts only (the bundled samples and the classics of the test corpus).
//! One binary, one module per subject.

mod boilerplate;
mod export;
mod matching;
mod mirrors;
mod pending_tasks;
mod stored_text;
mod support;
mod tasks;
mod webhook;
