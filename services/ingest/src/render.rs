//! A page as the browser showed it, for evidence: a full-page screenshot (PNG) and a print
//! (PDF) of a live web page, rendered by a headless Chromium under the crawler's
//! [`AddressPolicy`].
//!
//! Chromium's command line prints a PDF but cannot take a *full-page* screenshot, so
//! Chromium is driven over the DevTools protocol (CDP) on a pipe
//! (`--remote-debugging-pipe`: it reads NUL-terminated JSON commands on fd 3 and writes
//! NUL-terminated JSON responses and events on fd 4). The client is written by hand on
//! purpose: a render needs about ten commands, while the CDP crates (`chromiumoxide`,
//! `headless_chrome`) bring hundreds of generated protocol types and minutes of cold
//! compile to a CI that has thirty.
//!
//! The address policy is the crawler's, enforced twice:
//! * before anything is launched, the URL's host is resolved here and refused unless
//!   *every* address it resolves to passes [`AddressPolicy::check`] (the crawler's check
//!   of each hop; its resolver drops the forbidden addresses of a mixed answer, a render
//!   refuses the host);
//! * Chromium is then started with `--host-resolver-rules="MAP <host> <checked ip>, MAP *
//!   ~NOTFOUND"` and no proxy: the page's host can only reach the address checked here
//!   (no DNS rebinding), and every other host (sub-resources, redirects, scripts'
//!   requests, IP literals included) fails to resolve instead of reaching a private
//!   network. A render therefore shows only what the page's own host serves (any port
//!   of it, as for the crawler); images of a CDN appear as broken images.
//!
//! The session: `Target.createTarget` and `Target.attachToTarget` (flat sessions), then
//! on the page `Page.enable`, `Network.enable` (for the document's status and address),
//! `Emulation.setDeviceMetricsOverride`, `Page.navigate`, the `Page.loadEventFired` event
//! (awaited until a third of the time is left; a page still loading is captured as it
//! stands), `Page.getLayoutMetrics`, `Page.captureScreenshot` (beyond the viewport, down
//! to the content's height), `Page.printToPDF`, `Page.getNavigationHistory`, and
//! `Browser.close`. JavaScript dialogs (`alert`, which would block the page) are
//! dismissed. Answers are matched by id; other events are ignored.
//!
//! Each render runs its own Chromium in a throwaway profile, at most
//! [`CONCURRENT_RENDERS`] at once in the process, killed on timeout, error or drop.

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::{Host, Url};

use crate::crawler::AddressPolicy;
use crate::error::IngestError;

/// Renders running at once in the process: each Chromium takes a core and 150-300 MB.
pub const CONCURRENT_RENDERS: usize = 2;
/// Largest single DevTools message read from Chromium; a larger one is an error.
const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// Height of the window while the page loads (the capture covers the whole page).
const WINDOW_HEIGHT: u32 = 900;
/// Time given to late layout (web fonts, lazy images of the same host) after `load`.
const SETTLE: Duration = Duration::from_millis(300);
/// Time Chromium is given to exit after `Browser.close` before it is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// Stderr kept for error messages (its tail).
const STDERR_TAIL: usize = 4096;

fn render_slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(CONCURRENT_RENDERS))
}

/// How to render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// The Chromium executable (see [`find_chromium`]).
    pub chromium: PathBuf,
    /// Which addresses the page's host may resolve to.
    pub policy: AddressPolicy,
    /// Longest a whole render may take: the DNS check, Chromium's start, the load and
    /// both captures (waiting for a free render slot is not counted).
    pub timeout: Duration,
    /// Width of the window and of the screenshot, in CSS pixels.
    pub viewport_width: u32,
    /// Cap of the screenshot's height: a longer page is cut there.
    pub max_height: u32,
    /// Cap of each capture (PNG, PDF) in bytes; a larger capture is an error.
    pub max_bytes: usize,
}

impl RenderOptions {
    /// Defaults with `chromium`: the default address policy, 45 s, 1280 px wide, at most
    /// 16384 px high, at most 20 MB per capture.
    pub fn new(chromium: impl Into<PathBuf>) -> Self {
        RenderOptions {
            chromium: chromium.into(),
            policy: AddressPolicy::default(),
            timeout: Duration::from_secs(45),
            viewport_width: 1280,
            max_height: 16384,
            max_bytes: 20 << 20,
        }
    }
}

/// A rendered page.
#[derive(Clone)]
pub struct Rendered {
    /// The whole page (up to [`RenderOptions::max_height`]) as a PNG.
    pub screenshot_png: Vec<u8>,
    /// The page printed to PDF (backgrounds included), as a browser prints it.
    pub print_pdf: Vec<u8>,
    /// The URL the page ended on (after redirects within its host).
    pub final_url: String,
    /// The address the page's document came from, as Chromium reports it.
    pub remote_ip: Option<IpAddr>,
    /// The HTTP status of the page's document (an error page is captured too, as shown).
    pub status: Option<u16>,
    /// Whether the page finished loading (its `load` event fired). A page whose
    /// sub-resources are still pending when a third of [`RenderOptions::timeout`] is left
    /// is captured as it stands, with `loaded` false.
    pub loaded: bool,
}

impl std::fmt::Debug for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rendered")
            .field("screenshot_png", &format_args!("{} bytes", self.screenshot_png.len()))
            .field("print_pdf", &format_args!("{} bytes", self.print_pdf.len()))
            .field("final_url", &self.final_url)
            .field("remote_ip", &self.remote_ip)
            .field("status", &self.status)
            .field("loaded", &self.loaded)
            .finish()
    }
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The URL cannot be rendered (not http(s), no host).
    #[error("{url}: {reason}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The host resolves to an address the policy forbids (nothing was launched).
    #[error("{url}: refused to connect to {addr} ({reason})")]
    Forbidden {
        /// The URL.
        url: String,
        /// The forbidden address.
        addr: String,
        /// Which policy rule refused it.
        reason: &'static str,
    },
    /// The host cannot be resolved.
    #[error("{url}: cannot resolve {host}: {source}")]
    Resolve {
        /// The URL.
        url: String,
        /// The host looked up.
        host: String,
        /// The resolver's error.
        #[source]
        source: io::Error,
    },
    /// Chromium cannot be started.
    #[error("cannot start Chromium {}: {source}", path.display())]
    Launch {
        /// The executable.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The page did not load (Chromium's network error, such as `net::ERR_CONNECTION_REFUSED`).
    #[error("{url}: the page did not load: {reason}")]
    Navigation {
        /// The URL.
        url: String,
        /// Chromium's error text.
        reason: String,
    },
    /// The render took longer than [`RenderOptions::timeout`].
    #[error("{url}: rendering took longer than {}s", limit.as_secs_f32())]
    Timeout {
        /// The URL.
        url: String,
        /// The limit.
        limit: Duration,
    },
    /// A capture is larger than [`RenderOptions::max_bytes`].
    #[error("{url}: the {what} is {bytes} bytes, above the cap of {cap} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// `"screenshot"` or `"PDF"`.
        what: &'static str,
        /// Its size (decoded, or estimated from the base64 length).
        bytes: usize,
        /// The cap.
        cap: usize,
    },
    /// Chromium misbehaved: an error answer, a broken or oversized message, an early exit.
    #[error("{url}: Chromium: {reason}")]
    Browser {
        /// The URL.
        url: String,
        /// What happened (with the tail of Chromium's stderr when it exited).
        reason: String,
    },
}

impl RenderError {
    /// May the same render succeed when simply retried later?
    pub fn is_retryable(&self) -> bool {
        matches!(self, RenderError::Resolve { .. } | RenderError::Navigation { .. } | RenderError::Timeout { .. })
    }
}

impl From<RenderError> for IngestError {
    fn from(e: RenderError) -> Self {
        let retryable = e.is_retryable();
        match e {
            RenderError::Url { url, reason } => IngestError::Url { url, reason },
            RenderError::Forbidden { url, addr, reason } => IngestError::Forbidden { url, addr, reason },
            RenderError::Launch { path, source } => IngestError::Io { path, source },
            e @ (RenderError::Resolve { .. }
            | RenderError::Navigation { .. }
            | RenderError::Timeout { .. }
            | RenderError::TooLarge { .. }
            | RenderError::Browser { .. }) => {
                let url = match &e {
                    RenderError::Resolve { url, .. }
                    | RenderError::Navigation { url, .. }
                    | RenderError::Timeout { url, .. }
                    | RenderError::TooLarge { url, .. }
                    | RenderError::Browser { url, .. } => url.clone(),
                    _ => String::new(),
                };
                IngestError::Fetch { url, reason: e.to_string(), retryable }
            }
        }
    }
}

/// Longest a print of our own HTML may take ([`print_html`]).
pub const PRINT_TIMEOUT: Duration = Duration::from_secs(60);
/// Prints at once: each Chromium takes a core and ~150 MB.
const CONCURRENT_PRINTS: usize = 2;

fn print_slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| tokio::sync::Semaphore::new(CONCURRENT_PRINTS))
}

/// Print zhiwen's own self-contained HTML (a report, a notice) to PDF with `chromium`,
/// so the PDF is exactly what a browser prints (CJK text as text, the same layout). The
/// page is loaded from a private temporary directory with networking pointed at a dead
/// proxy: it fetches nothing, and a link in a quoted URL never makes the host reach out.
/// At most two prints run at once; each is bounded by [`PRINT_TIMEOUT`].
///
/// Chromium's command-line printer is enough here (unlike [`render_page`], which
/// drives the browser over DevTools to pin a foreign page's address): the HTML is ours.
pub async fn print_html(chromium: &Path, html: &str) -> Result<Vec<u8>, RenderError> {
    const URL: &str = "(printed HTML)";
    let browser = |reason: String| RenderError::Browser { url: URL.into(), reason };
    let _slot = print_slots().acquire().await.map_err(|_| browser("the printer is shutting down".into()))?;
    let dir = tempfile::tempdir().map_err(|e| RenderError::Launch { path: std::env::temp_dir(), source: e })?;
    let page = dir.path().join("print.html");
    let out = dir.path().join("print.pdf");
    tokio::fs::write(&page, html).await.map_err(|e| RenderError::Launch { path: page.clone(), source: e })?;
    let mut command = tokio::process::Command::new(chromium);
    command
        .arg("--headless")
        .arg("--disable-gpu")
        .arg("--no-first-run")
        .arg("--disable-extensions")
        .arg("--disable-background-networking")
        .arg("--disable-sync")
        .arg("--disable-breakpad")
        .arg("--disable-crash-reporter")
        .arg("--proxy-server=127.0.0.1:9")
        .arg("--no-pdf-header-footer")
        // Chromium's sandbox needs root-less user namespaces, which containers and root
        // lack. The page is our own HTML (every quoted text escaped, nothing fetched, no
        // scripts) in a throwaway profile, so the browser never handles foreign content.
        .arg("--no-sandbox")
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--print-to-pdf={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().map_err(|e| RenderError::Launch { path: chromium.to_path_buf(), source: e })?;
    let output = match tokio::time::timeout(PRINT_TIMEOUT, child.wait_with_output()).await {
        Ok(result) => result.map_err(|e| browser(format!("waiting for Chromium: {e}")))?,
        Err(_) => return Err(RenderError::Timeout { url: URL.into(), limit: PRINT_TIMEOUT }),
    };
    match tokio::fs::read(&out).await {
        Ok(pdf) if output.status.success() && pdf.starts_with(b"%PDF-") => Ok(pdf),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: String = stderr.trim().chars().rev().take(300).collect::<Vec<_>>().into_iter().rev().collect();
            Err(browser(format!("no PDF printed ({}): {tail}", output.status)))
        }
    }
}

/// The first Chromium-family browser on `PATH` (Debian's `chromium` first).
pub fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"].iter().find_map(|name| {
        std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Render `url`: a full-page screenshot and a print, by a headless Chromium that can reach
/// only the policy-checked address of the URL's host (see the module documentation).
pub async fn render_page(url: &Url, options: &RenderOptions) -> Result<Rendered, RenderError> {
    let url_err = |reason: &str| RenderError::Url { url: url.to_string(), reason: reason.to_owned() };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(url_err("only http and https pages are rendered"));
    }
    let host = url.host().ok_or_else(|| url_err("no host"))?;
    // The rules are built once the address is known; whether they can be is known now.
    resolver_rules(&host, IpAddr::from([0, 0, 0, 0])).ok_or_else(|| url_err(UNCONFINABLE))?;
    options.policy.check_url(url).map_err(|e| match e {
        IngestError::Forbidden { url, addr, reason } => RenderError::Forbidden { url, addr, reason },
        other => url_err(&other.to_string()),
    })?;
    let _slot = render_slots()
        .acquire()
        .await
        .map_err(|_| RenderError::Browser { url: url.to_string(), reason: "the render slots are closed".into() })?;
    let deadline = Instant::now() + options.timeout;
    let timeout = || RenderError::Timeout { url: url.to_string(), limit: options.timeout };
    let ip = tokio::time::timeout_at(deadline, checked_address(url, &host, options.policy))
        .await
        .map_err(|_| timeout())??;
    let profile = tempfile::tempdir().map_err(|e| RenderError::Browser {
        url: url.to_string(),
        reason: format!("temporary profile directory: {e}"),
    })?;
    let mut browser = Browser::launch(&options.chromium, profile.path(), &host, ip, options.viewport_width, url)?;
    // The load is awaited until a third of the time is left, kept for the captures.
    let load_deadline = deadline - options.timeout / 3;
    let outcome = tokio::time::timeout_at(deadline, browser.session.capture(url, options, load_deadline)).await;
    match outcome {
        Ok(Ok(rendered)) => {
            browser.close().await;
            Ok(rendered)
        }
        Ok(Err(e)) => {
            let e = browser.with_stderr(e).await;
            browser.kill().await;
            Err(e)
        }
        Err(_) => {
            browser.kill().await;
            Err(timeout())
        }
    }
}

/// Resolve the host and check every address: the one returned is the one Chromium may
/// reach.
async fn checked_address(url: &Url, host: &Host<&str>, policy: AddressPolicy) -> Result<IpAddr, RenderError> {
    let forbidden = |ip: IpAddr, reason| RenderError::Forbidden { url: url.to_string(), addr: ip.to_string(), reason };
    let addrs: Vec<IpAddr> = match host {
        Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
        Host::Ipv6(ip) => vec![IpAddr::V6(*ip)],
        Host::Domain(name) => {
            let resolve_err = |source| RenderError::Resolve { url: url.to_string(), host: (*name).to_owned(), source };
            let found: Vec<SocketAddr> = tokio::net::lookup_host((*name, 0)).await.map_err(resolve_err)?.collect();
            found.into_iter().map(|a| a.ip()).collect()
        }
    };
    for &ip in &addrs {
        policy.check(ip).map_err(|reason| forbidden(ip, reason))?;
    }
    addrs.first().copied().ok_or_else(|| RenderError::Resolve {
        url: url.to_string(),
        host: host.to_string(),
        source: io::Error::new(io::ErrorKind::NotFound, "no address"),
    })
}

/// `--host-resolver-rules`: the host to the checked address, every other name to "not
/// found". Chromium matches a rule's pattern against the host as it resolves it (an IPv6
/// literal without brackets) and reads the replacement as `host[:port]` (IPv6 in
/// brackets); rules are split at commas, then at spaces, and `*` and `?` are wildcards,
/// so a host holding any of those is refused (a valid URL host holds none but `*`).
fn resolver_rules(host: &Host<&str>, ip: IpAddr) -> Option<String> {
    let pattern = match host {
        Host::Domain(name) => (*name).to_owned(),
        Host::Ipv4(v4) => v4.to_string(),
        Host::Ipv6(v6) => v6.to_string(),
    };
    if pattern.is_empty() || pattern.contains(|c: char| matches!(c, '*' | '?' | ',') || c.is_whitespace()) {
        return None;
    }
    let ip = match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    Some(format!("MAP {pattern} {ip}, MAP * ~NOTFOUND"))
}

const UNCONFINABLE: &str = "a host name Chromium's resolver rules cannot match exactly";

/// A running Chromium and its DevTools pipe.
struct Browser {
    child: Child,
    session: Session,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Browser {
    fn launch(
        chromium: &Path,
        profile: &Path,
        host: &Host<&str>,
        ip: IpAddr,
        width: u32,
        url: &Url,
    ) -> Result<Browser, RenderError> {
        let launch_err = |source| RenderError::Launch { path: chromium.to_owned(), source };
        let rules = resolver_rules(host, ip)
            .ok_or_else(|| RenderError::Url { url: url.to_string(), reason: UNCONFINABLE.into() })?;
        // Commands go parent -> fd 3 of Chromium, answers come back from its fd 4. The
        // parent's ends are non-blocking and registered with tokio; Chromium's are made
        // blocking (as a program expects of its inherited descriptors). All four are
        // close-on-exec: only the two dup2'ed to 3 and 4 below reach Chromium.
        let (to_browser, browser_in) = pipe::pipe().map_err(launch_err)?;
        let (browser_out, from_browser) = pipe::pipe().map_err(launch_err)?;
        let browser_in: OwnedFd = browser_in.into_blocking_fd().map_err(launch_err)?;
        let browser_out: OwnedFd = browser_out.into_blocking_fd().map_err(launch_err)?;
        let (child_in, child_out) = (browser_in.as_raw_fd(), browser_out.as_raw_fd());
        let mut command = Command::new(chromium);
        command
            .arg("--headless")
            .arg("--remote-debugging-pipe")
            .arg("--disable-gpu")
            .arg("--no-first-run")
            .arg("--no-default-browser-check")
            .arg("--disable-extensions")
            .arg("--disable-background-networking")
            .arg("--disable-component-update")
            .arg("--disable-sync")
            // No crash handler process: it outlives a killed browser and writes to the
            // terminal of whoever ran zhiwen.
            .arg("--disable-breakpad")
            .arg("--disable-crash-reporter")
            // The page as given: no automatic try of https:// first for an http:// URL.
            .arg("--disable-features=HttpsUpgrades")
            .arg("--hide-scrollbars")
            .arg("--mute-audio")
            // The address policy: only the checked address for the page's host, nothing
            // for any other name; no proxy (a proxy would resolve names itself) and no
            // WebRTC over UDP (ICE candidates are IP literals that never meet the resolver).
            .arg(format!("--host-resolver-rules={rules}"))
            .arg("--no-proxy-server")
            .arg("--force-webrtc-ip-handling-policy=disable_non_proxied_udp")
            // Chromium's sandbox needs root-less user namespaces (or a setuid helper),
            // which containers and root lack, and it refuses to start without them. The
            // page here IS foreign content, so the sandbox's absence is covered otherwise:
            // a throwaway profile, a network confined to the one checked address, a
            // timeout and a kill; run the service as an unprivileged user.
            .arg("--no-sandbox")
            .arg(format!("--window-size={width},{WINDOW_HEIGHT}"))
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // SAFETY: the closure runs in the forked child before exec, where only
        // async-signal-safe calls are allowed: fcntl and dup2 are, and nothing allocates.
        // Both ends are first copied to descriptors >= 5 (close-on-exec) so that moving
        // one onto 3 cannot overwrite the other; dup2 then clears close-on-exec on 3 and 4.
        unsafe {
            command.pre_exec(move || {
                let high_in = libc::fcntl(child_in, libc::F_DUPFD_CLOEXEC, 5);
                let high_out = libc::fcntl(child_out, libc::F_DUPFD_CLOEXEC, 5);
                if high_in < 0 || high_out < 0 || libc::dup2(high_in, 3) < 0 || libc::dup2(high_out, 4) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(launch_err)?;
        // Chromium holds its ends now; closing ours lets a read see its exit as EOF.
        drop((browser_in, browser_out));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    tail.extend_from_slice(&chunk[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL);
                    tail.drain(..excess);
                }
            });
        }
        let session = Session::new(to_browser, from_browser, url);
        Ok(Browser { child, session, stderr })
    }

    /// Ask Chromium to close, wait for it (killed after a grace period).
    async fn close(&mut self) {
        // The answer may never come (the pipe closes as it exits): do not wait for it.
        let _ = self.session.send("Browser.close", json!({}), false).await;
        if tokio::time::timeout(CLOSE_GRACE, self.child.wait()).await.is_err() {
            tracing::debug!("Chromium did not close in time, killing it");
            self.kill().await;
        }
    }

    async fn kill(&mut self) -> Option<ExitStatus> {
        let _ = self.child.start_kill();
        tokio::time::timeout(CLOSE_GRACE, self.child.wait()).await.ok().and_then(Result::ok)
    }

    /// Add Chromium's last words to an error caused by its exit.
    async fn with_stderr(&mut self, e: RenderError) -> RenderError {
        match e {
            RenderError::Browser { url, reason } if reason.contains("closed the pipe") => {
                // Give the stderr reader a moment to see the last bytes.
                let status = tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let tail = String::from_utf8_lossy(&tail);
                let status = match status {
                    Ok(Ok(s)) => format!(" ({s})"),
                    _ => String::new(),
                };
                RenderError::Browser { url, reason: format!("{reason}{status}: {}", tail.trim()) }
            }
            e => e,
        }
    }
}

/// The DevTools protocol over the pipe: one browser-level connection, one page session.
struct Session {
    tx: pipe::Sender,
    rx: pipe::Receiver,
    /// Bytes read and not yet split into messages.
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no NUL.
    scanned: usize,
    next_id: u64,
    /// The page's session (commands without it go to the browser).
    session_id: Option<String>,
    /// The page's target id, which is also its main frame's id.
    target_id: String,
    /// Events kept while waiting for an answer (only the ones a render looks at).
    events: VecDeque<Value>,
    /// Address and HTTP status of the main frame's last document response.
    remote_ip: Option<IpAddr>,
    status: Option<u16>,
    url: String,
}

impl Session {
    fn new(tx: pipe::Sender, rx: pipe::Receiver, url: &Url) -> Self {
        Session {
            tx,
            rx,
            buf: Vec::new(),
            scanned: 0,
            next_id: 1,
            session_id: None,
            target_id: String::new(),
            events: VecDeque::new(),
            remote_ip: None,
            status: None,
            url: url.to_string(),
        }
    }

    fn err(&self, reason: impl Into<String>) -> RenderError {
        RenderError::Browser { url: self.url.clone(), reason: reason.into() }
    }

    /// The render proper, once Chromium runs.
    async fn capture(
        &mut self,
        url: &Url,
        options: &RenderOptions,
        load_deadline: Instant,
    ) -> Result<Rendered, RenderError> {
        let target = self.call_browser("Target.createTarget", json!({ "url": "about:blank" })).await?;
        self.target_id = str_field(&target, "targetId").ok_or_else(|| self.err("createTarget: no targetId"))?;
        let attached =
            self.call_browser("Target.attachToTarget", json!({ "targetId": self.target_id, "flatten": true })).await?;
        self.session_id =
            Some(str_field(&attached, "sessionId").ok_or_else(|| self.err("attachToTarget: no sessionId"))?);
        self.call("Page.enable", json!({})).await?;
        self.call("Network.enable", json!({ "maxTotalBufferSize": 0, "maxResourceBufferSize": 0 })).await?;
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": options.viewport_width, "height": WINDOW_HEIGHT, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await?;
        self.events.clear();
        let nav = self.call("Page.navigate", json!({ "url": url.as_str() })).await?;
        if let Some(error) = nav.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty()) {
            return Err(RenderError::Navigation { url: url.to_string(), reason: error.to_owned() });
        }
        let loaded = self.wait_event("Page.loadEventFired", load_deadline).await?.is_some();
        if !loaded {
            tracing::info!(%url, "the page is still loading; capturing it as it stands");
        }
        tokio::time::sleep(SETTLE).await;

        let metrics = self.call("Page.getLayoutMetrics", json!({})).await?;
        let size = metrics.get("cssContentSize").or_else(|| metrics.get("contentSize"));
        let content_height = size.and_then(|s| s.get("height")).and_then(Value::as_f64).unwrap_or(0.0);
        let height = (content_height.ceil() as u32).clamp(1, options.max_height.max(1));
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": { "x": 0, "y": 0, "width": options.viewport_width, "height": height, "scale": 1 },
                }),
            )
            .await?;
        let screenshot_png = self.decode(&shot, "screenshot", options.max_bytes)?;
        let print = self.call("Page.printToPDF", json!({ "printBackground": true })).await?;
        let print_pdf = self.decode(&print, "PDF", options.max_bytes)?;
        let history = self.call("Page.getNavigationHistory", json!({})).await?;
        let final_url = history
            .get("currentIndex")
            .and_then(Value::as_u64)
            .and_then(|i| history.get("entries")?.get(usize::try_from(i).ok()?)?.get("url")?.as_str())
            .map(str::to_owned)
            .ok_or_else(|| self.err("getNavigationHistory: no current entry"))?;
        Ok(Rendered { screenshot_png, print_pdf, final_url, remote_ip: self.remote_ip, status: self.status, loaded })
    }

    /// The base64 `data` of an answer, decoded, within `cap`.
    fn decode(&self, answer: &Value, what: &'static str, cap: usize) -> Result<Vec<u8>, RenderError> {
        let data = answer.get("data").and_then(Value::as_str).ok_or_else(|| self.err(format!("{what}: no data")))?;
        let too_large = |bytes| RenderError::TooLarge { url: self.url.clone(), what, bytes, cap };
        let estimate = data.len() / 4 * 3;
        if estimate > cap.saturating_add(3) {
            return Err(too_large(estimate));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| self.err(format!("{what}: bad base64: {e}")))?;
        if bytes.len() > cap {
            return Err(too_large(bytes.len()));
        }
        Ok(bytes)
    }

    async fn call_browser(&mut self, method: &str, params: Value) -> Result<Value, RenderError> {
        let id = self.send(method, params, false).await?;
        self.answer(id, method).await
    }

    /// A command to the page's session.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, RenderError> {
        let id = self.send(method, params, true).await?;
        self.answer(id, method).await
    }

    async fn send(&mut self, method: &str, params: Value, in_session: bool) -> Result<u64, RenderError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if in_session {
            if let Some(session) = &self.session_id {
                message["sessionId"] = Value::String(session.clone());
            }
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| self.err(e.to_string()))?;
        bytes.push(0);
        self.tx.write_all(&bytes).await.map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => self.err(format!("Chromium closed the pipe (sending {method})")),
            _ => self.err(format!("sending {method}: {e}")),
        })?;
        Ok(id)
    }

    /// Read until the answer to `id`, keeping the events a render needs.
    async fn answer(&mut self, id: u64, method: &str) -> Result<Value, RenderError> {
        loop {
            let Some(message) = self.read_message(None).await? else { continue };
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = message.get("error") {
                    let text = error.get("message").and_then(Value::as_str).unwrap_or("error");
                    return Err(self.err(format!("{method}: {text}")));
                }
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
            self.observe(message).await?;
        }
    }

    /// Read until the page's event `method` (or take one already kept); `None` when
    /// `until` passes first.
    async fn wait_event(&mut self, method: &str, until: Instant) -> Result<Option<Value>, RenderError> {
        if let Some(at) = self.events.iter().position(|e| e["method"] == method) {
            return Ok(self.events.remove(at));
        }
        loop {
            let Some(message) = self.read_message(Some(until)).await? else { return Ok(None) };
            if message["method"] == method && self.is_ours(&message) {
                return Ok(Some(message));
            }
            self.observe(message).await?;
        }
    }

    fn is_ours(&self, message: &Value) -> bool {
        message.get("sessionId").and_then(Value::as_str) == self.session_id.as_deref()
    }

    /// Look at an event that is not the awaited answer.
    async fn observe(&mut self, message: Value) -> Result<(), RenderError> {
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        match method {
            "Target.detachedFromTarget" | "Target.targetCrashed" | "Inspector.targetCrashed" => {
                Err(self.err(format!("the page went away ({method})")))
            }
            "Network.responseReceived" if self.is_ours(&message) => {
                let params = &message["params"];
                if params["type"] == "Document" && params["frameId"].as_str() == Some(self.target_id.as_str()) {
                    let response = &params["response"];
                    self.remote_ip = response["remoteIPAddress"]
                        .as_str()
                        .and_then(|a| a.trim_start_matches('[').trim_end_matches(']').parse().ok());
                    self.status = response["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                }
                Ok(())
            }
            "Page.loadEventFired" if self.is_ours(&message) => {
                self.events.push_back(message);
                Ok(())
            }
            // An alert, confirm or prompt blocks the page (its load, the captures) until
            // answered: dismiss it (as "Cancel") without waiting for the acknowledgement.
            "Page.javascriptDialogOpening" if self.is_ours(&message) => {
                let text = message["params"]["message"].as_str().unwrap_or("");
                tracing::debug!(url = %self.url, dialog = %text, "dismissing a dialog");
                self.send("Page.handleJavaScriptDialog", json!({ "accept": false }), true).await.map(drop)
            }
            _ => Ok(()),
        }
    }

    /// The next NUL-terminated message, parsed; bounded by [`MAX_MESSAGE_BYTES`]. `None`
    /// when `until` passes first: only the wait for bytes is cut short (a read that did
    /// not complete reads nothing), never a message half taken or a command half sent.
    async fn read_message(&mut self, until: Option<Instant>) -> Result<Option<Value>, RenderError> {
        loop {
            if let Some(pos) = memchr::memchr(0, &self.buf[self.scanned..]).map(|p| p + self.scanned) {
                let rest = self.buf.split_off(pos + 1);
                let mut message = std::mem::replace(&mut self.buf, rest);
                message.pop();
                self.scanned = 0;
                return serde_json::from_slice(&message)
                    .map(Some)
                    .map_err(|e| self.err(format!("unreadable DevTools message: {e}")));
            }
            self.scanned = self.buf.len();
            if self.buf.len() > MAX_MESSAGE_BYTES {
                return Err(self.err(format!("a DevTools message is larger than {MAX_MESSAGE_BYTES} bytes")));
            }
            // Grow geometrically, never past the cap (so at most one cap is ever allocated).
            let want = (self.buf.len() * 2).clamp(256 << 10, MAX_MESSAGE_BYTES + 1);
            if self.buf.capacity() < want {
                self.buf.reserve_exact(want - self.buf.len());
            }
            let read = self.rx.read_buf(&mut self.buf);
            let read = match until {
                Some(until) => match tokio::time::timeout_at(until, read).await {
                    Ok(read) => read,
                    Err(_) => return Ok(None),
                },
                None => read.await,
            };
            let n = read.map_err(|e| self.err(format!("reading: {e}")))?;
            if n == 0 {
                return Err(self.err("Chromium closed the pipe"));
            }
        }
    }
}

fn str_field(value: &Value, name: &str) -> Option<String> {
    value.get(name).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolver_rules_match_the_host_as_chromium_sees_it() {
        let v6: IpAddr = "2001:4860::1".parse().unwrap();
        let rules = resolver_rules(&Host::Domain("example.com"), v6);
        assert_eq!(rules.as_deref(), Some("MAP example.com [2001:4860::1], MAP * ~NOTFOUND"));
        let rules = resolver_rules(&Host::Ipv6("2001:4860::1".parse().unwrap()), v6);
        assert_eq!(rules.as_deref(), Some("MAP 2001:4860::1 [2001:4860::1], MAP * ~NOTFOUND"));
        let v4: IpAddr = "93.184.216.34".parse().unwrap();
        let rules = resolver_rules(&Host::Ipv4("93.184.216.34".parse().unwrap()), v4);
        assert_eq!(rules.as_deref(), Some("MAP 93.184.216.34 93.184.216.34, MAP * ~NOTFOUND"));
        for host in ["*.example.com", "a?b", "a,b", ""] {
            assert_eq!(resolver_rules(&Host::Domain(host), v4), None, "{host}");
        }
        // The url crate keeps a `*` in a host: such a URL is refused before any lookup.
        let url = Url::parse("http://*.example.com/").unwrap();
        assert_eq!(url.host_str(), Some("*.example.com"));
    }

    /// A session talking to a fake browser: what the session sends is readable from the
    /// returned receiver, what is written to the returned sender is what it reads.
    fn fake_browser() -> (Session, pipe::Receiver, pipe::Sender) {
        let (to_browser, browser_in) = pipe::pipe().unwrap();
        let (browser_out, from_browser) = pipe::pipe().unwrap();
        (Session::new(to_browser, from_browser, &Url::parse("http://example.com/").unwrap()), browser_in, browser_out)
    }

    #[tokio::test]
    async fn answers_are_matched_by_id_and_events_kept_or_ignored() {
        let (mut session, mut browser_in, mut browser_out) = fake_browser();
        session.session_id = Some("S".into());
        session.target_id = "T".into();
        let browser = tokio::spawn(async move {
            let mut command = Vec::new();
            while !command.ends_with(b"\0") {
                let mut b = [0u8; 1];
                browser_in.read_exact(&mut b).await.unwrap();
                command.push(b[0]);
            }
            command.pop();
            let command: Value = serde_json::from_slice(&command).unwrap();
            assert_eq!(command["method"], "Page.navigate");
            assert_eq!(command["sessionId"], "S");
            let id = command["id"].as_u64().unwrap();
            let replies = [
                json!({"method": "Page.frameStartedLoading", "sessionId": "S", "params": {}}),
                json!({"id": id + 100, "result": {"other": true}}),
                json!({"method": "Network.responseReceived", "sessionId": "S", "params": {
                    "type": "Document", "frameId": "T", "response": {"remoteIPAddress": "::1"}}}),
                json!({"method": "Page.loadEventFired", "sessionId": "other", "params": {}}),
                json!({"method": "Page.loadEventFired", "sessionId": "S", "params": {"timestamp": 1}}),
                json!({"id": id, "sessionId": "S", "result": {"frameId": "T"}}),
            ];
            let mut bytes = Vec::new();
            for reply in replies {
                bytes.extend(serde_json::to_vec(&reply).unwrap());
                bytes.push(0);
            }
            // In small pieces: messages are split across reads.
            for piece in bytes.chunks(7) {
                browser_out.write_all(piece).await.unwrap();
            }
            browser_out
        });
        let answer = session.call("Page.navigate", json!({"url": "http://example.com/"})).await.unwrap();
        assert_eq!(answer, json!({"frameId": "T"}));
        assert_eq!(session.remote_ip, Some("::1".parse().unwrap()));
        let soon = Instant::now() + Duration::from_secs(5);
        let load = session.wait_event("Page.loadEventFired", soon).await.unwrap().expect("the kept event");
        assert_eq!(load["params"]["timestamp"], 1);
        assert_eq!(session.events.len(), 0);
        let browser_out = browser.await.unwrap();
        drop(browser_out);
        let e = session.read_message(None).await.unwrap_err();
        assert!(e.to_string().contains("closed the pipe"), "{e}");
    }

    #[tokio::test]
    async fn waiting_for_an_event_ends_at_its_deadline_and_the_session_goes_on() {
        let (mut session, _browser_in, mut browser_out) = fake_browser();
        session.session_id = Some("S".into());
        let half = b"{\"method\":\"Page.loadEventFired\",";
        browser_out.write_all(half).await.unwrap();
        let soon = Instant::now() + Duration::from_millis(100);
        assert!(session.wait_event("Page.loadEventFired", soon).await.unwrap().is_none());
        browser_out.write_all(b"\"sessionId\":\"S\",\"params\":{}}\0").await.unwrap();
        let later = Instant::now() + Duration::from_secs(5);
        assert!(session.wait_event("Page.loadEventFired", later).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn an_error_answer_is_an_error() {
        let (mut session, _browser_in, mut browser_out) = fake_browser();
        browser_out.write_all(b"{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"No target\"}}\0").await.unwrap();
        let e = session.call_browser("Target.attachToTarget", json!({})).await.unwrap_err();
        assert!(e.to_string().ends_with("Target.attachToTarget: No target"), "{e}");
    }

    #[tokio::test]
    async fn an_oversized_message_is_an_error_not_an_allocation_without_end() {
        let (mut session, _browser_in, mut browser_out) = fake_browser();
        let writer = tokio::spawn(async move {
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_MESSAGE_BYTES >> 20) + 2 {
                if browser_out.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        });
        let e = session.read_message(None).await.unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        assert!(session.buf.capacity() <= MAX_MESSAGE_BYTES + 1);
        drop(session);
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn refuses_before_launching() {
        let options = RenderOptions::new("/nonexistent/chromium");
        for url in
            ["ftp://example.com/", "http://127.0.0.1:9/", "http://[::1]/", "http://localhost/", "http://10.0.0.1/"]
        {
            let e = render_page(&Url::parse(url).unwrap(), &options).await.unwrap_err();
            assert!(matches!(e, RenderError::Url { .. } | RenderError::Forbidden { .. }), "{url}: {e}");
        }
    }
}
