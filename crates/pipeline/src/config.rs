//! The config file and which detectors run: where `syslint.toml` is found (like ruff: the
//! nearest one above the input, else above the working directory, else the user's own; one
//! file, never merged), its top-level `select`, `ignore` and `fail-on`, and the thresholds of
//! its `[detector-name]` tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use syslint_analyze::registry::{self, BuildError, Detector};
use syslint_report::Severity;

/// The names a project config file has, in the order one directory is searched (ruff's
/// `.ruff.toml` before `ruff.toml`).
pub const FILE_NAMES: [&str; 2] = [".syslint.toml", "syslint.toml"];

/// Why the config could not be loaded or the detectors built; errors in a config file name it.
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

/// How the config file was chosen, said in the report's notes (a file picked up from a parent
/// directory changes findings: a report shared without saying so would mislead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `--config FILE`.
    Given,
    /// The nearest `syslint.toml`/`.syslint.toml` in this directory or one above it (the first
    /// input's, or the working directory).
    Above(PathBuf),
    /// The user-level file (`$XDG_CONFIG_HOME/syslint/syslint.toml`, `~/.config/...`): no
    /// project file was found.
    User,
}

/// The config file used and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub found: Found,
}

/// Where to look: `--config`, `--isolated`, and the directories to walk up from, nearest
/// first (the first input's directory, then the working directory).
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub explicit: Option<PathBuf>,
    pub isolated: bool,
    pub start: Vec<PathBuf>,
}

impl Discovery {
    /// For `analyze` and `diff`: above the first input (its directory; a directory of `-ff`
    /// files itself), then above the working directory (ruff's fallback for files outside any
    /// project); stdin (`-`) has only the working directory.
    pub fn for_inputs(explicit: Option<&Path>, isolated: bool, inputs: &[PathBuf]) -> Discovery {
        let mut start = Vec::new();
        if let Some(first) = inputs.first().filter(|p| p.as_os_str() != "-") {
            let dir = if first.is_dir() { Some(first.as_path()) } else { first.parent() };
            let dir = dir.filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            start.extend(std::path::absolute(dir).ok());
        }
        start.extend(std::env::current_dir().ok());
        Discovery { explicit: explicit.map(Path::to_path_buf), isolated, start }
    }

    /// For `trace`: above the working directory.
    pub fn for_cwd(explicit: Option<&Path>, isolated: bool) -> Discovery {
        Discovery {
            explicit: explicit.map(Path::to_path_buf),
            isolated,
            start: std::env::current_dir().into_iter().collect(),
        }
    }

    /// The config file to use, if any: `--config`; none with `--isolated`; else the nearest
    /// project file above each start directory in turn; else the user-level file.
    pub fn find(&self) -> Option<ConfigFile> {
        self.find_with(user_file(std::env::var_os("XDG_CONFIG_HOME"), std::env::var_os("HOME")))
    }

    fn find_with(&self, user: Option<PathBuf>) -> Option<ConfigFile> {
        if let Some(p) = &self.explicit {
            return Some(ConfigFile { path: p.clone(), found: Found::Given });
        }
        if self.isolated {
            return None;
        }
        for start in &self.start {
            for dir in start.ancestors() {
                for name in FILE_NAMES {
                    let p = dir.join(name);
                    if p.is_file() {
                        return Some(ConfigFile { path: p, found: Found::Above(start.clone()) });
                    }
                }
            }
        }
        user.filter(|p| p.is_file()).map(|path| ConfigFile { path, found: Found::User })
    }
}

/// The user-level config file: `$XDG_CONFIG_HOME/syslint/syslint.toml` when that variable is
/// an absolute path (the XDG rule: a relative one is ignored), else
/// `$HOME/.config/syslint/syslint.toml`.
pub fn user_file(xdg: Option<std::ffi::OsString>, home: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let base = match xdg.map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(x) => x,
        None => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".config"),
    };
    Some(base.join("syslint").join("syslint.toml"))
}

/// A loaded config: the file it came from (none: the defaults), its top-level keys and its
/// detector tables.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub file: Option<ConfigFile>,
    /// `select = [...]`: the detectors to run (names or codes), as `--select`.
    pub select: Option<Vec<String>>,
    /// `ignore = [...]`, as `--ignore`.
    pub ignore: Option<Vec<String>>,
    /// `fail-on = "warning"`, as `--fail-on`.
    pub fail_on: Option<Severity>,
    /// The `[detector-name]` tables.
    pub thresholds: toml::Table,
    /// The `[agent]` table: `syslint agent`'s options (its flags override them).
    pub agent: Option<AgentSection>,
}

/// `[agent]`: what `syslint agent` watches, how often, where it sends what it found; the
/// keys are its long flags' names. Durations stay text (`"2s"`), parsed as the flags are.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct AgentSection {
    pub pid: Vec<u32>,
    pub comm: Vec<String>,
    pub cgroup: Vec<String>,
    pub window: Option<String>,
    pub every: Option<String>,
    pub metrics_listen: Option<String>,
    pub otlp_endpoint: Option<String>,
    pub otlp_header: Vec<String>,
    pub otlp_ca: Option<String>,
    pub otlp_client_cert: Option<String>,
    pub otlp_client_key: Option<String>,
    pub stacks: Option<String>,
    pub count_between: Option<bool>,
    pub pod_logs: Option<String>,
    pub cpu_budget: Option<String>,
    pub memory_budget: Option<String>,
    pub window_records: Option<u64>,
}

impl Config {
    /// The config `d` finds, loaded; the defaults when there is none.
    pub fn load(d: &Discovery) -> Result<Config, ConfigError> {
        match d.find() {
            Some(f) => Config::read(f),
            None => Ok(Config::default()),
        }
    }

    /// Read and check one config file.
    pub fn read(file: ConfigFile) -> Result<Config, ConfigError> {
        let p = &file.path;
        let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read { path: p.clone(), source })?;
        let mut c = Config::parse(&text).map_err(|message| ConfigError::Parse { path: p.clone(), message })?;
        c.file = Some(file);
        Ok(c)
    }

    /// Parse a config file's text; the error says where (line and column) and what.
    pub fn parse(text: &str) -> Result<Config, String> {
        let top: BTreeMap<String, toml::Spanned<toml::Value>> =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        let mut c = Config::default();
        for (key, v) in top {
            let at = |what: &str| format!("{}: {key}: {what}", position(text, v.span().start));
            match key.as_str() {
                "select" | "ignore" => {
                    let list = names(v.get_ref()).ok_or_else(|| {
                        at(&format!(
                            "expected a list of detector names or codes, like {key} = [\"busy-poll\", \"SL004\"]"
                        ))
                    })?;
                    if key == "select" {
                        c.select = Some(list);
                    } else {
                        c.ignore = Some(list);
                    }
                }
                "fail-on" => {
                    let level = v.get_ref().as_str().and_then(|s| s.parse::<Severity>().ok());
                    c.fail_on = Some(level.ok_or_else(|| at("expected \"info\", \"warning\" or \"error\""))?);
                }
                "agent" => {
                    let section: AgentSection = v
                        .get_ref()
                        .clone()
                        .try_into()
                        .map_err(|e: toml::de::Error| at(&format!("{} (the [agent] keys: pid, comm, cgroup, window, every, metrics-listen, otlp-endpoint, otlp-header, stacks, count-between, pod-logs)", e.message().trim())))?;
                    c.agent = Some(section);
                }
                _ if v.get_ref().is_table() => {
                    c.thresholds.insert(key.clone(), v.into_inner());
                }
                _ => return Err(at(
                    "unknown key (top-level keys: select, ignore, fail-on; thresholds go in a [detector-name] table)",
                )),
            }
        }
        Ok(c)
    }

    /// The detectors to run: `select`/`ignore` from the command line where given (each flag
    /// replaces the file's key of the same name), else from the file; thresholds from the file.
    pub fn detectors(&self, select: &[String], ignore: &[String]) -> Result<Vec<Box<dyn Detector>>, ConfigError> {
        let from_file = |flag: &[String], key: &Option<Vec<String>>| flag.is_empty() && key.is_some();
        let select_in_file = from_file(select, &self.select);
        let ignore_in_file = from_file(ignore, &self.ignore);
        let select = if select_in_file { self.select.as_deref().unwrap_or_default() } else { select };
        let ignore = if ignore_in_file { self.ignore.as_deref().unwrap_or_default() } else { ignore };
        registry::build(select, ignore, &self.thresholds).map_err(|e| match &self.file {
            // an unknown detector named in the file's select/ignore is the file's error
            Some(f) if e.in_config() || select_in_file || ignore_in_file => {
                ConfigError::InConfig { path: f.path.clone(), error: e }
            }
            _ => ConfigError::Detectors(e),
        })
    }

    /// The note the report carries: which file set the config, and how it was found. `None`
    /// when the defaults are used.
    pub fn note(&self) -> Option<String> {
        let f = self.file.as_ref()?;
        let p = f.path.display();
        Some(match &f.found {
            Found::Given => format!("config from {p} (--config)"),
            Found::Above(from) => format!(
                "config from {p}, the nearest above {} (--config FILE chooses another, --isolated uses none)",
                from.display()
            ),
            Found::User => format!(
                "config from {p}, the user-level file (no syslint.toml above the input or the working directory; --isolated uses none)"
            ),
        })
    }
}

fn names(v: &toml::Value) -> Option<Vec<String>> {
    v.as_array()?.iter().map(|x| x.as_str().map(str::to_string)).collect()
}

/// `line L, column C` of a byte offset (1-based, as TOML's own errors say it).
pub fn position(text: &str, offset: usize) -> String {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}")
}

/// The detectors `select`/`ignore` name with the thresholds of `config` (a file given by
/// path; none: the defaults). No discovery: for tests and embedders that want exactly this.
pub fn detectors(
    select: &[String],
    ignore: &[String],
    config: Option<&Path>,
) -> Result<Vec<Box<dyn Detector>>, ConfigError> {
    load(config)?.detectors(select, ignore)
}

/// The config in `config` (`--config FILE`), or the defaults.
pub fn load(config: Option<&Path>) -> Result<Config, ConfigError> {
    match config {
        Some(p) => Config::read(ConfigFile { path: p.into(), found: Found::Given }),
        None => Ok(Config::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_table_is_read_and_its_errors_say_where() {
        let c = Config::parse(
            "[agent]\ncomm = [\"php-fpm\"]\nwindow = \"5s\"\notlp-endpoint = \"http://127.0.0.1:4318\"\n",
        )
        .unwrap();
        let a = c.agent.expect("the [agent] table");
        assert_eq!(
            (a.comm, a.window.as_deref(), a.otlp_endpoint.as_deref()),
            (vec!["php-fpm".to_string()], Some("5s"), Some("http://127.0.0.1:4318"))
        );
        assert!(c.thresholds.is_empty(), "not a detector's thresholds");
        let e = Config::parse("select = [\"busy-poll\"]\n[agent]\nwindows = \"5s\"\n").unwrap_err();
        assert!(e.starts_with("line 2, column 1: agent: unknown field `windows`"), "{e}");
        let e = Config::parse("[agent]\ncomm = \"php\"\n").unwrap_err();
        assert!(e.contains("agent: invalid type"), "{e}");
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("syslint-config-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&d).ok();
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_nearest_file_wins_then_the_next_start_then_the_user_file() {
        let d = tmp("walk");
        let deep = d.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        let user = d.join("user.toml");
        std::fs::write(&user, "").unwrap();
        let disc = |start: Vec<PathBuf>| Discovery { explicit: None, isolated: false, start };
        // nothing above: the user file
        let f = disc(vec![deep.clone()]).find_with(Some(user.clone())).unwrap();
        assert_eq!((f.path, f.found), (user.clone(), Found::User));
        std::fs::write(d.join("a/syslint.toml"), "").unwrap();
        let f = disc(vec![deep.clone()]).find_with(Some(user.clone())).unwrap();
        assert_eq!(f.path, d.join("a/syslint.toml"));
        assert_eq!(f.found, Found::Above(deep.clone()));
        // nearer wins, and the hidden name wins in one directory
        std::fs::write(d.join("a/b/syslint.toml"), "").unwrap();
        std::fs::write(d.join("a/b/.syslint.toml"), "").unwrap();
        assert_eq!(disc(vec![deep.clone()]).find_with(None).unwrap().path, d.join("a/b/.syslint.toml"));
        // a second start is searched only when the first finds nothing
        let other = d.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("syslint.toml"), "").unwrap();
        assert_eq!(disc(vec![deep.clone(), other.clone()]).find_with(None).unwrap().path, d.join("a/b/.syslint.toml"));
        // --isolated: nothing, not even the user file; --config: that file
        let iso = Discovery { explicit: None, isolated: true, start: vec![deep.clone()] };
        assert_eq!(iso.find_with(Some(user.clone())), None);
        let given = Discovery { explicit: Some(user.clone()), isolated: false, start: vec![deep] };
        assert_eq!(given.find_with(None).unwrap().found, Found::Given);
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn the_user_file_follows_xdg() {
        let f = |x: Option<&str>, h: Option<&str>| user_file(x.map(Into::into), h.map(Into::into));
        assert_eq!(f(Some("/x"), Some("/h")), Some(PathBuf::from("/x/syslint/syslint.toml")));
        // a relative XDG_CONFIG_HOME is ignored (XDG base directory spec)
        assert_eq!(f(Some("rel"), Some("/h")), Some(PathBuf::from("/h/.config/syslint/syslint.toml")));
        assert_eq!(f(Some(""), Some("/h")), Some(PathBuf::from("/h/.config/syslint/syslint.toml")));
        assert_eq!(f(None, None), None);
    }

    #[test]
    fn top_level_keys_and_their_errors() {
        let c = Config::parse(
            "select = [\"busy-poll\", \"SL004\"]\nignore = []\nfail-on = \"error\"\n[busy-poll]\nmin_calls = 3\n",
        )
        .unwrap();
        assert_eq!(c.select.as_deref(), Some(&["busy-poll".to_string(), "SL004".to_string()][..]));
        assert_eq!(c.ignore.as_deref(), Some(&[][..]));
        assert_eq!(c.fail_on, Some(Severity::Error));
        assert!(c.thresholds.contains_key("busy-poll"));
        for (text, says) in [
            ("\nfail-on = \"loud\"\n", "line 2, column 11: fail-on: expected"),
            ("select = \"busy-poll\"\n", "line 1, column 10: select: expected a list"),
            ("ignore = [1]\n", "line 1, column 10: ignore"),
            ("fail_on = \"error\"\n", "line 1, column 11: fail_on: unknown key"),
            ("[busy-poll\n", "line 1"),
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn flags_replace_the_file_keys() {
        let c = Config::parse("select = [\"busy-poll\"]\n").unwrap();
        assert_eq!(c.detectors(&[], &[]).unwrap().len(), 1);
        assert!(c.detectors(&["small-io".into(), "busy-poll".into()], &[]).unwrap().len() == 2);
        let c = Config::parse("select = [\"no-such\"]\n").unwrap();
        assert!(c.detectors(&[], &[]).is_err());
    }
}
