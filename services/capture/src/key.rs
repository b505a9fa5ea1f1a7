//! The evidence log's signing key: made on first use, kept in one file readable by its
//! owner only (never in the repository), shared by every process on the data directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use zhiwen_evidence::LogKey;

use crate::{CaptureError, Result};

/// Where the key of a data directory lives: `<data_dir>/evidence/log.key`.
pub fn key_path(data_dir: &Path) -> PathBuf {
    data_dir.join("evidence").join("log.key")
}

/// The log key at `path`, made (with owner-only permissions, atomically: another process
/// making one at the same moment wins and its key is used) when there is none yet.
pub fn load_or_create_key(path: &Path) -> Result<LogKey> {
    let err = |reason: String| CaptureError::Key { path: path.display().to_string(), reason };
    match std::fs::read_to_string(path) {
        Ok(text) => LogKey::from_secret_hex(&text).map_err(|e| err(format!("not a zhiwen log key: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path.parent().ok_or_else(|| err("the key path has no folder".into()))?;
            std::fs::create_dir_all(dir).map_err(|e| err(format!("cannot create its folder: {e}")))?;
            let key = LogKey::generate();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(mut file) => {
                    file.write_all(format!("{}\n", key.to_secret_hex()).as_bytes())
                        .and_then(|()| file.sync_all())
                        .map_err(|e| err(format!("cannot write: {e}")))?;
                    tracing::info!(path = %path.display(), public_key = %key.public_key_hex(), "evidence log key created");
                    Ok(key)
                }
                // Another process made it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create_key(path),
                Err(e) => Err(err(format!("cannot create: {e}"))),
            }
        }
        Err(e) => Err(err(format!("cannot read: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_read_back_owner_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = key_path(dir.path());
        let a = load_or_create_key(&path).expect("made");
        let b = load_or_create_key(&path).expect("read");
        assert_eq!(a.public_key_hex(), b.public_key_hex());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::write(&path, "not a key").expect("write");
        assert!(matches!(load_or_create_key(&path), Err(CaptureError::Key { .. })));
    }
}
