//! Starts a MongoDB-wire-compatible server (SecantusDB) for tests.
//!
//! SecantusDB is GPL-2.0: it only ever runs here as a separate child process, never
//! linked. The binary is `$ZHIWEN_SECANTUSD`, else `secantusd-py` on `PATH`, else the
//! repository's `.test-servers/venv/bin/secantusd-py` (installed by
//! `scripts/setup-secantusdb.sh`). Each server keeps its data in memory and is stopped
//! when the handle is dropped; tests isolate themselves further with one database each.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{free_port, unavailable};

/// How long a server may take to accept connections (a Python start-up is slow on a
/// loaded 2-core machine, so be generous but bounded).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a graceful stop may take before the process is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A running SecantusDB child process on a free loopback port.
#[derive(Debug)]
pub struct MongoServer {
    child: Child,
    port: u16,
}

impl MongoServer {
    /// Start a server, or return `None` (skip) when none is installed and servers are
    /// not required. Panics with a clear message when required
    /// (`ZHIWEN_REQUIRE_SERVERS=1`) but missing, or when it fails to start.
    pub fn start() -> Option<MongoServer> {
        let Some(bin) = find_binary() else {
            return unavailable(
                "MongoDB-wire server (SecantusDB)",
                "neither $ZHIWEN_SECANTUSD, secantusd-py on PATH nor .test-servers/venv/bin/secantusd-py",
            );
        };
        match Self::spawn(&bin) {
            Ok(server) => Some(server),
            Err(why) => unavailable("MongoDB-wire server (SecantusDB)", &why),
        }
    }

    fn spawn(bin: &Path) -> Result<MongoServer, String> {
        // A port can be taken between `free_port` and the bind: retry a few times.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            let mut child = Command::new(bin)
                .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--storage-path", ":memory:"])
                .args(["--log-level", "WARNING"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                // Inherited: at WARNING level the server is quiet, and a start-up failure
                // shows up in the test output (a pipe nobody drains could block it).
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Ok(MongoServer { child, port });
                }
                if let Ok(Some(status)) = child.try_wait() {
                    last_error = format!(
                        "{} exited with {status} before accepting connections (see its stderr above)",
                        bin.display()
                    );
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "{} did not accept connections on port {port} within {:?}",
                        bin.display(),
                        START_TIMEOUT
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Err(last_error)
    }

    /// The connection string (`mongodb://127.0.0.1:PORT/?directConnection=true`).
    pub fn uri(&self) -> String {
        format!("mongodb://127.0.0.1:{}/?directConnection=true", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for MongoServer {
    /// SIGTERM first (SecantusDB then removes its `:memory:` temp directory; it takes a
    /// few seconds), SIGKILL if it is still running after [`STOP_TIMEOUT`].
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let termed =
            Command::new("kill").args(["-TERM", &pid]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        if termed {
            let deadline = Instant::now() + STOP_TIMEOUT;
            while Instant::now() < deadline {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ZHIWEN_SECANTUSD").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("secantusd-py");
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    // The repository root is two levels above this crate.
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-servers/venv/bin/secantusd-py");
    local.is_file().then_some(local)
}
