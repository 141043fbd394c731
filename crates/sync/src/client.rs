//! The client side: a server child process and the requests sent to it.

use std::collections::HashMap;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

use agentproto_process::{Group, Signal};

use crate::frame::{FrameError, FrameReader, FrameWriter, Limits, MessageType};
use crate::{lossy, panic_text, ProtocolError};

/// A callback the server may call mid-request: it reads the call's payload and
/// writes its answer into the (cleared, reused) buffer, or fails with the text
/// sent back in a `CallError`.
type Callback = Box<dyn FnMut(&[u8], &mut Vec<u8>) -> Result<(), String> + Send>;

/// A request that did not produce a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server process could not be started.
    #[error("could not start the server process")]
    Spawn(#[source] io::Error),
    /// The server answered with an `Error` tuple; this is its text.
    #[error("server error: {0}")]
    Server(String),
    /// The server sent something the protocol does not allow here. The
    /// channel is closed and the child ended: the stream cannot be trusted.
    #[error("protocol error")]
    Protocol(#[source] ProtocolError),
    /// Reading or writing the pipes failed for another reason than the
    /// child going away. The channel is closed and the child ended.
    #[error("i/o error on the channel")]
    Io(#[source] io::Error),
    /// The server closed its end of the pipes (it exited, crashed or was
    /// killed); the child has been reaped and this is its status.
    #[error("server process exited ({0})")]
    ChildExited(ExitStatus),
    /// The channel was closed before this request.
    #[error("channel is closed")]
    Closed,
    /// The params of a JSON request could not be encoded.
    #[cfg(feature = "json")]
    #[error("could not encode the params of `{method}` as JSON")]
    EncodeParams {
        /// The method.
        method: String,
        /// What serde_json reported.
        #[source]
        source: serde_json::Error,
    },
    /// The result of a JSON request is not the JSON expected.
    #[cfg(feature = "json")]
    #[error("could not decode the result of `{method}`")]
    DecodeResult {
        /// The method.
        method: String,
        /// What serde_json reported.
        #[source]
        source: serde_json::Error,
    },
}

/// How a [`Client`] starts its server.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    limits: Limits,
    die_with_parent: bool,
}

impl ClientOptions {
    /// The largest name and payload accepted from the server.
    pub fn limits(mut self, limits: Limits) -> ClientOptions {
        self.limits = limits;
        self
    }

    /// On Linux, has the kernel kill the server when the thread calling
    /// [`Client::spawn`] ends, which also covers a SIGKILL of this process
    /// (see `agentproto_process::die_with_parent`: it follows the spawning
    /// *thread*, so use it only when that thread outlives the client). Off by
    /// default.
    pub fn die_with_parent(mut self, enabled: bool) -> ClientOptions {
        self.die_with_parent = enabled;
        self
    }
}

/// Ends the server from any thread, e.g. a watchdog enforcing a deadline on a
/// request that blocks: the request then fails with
/// [`ClientError::ChildExited`]. Once the client has reaped the child, killing
/// does nothing (the pid may belong to someone else by then).
#[derive(Debug, Clone)]
pub struct Killer {
    leader: u32,
    reaped: Arc<Mutex<bool>>,
}

impl Killer {
    /// Sends SIGKILL to the server's process group, unless it has been reaped.
    pub fn kill(&self) {
        let reaped = lock(&self.reaped);
        if !*reaped {
            let _ = agentproto_process::signal_group(self.leader, Signal::Kill);
        }
    }
}

fn lock(flag: &Mutex<bool>) -> MutexGuard<'_, bool> {
    flag.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A server child process and the channel to it.
///
/// The child runs in a process group of its own with piped stdin and stdout
/// and the caller's stderr. [`Client::close`], dropping the client, and any
/// failure that leaves the channel unusable end the whole group with SIGKILL
/// and reap the child; `agentproto_process::end_all` reaches it from a signal
/// handler.
pub struct Client {
    reader: FrameReader<ChildStdout>,
    writer: Option<FrameWriter<ChildStdin>>,
    child: Child,
    group: Group,
    reaped: Arc<Mutex<bool>>,
    exit_status: Option<ExitStatus>,
    callbacks: HashMap<Box<[u8]>, Callback>,
    callback_answer: Vec<u8>,
    #[cfg(feature = "json")]
    json_params: Vec<u8>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Client")
            .field("pid", &self.child.id())
            .field("open", &self.writer.is_some())
            .field("exit_status", &self.exit_status)
            .field("callbacks", &self.callbacks.keys().map(|name| lossy(name)).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts `command` as the server: stdin and stdout piped, stderr
    /// inherited, in a process group of its own.
    pub fn spawn(mut command: Command, options: ClientOptions) -> Result<Client, ClientError> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        agentproto_process::isolate(&mut command);
        if options.die_with_parent {
            agentproto_process::die_with_parent(&mut command);
        }
        let mut child = command.spawn().map_err(ClientError::Spawn)?;
        let group = Group::new(child.id());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were requested");
        };
        Ok(Client {
            reader: FrameReader::new(stdout, options.limits),
            writer: Some(FrameWriter::new(stdin)),
            child,
            group,
            reaped: Arc::new(Mutex::new(false)),
            exit_status: None,
            callbacks: HashMap::new(),
            callback_answer: Vec::new(),
            #[cfg(feature = "json")]
            json_params: Vec::new(),
        })
    }

    /// The server's pid (also its process group id).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// A handle that can end the server from another thread.
    pub fn killer(&self) -> Killer {
        Killer { leader: self.group.id(), reaped: Arc::clone(&self.reaped) }
    }

    /// Registers the callback `name` (replacing one of the same name). When
    /// the server calls it, `callback` gets the call's payload and writes its
    /// answer into the buffer it is given (cleared before each call); an `Err`
    /// is sent back as a `CallError` with that text. A panic in a callback is
    /// caught and answered the same way. Either way the client keeps reading
    /// until the server answers the request in flight. A call to a name that
    /// is not registered is answered with a `CallError`.
    pub fn register_callback<F>(&mut self, name: &str, callback: F)
    where
        F: FnMut(&[u8], &mut Vec<u8>) -> Result<(), String> + Send + 'static,
    {
        self.callbacks.insert(name.as_bytes().into(), Box::new(callback));
    }

    /// Sends the request `method` with `payload` and waits for its answer,
    /// answering the server's callbacks meanwhile. The result borrows the
    /// client's reused buffer: copy it before the next request if needed. An
    /// empty result is what the server sends for "no value".
    pub fn request(&mut self, method: &str, payload: &[u8]) -> Result<&[u8], ClientError> {
        let Some(writer) = self.writer.as_mut() else {
            return Err(self.closed_error());
        };
        if let Err(error) = writer.write(MessageType::Request, method.as_bytes(), payload) {
            return Err(self.fail_io(error));
        }
        loop {
            let (kind, name_matches) = match self.reader.read() {
                Ok(Some(frame)) => (frame.kind, frame.name == method.as_bytes()),
                Ok(None) => return Err(self.child_gone()),
                Err(FrameError::Io(error)) => return Err(self.fail_io(error)),
                // The child went away in the middle of a tuple (killed while answering).
                Err(FrameError::UnexpectedEof { .. }) => return Err(self.child_gone()),
                Err(error) => return Err(self.fail_protocol(ProtocolError::Frame(error))),
            };
            match kind {
                MessageType::Response | MessageType::Error if !name_matches => {
                    let found = lossy(self.reader.name());
                    let mismatch = ProtocolError::NameMismatch { kind, expected: method.to_owned(), found };
                    return Err(self.fail_protocol(mismatch));
                }
                MessageType::Response => return Ok(self.reader.payload()),
                MessageType::Error => return Err(ClientError::Server(lossy(self.reader.payload()))),
                MessageType::Call => self.answer_call()?,
                MessageType::Request | MessageType::CallResponse | MessageType::CallError => {
                    let unexpected = ProtocolError::UnexpectedType { kind, name: lossy(self.reader.name()) };
                    return Err(self.fail_protocol(unexpected));
                }
            }
        }
    }

    /// Sends `params` as JSON to `method` and decodes the JSON result;
    /// `Ok(None)` when the server's result is empty ("undefined").
    #[cfg(feature = "json")]
    pub fn request_json<P, R>(&mut self, method: &str, params: &P) -> Result<Option<R>, ClientError>
    where
        P: serde::Serialize + ?Sized,
        R: serde::de::DeserializeOwned,
    {
        let mut encoded = std::mem::take(&mut self.json_params);
        encoded.clear();
        if let Err(source) = serde_json::to_writer(&mut encoded, params) {
            self.json_params = encoded;
            return Err(ClientError::EncodeParams { method: method.to_owned(), source });
        }
        let outcome = self.request(method, &encoded).map(|result| {
            if result.is_empty() {
                Ok(None)
            } else {
                serde_json::from_slice(result).map(Some)
            }
        });
        self.json_params = encoded;
        match outcome? {
            Ok(result) => Ok(result),
            Err(source) => Err(ClientError::DecodeResult { method: method.to_owned(), source }),
        }
    }

    /// Closes the server's stdin, ends its process group and reaps it.
    /// Returns its exit status (a server that had already exited by itself
    /// reports its own status; otherwise it is the SIGKILL).
    pub fn close(mut self) -> Result<ExitStatus, ClientError> {
        self.shut_down().map_err(ClientError::Io)
    }

    fn answer_call(&mut self) -> Result<(), ClientError> {
        let name = self.reader.name();
        let payload = self.reader.payload();
        self.callback_answer.clear();
        let outcome = match self.callbacks.get_mut(name) {
            Some(callback) => {
                let answer = &mut self.callback_answer;
                match catch_unwind(AssertUnwindSafe(|| callback(payload, answer))) {
                    Ok(outcome) => outcome,
                    Err(panic) => Err(format!("callback `{}` panicked: {}", lossy(name), panic_text(&*panic))),
                }
            }
            None => Err(format!("unknown callback `{}`", lossy(name))),
        };
        let Some(writer) = self.writer.as_mut() else {
            return Err(self.closed_error());
        };
        let written = match &outcome {
            Ok(()) => writer.write(MessageType::CallResponse, name, &self.callback_answer),
            Err(text) => writer.write(MessageType::CallError, name, text.as_bytes()),
        };
        written.map_err(|error| self.fail_io(error))
    }

    fn closed_error(&self) -> ClientError {
        match self.exit_status {
            Some(status) => ClientError::ChildExited(status),
            None => ClientError::Closed,
        }
    }

    /// The server closed stdout: reap it and report how it ended.
    fn child_gone(&mut self) -> ClientError {
        match self.shut_down() {
            Ok(status) => ClientError::ChildExited(status),
            Err(error) => ClientError::Io(error),
        }
    }

    fn fail_io(&mut self, error: io::Error) -> ClientError {
        match error.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof => self.child_gone(),
            _ => {
                let _ = self.shut_down();
                ClientError::Io(error)
            }
        }
    }

    fn fail_protocol(&mut self, error: ProtocolError) -> ClientError {
        // Past a tuple that does not fit, the stream cannot be resynchronised.
        let _ = self.shut_down();
        ClientError::Protocol(error)
    }

    /// Closes stdin, ends the group and reaps the child (once).
    fn shut_down(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.exit_status {
            return Ok(status);
        }
        drop(self.writer.take());
        let mut reaped = lock(&self.reaped);
        self.group.end();
        let status = self.child.wait()?;
        *reaped = true;
        self.exit_status = Some(status);
        Ok(status)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}
