//! The relay behind `{agent}` in `check client`: a client that starts its agent
//! as a child process gets a relay command instead. The relay connects to the
//! checker over loopback TCP, proves itself with a one-time token, and copies
//! its stdin to the socket and the socket to its stdout, so the checker's
//! scripted agent talks to the client as if it were the child.
//!
//! An argument that is exactly `{agent}` becomes one word: the relay program's
//! path, which the client starts with no arguments; the program finds the
//! checker's address and token in [`ENV`], which the client passes on to its
//! children with the rest of its environment. So a client whose `--agent`
//! option takes one string gets a command it can run, whether it runs that
//! string as a path or splits it into words. `{agent}` inside a longer argument
//! (`--agent={agent}`) becomes the whole relay command with the address and
//! token as arguments, shell-quoted, for clients that do not pass their
//! environment on.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The checker's end: a loopback listener and the token a relay must present.
#[derive(Debug)]
pub(crate) struct Listener {
    listener: TcpListener,
    token: String,
}

fn token() -> String {
    let mut text = String::new();
    for round in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(round);
        hasher.write_u32(std::process::id());
        if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            hasher.write_u128(now.as_nanos());
        }
        text.push_str(&format!("{:016x}", hasher.finish()));
    }
    text
}

impl Listener {
    /// Listens on an ephemeral loopback port.
    pub(crate) async fn bind() -> io::Result<Listener> {
        Ok(Listener { listener: TcpListener::bind(("127.0.0.1", 0)).await?, token: token() })
    }

    /// The arguments a relay needs: the address and the token.
    pub(crate) fn relay_args(&self) -> io::Result<[String; 2]> {
        Ok([self.listener.local_addr()?.to_string(), self.token.clone()])
    }

    /// Accepts the first connection that presents the token.
    pub(crate) async fn accept(&self) -> io::Result<TcpStream> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            let presented = tokio::time::timeout(Duration::from_secs(5), async {
                while line.len() <= self.token.len() {
                    if stream.read(&mut byte).await? == 0 || byte[0] == b'\n' {
                        break;
                    }
                    line.push(byte[0]);
                }
                io::Result::Ok(())
            })
            .await;
            if matches!(presented, Ok(Ok(()))) && line == self.token.as_bytes() {
                return Ok(stream);
            }
        }
    }
}

/// The environment variable the checker sets for the client it starts:
/// `ADDRESS TOKEN`. A relay program started with no arguments reads it.
pub const ENV: &str = "AGENTPROTO_CHECK_RELAY";

/// The address and token in [`ENV`], if it is set and well formed.
pub fn from_env() -> Option<(String, String)> {
    let value = std::env::var(ENV).ok()?;
    let (address, token) = value.trim().split_once(' ')?;
    Some((address.to_owned(), token.to_owned()))
}

/// Runs a relay (the hidden `agentproto check relay ADDRESS TOKEN`): connects
/// to the checker and copies stdin → socket and socket → stdout. Returns when
/// the checker closes the connection.
pub async fn run(address: &str, token: &str) -> io::Result<()> {
    let mut stream = TcpStream::connect(address).await?;
    stream.set_nodelay(true)?;
    stream.write_all(format!("{token}\n").as_bytes()).await?;
    let (mut from_checker, mut to_checker) = stream.into_split();
    let upstream = async move {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut to_checker).await;
        let _ = to_checker.shutdown().await;
        // Stay until the checker is done answering.
        std::future::pending::<()>().await
    };
    let downstream = async move {
        let mut stdout = tokio::io::stdout();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = from_checker.read(&mut buffer).await?;
            if n == 0 {
                return io::Result::Ok(());
            }
            stdout.write_all(&buffer[..n]).await?;
            stdout.flush().await?;
        }
    };
    tokio::select! {
        result = downstream => result,
        () = upstream => Ok(()),
    }
}

/// Puts the relay into a client's command line: an argument that is exactly
/// `{agent}` becomes `program`, one word that relays when started with no
/// arguments and [`ENV`] set; `{agent}` inside a longer argument becomes
/// `command` (the relay with its address and token) as one shell-quoted
/// string. `None` when the command line has no placeholder.
pub(crate) fn substitute(command: &[String], program: &str, relay: &[String]) -> Option<Vec<String>> {
    if !command.iter().any(|arg| arg.contains("{agent}")) {
        return None;
    }
    let quoted = relay.iter().map(|arg| shell_quote(arg)).collect::<Vec<_>>().join(" ");
    let out = command
        .iter()
        .map(|arg| if arg == "{agent}" { program.to_owned() } else { arg.replace("{agent}", &quoted) })
        .collect();
    Some(out)
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_placeholder_is_one_word_and_an_embedded_one_is_quoted() {
        let relay = vec!["/bin/agentproto".to_owned(), "check".to_owned(), "relay".to_owned(), "a b".to_owned()];
        let command: Vec<String> = ["client", "--agent", "{agent}", "--cmd={agent}"].map(str::to_owned).to_vec();
        let out = substitute(&command, "/bin/agentproto", &relay).unwrap();
        assert_eq!(out, ["client", "--agent", "/bin/agentproto", "--cmd=/bin/agentproto check relay 'a b'"]);
        assert!(substitute(&["client".to_owned()], "/bin/agentproto", &relay).is_none());
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
