//! Starts Debian's `redis-server` for tests.
//!
//! The binary is `$ZHIWEN_REDIS_SERVER`, else `redis-server` on `PATH`, else
//! `/usr/bin/redis-server` (where `scripts/setup-redis.sh` installs it). Each server
//! listens on a free loopback port, keeps nothing on disk unless asked
//! ([`RedisOptions::persistent`]), and is killed when the handle is dropped, so a test
//! never touches a Redis it did not start. [`RedisServer::stop`] and
//! [`RedisServer::start_again`] restart it on the same port for fault tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{free_port, unavailable};

/// redis-server starts in milliseconds; this bound only matters on a badly loaded machine.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How to start a server.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedisOptions {
    /// Start in Redis Cluster mode as a one-node cluster owning all 16384 slots. A
    /// one-node cluster still rejects commands whose keys span slots (CROSSSLOT), so
    /// it catches layouts that would break on a real cluster.
    pub cluster: bool,
    /// Keep data across [`RedisServer::stop`]/[`RedisServer::start_again`] with an
    /// append-only file (fsync always) in the server's private directory.
    pub persistent: bool,
}

/// A running `redis-server` child process on a free loopback port.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    bin: PathBuf,
    port: u16,
    dir: PathBuf,
    options: RedisOptions,
}

impl RedisServer {
    /// Start a plain server without persistence, or return `None` (skip) when
    /// redis-server is not installed and servers are not required. Panics with a
    /// clear message when required (`ZHIWEN_REQUIRE_SERVERS=1`) but missing.
    pub fn start() -> Option<RedisServer> {
        Self::start_with(RedisOptions::default())
    }

    /// Start a server with `options` (see [`RedisServer::start`]).
    pub fn start_with(options: RedisOptions) -> Option<RedisServer> {
        let Some(bin) = find_binary() else {
            return unavailable(
                "redis-server",
                "neither $ZHIWEN_REDIS_SERVER, redis-server on PATH nor /usr/bin/redis-server",
            );
        };
        let mut last_error = String::new();
        // A port can be taken between `free_port` and the bind: retry a few times.
        for _ in 0..3 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!("zhiwen-redis-{}-{port}", std::process::id()));
            let mut server = RedisServer { child: None, bin: bin.clone(), port, dir, options };
            match server.spawn() {
                Ok(()) => return Some(server),
                Err(why) => last_error = why,
            }
        }
        unavailable("redis-server", &last_error)
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The port it listens on (kept across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kill the server (as a crash would: no shutdown save).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again on the same port after [`RedisServer::stop`]. Panics when it
    /// does not come up (the test cannot go on).
    pub fn start_again(&mut self) {
        self.stop();
        let mut last_error = String::new();
        // The old socket may linger briefly; retry the bind.
        for _ in 0..20 {
            match self.spawn() {
                Ok(()) => return,
                Err(why) => last_error = why,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not restart on port {}: {last_error}", self.port);
    }

    /// Stop, then start again on the same port.
    pub fn restart(&mut self) {
        self.start_again();
    }

    /// Send one command and return its reply as text (simple strings, integers and
    /// bulk strings; errors as `Err`). Enough for test set-up and `FLUSHALL`.
    pub fn command(&self, args: &[&str]) -> Result<String, String> {
        send_command(self.port, args)
    }

    fn spawn(&mut self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let port = self.port.to_string();
        let mut cmd = Command::new(&self.bin);
        cmd.args(["--port", &port, "--bind", "127.0.0.1", "--save", ""]).arg("--dir").arg(&self.dir).args([
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            "--protected-mode",
            "yes",
        ]);
        if self.options.persistent {
            cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            cmd.args(["--appendonly", "no"]);
        }
        if self.options.cluster {
            cmd.args(["--cluster-enabled", "yes", "--cluster-config-file"]).arg(self.dir.join("nodes.conf"));
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.bin.display()))?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("redis-server exited at start-up with {status} (port {port})"));
            }
            if send_command(self.port, &["PING"]).is_ok_and(|r| r == "PONG") {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("redis-server did not answer on port {port} within {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child = Some(child);
        if self.options.cluster {
            self.make_cluster()?;
        }
        Ok(())
    }

    /// Assign every slot to this node (unless a persisted config already did) and wait
    /// until the cluster reports `cluster_state:ok`.
    fn make_cluster(&self) -> Result<(), String> {
        let info = send_command(self.port, &["CLUSTER", "INFO"])?;
        if !info.contains("cluster_state:ok") {
            send_command(self.port, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"])?;
        }
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if send_command(self.port, &["CLUSTER", "INFO"])?.contains("cluster_state:ok") {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("one-node cluster did not reach cluster_state:ok".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ZHIWEN_REDIS_SERVER").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("redis-server");
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let debian = Path::new("/usr/bin/redis-server");
    debian.is_file().then(|| debian.to_path_buf())
}

/// A minimal RESP client: one command, one reply, bounded by timeouts.
fn send_command(port: u16, args: &[&str]) -> Result<String, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_millis(500)).map_err(|e| format!("connect {addr}: {e}"))?;
    let timeout = Some(Duration::from_secs(10));
    stream.set_read_timeout(timeout).map_err(|e| e.to_string())?;
    stream.set_write_timeout(timeout).map_err(|e| e.to_string())?;
    let mut request = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        request.extend_from_slice(arg.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    stream.write_all(&request).map_err(|e| format!("write to {addr}: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| format!("read from {addr}: {e}"))?;
    let line = line.trim_end();
    match line.as_bytes().first() {
        Some(b'+') | Some(b':') => Ok(line[1..].to_string()),
        Some(b'-') => Err(line[1..].to_string()),
        Some(b'$') => {
            let len: i64 = line[1..].parse().map_err(|_| format!("bad reply {line:?}"))?;
            if len < 0 {
                return Ok(String::new());
            }
            let mut body = vec![0u8; len as usize + 2];
            reader.read_exact(&mut body).map_err(|e| format!("read from {addr}: {e}"))?;
            body.truncate(len as usize);
            Ok(String::from_utf8_lossy(&body).into_owned())
        }
        _ => Err(format!("unexpected reply {line:?}")),
    }
}
