//! The HTTP listener's bearer token: a secret in a 0600 file in hookd's state folder
//! (`$XDG_STATE_HOME/hookd`, else `~/.local/state/hookd`), made on first use from the kernel's random
//! bytes and reused after, so that an agent's settings and the `HOOKD_TOKEN` its shell exported keep
//! working across daemon restarts, logouts and reboots. (It lived beside the socket, in
//! `$XDG_RUNTIME_DIR`, which a logout or a reboot erases: every start after one made a new token, and
//! the agents' one was refused.)
//!
//! Any local user can reach a loopback port; only the daemon's user can read the token file (its folder
//! is 0700, the file 0600), so the token is what tells the user's agents from everyone else.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

/// The token file's name, in hookd's state folder.
pub const FILE_NAME: &str = "http-token";

/// Random bytes in a new token: 256 bits, written as 64 hex digits (plain ASCII, safe in a header and in
/// a shell variable).
const RANDOM_BYTES: usize = 32;

/// The shortest token accepted from an existing file: a hand-written one must still be hard to guess.
const MIN_LEN: usize = 32;

/// Where the token lives: in hookd's state folder, which survives a reboot; one token for the user's
/// daemons. An absolute path, since it is shown (by `status`, and in the `export` line of
/// `--print-settings --http`) to be used from any folder.
pub fn default_path() -> PathBuf {
    in_state_dir(&crate::paths::state_dir())
}

/// The token's path in the state folder `state_dir`.
fn in_state_dir(state_dir: &Path) -> PathBuf {
    std::path::absolute(state_dir)
        .unwrap_or_else(|_| state_dir.to_path_buf())
        .join(FILE_NAME)
}

/// The secret a request must present as `Authorization: Bearer <token>`.
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    /// Never the secret itself, not even in a debug log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// Reads the token at `path`, or makes one there when there is no file yet. A file that others could
    /// read (or that is not ours) is refused: its token may be known to them.
    pub fn load_or_create(path: &Path) -> Result<Token, String> {
        check_folder(path)?;
        match Token::read(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => match Token::create(path) {
                Ok(token) => {
                    tracing::info!(token_file = %path.display(), "made a new http token");
                    Ok(token)
                }
                // Made by someone else between the two steps: take theirs, with the same checks.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    Token::read(path).map_err(|e| describe(path, &e))?
                }
                Err(e) => Err(format!(
                    "cannot create the http token file {}: {e}",
                    path.display()
                )),
            },
            Err(e) => Err(describe(path, &e)),
            Ok(result) => result,
        }
    }

    /// Whether `presented` is the token, in time that does not depend on where they differ: `subtle`
    /// refuses a different length at once (the length is no secret: every token hookd makes has the
    /// same) and otherwise looks at every byte behind an optimization barrier.
    pub fn matches(&self, presented: &[u8]) -> bool {
        self.0.as_slice().ct_eq(presented).into()
    }

    /// Whether two tokens are the same secret (to tell a renewed token file from the one in force).
    pub fn same_as(&self, other: &Token) -> bool {
        self.matches(&other.0)
    }

    /// `Err` for I/O (NotFound included); `Ok(Err)` for a file that is there but refused.
    fn read(path: &Path) -> std::io::Result<Result<Token, String>> {
        let shown = path.display();
        // O_NOFOLLOW: a symlink planted in the token's place is refused, not followed. O_NONBLOCK: a FIFO
        // planted there opens at once (and is refused below as not a regular file) instead of blocking
        // the daemon until someone writes to it.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)?;
        let metadata = file.metadata()?;
        let uid = nix::unistd::getuid().as_raw();
        if !metadata.is_file() {
            return Ok(Err(format!(
                "the http token file {shown} is not a regular file; remove it and a new one is made"
            )));
        }
        if metadata.uid() != uid {
            return Ok(Err(format!(
                "refused the http token file {shown}: it belongs to uid {}, not to this user (uid {uid}); remove it and a new one is made",
                metadata.uid()
            )));
        }
        let mode = metadata.mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Ok(Err(format!(
                "refused the http token file {shown}: group or others have access to it (mode {mode:04o}), so its token may be known to them; remove it (a new one is made) or fix it with chmod 600"
            )));
        }
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        let token = text.trim_ascii().to_vec();
        if token.len() < MIN_LEN || !token.iter().all(|b| b.is_ascii_graphic()) {
            return Ok(Err(format!(
                "the http token file {shown} does not hold a usable token (at least {MIN_LEN} printable characters, no spaces); remove it and a new one is made"
            )));
        }
        Ok(Ok(Token(token)))
    }

    fn create(path: &Path) -> std::io::Result<Token> {
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)?;
        }
        let mut random = [0u8; RANDOM_BYTES];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
        let token: String = random.iter().map(|b| format!("{b:02x}")).collect();
        // create_new with mode 0600: the file is private from its first instant, and never replaces one.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(path)?;
        file.write_all(format!("{token}\n").as_bytes())?;
        file.sync_all()?;
        Ok(Token(token.into_bytes()))
    }
}

/// The token's folder must be this user's alone: in a folder others can write to (`XDG_STATE_HOME=/tmp`
/// puts the token in `/tmp/hookd`, which another user may have made first), they could plant the file,
/// or remove it and watch a new one being made. A missing folder is made 0700.
fn check_folder(path: &Path) -> Result<(), String> {
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let metadata = match std::fs::metadata(folder) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect {}: {e}", folder.display())),
    };
    let uid = nix::unistd::getuid().as_raw();
    let mode = metadata.mode() & 0o7777;
    if metadata.uid() != uid || mode & 0o022 != 0 {
        return Err(format!(
            "the http token would be kept in {}, a folder {} (mode {mode:04o}): others could replace it there; \
             make it yours alone (chmod 700), or point $XDG_STATE_HOME at a private folder",
            folder.display(),
            if metadata.uid() != uid {
                format!("that belongs to uid {}", metadata.uid())
            } else {
                "that others can write to".to_string()
            }
        ));
    }
    Ok(())
}

fn describe(path: &Path, e: &std::io::Error) -> String {
    format!("cannot read the http token file {}: {e}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_token_path_is_absolute_in_the_state_folder() {
        let path = in_state_dir(Path::new("state/hookd"));
        assert!(path.is_absolute(), "{path:?}");
        assert!(path.ends_with("state/hookd/http-token"), "{path:?}");
        assert_eq!(
            in_state_dir(Path::new("/home/me/.local/state/hookd")),
            Path::new("/home/me/.local/state/hookd/http-token")
        );
    }

    #[test]
    fn a_missing_folder_is_made_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/hookd").join(FILE_NAME);
        Token::load_or_create(&path).unwrap();
        for folder in [dir.path().join("state"), dir.path().join("state/hookd")] {
            let mode = std::fs::metadata(&folder).unwrap().mode() & 0o777;
            assert_eq!(mode, 0o700, "{folder:?}");
        }
    }

    #[test]
    fn a_token_is_made_private_then_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run").join(FILE_NAME);
        let made = Token::load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let again = Token::load_or_create(&path).unwrap();
        assert_eq!(made.0, again.0);
        assert_eq!(made.0.len(), 2 * RANDOM_BYTES);
        assert!(made.matches(&again.0));
        assert!(!made.matches(b"nope"));
        let mut wrong = made.0.clone();
        wrong[10] ^= 1;
        assert!(!made.matches(&wrong));
    }

    #[test]
    fn a_token_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        Token::load_or_create(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let error = Token::load_or_create(&path).unwrap_err();
        assert!(error.contains("mode 0640"), "{error}");
    }

    #[test]
    fn a_fifo_in_the_tokens_place_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let error = Token::load_or_create(&path).unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
    }

    #[test]
    fn a_folder_others_can_write_to_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let error = Token::load_or_create(&dir.path().join(FILE_NAME)).unwrap_err();
        assert!(error.contains("others could replace it"), "{error}");
        assert!(!dir.path().join(FILE_NAME).exists());
    }

    #[test]
    fn a_short_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "short\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = Token::load_or_create(&path).unwrap_err();
        assert!(error.contains("usable token"), "{error}");
    }
}
