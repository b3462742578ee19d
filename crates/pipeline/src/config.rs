//! Which detectors run: `--select`/`--ignore` and the thresholds of a config file.

use std::path::{Path, PathBuf};
use syslint_analyze::registry::{self, BuildError, Detector};

/// Why the detectors could not be built; errors in a config file name it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}: {error}", path.display())]
    InConfig { path: PathBuf, error: BuildError },
    #[error(transparent)]
    Detectors(#[from] BuildError),
}

/// The config file whose thresholds the detectors get, said in the report's notes (a
/// `./syslint.toml` picked up from the working directory changes findings: a report shared
/// without saying so would mislead). `None` when the defaults are used.
pub fn config_note(config: Option<&Path>) -> Option<String> {
    match (config, chosen(config)) {
        (Some(p), _) => Some(format!("thresholds from {} (--config)", p.display())),
        (None, Some(_)) => Some(
            "thresholds from ./syslint.toml, found in the working directory (--config FILE chooses another; without either, the defaults)"
                .to_string(),
        ),
        (None, None) => None,
    }
}

/// The config file used: `config`, or `./syslint.toml` when there is one.
fn chosen(config: Option<&Path>) -> Option<&Path> {
    let implicit = Path::new("syslint.toml");
    match config {
        Some(p) => Some(p),
        None if implicit.is_file() => Some(implicit),
        None => None,
    }
}

/// The detectors to run: `select`/`ignore` (names or codes) and the thresholds of `config`,
/// or of `./syslint.toml` when there is one.
pub fn detectors(
    select: &[String],
    ignore: &[String],
    config: Option<&Path>,
) -> Result<Vec<Box<dyn Detector>>, ConfigError> {
    let path = chosen(config);
    let table = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read { path: p.into(), source })?;
            text.parse::<toml::Table>()
                .map_err(|e| ConfigError::Parse { path: p.into(), message: e.to_string().trim().to_string() })?
        }
        None => toml::Table::new(),
    };
    registry::build(select, ignore, &table).map_err(|e| match path {
        Some(p) if e.in_config() => ConfigError::InConfig { path: p.into(), error: e },
        _ => ConfigError::Detectors(e),
    })
}
