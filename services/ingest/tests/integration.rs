//! Integration tests of zhiwen-ingest, one binary with a module per resource: works
//! imports, page imports, the crawler, and the page captures by headless Chromium against a local pirate-style site served from
//! this process on 127.0.0.1 (nothing is fetched from outside the machine). Everything
//! stores into the embedded store in a temporary directory.

#[path = "integration/capture.rs"]
mod capture;
#[path = "integration/common.rs"]
mod common;
#[path = "integration/crawl.rs"]
mod crawl;
#[path = "integration/hostile.rs"]
mod hostile;
#[path = "integration/pages.rs"]
mod pages;
#[path = "integration/render.rs"]
mod render;
#[path = "integration/watch.rs"]
mod watch;
#[path = "integration/watch_shared.rs"]
mod watch_shared;
#[path = "integration/works.rs"]
mod works;
