//! Reading documents and parameters from files, with errors that name the file.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Analysis, Fingerprinter, Params};

use crate::cli::{FormatArg, PipelineArgs};

/// Read a whole file (or stdin for `-`).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).context("cannot read standard input")?;
        return Ok(buf);
    }
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The parameters: defaults, overridden by a JSON file when given.
pub fn load_params(args: &PipelineArgs) -> Result<Params> {
    let Some(path) = &args.params else {
        return Ok(Params::default());
    };
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read parameters {}", path.display()))?;
    let params: Params =
        serde_json::from_str(&text).with_context(|| format!("invalid parameters in {}", path.display()))?;
    params.validate().with_context(|| format!("invalid parameters in {}", path.display()))?;
    Ok(params)
}

/// Build the fingerprinter for the pipeline options.
pub fn fingerprinter(args: &PipelineArgs) -> Result<Fingerprinter> {
    Ok(Fingerprinter::new(load_params(args)?)?)
}

/// Read and analyse one document; errors name the file.
pub fn analyze_file(fp: &Fingerprinter, path: &Path, args: &PipelineArgs) -> Result<Analysis> {
    let bytes = read_bytes(path)?;
    let format = match args.format {
        FormatArg::Auto => InputFormat::Auto,
        FormatArg::Html => InputFormat::Html,
        FormatArg::Text => InputFormat::Text,
    };
    fp.analyze_bytes(&bytes, format, args.charset.as_deref()).with_context(|| format!("{}", path.display()))
}
