//! The evidence package: one zip a rights holder hands to a platform or a court, and the
//! offline check of it.
//!
//! | file | what it is |
//! |---|---|
//! | the captured files (e.g. `capture/response.warc`, `capture/screenshot.png`) | what zhiwen saw |
//! | `capture.json` | the capture record: the captured files' SHA-256, the URL, the time; its exact bytes are the log's leaf |
//! | `proof.json` | the leaf's index, the tree size and the inclusion proof |
//! | `tree-head.json` | the signed tree head the proof leads to |
//! | `tree-head.txt`, `tree-head.tsr` | when the head is time-stamped: its signed text and the RFC 3161 token over it (DER), for `openssl ts -verify` |
//! | other files (the match report, a README) | listed with their SHA-256 in the manifest |
//! | `manifest.json` | every other file's name, size and SHA-256, and the match's details |
//! | `manifest.sig` | zhiwen's Ed25519 signature of `manifest.json`, by the key of the tree head |
//!
//! Changing any byte of any file breaks a check: a listed file's hash, the capture record's
//! hashes, the inclusion of the record in the signed root, or a signature (the manifest's
//! signature covers the files that are not in the log, such as the report).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};

use crate::head::{verify_signature, LogKey, SignedTreeHead};
use crate::log::{verify_consistency, verify_inclusion};
use crate::{sha256_hex, EvidenceError};

/// The names of the package's own files.
pub const CAPTURE: &str = "capture.json";
pub const PROOF: &str = "proof.json";
pub const TREE_HEAD: &str = "tree-head.json";
/// The head's signed text, when the head carries a time-stamp token.
pub const TREE_HEAD_TEXT: &str = "tree-head.txt";
/// The head's RFC 3161 time-stamp token, DER (`openssl ts -verify -token_in` reads it).
pub const TREE_HEAD_TSR: &str = "tree-head.tsr";
pub const MANIFEST: &str = "manifest.json";
pub const MANIFEST_SIG: &str = "manifest.sig";

/// One file's name, size and SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
}

impl FileEntry {
    pub fn of(name: &str, bytes: &[u8]) -> Self {
        FileEntry { name: name.to_owned(), bytes: bytes.len() as u64, sha256: sha256_hex(bytes) }
    }
}

/// What one capture preserved: the log's leaf.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureRecord {
    /// `zhiwen-capture/1`.
    pub format: String,
    pub capture_id: String,
    /// The match the capture backs, when it was made for one.
    pub match_id: Option<i64>,
    /// The page's URL as it was requested.
    pub url: String,
    /// When it was captured, RFC 3339 UTC.
    pub captured_at: String,
    /// The zhiwen version that made it.
    pub zhiwen_version: String,
    /// The captured files.
    pub files: Vec<FileEntry>,
    /// The page's id in zhiwen's store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<i64>,
    /// Why it was made: `first_match` (when the match was first recorded), `on_demand`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the WARC holds: `fetched` (the page fetched at capture time, with every
    /// header and the address connected to) or `stored` (the record zhiwen stored when it
    /// imported or last fetched the page, byte for byte).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The URL the redirects of the fetch ended on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// The address connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_ip: Option<String>,
    /// What could not be captured, and why (e.g. no browser for the screenshot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl CaptureRecord {
    pub const FORMAT: &'static str = "zhiwen-capture/1";

    /// The exact bytes appended to the log (and written as `capture.json`).
    pub fn to_leaf(&self) -> Vec<u8> {
        // Serialising a struct of strings, numbers and lists cannot fail.
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }
}

/// `proof.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofFile {
    pub leaf_index: u64,
    pub tree_size: u64,
    /// RFC 9162 inclusion proof, hex.
    pub inclusion_proof: String,
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `zhiwen-evidence-package/1`.
    pub format: String,
    /// Every file of the package but the manifest itself.
    pub files: Vec<FileEntry>,
    /// What the package is about (URLs, works, sections, scores, passages): shown, not checked.
    pub details: serde_json::Value,
}

impl Manifest {
    pub const FORMAT: &'static str = "zhiwen-evidence-package/1";
}

/// A file to put in a package.
#[derive(Clone, Debug)]
pub struct PackageFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Writes a package: the captured files, `capture.json` (`leaf`, exactly the bytes in the
/// log), the proof, the signed head (with, when it carries a time-stamp token, its signed
/// text and the token as files of their own), the extra files (report, README), the
/// manifest and its signature by `key` (the key that signed `head`).
#[allow(clippy::too_many_arguments)]
pub fn write_package<W: Write + Seek>(
    out: W,
    key: &LogKey,
    captured: &[PackageFile],
    leaf: &[u8],
    proof: &ProofFile,
    head: &SignedTreeHead,
    extra: &[PackageFile],
    details: serde_json::Value,
) -> Result<W, EvidenceError> {
    let zip_err = |e: zip::result::ZipError| EvidenceError::Package(e.to_string());
    let mut own = vec![
        PackageFile { name: CAPTURE.into(), bytes: leaf.to_vec() },
        PackageFile { name: PROOF.into(), bytes: to_json(proof) },
        PackageFile { name: TREE_HEAD.into(), bytes: to_json(head) },
    ];
    if let Some(token) = head.timestamp_token_der()? {
        own.push(PackageFile { name: TREE_HEAD_TEXT.into(), bytes: head.head.signed_text().into_bytes() });
        own.push(PackageFile { name: TREE_HEAD_TSR.into(), bytes: token });
    }
    let all: Vec<&PackageFile> = captured.iter().chain(own.iter()).chain(extra.iter()).collect();
    let mut seen = std::collections::HashSet::new();
    for f in &all {
        if f.name == MANIFEST || f.name == MANIFEST_SIG || !seen.insert(f.name.as_str()) {
            return Err(EvidenceError::Package(format!("file name {:?} used twice", f.name)));
        }
    }
    let manifest = Manifest {
        format: Manifest::FORMAT.into(),
        files: all.iter().map(|f| FileEntry::of(&f.name, &f.bytes)).collect(),
        details,
    };
    let manifest_bytes = to_json(&manifest);
    let signature = key.sign_bytes(&manifest_bytes).into_bytes();
    let own_last = [
        PackageFile { name: MANIFEST.into(), bytes: manifest_bytes },
        PackageFile { name: MANIFEST_SIG.into(), bytes: signature },
    ];
    let mut zip = zip::ZipWriter::new(out);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for f in all.iter().copied().chain(own_last.iter()) {
        zip.start_file(f.name.as_str(), options).map_err(zip_err)?;
        zip.write_all(&f.bytes)?;
    }
    zip.finish().map_err(zip_err)
}

/// Bounds on what reading a package may take (a package is outside data).
#[derive(Clone, Copy, Debug)]
pub struct PackageLimits {
    pub max_files: usize,
    /// Largest uncompressed file.
    pub max_file_bytes: u64,
    /// Largest of the small JSON files read into memory.
    pub max_json_bytes: u64,
}

impl Default for PackageLimits {
    fn default() -> Self {
        PackageLimits { max_files: 256, max_file_bytes: 1 << 30, max_json_bytes: 16 << 20 }
    }
}

/// A package as read: the JSON files parsed, every file's measured size and hash.
#[derive(Debug)]
pub struct Package {
    pub manifest: Manifest,
    /// `manifest.json` as read (what its signature covers).
    pub manifest_bytes: Vec<u8>,
    /// `manifest.sig`, hex.
    pub manifest_signature: String,
    pub capture_leaf: Vec<u8>,
    pub capture: CaptureRecord,
    pub proof: ProofFile,
    pub head: SignedTreeHead,
    /// `tree-head.txt`, when the package has it.
    pub head_text: Option<Vec<u8>>,
    /// `tree-head.tsr`, when the package has it.
    pub timestamp_token: Option<Vec<u8>>,
    /// Every file of the zip, measured: name -> (bytes, SHA-256).
    pub measured: BTreeMap<String, (u64, String)>,
}

/// The file names of a zip's central directory, in order, read record by record from
/// `start` (every record, also those a zip reader drops for sharing a name); at most
/// `max` of them.
fn central_directory_names<R: Read + Seek>(
    input: &mut R,
    start: u64,
    max: usize,
) -> Result<Vec<Vec<u8>>, EvidenceError> {
    const RECORD: [u8; 4] = [0x50, 0x4b, 0x01, 0x02];
    let bad = |m: String| EvidenceError::Package(m);
    let io = |e: std::io::Error| bad(format!("reading the zip's central directory: {e}"));
    input.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut names = Vec::new();
    loop {
        // The fixed part of a record (46 bytes), or the signature of what follows the
        // directory (its end record, 22 bytes at least).
        let mut head = [0u8; 46];
        let mut got = 0;
        while got < 4 {
            match input.read(&mut head[got..4]).map_err(io)? {
                0 => return Err(bad("the zip's central directory has no end".into())),
                n => got += n,
            }
        }
        if head[..4] != RECORD {
            return Ok(names);
        }
        if names.len() == max {
            return Err(bad(format!("more than {max} files")));
        }
        input.read_exact(&mut head[4..]).map_err(io)?;
        let field = |at: usize| u16::from_le_bytes([head[at], head[at + 1]]);
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let mut name = vec![0u8; usize::from(name_len)];
        input.read_exact(&mut name).map_err(io)?;
        input.seek(SeekFrom::Current(i64::from(extra_len) + i64::from(comment_len))).map_err(io)?;
        names.push(name);
    }
}

/// Reads and measures a package; streams large files through the hash, never holds them.
pub fn read_package<R: Read + Seek>(input: R, limits: PackageLimits) -> Result<Package, EvidenceError> {
    use sha2::Digest;
    let bad = |m: String| EvidenceError::Package(m);
    let mut zip = zip::ZipArchive::new(input).map_err(|e| bad(format!("not a zip file: {e}")))?;
    if zip.len() > limits.max_files {
        return Err(bad(format!("{} files, more than {}", zip.len(), limits.max_files)));
    }
    let mut measured = BTreeMap::new();
    let mut small: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).map_err(|e| bad(format!("file {i}: {e}")))?;
        let name = file.name().to_owned();
        let own =
            [MANIFEST, MANIFEST_SIG, CAPTURE, PROOF, TREE_HEAD, TREE_HEAD_TEXT, TREE_HEAD_TSR].contains(&name.as_str());
        let limit = if own { limits.max_json_bytes } else { limits.max_file_bytes };
        let mut hasher = sha2::Sha256::new();
        let mut kept = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let n = file.read(&mut buf).map_err(|e| bad(format!("{name}: {e}")))?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > limit {
                return Err(bad(format!("{name} is larger than {limit} bytes")));
            }
            hasher.update(&buf[..n]);
            if own {
                kept.extend_from_slice(&buf[..n]);
            }
        }
        if measured.insert(name.clone(), (total, hex::encode(hasher.finalize()))).is_some() {
            return Err(bad(format!("{name} appears twice")));
        }
        if own {
            small.insert(name, kept);
        }
    }
    // What the zip crate does not show: it keeps the last of the entries with one name,
    // so a second `capture/page.warc` (a forged one placed first, which some unzip tools
    // extract) would go unread. The central directory is counted here record by record,
    // and the files must not share data or follow anything but the zip itself.
    if zip.offset() != 0 {
        return Err(bad(format!("{} bytes before the zip's first entry", zip.offset())));
    }
    if zip.has_overlapping_files().map_err(|e| bad(format!("reading the zip: {e}")))? {
        return Err(bad("two files of the zip share their data".into()));
    }
    let (start, kept) = (zip.central_directory_start(), zip.len());
    let mut input = zip.into_inner();
    let names = central_directory_names(&mut input, start, limits.max_files)?;
    let mut distinct = std::collections::BTreeSet::new();
    if let Some(twice) = names.iter().find(|n| !distinct.insert(n.as_slice())) {
        return Err(bad(format!("{} appears twice", String::from_utf8_lossy(twice))));
    }
    if names.len() != kept {
        return Err(bad(format!("the central directory lists {} files, the zip reads {kept}", names.len())));
    }
    let mut take = |name: &str| small.remove(name).ok_or_else(|| bad(format!("{name} is missing")));
    let manifest_bytes = take(MANIFEST)?;
    let manifest_signature = String::from_utf8_lossy(&take(MANIFEST_SIG)?).into_owned();
    let capture_leaf = take(CAPTURE)?;
    let proof_bytes = take(PROOF)?;
    let head_bytes = take(TREE_HEAD)?;
    let head_text = small.remove(TREE_HEAD_TEXT);
    let timestamp_token = small.remove(TREE_HEAD_TSR);
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes).map_err(|e| bad(format!("{MANIFEST}: {e}")))?;
    let capture: CaptureRecord = serde_json::from_slice(&capture_leaf).map_err(|e| bad(format!("{CAPTURE}: {e}")))?;
    let proof: ProofFile = serde_json::from_slice(&proof_bytes).map_err(|e| bad(format!("{PROOF}: {e}")))?;
    let head: SignedTreeHead = serde_json::from_slice(&head_bytes).map_err(|e| bad(format!("{TREE_HEAD}: {e}")))?;
    // The small files are compared byte for byte with the form zhiwen writes, so that no
    // byte of them can change unnoticed (a signature covers the head's values, not its
    // JSON layout).
    if to_json(&proof) != proof_bytes || to_json(&head) != head_bytes {
        return Err(bad(format!("{PROOF} or {TREE_HEAD} is not as zhiwen wrote it")));
    }
    Ok(Package {
        manifest,
        manifest_bytes,
        manifest_signature,
        capture_leaf,
        capture,
        proof,
        head,
        head_text,
        timestamp_token,
        measured,
    })
}

/// One check of a verification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub what: String,
    pub ok: bool,
    pub detail: String,
}

/// Everything a verification checked.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Verification {
    pub checks: Vec<Check>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.ok)
    }

    /// One line: what holds and what does not.
    pub fn summary(&self) -> String {
        let failed: Vec<String> =
            self.checks.iter().filter(|c| !c.ok).map(|c| format!("{}: {}", c.what, c.detail)).collect();
        if failed.is_empty() {
            let held: Vec<String> = self.checks.iter().map(|c| format!("{} ({})", c.what, c.detail)).collect();
            format!("verified: {}", held.join("; "))
        } else {
            format!("NOT verified: {}", failed.join("; "))
        }
    }

    fn add(&mut self, what: &str, result: Result<String, String>) {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        self.checks.push(Check { what: what.into(), ok, detail });
    }
}

/// An earlier head the verifier holds, and the consistency proof from it to the package's.
#[derive(Clone, Debug)]
pub struct EarlierHead<'a> {
    pub head: &'a SignedTreeHead,
    pub consistency_proof: &'a str,
}

impl Package {
    /// Checks everything offline: the files against the manifest and the capture record,
    /// the record's inclusion in the signed root, the signature (by `public_key` when
    /// given), and that `earlier` (when given) is a prefix of this head's tree.
    pub fn verify(&self, public_key: Option<&str>, earlier: Option<EarlierHead<'_>>) -> Verification {
        let mut v = Verification::default();
        v.add(
            "manifest",
            verify_signature(&self.head.public_key, &self.manifest_bytes, &self.manifest_signature)
                .map(|()| "signed by the key of the tree head".to_owned())
                .map_err(|e| format!("manifest.sig: {e}")),
        );
        v.add("files", self.files_match(&self.manifest.files, true));
        v.add("capture", self.files_match(&self.capture.files, false));
        v.add(
            "signature",
            self.head
                .verify(public_key)
                .map(|()| format!("tree head of {} leaves signed by {}", self.head.head.size, self.head.public_key))
                .map_err(|e| e.to_string()),
        );
        v.add("inclusion", self.inclusion());
        if self.head.timestamp_token.is_some() || self.timestamp_token.is_some() || self.head_text.is_some() {
            v.add("timestamp", self.timestamp());
        }
        if let Some(earlier) = earlier {
            let checked = earlier
                .head
                .verify(Some(&self.head.public_key))
                .and_then(|()| {
                    verify_consistency(&earlier.head.head.root(), &self.head.head.root(), earlier.consistency_proof)
                })
                .map(|()| {
                    format!(
                        "the tree of {} leaves extends the earlier one of {}",
                        self.head.head.size, earlier.head.head.size
                    )
                })
                .map_err(|e| e.to_string());
            v.add("consistency", checked);
        }
        v
    }

    fn files_match(&self, listed: &[FileEntry], whole: bool) -> Result<String, String> {
        let mut problems = Vec::new();
        for f in listed {
            match self.measured.get(&f.name) {
                None => problems.push(format!("{} is missing", f.name)),
                Some((bytes, sha)) if *bytes != f.bytes || *sha != f.sha256 => {
                    problems.push(format!("{} was changed (SHA-256 {sha}, listed {})", f.name, f.sha256))
                }
                Some(_) => {}
            }
        }
        if whole {
            for name in self.measured.keys() {
                if name != MANIFEST && name != MANIFEST_SIG && !listed.iter().any(|f| &f.name == name) {
                    problems.push(format!("{name} is not in the manifest"));
                }
            }
        }
        if problems.is_empty() {
            Ok(format!("{} files match their SHA-256", listed.len()))
        } else {
            Err(problems.join(", "))
        }
    }

    /// The head's time-stamp token: the one in the head is `tree-head.tsr`, the signed
    /// text is `tree-head.txt`, the token is well formed and stamps SHA-256 of that text.
    /// The TSA's signature is left to OpenSSL (the detail says how).
    fn timestamp(&self) -> Result<String, String> {
        let in_head = self
            .head
            .timestamp_token_der()
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{TREE_HEAD_TSR} is in the package but the tree head carries no token"))?;
        let text = self.head.head.signed_text();
        if self.head_text.as_deref() != Some(text.as_bytes()) {
            return Err(format!("{TREE_HEAD_TEXT} is missing or is not the tree head's signed text"));
        }
        if self.timestamp_token.as_deref() != Some(in_head.as_slice()) {
            return Err(format!("{TREE_HEAD_TSR} is missing or is not the tree head's token"));
        }
        let token = crate::tsa::read_token(&in_head).map_err(|e| e.to_string())?;
        token.check_data(text.as_bytes()).map_err(|e| e.to_string())?;
        Ok(format!(
            "time-stamped by the TSA at {} (serial {}, policy {}); zhiwen checked that the token stamps the \
             tree head, not the TSA's signature: check it with: openssl ts -verify -data {TREE_HEAD_TEXT} -in \
             {TREE_HEAD_TSR} -token_in -CAfile <the TSA's CA>",
            token.gen_time, token.serial, token.policy
        ))
    }

    fn inclusion(&self) -> Result<String, String> {
        if self.proof.tree_size != self.head.head.size {
            return Err(format!(
                "the proof is for {} leaves, the head has {}",
                self.proof.tree_size, self.head.head.size
            ));
        }
        verify_inclusion(&self.head.head.root(), &self.capture_leaf, self.proof.leaf_index, &self.proof.inclusion_proof)
            .map(|()| format!("capture is leaf {} of the signed tree", self.proof.leaf_index))
            .map_err(|e| e.to_string())
    }
}

/// JSON of the package's own small files (pretty, so a reader can open them).
fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // Structs of strings, numbers and lists always serialise.
    serde_json::to_vec_pretty(v).unwrap_or_default()
}
