//! `$HRL_HOME`: the one per-user directory where harness-rl keeps installed models
//! (`models/`), the completion cache (`cache/`) and fetched datasets.
//!
//! Resolution, first match wins: `$HRL_HOME` (non-empty), `$XDG_CACHE_HOME/harness-rl`,
//! `$HOME/.cache/harness-rl`, and `./.cache/harness-rl` when no home is known.

use std::ffi::OsString;
use std::path::PathBuf;

/// The harness-rl home directory (see the module doc for the order of precedence).
pub fn hrl_home() -> PathBuf {
    resolve(
        std::env::var_os("HRL_HOME"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

fn resolve(hrl: Option<OsString>, xdg: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(h) = set(hrl) {
        return h;
    }
    set(xdg)
        .or_else(|| set(home).map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("harness-rl")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Option<OsString> {
        Some(OsString::from(v))
    }

    #[test]
    fn precedence_and_empty_values() {
        assert_eq!(resolve(s("/h"), s("/x"), s("/u")), PathBuf::from("/h"));
        assert_eq!(
            resolve(s(""), s("/x"), s("/u")),
            PathBuf::from("/x/harness-rl")
        );
        assert_eq!(
            resolve(None, s(""), s("/u")),
            PathBuf::from("/u/.cache/harness-rl")
        );
        assert_eq!(
            resolve(None, None, None),
            PathBuf::from(".cache/harness-rl")
        );
        assert_eq!(
            resolve(None, None, s("")),
            PathBuf::from(".cache/harness-rl")
        );
    }
}
