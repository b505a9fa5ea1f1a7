//! Which backend to open, and where.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Default embedded data directory, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = ".zhiwen-data";
/// Default MongoDB database name.
pub const DEFAULT_MONGO_DATABASE: &str = "zhiwen";

/// Where the stores live. The CLI builds it from `--store embedded|mongodb`,
/// `--data-dir`/`ZHIWEN_DATA_DIR`, `--mongo-uri`/`ZHIWEN_MONGO_URI` and
/// `--mongo-database`/`ZHIWEN_MONGO_DATABASE` (file < environment < flags).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum StoreConfig {
    /// SQLite (bundled, WAL) in one file `zhiwen.db` under `data_dir`. Needs no server.
    Embedded {
        /// Directory of the database file (created if missing).
        data_dir: PathBuf,
    },
    /// MongoDB 6+ (or a wire-compatible server).
    Mongo {
        /// Connection string, e.g. `mongodb://127.0.0.1:27017`.
        uri: String,
        /// Database name.
        database: String,
    },
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig::Embedded { data_dir: PathBuf::from(DEFAULT_DATA_DIR) }
    }
}

impl StoreConfig {
    /// The embedded store in `data_dir`.
    pub fn embedded(data_dir: impl Into<PathBuf>) -> Self {
        StoreConfig::Embedded { data_dir: data_dir.into() }
    }

    /// MongoDB at `uri`, database `database`.
    pub fn mongo(uri: impl Into<String>, database: impl Into<String>) -> Self {
        StoreConfig::Mongo { uri: uri.into(), database: database.into() }
    }

    /// The backend's name (`embedded` or `mongodb`), as `--store` spells it.
    pub fn backend_name(&self) -> &'static str {
        match self {
            StoreConfig::Embedded { .. } => "embedded",
            StoreConfig::Mongo { .. } => "mongodb",
        }
    }
}
