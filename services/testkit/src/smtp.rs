//! Starts a real SMTP server (aiosmtpd, from PyPI) for tests.
//!
//! aiosmtpd is Apache-2.0 and only runs here as a separate child process:
//! `python -m aiosmtpd -n -l 127.0.0.1:<port> -c aiosmtpd.handlers.Mailbox <maildir>`,
//! which accepts every message and stores it, as received, in a Maildir. The Python is
//! `$ZHIWEN_SMTPD_PYTHON`, else the repository's `.test-servers/venv/bin/python`
//! (installed by `scripts/setup-smtp.sh`) when it has aiosmtpd. Each server listens on a
//! free loopback port, keeps its Maildir in a private temporary directory, and is
//! killed (and the directory removed) when the handle is dropped.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{free_port, unavailable};

/// A Python start-up with asyncio imports is slow on a loaded 2-core machine.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running aiosmtpd child process on a free loopback port.
#[derive(Debug)]
pub struct SmtpServer {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl SmtpServer {
    /// Start a server, or return `None` (skip) when aiosmtpd is not installed and servers
    /// are not required. Panics with a clear message when required
    /// (`ZHIWEN_REQUIRE_SERVERS=1`) but missing, or when it does not start.
    pub fn start() -> Option<SmtpServer> {
        let what = "SMTP server (aiosmtpd)";
        let Some(python) = find_python() else {
            return unavailable(what, "neither $ZHIWEN_SMTPD_PYTHON nor .test-servers/venv/bin/python with aiosmtpd");
        };
        let mut last_error = String::new();
        // A port can be taken between `free_port` and the bind: retry a few times.
        for _ in 0..3 {
            match Self::spawn(&python) {
                Ok(server) => return Some(server),
                Err(why) => last_error = why,
            }
        }
        unavailable(what, &last_error)
    }

    fn spawn(python: &Path) -> Result<SmtpServer, String> {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("zhiwen-smtpd-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut child = Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.join("maildir"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            // Inherited: a start-up failure shows in the test output (an undrained pipe
            // could block the server).
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(SmtpServer { child, port, dir });
            }
            if let Ok(Some(status)) = child.try_wait() {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!(
                    "aiosmtpd exited with {status} before accepting connections (see its stderr above)"
                ));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!("aiosmtpd did not accept connections on port {port} within {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `smtp://127.0.0.1:<port>` (plain SMTP, no authentication), lettre's URL form.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every message received so far, as stored (raw RFC 5322 bytes), oldest first.
    /// aiosmtpd stores a message before it replies 250, so a message whose send
    /// returned is here. It adds its own trace headers (`X-Peer`, `X-MailFrom`,
    /// `X-RcptTo`) at the top.
    pub fn messages(&self) -> Vec<Vec<u8>> {
        let mut files: Vec<(std::time::SystemTime, String, PathBuf)> = Vec::new();
        for sub in ["new", "cur"] {
            let Ok(entries) = std::fs::read_dir(self.dir.join("maildir").join(sub)) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let modified = entry.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
                files.push((modified, entry.file_name().to_string_lossy().into_owned(), path));
            }
        }
        // Maildir names start with the delivery time in seconds; the modification time
        // orders within a second.
        files.sort();
        files.into_iter().filter_map(|(_, _, path)| std::fs::read(path).ok()).collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_python() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ZHIWEN_SMTPD_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    // The repository root is two levels above this crate.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-servers/venv");
    let python = root.join("bin/python");
    let has_aiosmtpd = std::fs::read_dir(root.join("lib"))
        .ok()
        .is_some_and(|dirs| dirs.flatten().any(|d| d.path().join("site-packages/aiosmtpd").is_dir()));
    (python.is_file() && has_aiosmtpd).then_some(python)
}
