//! Which backend to open, and where.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Default embedded data directory, relative to the working directory.
pub const DEFAULT_DATA_DIR: &str = ".zhiwen-data";
/// Default MongoDB database name.
pub const DEFAULT_MONGO_DATABASE: &str = "zhiwen";
/// Most read-only connections the embedded store opens ([`StoreConfig::with_readers`]).
pub(crate) const MAX_SQLITE_READERS: usize = 256;

/// Where the stores live, and how the embedded one reads. The CLI builds it from
/// `--store embedded|mongodb`, `--data-dir`/`ZHIWEN_DATA_DIR`,
/// `--sqlite-readers`/`ZHIWEN_SQLITE_READERS`, `--mongo-uri`/`ZHIWEN_MONGO_URI` and
/// `--mongo-database`/`ZHIWEN_MONGO_DATABASE` (file < environment < flags); the store
/// itself reads no environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum StoreConfig {
    /// SQLite (bundled, WAL) in one file `zhiwen.db` under `data_dir`. Needs no server.
    Embedded {
        /// Directory of the database file (created if missing).
        data_dir: PathBuf,
        /// Read-only connections beside the one writer, at most 256: `None` for the
        /// default (two per core, 4 to 16), `Some(0)` to send every read through the
        /// writer connection. Set with [`StoreConfig::with_readers`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        readers: Option<usize>,
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
        StoreConfig::embedded(DEFAULT_DATA_DIR)
    }
}

impl StoreConfig {
    /// The embedded store in `data_dir`, with the default number of readers.
    pub fn embedded(data_dir: impl Into<PathBuf>) -> Self {
        StoreConfig::Embedded { data_dir: data_dir.into(), readers: None }
    }

    /// The same configuration with `readers` read-only connections for the embedded
    /// store (`0`: reads share the writer connection); no effect on MongoDB. More than
    /// 256 is refused when the store opens.
    pub fn with_readers(self, readers: usize) -> Self {
        match self {
            StoreConfig::Embedded { data_dir, .. } => StoreConfig::Embedded { data_dir, readers: Some(readers) },
            mongo => mongo,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_are_an_embedded_setting_and_optional_in_files() {
        let c = StoreConfig::embedded("d").with_readers(0);
        assert_eq!(c, StoreConfig::Embedded { data_dir: "d".into(), readers: Some(0) });
        assert_eq!(StoreConfig::mongo("mongodb://h", "db").with_readers(3), StoreConfig::mongo("mongodb://h", "db"));
        let json = serde_json::to_string(&StoreConfig::embedded("d")).unwrap();
        assert_eq!(json, r#"{"backend":"embedded","data_dir":"d"}"#);
        assert_eq!(serde_json::from_str::<StoreConfig>(&json).unwrap(), StoreConfig::embedded("d"));
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<StoreConfig>(&json).unwrap(), c);
    }
}
